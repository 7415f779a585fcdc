//! The waiting room's answers as the API writes them (`crate::handlers::queue` serves them, the
//! dashboard shows the fan's entry), with their refusals: the same sentence in the handler and in
//! its documented example.

use serde::Serialize;
use utoipa::ToSchema;
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::Schema;

use crate::http::error::{ApiError, ErrorCode};
use crate::views::pack::countdown;
use domain::beacon::Beacon;
use domain::hex;
use domain::ids::{EntryId, PackId};
use domain::queue::admission::door;
use domain::queue::entry::{EntryStatus, Outlook, QueueEntry, estimated_admission_at};
use domain::queue::merkle::ProofStep;
use domain::queue::state::{QueueStatus, StoredStatus};
use domain::timestamp::Timestamp;
use store::queue::QueueView;

pub const QUEUE_NOT_FOUND: &str = "This pack has no waiting room.";
pub const ENTRY_NOT_FOUND: &str = "You have not joined this pack's waiting room.";
pub const NOT_OPEN: &str = "This pack's waiting room is not open yet: see its opensAt.";
pub const CLOSED: &str = "This pack's waiting room is closed.";
pub const NOT_CLOSED: &str =
    "This pack's waiting room has not closed and committed its entrants yet.";
pub const NOT_FINISHED: &str = "This pack's sale through its waiting room is not over yet.";

pub fn refused(code: ErrorCode) -> ApiError {
    let message = match code {
        ErrorCode::QueueNotFound => QUEUE_NOT_FOUND,
        ErrorCode::QueueEntryNotFound => ENTRY_NOT_FOUND,
        ErrorCode::QueueNotOpen => NOT_OPEN,
        ErrorCode::QueueClosed => CLOSED,
        ErrorCode::QueueNotClosed => NOT_CLOSED,
        _ => NOT_FINISHED,
    };
    ApiError::refused(code, message)
}

/// The beacon as published: `randomness` and `signature` null until the draw.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schema(as = QueueBeacon)]
pub struct BeaconJson {
    /// drand quicknet's chain hash (`local` on scripts/local, never on a deployed API).
    chain: String,
    /// The quicknet round the draw uses, fixed with the terms (the round at `closesAt` + 5
    /// minutes). A close that commits the entrants less than 60 s before that round's time moves
    /// it to the round at `committedAt` + 5 minutes (docs/fairness.md, "The margin").
    round: u64,
    #[schema(value_type = Option<String>, pattern = "^[0-9a-f]{64}$", required)]
    randomness: Option<String>,
    #[schema(value_type = Option<String>, pattern = "^([0-9a-f]{2})*$", required)]
    signature: Option<String>,
}

/// A pack's waiting room as the public sees it.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schema(as = Queue)]
pub struct QueueJson {
    #[schema(value_type = String)]
    pack_id: PackId,
    opens_at: Timestamp,
    #[schema(schema_with = opens_countdown)]
    opens_in_ms: u64,
    closes_at: Timestamp,
    #[schema(schema_with = closes_countdown)]
    closes_in_ms: u64,
    /// An admitted fan's window, in seconds.
    pass_seconds: u32,
    status: QueueStatus,
    /// SHA-256 of the queue's secret seed (lowercase hex), published before the line opens.
    #[schema(pattern = "^[0-9a-f]{64}$")]
    seed_hash: String,
    beacon: BeaconJson,
    /// When the close committed the entrants (`entrants`, `entrantsRoot`): from the close.
    #[schema(required)]
    committed_at: Option<Timestamp>,
    /// How many fans joined: from the close.
    #[schema(required)]
    entrants: Option<u64>,
    /// The Merkle root of the sorted entry ids (docs/fairness.md): from the close.
    #[schema(value_type = Option<String>, pattern = "^[0-9a-f]{64}$", required)]
    entrants_root: Option<String>,
    /// The queue's secret seed, revealed by the draw.
    #[schema(value_type = Option<String>, pattern = "^[0-9a-f]{64}$", required)]
    seed: Option<String>,
    /// The last position admitted so far (0: nobody yet).
    admitted_through: u64,
    /// The Ed25519 public key (base64url, 32 bytes) the entries' receipts verify with.
    receipt_key: String,
}

fn opens_countdown() -> RefOr<Schema> {
    countdown("opensAt", false)
}

fn closes_countdown() -> RefOr<Schema> {
    countdown("closesAt", false)
}

impl QueueJson {
    pub fn of(pack_id: &PackId, view: &QueueView, receipt_key: &str, now: Timestamp) -> Self {
        let state = &view.state;
        let drawn: Option<&Beacon> = state.beacon.as_ref();
        Self {
            pack_id: pack_id.clone(),
            opens_at: view.terms.opens_at,
            opens_in_ms: now.millis_until(view.terms.opens_at),
            closes_at: view.terms.closes_at,
            closes_in_ms: now.millis_until(view.terms.closes_at),
            pass_seconds: view.terms.pass_seconds,
            status: state.public_status(&view.terms, now),
            seed_hash: ::hex::encode(state.seed_hash),
            beacon: BeaconJson {
                chain: drawn.map_or_else(
                    || domain::beacon::quicknet::CHAIN_HASH.to_owned(),
                    |beacon| beacon.chain.clone(),
                ),
                round: state.beacon_round,
                randomness: drawn.map(|beacon| ::hex::encode(beacon.randomness)),
                signature: drawn.map(|beacon| ::hex::encode(&beacon.signature)),
            },
            committed_at: state.committed_at,
            entrants: state.entrants,
            entrants_root: state.entrants_root.map(::hex::encode),
            seed: state.seed.map(::hex::encode),
            admitted_through: state.admitted_through,
            receipt_key: receipt_key.to_owned(),
        }
    }
}

/// `{"queue": ...}`.
#[derive(Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct QueueAnswer {
    pub queue: QueueJson,
}

/// A fan's entry as they see it.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schema(as = QueueEntry)]
pub struct EntryJson {
    #[schema(value_type = String)]
    pack_id: PackId,
    /// The fan's public name in the line (32 hex digits): the entrants list shows it.
    #[schema(value_type = String, pattern = "^[0-9a-f]{32}$")]
    entry_id: EntryId,
    joined_at: Timestamp,
    status: EntryStatus,
    /// From the draw (1 = first).
    #[schema(required, minimum = 1)]
    position: Option<u64>,
    /// Ed25519 signature (base64url) of `packId\nentryId\njoinedAt` with the queue's
    /// `receiptKey`.
    receipt: String,
    /// While `queued`: the latest the fan may expect to be admitted, as things stand. Fans are
    /// let in by waves of as many as the units left serve (`unitsLeft / maxPerUser`); the next
    /// wave comes at the latest when the last one's windows end, each later one a window after.
    #[schema(required)]
    estimated_admission_at: Option<Timestamp>,
    #[schema(schema_with = admission_countdown, required)]
    estimated_admission_in_ms: Option<u64>,
    /// While `admitted` (or `done` inside the window): when the fan's window ends.
    #[schema(required)]
    pass_expires_at: Option<Timestamp>,
    #[schema(schema_with = pass_countdown, required)]
    pass_expires_in_ms: Option<u64>,
    /// Whether a start by this fan passes the line's door now: admitted with the window open
    /// and allowance left, or, once the line has finished, any entrant while units are left.
    may_buy: bool,
}

fn admission_countdown() -> RefOr<Schema> {
    countdown("estimatedAdmissionAt", true)
}

fn pass_countdown() -> RefOr<Schema> {
    countdown("passExpiresAt", true)
}

impl EntryJson {
    /// `entry` as its fan sees it at `now`, in `view`'s line (`None`: as just joined). An
    /// admitted entry whose window has passed is `lapsed`, whether or not the keeper wrote so.
    pub fn of(entry: &QueueEntry, view: Option<&QueueView>, now: Timestamp) -> Self {
        let status = match (entry.status, entry.pass_expires_at) {
            (EntryStatus::Admitted, Some(ends)) if ends <= now => EntryStatus::Lapsed,
            (status, _) => status,
        };
        let estimate = match (status, entry.position, view) {
            (EntryStatus::Queued, Some(position), Some(view)) => estimated_admission_at(
                position,
                Outlook {
                    admitted_through: view.state.admitted_through,
                    units_left: view.remaining,
                    allowance: view.allowance,
                    pass_seconds: view.terms.pass_seconds,
                    last_wave_at: view.state.last_wave_at,
                },
                now,
            ),
            _ => None,
        };
        let finished = view.is_some_and(|view| view.state.status == StoredStatus::Finished);
        let units_left = view.is_some_and(|view| view.remaining > 0);
        let may_buy = units_left && door(Some(entry), finished, now).is_ok();
        let pass_expires_at = entry.pass_expires_at.filter(|&end| {
            matches!(status, EntryStatus::Admitted | EntryStatus::Done) && end > now
        });
        let until = |at: Option<Timestamp>| at.map(|at| now.millis_until(at));
        Self {
            pack_id: entry.pack_id.clone(),
            entry_id: entry.entry_id.clone(),
            joined_at: entry.joined_at,
            status,
            position: entry.position,
            receipt: entry.receipt.clone(),
            estimated_admission_at: estimate,
            estimated_admission_in_ms: until(estimate),
            pass_expires_at,
            pass_expires_in_ms: until(pass_expires_at),
            may_buy,
        }
    }
}

/// `{"entry": ...}`.
#[derive(Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct EntryAnswer {
    pub entry: EntryJson,
}

/// A page of the sorted entry ids.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EntrantsAnswer {
    /// Entry ids in ascending order, continuing the previous page.
    #[schema(value_type = Vec<String>)]
    pub entrants: Vec<EntryId>,
    /// The next page's `cursor`, null on the last page.
    #[schema(required)]
    pub next_cursor: Option<String>,
}

/// The Merkle path of a fan's entry.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ProofJson {
    #[schema(value_type = String)]
    pub entry_id: EntryId,
    /// The entry's index among the sorted entry ids (0 = first).
    pub index: u64,
    #[serde(with = "hex::bytes32")]
    #[schema(value_type = String, pattern = "^[0-9a-f]{64}$")]
    pub entrants_root: [u8; 32],
    /// From the leaf up: each step's sibling hash and the side it is on.
    pub steps: Vec<ProofStep>,
}

/// `{"proof": ...}`.
#[derive(Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ProofAnswer {
    pub proof: ProofJson,
}

/// The line's record after the sale.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ReportJson {
    pub entrants: u64,
    /// Fans let in (every position up to `lastAdmittedPosition`).
    pub admitted: u64,
    /// Units started by admitted fans.
    pub bought: u64,
    pub lapsed: u64,
    /// Units paid for.
    pub units_sold: u64,
    /// The position of the last fan admitted (`admittedThrough`).
    pub last_admitted_position: u64,
    /// Units neither sold nor held, as the pack's shares hold them: after the line they sell to
    /// its entrants, so this falls as they buy.
    pub units_left: u64,
    /// The fans kept out of the line, by reason: every reason named, 0 when none
    /// (`human_check_failed`: first joins the human check refused, one per refusal).
    #[schema(example = json!({"human_check_failed": 0}))]
    pub excluded: std::collections::BTreeMap<String, u64>,
}

/// `{"report": ...}`.
#[derive(Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ReportAnswer {
    pub report: ReportJson,
}
