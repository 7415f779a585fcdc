//! Purchases: a buyer reserves one unit of a pack (a hold that expires), then pays for it from
//! their Cash balance; a paid pack can be opened. The rules here are plain functions over what
//! the store read; the store applies them atomically (conditions inside one write).
//!
//! States: `reserved` -> `completed` (paid) -> `opened`; `reserved` -> `expired` (the hold ran
//! out and its unit went back on sale). A reserved purchase past its `expiresAt` reads as
//! `expired` before its hold is released.

pub mod mine;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::{Deserialize, Serialize};
use strum::{EnumString, IntoStaticStr, VariantArray};

use crate::cash::Money;
use crate::ids::{PackId, PurchaseId, UserId};
use crate::packs::draw::{DrawError, DrawInput, ServerSeed, draw};
use crate::packs::{
    Odds, Pack, PackItem, PackStatus, REVEAL_DELAY_SECONDS, reveal_at, seed_revealed,
};
use crate::timestamp::Timestamp;

// No hold may outlive the reveal delay: once the seed is public, no reservation can be paid.
const _: () = assert!(MAX_HOLD_SECONDS as i64 <= REVEAL_DELAY_SECONDS);

/// How long a hold lasts by default, and the range `PURCHASE_HOLD_SECONDS` allows.
pub const DEFAULT_HOLD_SECONDS: u64 = 600;
pub const MAX_HOLD_SECONDS: u64 = 3600;
/// The longest client seed.
pub const MAX_CLIENT_SEED_CHARS: usize = 64;

/// `reserved` (a unit held until `expiresAt`), `completed` (paid), `opened` (its items drawn),
/// `expired` (the hold ran out unpaid; its unit went back on sale).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
#[derive(IntoStaticStr, EnumString, VariantArray)]
// The one text of each variant: serde and strum both spell the variant's name in lowercase
// (a test checks that they agree).
#[strum(serialize_all = "lowercase")]
pub enum PurchaseStatus {
    Reserved,
    Completed,
    Opened,
    Expired,
}

impl PurchaseStatus {
    /// As the API and the store write it.
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// One slot of an opened pack.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct OpenedItem {
    pub slot: u32,
    #[schema(value_type = crate::json_schema::Id)]
    pub item_id: String,
    #[schema(min_length = 1, max_length = 200)]
    pub name: String,
    #[schema(min_length = 1, max_length = 32)]
    pub rarity: String,
    #[schema(format = "uri", pattern = "^https://", required)]
    pub image_url: Option<String>,
}

/// A purchase (stored as a `PurchaseRecord`, answered as `api::views::purchase`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Purchase {
    pub id: PurchaseId,
    pub pack_id: PackId,
    pub user_id: UserId,
    pub status: PurchaseStatus,
    pub price: Money,
    pub client_seed: String,
    /// The client seed the buyer asked for at start (`None`: the server picked one), which an
    /// idempotent repeat must ask again.
    pub requested_seed: Option<String>,
    pub nonce: u64,
    pub reserved_at: Timestamp,
    pub expires_at: Timestamp,
    pub completed_at: Option<Timestamp>,
    pub opened_at: Option<Timestamp>,
    pub items: Option<Vec<OpenedItem>>,
    /// The pack's seed commitment (and the seed, when it was already public), kept at opening.
    pub fairness: Option<OpenedFairness>,
    /// The share of the pack's supply its unit came from, and goes back to if released.
    pub supply_shard: u32,
    /// The slot of its buyer's unpaid holds it took, freed when it is paid.
    pub hold_slot: Option<u32>,
    /// Whether its start took a unit of its buyer's admission to the pack's waiting room: a
    /// release inside their window gives it back (`store::queue_conditions::allowance_back`).
    pub admitted: bool,
}

/// What an opened purchase keeps of its pack's server seed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OpenedFairness {
    pub server_seed_hash: String,
    pub server_seed: Option<String>,
}

impl Purchase {
    /// The status as a buyer sees it at `now`: a reserved purchase whose hold has run out is
    /// `expired`, released or not.
    pub fn status_at(&self, now: Timestamp) -> PurchaseStatus {
        match self.status {
            PurchaseStatus::Reserved if self.hold_expired_at(now) => PurchaseStatus::Expired,
            status => status,
        }
    }

    /// Whether the hold has run out: `expiresAt` is not after `now`.
    pub fn hold_expired_at(&self, now: Timestamp) -> bool {
        self.expires_at <= now
    }
}

/// The id of the purchase a user starts with an idempotency key: derived from both, so that
/// every repeat of the key names the same purchase and concurrent repeats race for one item.
/// 22 base64url characters (128 bits of SHA-256).
pub fn purchase_id(user_id: &UserId, idempotency_key: &str) -> PurchaseId {
    let digest = aws_lc_rs::digest::digest(
        &aws_lc_rs::digest::SHA256,
        format!("purchase-v1\n{user_id}\n{idempotency_key}").as_bytes(),
    );
    PurchaseId::parse(URL_SAFE_NO_PAD.encode(&digest.as_ref()[..16]))
        .expect("22 base64url characters are an id")
}

/// A client seed the server picks: 128 random bits from the OS (`getrandom(2)`), base64url.
/// aws-lc's generator would seed itself on first use, about 20 ms of a cold start.
pub fn random_client_seed() -> String {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).expect("the system random source works");
    URL_SAFE_NO_PAD.encode(bytes)
}

/// A share of a pack's supply split `shards` ways, picked at random, so that a drop's starts
/// spread over every share's key.
pub fn random_shard(shards: u32) -> u32 {
    let mut bytes = [0u8; 4];
    getrandom::fill(&mut bytes).expect("the system random source works");
    u32::from_le_bytes(bytes) % shards.max(1)
}

/// Whether a client seed is 1-64 characters in 0x20-0x7E.
pub fn is_valid_client_seed(seed: &str) -> bool {
    (1..=MAX_CLIENT_SEED_CHARS).contains(&seed.len())
        && seed.bytes().all(|b| (0x20..=0x7e).contains(&b))
}

/// A buyer's purchases of one pack: `seq`, the last nonce given (never reused), and `held`, the
/// reserved, completed and opened ones (what `maxPerUser` limits).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Buys {
    pub seq: u64,
    pub held: u64,
}

/// Why a purchase cannot start.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum StartRefusal {
    #[error("no such pack")]
    PackNotFound,
    #[error("the pack is not on sale")]
    NotOnSale,
    #[error("the pack is sold out")]
    SoldOut,
    #[error("the buyer's limit for this pack is reached")]
    LimitReached,
    #[error("the buyer holds as many unpaid purchases as a fan may")]
    UnpaidHoldsLimit,
    #[error("the buyer's balance does not cover this and their other unpaid holds")]
    InsufficientFunds,
    /// A queued pack sells only to fans admitted from its line, window open (issue 29).
    #[error("not admitted from the pack's queue: {0}")]
    NotAdmitted(crate::queue::admission::AdmissionRefusal),
    /// The pack asks for the human check (`humanCheck`) and the start did not pass one: its
    /// handler verifies a token for the door, solved at or after `sale_starts_at`, and starts
    /// again (docs/human-check.md). Nothing was written.
    #[error("the pack asks for the human check")]
    HumanCheckRequired { sale_starts_at: Option<Timestamp> },
}

/// A start of `pack` is refused until it passed the human check, if the pack asks for one: the
/// stores decide it on the pack they read for the start, so that a pack without the check costs
/// a start nothing more.
pub fn check_human(pack: &Pack, request: &StartRequest) -> Result<(), StartRefusal> {
    if pack.human_check && !request.human_checked {
        return Err(StartRefusal::HumanCheckRequired {
            sale_starts_at: pack.sale_starts_at,
        });
    }
    Ok(())
}

/// What a fan's unpaid holds may be (the operator's `MAX_UNPAID_HOLDS` and
/// `START_REQUIRES_FUNDS`): a bot with no Cash must not hold a drop's supply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HoldPolicy {
    /// A fan's live unpaid holds, across all packs (1-1000).
    pub max_unpaid: u32,
    /// Whether a start needs a balance that covers its price and the fan's other live unpaid
    /// holds in that currency.
    pub requires_funds: bool,
}

pub const DEFAULT_MAX_UNPAID_HOLDS: u32 = 2;
pub const MAX_MAX_UNPAID_HOLDS: u32 = 1000;

impl Default for HoldPolicy {
    fn default() -> Self {
        Self {
            max_unpaid: DEFAULT_MAX_UNPAID_HOLDS,
            requires_funds: false,
        }
    }
}

/// One unpaid hold of a fan, in their slots.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HoldSlot {
    pub purchase_id: PurchaseId,
    pub expires_at: Timestamp,
    pub price: Money,
}

/// A fan's unpaid holds: `max_unpaid` slots, each free or holding one hold; a hold whose
/// `expiresAt` has passed frees its slot by itself, released or not. `version` moves on with
/// every write, so that a start's write is conditioned on the slots as it read them.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct UnpaidHolds {
    pub slots: Vec<Option<HoldSlot>>,
    pub version: u64,
}

impl UnpaidHolds {
    fn live(&self, now: Timestamp) -> impl Iterator<Item = &HoldSlot> {
        self.slots
            .iter()
            .flatten()
            .filter(move |slot| slot.expires_at > now)
    }
}

/// Which slot a start of a unit at `price` takes (and the balance it then needs, 0 when the
/// policy asks none), for a fan with `holds` and `balance` in `price`'s currency at `now`: the
/// rule both stores apply, each inside its write's condition.
pub fn take_hold_slot(
    holds: &UnpaidHolds,
    policy: HoldPolicy,
    price: &Money,
    balance: u64,
    now: Timestamp,
) -> Result<(u32, u64), StartRefusal> {
    if holds.live(now).count() >= policy.max_unpaid as usize {
        return Err(StartRefusal::UnpaidHoldsLimit);
    }
    let needed = if policy.requires_funds {
        price.amount
            + holds
                .live(now)
                .filter(|slot| slot.price.currency == price.currency)
                .map(|slot| slot.price.amount)
                .sum::<u64>()
    } else {
        0
    };
    if balance < needed {
        return Err(StartRefusal::InsufficientFunds);
    }
    let free = crate::slots::first_free(&holds.slots, policy.max_unpaid, |slot| {
        slot.expires_at <= now
    })
    .ok_or(StartRefusal::UnpaidHoldsLimit)?;
    Ok((free, needed))
}

/// Whether a buyer with `buys` may take a unit of `pack` at `now`, checked in the order clients
/// see: the pack exists and is not a draft, it is on sale, the buyer is under the pack's
/// `maxPerUser`. Whether a unit is left is the supply's to say (its shares, each a conditional
/// write): a buyer at their limit is told so without a share being touched.
pub fn check_start(pack: Option<&Pack>, buys: Buys, now: Timestamp) -> Result<(), StartRefusal> {
    let pack = pack
        .filter(|pack| pack.status != PackStatus::Draft)
        .ok_or(StartRefusal::PackNotFound)?;
    if !pack.is_active_at(now) {
        return Err(StartRefusal::NotOnSale);
    }
    if pack
        .max_per_user
        .is_some_and(|max| buys.held >= u64::from(max))
    {
        return Err(StartRefusal::LimitReached);
    }
    Ok(())
}

/// A start as the buyer asked it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StartRequest {
    pub user_id: UserId,
    pub pack_id: PackId,
    pub purchase_id: PurchaseId,
    pub requested_seed: Option<String>,
    /// The seed the purchase gets: the requested one, or one the server picked.
    pub client_seed: String,
    pub now: Timestamp,
    pub expires_at: Timestamp,
    pub policy: HoldPolicy,
    /// The handler verified a human-check token for this start's door: a pack that asks for the
    /// check ([`check_human`]) refuses the start otherwise.
    pub human_checked: bool,
}

impl StartRequest {
    /// The purchase this start creates, for a buyer with `buys`, of a pack at `price`, its unit
    /// taken from share `shard`, in the buyer's unpaid-holds slot `slot`.
    pub fn purchase(&self, buys: Buys, price: &Money, shard: u32, slot: u32) -> Purchase {
        Purchase {
            id: self.purchase_id.clone(),
            pack_id: self.pack_id.clone(),
            user_id: self.user_id.clone(),
            status: PurchaseStatus::Reserved,
            price: price.clone(),
            client_seed: self.client_seed.clone(),
            requested_seed: self.requested_seed.clone(),
            nonce: buys.seq + 1,
            reserved_at: self.now,
            expires_at: self.expires_at,
            completed_at: None,
            opened_at: None,
            items: None,
            fairness: None,
            supply_shard: shard,
            hold_slot: Some(slot),
            admitted: false,
        }
    }

    /// Whether an existing purchase under this start's id is a repeat of it (same pack, same
    /// requested seed) or another start reusing the key.
    pub fn is_repeated_by(&self, existing: &Purchase) -> bool {
        existing.pack_id == self.pack_id && existing.requested_seed == self.requested_seed
    }
}

/// Why a purchase cannot be completed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum CompleteRefusal {
    #[error("no such purchase")]
    NotFound,
    #[error("the hold has expired")]
    Expired,
    #[error("the balance is too low")]
    InsufficientFunds,
    /// The pack's seed is public, or about to be: a hold that outlived it (the sale was ended
    /// early while the hold was being made) cannot be paid, as its draw could be known.
    #[error("the pack's seed is revealed")]
    SaleClosed,
}

/// Payments close this long before a pack's seed is revealed, so that no difference between the
/// clocks of the functions that reveal it and those that take payments lets a buyer see the
/// seed and then pay.
pub const PAYMENTS_CLOSE_BEFORE_REVEAL_SECONDS: i64 = 5;

/// Whether a hold of a pack whose sale ends at `sale_ends_at` may still be paid at `now`.
/// Holds normally end before the reveal (no hold outlasts the reveal delay); this closes the one
/// gap: a sale ended early while a start was landing, whose hold would outlive the reveal.
pub fn payments_open(sale_ends_at: Option<Timestamp>, now: Timestamp) -> bool {
    reveal_at(sale_ends_at)
        .and_then(|at| at.plus_seconds(-PAYMENTS_CLOSE_BEFORE_REVEAL_SECONDS))
        .is_none_or(|closed| now < closed)
}

/// What completing `purchase` (the caller's, by key) of `pack_id`, whose sale ends at
/// `sale_ends_at`, with `balance` at `now` does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Completion {
    /// Pay: reserved -> completed, the balance down by the price.
    Pay,
    /// Already paid (completed or opened): answer it again, change nothing.
    Replay,
    /// The hold ran out while still reserved: release it (the unit goes back), answer 410.
    Release,
}

pub fn check_complete(
    purchase: Option<&Purchase>,
    pack_id: &PackId,
    sale_ends_at: Option<Timestamp>,
    balance: u64,
    now: Timestamp,
) -> Result<Completion, CompleteRefusal> {
    let purchase = purchase
        .filter(|purchase| purchase.pack_id == *pack_id)
        .ok_or(CompleteRefusal::NotFound)?;
    match purchase.status {
        PurchaseStatus::Completed | PurchaseStatus::Opened => Ok(Completion::Replay),
        PurchaseStatus::Expired => Err(CompleteRefusal::Expired),
        PurchaseStatus::Reserved if purchase.hold_expired_at(now) => Ok(Completion::Release),
        PurchaseStatus::Reserved if !payments_open(sale_ends_at, now) => {
            Err(CompleteRefusal::SaleClosed)
        }
        PurchaseStatus::Reserved if balance < purchase.price.amount => {
            Err(CompleteRefusal::InsufficientFunds)
        }
        PurchaseStatus::Reserved => Ok(Completion::Pay),
    }
}

/// What the draw of a pack's purchases takes: its server seed and content, and its sale end
/// (which decides when the seed is revealed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DrawInputs {
    pub seed: ServerSeed,
    pub odds: Vec<Odds>,
    pub items: Vec<PackItem>,
    pub items_per_pack: u32,
    pub sale_ends_at: Option<Timestamp>,
    /// The leaderboards the pack's items count for (the global one, its league's, its team's).
    pub boards: Vec<crate::leaderboards::Board>,
}

impl DrawInputs {
    /// The seed as shown at `now`: the commitment always, the seed once revealed.
    pub fn fairness_at(&self, now: Timestamp) -> OpenedFairness {
        OpenedFairness {
            server_seed_hash: self.seed.commitment(),
            server_seed: seed_revealed(self.sale_ends_at, now).then(|| self.seed.to_hex()),
        }
    }
}

/// Why a purchase cannot be opened.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OpenRefusal {
    #[error("no such purchase")]
    NotFound,
    #[error("the purchase is not paid")]
    NotCompleted,
    #[error("the hold expired before it was paid")]
    Expired,
    /// The pack's content cannot be drawn from (a corrupt pack): a server fault.
    #[error("draw: {0}")]
    Draw(#[from] DrawError),
}

/// What opening the caller's `purchase` of `pack_id` does: `Ok(true)` to open it now,
/// `Ok(false)` when it is open already (answer it again).
pub fn check_open(
    purchase: Option<&Purchase>,
    pack_id: &PackId,
    now: Timestamp,
) -> Result<bool, OpenRefusal> {
    let purchase = purchase
        .filter(|purchase| purchase.pack_id == *pack_id)
        .ok_or(OpenRefusal::NotFound)?;
    match purchase.status_at(now) {
        PurchaseStatus::Completed => Ok(true),
        PurchaseStatus::Opened => Ok(false),
        PurchaseStatus::Reserved => Err(OpenRefusal::NotCompleted),
        PurchaseStatus::Expired => Err(OpenRefusal::Expired),
    }
}

/// `purchase` opened at `now`: its items drawn (docs/fairness.md), its seed commitment kept.
pub fn opened(
    purchase: &Purchase,
    inputs: &DrawInputs,
    now: Timestamp,
) -> Result<Purchase, OpenRefusal> {
    let input = DrawInput {
        pack_id: purchase.pack_id.as_str(),
        user_id: purchase.user_id.as_str(),
        nonce: purchase.nonce,
        client_seed: &purchase.client_seed,
    };
    let drawn = draw(
        &inputs.seed,
        &inputs.odds,
        &inputs.items,
        inputs.items_per_pack,
        &input,
    )?;
    let items = drawn
        .into_iter()
        .zip(0..)
        .map(|(index, slot)| {
            let item = &inputs.items[index];
            OpenedItem {
                slot,
                item_id: item.id.clone(),
                name: item.name.clone(),
                rarity: item.rarity.clone(),
                image_url: item.image_url.clone(),
            }
        })
        .collect();
    Ok(Purchase {
        status: PurchaseStatus::Opened,
        opened_at: Some(now),
        items: Some(items),
        fairness: Some(inputs.fairness_at(now)),
        ..purchase.clone()
    })
}

#[cfg(test)]
mod tests;
