//! The app's single DynamoDB table. `template.yaml` declares the same keys and index; a test
//! proves the two agree.
//!
//! | entity | `PK` | `SK` | `GSI1PK` / `GSI1SK` |
//! |---|---|---|---|
//! | pack | `PACK#<packId>` | `PACK` | `PACKS#LISTED` / listing key, only while status is `active` |
//! | a share of a pack's supply | `PACK#<packId>#<k>` | `SUPPLY` | - |
//! | pack draw inputs | `DRAW#<packId>` | `DRAW` | - |
//! | web3 link | `USER#<userId>` | `LINK#<provider>` | - |
//! | a fan's wallet (a linked identity) | `USER#<userId>` | `WALLET#<walletId>` | - |
//! | a fan's count of wallets | `USER#<userId>` | `WALLETS` | - |
//! | purchase | `USER#<userId>` | `PURCHASE#<purchaseId>` | `GSI2PK` `HOLDS#<packId>#<k>` / `<expiresAt>#<purchaseId>` while reserved, `USER#<userId>` / `<openedAt>#<purchaseId>` once opened; `GSI3PK` `USER#<userId>` / `<reservedAt>#<purchaseId>` |
//! | a buyer's purchases of a pack | `USER#<userId>` | `BUYS#<packId>` | - |
//! | cash balances | `CASH#<userId>` | `CASH` | - |
//! | debit (ledger) | `CASH#<userId>` | `DEBIT#<purchaseId>` | `GSI3PK` `CASH#<userId>` / `<at>#<entryId>` |
//! | credit (ledger) | `CREDIT#<reference>` | `CREDIT` | `GSI3PK` `CASH#<userId>` / `<at>#<entryId>` |
//! | Cash top-up | `TOPUP#<topUpId>` | `TOPUP` | `GSI3PK` `TOPUPS#<userId>` / `<createdAt>#<topUpId>` |
//! | league | `LEAGUE#<leagueId>` | `LEAGUE` | `CATALOG#LEAGUES` / [`league_key`](domain::catalog::order::league_key) |
//! | team | `TEAM#<teamId>` | `TEAM` | `CATALOG#TEAMS` / [`team_key`](domain::catalog::order::team_key) |
//! | a fan's profile | `USER#<userId>` | `PROFILE` | - |
//! | a display name's holder | `NAME#<nameKey>` | `NAME` | - |
//! | a fan's public face (locker room) | `FAN#<userId>` | `SHOW` | - |
//! | a fan's stats | `FAN#<userId>` | `STATS` | - |
//! | a fan's score on a board | `FAN#<userId>` | `SCORE#<board>` (and `SAMPLE#<board>` for a sampled fan) | `GSI4PK` `BOARD#<board>#<shard>` (`#sample`) / rank key (a number) |
//! | a rate-limit counter (TTL) | `RATE#<class>#<scope>#<key>` | `W#<windowStart>` | - |
//! | a spent human-check token (TTL) | `HUMAN#<tokenHash>` | `HUMAN` | - |
//!
//! A listed pack (the pack item while its status is `active`) is also in the packs of its league
//! and of its team: `GSI2PK` `LEAGUE#<leagueId>` and `GSI3PK` `TEAM#<teamId>`, each with the
//! listing key as sort key, written by the same seeding write as its `GSI1` keys (the pack item
//! uses neither index otherwise).
//! | a fan's pending top-ups | `TOPUP#USER#<userId>` | `PENDING` | - |
//! | quest | `QUEST#ALL` | `QUEST#<questId>` | - |
//! | a fan's claim of a quest | `USER#<userId>` | `CLAIM#<questId>` | `GSI3PK` `REWARDS#<userId>` / `<claimedAt>#<questId>` |
//! | a claim's `Idempotency-Key` | `USER#<userId>` | `CLAIMKEY#<claimId>` | - |
//! | a queue's secret seed | `QSEED#<packId>` | `QSEED` | - |
//! | a queue's state | `QUEUE#<packId>` | `STATE` | `GSI1PK` `QUEUES#PENDING` / `<closesAt>#<packId>` until finished |
//! | a fan's entry in a queue | `QUEUE#<packId>#USER#<userId>` | `ENTRY` | `GSI2PK` `QENTRIES#<packId>#<shard>` / `<entryId>`; `GSI3PK` `ENTRIES#<userId>` / `<joinedAt>#<packId>` |
//! | a page of a queue's sorted entrants | `QUEUE#<packId>` | `ENTRANTS#<page:06>` | - |
//! | a page of a queue's drawn order | `QUEUE#<packId>` | `ORDER#<page:06>` | - |
//! | a queue's exclusions, one counter of 64 | `QUEUE#<packId>#EXCLUDED#<k:02>` | `EXCLUDED` | - |
//!
//! A waiting room (issue 29, docs/fairness.md): a join is one conditional Put of the fan's own
//! entry item (`attribute_not_exists(PK)`: one entry per fan by construction), with its entry in
//! the entry index on one of [`ENTRY_SHARDS`](domain::queue::entry::ENTRY_SHARDS) partitions
//! (shard: the first byte of SHA-256(entryId) mod 64), so no key takes every join: 20,000 joins a
//! second are one item each (each on its own key) and about 313 index writes a second per shard.
//! The close reads the 64 shards back (one Query each, paged) to commit the entrant set. The
//! queue's seed lives under its own prefix, `QSEED#`, which only seed-packs and the keeper may
//! reach (IAM `dynamodb:LeadingKeys`), as `DRAW#` keeps a pack's server seed.
//!
//! No key is written by every start of a pack, nor by the starts of every pack. A pack's supply
//! is split into `shards` shares (`PACK#<packId>#<k>`, each on its own partition key): a start
//! takes its unit from one share, in one transaction conditioned on that share (a unit left, the
//! sale open, the price and limit as read: each share carries the terms a start is conditioned
//! on), with the buyer's count and the new purchase; a share found empty sends the start on to
//! the others before it answers sold out. Holds are indexed per share (`HOLDS#<packId>#<k>`),
//! so no index partition takes every start either, and a release puts the unit back into the
//! share it came from (`supplyShard` on the purchase).
//!
//! The pack item holds its API JSON as one string, `doc` (every field but `remaining` and
//! `items`), `remaining` as a summary of the shares (the sweep writes it every minute; starts
//! never write it, so neither the pack's key nor the listing index takes a write per start), the
//! fields purchases are conditioned on (`status`, `startsAt`, `endsAt`, `amount`, `currency`,
//! `maxPerUser`), `shards` and `rev`, the seeding revision. A list page is the `doc`s of one
//! Query.
//!
//! A pack's draw inputs (its server seed, `items`, `odds`, `itemsPerPack` and `endsAt`, which
//! decides when the seed is revealed) live under their own key prefix, `DRAW#`, so that IAM
//! (`dynamodb:LeadingKeys`) lets only the functions that may read a server seed reach them.
//! Money lives under its own prefix, `CASH#`, for the same reason: only the completion (and the
//! operator's `cash-credit`) may touch a balance; a function that writes `USER#` items (links,
//! purchases) cannot.
//!
//! - List active packs: `Query` GSI1 on `GSI1PK = PACKS#LISTED AND GSI1SK >= <started bound>`.
//!   The index is sparse (drafts and archived packs have no `GSI1PK`), projected whole, and its
//!   sort key is the [`ListingKey`](domain::packs::listing::ListingKey), so the key order is the
//!   list order. Packs whose sale has ended are filtered on `listEndsAt`; only `doc`, `remaining`
//!   and `GSI1SK` come back.
//! - List a league's or a team's active packs: the same Query on `GSI2` (`GSI2PK =
//!   LEAGUE#<leagueId>`) or `GSI3` (`GSI3PK = TEAM#<teamId>`; with a league too, filtered on the
//!   item's `GSI2PK`), in the same order, sparse in the same way.
//! - The catalogue: `Query` GSI1 on `GSI1PK = CATALOG#LEAGUES` or `CATALOG#TEAMS` (with
//!   `begins_with(GSI1SK, "<leagueId>#")` for one league's teams), the key order the list order;
//!   `GetItem` `LEAGUE#<id>` / `TEAM#<id>` by id.
//! - Get a pack by id: one `BatchGetItem` of `PACK#<id>` / `PACK` and `DRAW#<id>` / `DRAW`.
//! - A user's links, purchases and openings: `Query` on `PK = USER#<userId>` with an `SK` prefix;
//!   a purchase that changes a pack's `remaining` is a transaction with a condition on it.
//! - A link: one transaction of the link's update and the wallet's (a relink refreshes it; a new
//!   identity creates it and adds 1 to `WALLETS`' `n` under `n < 20`). A fan's wallets: one
//!   `Query` on `PK = USER#<userId> AND begins_with(SK, "WALLET#")` (at most 20 items); a removal
//!   is one transaction of the wallet's delete (it must exist) and `n` down by one.
//! - The fan's own view, each page one `Query` (two when the first was cut short by entries its
//!   filter skipped), newest first (`ScanIndexForward = false`), every partition one fan's:
//!   - my purchases: GSI3 on `GSI3PK = USER#<userId>`, sort key `<reservedAt>#<purchaseId>`,
//!     written by the start's put of the purchase (never changed after);
//!   - my items: GSI2 on `GSI2PK = USER#<userId>`, sort key `<openedAt>#<purchaseId>`, written by
//!     the open's conditional update (GSI2 is free on a purchase once it is paid: its holds entry
//!     is removed by the payment, so one index serves both and an item is in it once);
//!   - my ledger: GSI3 on `GSI3PK = CASH#<userId>`, sort key `<at>#<entryId>`, written by the
//!     credit's put (in the credit's transaction) and the debit's put (in the payment's);
//!   - my top-ups: GSI3 on `GSI3PK = TOPUPS#<userId>`, sort key `<createdAt>#<topUpId>`, written
//!     by the create's put of the top-up (its settlements are updates: the keys stay);
//!   - my queue entries: GSI3 on `GSI3PK = ENTRIES#<userId>`, sort key `<joinedAt>#<packId>`,
//!     written by the join's put (and by the keeper's, which rewrites the whole entry).
//!
//!   A top-up or an entry written before those two keys existed is in neither list.
//!
//!   The index keys are written by the very write that creates or changes the item, so a list
//!   never disagrees with the item. The partitions are per fan (`USER#`, `CASH#`: the key
//!   prefixes IAM already separates), so no key takes more than one fan's purchases.

mod events;
mod table;
mod webhooks;

pub use events::*;
pub use table::{INDEXES, KEY_ATTRIBUTES, TABLE_KEY, create_table};
pub use webhooks::*;

use domain::ids::{LeagueId, PackId, PurchaseId, TeamId, TopUpId, UserId};

pub const PK: &str = "PK";
pub const SK: &str = "SK";
pub const GSI1: &str = "GSI1";
pub const GSI1_PK: &str = "GSI1PK";
pub const GSI1_SK: &str = "GSI1SK";

/// The partition of the listing index that holds the packs that can be listed.
pub const LISTED_PACKS: &str = "PACKS#LISTED";
/// A pack's sale end, in Unix nanoseconds (a number), absent when the sale never ends.
pub const ENDS_AT: &str = "endsAt";
/// A pack's sale start, in Unix nanoseconds, absent when not scheduled.
pub const STARTS_AT: &str = "startsAt";
/// A pack's status (`draft`, `active`, `archived`).
pub const PACK_STATUS: &str = "status";
/// A pack's price: amount in minor units (a number) and currency.
pub const PACK_AMOUNT: &str = "amount";
pub const PACK_CURRENCY: &str = "currency";
/// A pack's limit per buyer, absent when there is none.
pub const PACK_MAX_PER_USER: &str = "maxPerUser";
/// A pack's queue terms, a map of `opensAt` and `closesAt` (Unix nanoseconds) and
/// `passSeconds`, on the pack item and every share, absent for a pack without a queue: a start
/// conditioned on its share knows from it that the pack sells only to admitted fans.
pub const PACK_QUEUE: &str = "queue";
pub const QUEUE_OPENS_AT: &str = "opensAt";
pub const QUEUE_CLOSES_AT: &str = "closesAt";
pub const QUEUE_PASS_SECONDS: &str = "passSeconds";
/// A pack's server seed as 64 hex digits, copied onto its public item by the sweep once revealed.
pub const PACK_REVEALED_SEED: &str = "revealedSeed";
/// A pack's seeding revision: every seeding write moves it on.
pub const PACK_REVISION: &str = "rev";
/// The kind of item: `pack`, `link`, ...
pub const ENTITY: &str = "entity";
/// A pack's API JSON, every field but `remaining` (a [`PackDocument`](domain::packs::document::PackDocument)).
pub const PACK_DOC: &str = "doc";
/// Set (true) by the queue keeper once the pack's line has finished (`lineFinished` in its JSON).
pub const PACK_LINE_FINISHED: &str = "lineFinished";
/// A pack's `remaining`, a number, so that purchases can change it with a condition.
pub const PACK_REMAINING: &str = domain::packs::document::REMAINING;

pub fn pack_pk(pack_id: &PackId) -> String {
    format!("PACK#{pack_id}")
}
pub const PACK_SK: &str = "PACK";
/// How many shares a pack's supply is split into (a number).
pub const PACK_SHARDS: &str = "shards";

/// The units of a share sold (paid for): the completion adds one, so that the books of a pack
/// can be checked against counts kept apart (remaining + held + sold = supply).
pub const SHARE_SOLD: &str = "sold";

/// Share `shard` of a pack's supply: its own partition key (pack ids never hold `#`).
pub fn supply_pk(pack_id: &PackId, shard: u32) -> String {
    format!("PACK#{pack_id}#{shard}")
}
pub const SUPPLY_SK: &str = "SUPPLY";

/// The key prefix of draw inputs, for IAM's `dynamodb:LeadingKeys`.
pub const DRAW_PREFIX: &str = "DRAW#";
pub fn draw_pk(pack_id: &PackId) -> String {
    format!("{DRAW_PREFIX}{pack_id}")
}
pub const DRAW_SK: &str = "DRAW";
/// The items, odds and items per pack, as the API's JSON.
pub const DRAW_ITEMS: &str = "items";
pub const DRAW_ODDS: &str = "odds";
pub const DRAW_ITEMS_PER_PACK: &str = "itemsPerPack";
/// The pack's league and team, copied for the opening (which counts its items on their boards).
pub const DRAW_LEAGUE_ID: &str = "leagueId";
pub const DRAW_TEAM_ID: &str = "teamId";

/// The key prefix of a fan's own items (profile, links, purchases).
pub const USER_PREFIX: &str = "USER#";
pub fn user_pk(user_id: &UserId) -> String {
    format!("{USER_PREFIX}{user_id}")
}

pub fn link_sk(provider: &str) -> String {
    format!("LINK#{provider}")
}

/// The prefix of a fan's wallets (`begins_with(SK, "WALLET#")` does not match `WALLETS`).
pub const WALLET_PREFIX: &str = "WALLET#";
pub fn wallet_sk(wallet_id: &domain::ids::WalletId) -> String {
    format!("{WALLET_PREFIX}{wallet_id}")
}

/// A fan's count of wallets, `n`: every link that adds a wallet adds 1 under the cap's
/// condition, every removal takes 1 off, so the cap holds however links race.
pub const WALLETS_SK: &str = "WALLETS";
pub const WALLETS_COUNT: &str = "n";

/// The sort-key prefix of a fan's purchases.
pub const PURCHASE_PREFIX: &str = "PURCHASE#";
pub fn purchase_sk(purchase_id: &PurchaseId) -> String {
    format!("{PURCHASE_PREFIX}{purchase_id}")
}

/// A fan's unpaid holds, across packs: `v` (a version every write moves on) and one attribute
/// per taken slot, `s<k>`, a map of the hold's purchase id, expiry and price.
pub const UNPAID_SK: &str = "UNPAID";
pub const UNPAID_VERSION: &str = SLOTS_VERSION;
pub const UNPAID_SLOT_PREFIX: char = 's';
pub fn unpaid_slot(slot: u32) -> String {
    format!("{UNPAID_SLOT_PREFIX}{slot}")
}

/// The version of an item of numbered slots (a fan's unpaid holds, their pending top-ups).
pub const SLOTS_VERSION: &str = "v";

/// A buyer's counter of purchases of one pack: `seq` (the last nonce) and `held` (reserved,
/// completed and opened purchases, which count towards `maxPerUser`).
pub fn buys_sk(pack_id: &PackId) -> String {
    format!("BUYS#{pack_id}")
}
pub const BUYS_SEQ: &str = "seq";
pub const BUYS_HELD: &str = "held";

/// The key prefix of money: balances and debits.
pub const CASH_PREFIX: &str = "CASH#";

/// The partition of a user's money: balances and debits.
pub fn cash_pk(user_id: &UserId) -> String {
    format!("{CASH_PREFIX}{user_id}")
}

/// A user's cash balances: one number attribute per currency, named by its code (`USD`),
/// integer minor units, never negative. One item, so that a completion reads the purchase and
/// the balances in one call before it knows the purchase's currency.
pub const CASH_SK: &str = "CASH";

/// The ledger entry of a purchase's debit.
pub fn debit_sk(purchase_id: &PurchaseId) -> String {
    format!("DEBIT#{purchase_id}")
}
pub const DEBIT_PREFIX: &str = "DEBIT#";
/// Attributes of ledger entries: `purchaseId` (debits), `userId` (credits), `amount` (a
/// number), `currency`, `at` (RFC 3339).
pub const LEDGER_PURCHASE_ID: &str = "purchaseId";
pub const LEDGER_USER_ID: &str = "userId";
pub const LEDGER_AMOUNT: &str = "amount";
pub const LEDGER_CURRENCY: &str = "currency";
pub const LEDGER_AT: &str = "at";

/// The ledger entry of a credit, keyed by its reference so that a reference credits once.
pub const CREDIT_PREFIX: &str = "CREDIT#";
pub fn credit_pk(reference: &str) -> String {
    format!("CREDIT#{reference}")
}
pub const CREDIT_SK: &str = "CREDIT";

/// A purchase's status and its hold's end in Unix nanoseconds (a number), for conditions.
pub const PURCHASE_STATUS: &str = "status";
pub const PURCHASE_EXPIRES_NS: &str = "expiresNs";
/// When a hold that could not be released was taken out of the holds index (RFC 3339).
pub const HOLD_UNRELEASABLE: &str = "unreleasable";

/// A partition of the holds index: the reserved purchases whose unit came from share `shard`
/// of a pack, by expiry.
pub fn holds_pk(pack_id: &PackId, shard: u32) -> String {
    format!("HOLDS#{pack_id}#{shard}")
}
/// A purchase's share of its pack's supply (a number).
pub const PURCHASE_SHARD: &str = "supplyShard";
pub const GSI2: &str = "GSI2";
pub const GSI2_PK: &str = "GSI2PK";
pub const GSI2_SK: &str = "GSI2SK";

/// The holds-index sort key of a hold ending at `expires_at`: fixed-width nanoseconds, so that
/// key order is expiry order.
pub fn hold_key(expires_at: domain::timestamp::Timestamp, purchase_id: &PurchaseId) -> String {
    domain::timestamp::time_key(expires_at, purchase_id.as_str())
}

/// Every hold key at or below this bound is of a hold that has ended at `now`.
pub fn holds_ended_bound(now: domain::timestamp::Timestamp) -> String {
    // `$` sorts right after `#`: the bound covers every id of a hold ending exactly at `now`.
    format!("{:020}$", now.unix_nanos())
}

/// The fan's own index: their purchases by start (`USER#<userId>`) and their ledger by time
/// (`CASH#<userId>`). Overloaded, so that each item needs one entry of it.
pub const GSI3: &str = "GSI3";
pub const GSI3_PK: &str = "GSI3PK";
pub const GSI3_SK: &str = "GSI3SK";

/// The key prefix of Cash top-ups, for IAM's `dynamodb:LeadingKeys`. A top-up is keyed by its
/// id alone: Stripe's webhook names it by id (`client_reference_id`) and nothing else; it carries
/// its `userId`, and a fan reads only their own.
pub const TOPUP_PREFIX: &str = "TOPUP#";
pub fn topup_pk(top_up_id: &TopUpId) -> String {
    format!("{TOPUP_PREFIX}{top_up_id}")
}
pub const TOPUP_SK: &str = "TOPUP";
/// A fan's top-ups in the fan's index (GSI3), by creation.
pub fn topups_by_fan_pk(user_id: &UserId) -> String {
    format!("TOPUPS#{user_id}")
}
/// A top-up's status and its Checkout Session's id, for conditions.
pub const TOPUP_STATUS: &str = "status";
pub const TOPUP_SESSION_ID: &str = "checkoutSessionId";

/// A fan's profile, beside their purchases and links: `USER#<userId>` / `PROFILE`, with `rev`,
/// a revision every write of it moves on (a patch is conditioned on the one it read).
pub const PROFILE_SK: &str = "PROFILE";
pub const PROFILE_REVISION: &str = "rev";

/// The key prefix of display names: one item per name (its lowercase key), holding the `userId`
/// of the fan who has it, so that two fans racing for one name race for one item.
pub const NAME_PREFIX: &str = "NAME#";
pub fn name_pk(key: &domain::profile::name::NameKey) -> String {
    format!("{NAME_PREFIX}{key}")
}
pub const NAME_SK: &str = "NAME";
pub const NAME_USER_ID: &str = "userId";

/// The key prefix of what the public sees of a fan (their locker room and stats), apart from
/// `USER#` so that the public function's IAM (`dynamodb:LeadingKeys`) cannot reach a fan's
/// e-mail, links or purchases.
pub const FAN_PREFIX: &str = "FAN#";
pub fn fan_pk(user_id: &domain::ids::UserId) -> String {
    format!("{FAN_PREFIX}{user_id}")
}
/// The public face: copies of the profile's public fields, and the locker room.
pub const SHOW_SK: &str = "SHOW";
/// The stats: `packsOpened`, `itemsOwned` and one `r_<rarity>` number per rarity, each added to
/// by the opening that changes it.
pub const STATS_SK: &str = "STATS";
pub const STATS_PACKS_OPENED: &str = "packsOpened";
pub const STATS_ITEMS_OWNED: &str = "itemsOwned";
pub const STATS_RARITY_PREFIX: &str = "r_";

/// The key prefix of leagues, and of the packs of a league in `GSI2`.
pub const LEAGUE_PREFIX: &str = "LEAGUE#";
pub fn league_pk(league_id: &LeagueId) -> String {
    format!("{LEAGUE_PREFIX}{league_id}")
}
pub const LEAGUE_SK: &str = "LEAGUE";
/// The key prefix of teams, and of the packs of a team in `GSI3`.
pub const TEAM_PREFIX: &str = "TEAM#";
pub fn team_pk(team_id: &TeamId) -> String {
    format!("{TEAM_PREFIX}{team_id}")
}
pub const TEAM_SK: &str = "TEAM";
/// The partitions of `GSI1` that hold the catalogue's lists.
pub const CATALOG_LEAGUES: &str = "CATALOG#LEAGUES";
pub const CATALOG_TEAMS: &str = "CATALOG#TEAMS";
/// A fan's pending top-ups ([`domain::topups::pending`]): `v` and one attribute per taken slot,
/// `t<k>`, a map of the top-up's id and its session's expiry. Under `TOPUP#` (a top-up id never
/// holds `#`, so no top-up has this key), so that the top-up functions reach it and nothing else.
pub fn pending_topups_pk(user_id: &domain::ids::UserId) -> String {
    format!("{TOPUP_PREFIX}USER#{user_id}")
}
pub const PENDING_TOPUPS_SK: &str = "PENDING";

pub const PENDING_SLOT_PREFIX: char = 't';
pub fn pending_slot(slot: u32) -> String {
    format!("{PENDING_SLOT_PREFIX}{slot}")
}

/// The boards' index: each board's entries written across [`BOARD_SHARDS`] partitions
/// (`BOARD#<board>#<k>`) and its sample (`BOARD#<board>#sample`), sorted on the rank key (a
/// number: the score, then who reached it first; [`domain::leaderboards::rank_key`]).
///
/// [`BOARD_SHARDS`]: domain::leaderboards::BOARD_SHARDS
pub const GSI4: &str = "GSI4";
pub const GSI4_PK: &str = "GSI4PK";
pub const GSI4_SK: &str = "GSI4SK";
pub const BOARD_PREFIX: &str = "BOARD#";
/// Shard `shard` of `board` in `GSI4`.
pub fn board_shard_pk(board: &domain::leaderboards::Board, shard: u32) -> String {
    format!("{BOARD_PREFIX}{board}#{shard}")
}
/// The sample partition of `board` in `GSI4`.
pub fn board_sample_pk(board: &domain::leaderboards::Board) -> String {
    format!("{BOARD_PREFIX}{board}#sample")
}
/// A fan's score on a board (`FAN#<userId>`), and its copy in the sample when the fan is sampled.
pub fn score_sk(board: &domain::leaderboards::Board) -> String {
    format!("SCORE#{board}")
}
pub fn sample_sk(board: &domain::leaderboards::Board) -> String {
    format!("SAMPLE#{board}")
}
/// A score item's rank key's score part (`score` × 10^21): the opening adds to it, and sets the
/// rank key (`GSI4SK`) from it, in one update that reads nothing first.
pub const SCORE_BASE: &str = "scoreBase";
/// The key prefix of queue seeds: only seed-packs and the keeper reach it.
pub const QSEED_PREFIX: &str = "QSEED#";
pub fn qseed_pk(pack_id: &PackId) -> String {
    format!("{QSEED_PREFIX}{pack_id}")
}
pub const QSEED_SK: &str = "QSEED";
/// The queue seed (a binary attribute of 32 bytes).
pub const QSEED_SEED: &str = "seed";

/// The key prefix of a queue's items (state, pages, entries): the queue function's reach.
pub const QUEUE_PREFIX: &str = "QUEUE#";
/// The partition of a queue's state and pages.
pub fn queue_pk(pack_id: &PackId) -> String {
    format!("{QUEUE_PREFIX}{pack_id}")
}
pub const QUEUE_STATE_SK: &str = "STATE";
/// The partition of `GSI1` holding the queues not yet finished, by close: the keeper's work.
pub const PENDING_QUEUES: &str = "QUEUES#PENDING";
/// A pending queue's `GSI1SK`: its close then its pack, so that key order is close order.
pub fn pending_queue_key(closes_at: domain::timestamp::Timestamp, pack_id: &PackId) -> String {
    domain::timestamp::time_key(closes_at, pack_id.as_str())
}
/// A queue state's stored status (`open`, `closed`, `drawn`, `finished`).
pub const QUEUE_STATUS: &str = "status";
/// The last position admitted (a number).
pub const QUEUE_ADMITTED_THROUGH: &str = "admittedThrough";
/// When the keeper last claimed positions (RFC 3339): the estimates' start.
pub const QUEUE_LAST_WAVE_AT: &str = "lastWaveAt";
/// The report's counters on the state (numbers).
pub const QUEUE_BOUGHT: &str = "bought";
pub const QUEUE_LAPSED: &str = "lapsed";
/// The keeper's mark (a number; absent: 0): every position up to it is over (lapsed, done or
/// sold out), so a pass reads the admitted entries after it only.
pub const QUEUE_OVER_THROUGH: &str = "overThrough";
/// Until when a keeper holds a closed line's draw (Unix nanoseconds, a number).
pub const QUEUE_DRAW_LEASE: &str = "drawLease";

/// A fan's entry in `pack_id`'s queue: its own partition (pack ids never hold `#`).
pub fn entry_pk(pack_id: &PackId, user_id: &UserId) -> String {
    format!("{QUEUE_PREFIX}{pack_id}#USER#{user_id}")
}
pub const ENTRY_SK: &str = "ENTRY";
/// A fan's queue entries in the fan's index (GSI3), by join.
pub fn entries_by_fan_pk(user_id: &UserId) -> String {
    format!("ENTRIES#{user_id}")
}

/// One of a line's exclusion counters (`domain::queue::excluded`): a key of its own per shard,
/// so that refusals spread over 64 partitions' worth of keys.
pub fn exclusion_pk(pack_id: &PackId, shard: u32) -> String {
    format!("{QUEUE_PREFIX}{pack_id}#EXCLUDED#{shard:02}")
}
pub const EXCLUSION_SK: &str = "EXCLUDED";
/// An entry's status (`waiting`, `queued`, `admitted`, `lapsed`, `done`, `sold_out`).
pub const ENTRY_STATUS: &str = "status";
/// An entry's position (a number, from the draw).
pub const ENTRY_POSITION: &str = "position";
/// When an admitted entry's window ends, in Unix nanoseconds (a number), for conditions.
pub const ENTRY_PASS_EXPIRES_AT: &str = "passExpiresAt";
/// Units the fan started while admitted (a number).
pub const ENTRY_BOUGHT: &str = "bought";
/// Shard `shard` of a queue's entry index (`GSI2`): its entries by id.
pub fn queue_entries_pk(pack_id: &PackId, shard: u32) -> String {
    format!("QENTRIES#{pack_id}#{shard}")
}
/// Page `page` (from 0) of a queue's sorted entrants.
pub fn entrants_sk(page: u32) -> String {
    format!("ENTRANTS#{page:06}")
}
/// A closed queue's entrants index: each page's first id and Merkle root (a proof's reads).
pub const ENTRANTS_INDEX_SK: &str = "ENTRANTS#INDEX";
/// Page `page` (from 0) of a queue's drawn order.
pub fn order_sk(page: u32) -> String {
    format!("ORDER#{page:06}")
}

/// Every quest, under one partition (`QUEST#ALL`, so IAM can name its prefix): the operator
/// seeds a few, read in one Query.
pub const QUESTS_PK: &str = "QUEST#ALL";
pub const QUEST_PREFIX: &str = "QUEST#";
pub fn quest_sk(quest_id: &domain::ids::QuestId) -> String {
    format!("{QUEST_PREFIX}{quest_id}")
}

/// A fan's claim of a quest, on their `USER#` partition.
pub const CLAIM_PREFIX: &str = "CLAIM#";
pub fn claim_sk(quest_id: &domain::ids::QuestId) -> String {
    format!("{CLAIM_PREFIX}{quest_id}")
}

/// The quest a claim's `Idempotency-Key` claimed.
pub fn claim_key_sk(claim_id: &str) -> String {
    format!("CLAIMKEY#{claim_id}")
}

/// A fan's rewards list: their partition of GSI3.
pub const REWARDS_PREFIX: &str = "REWARDS#";
pub fn rewards_pk(user_id: &UserId) -> String {
    format!("{REWARDS_PREFIX}{user_id}")
}
/// Rate-limit counters: one item per (class, scope, hashed key, window), deleted by the table's
/// TTL ([`TTL`]) after its window. Its own partition per fan or address and class: no key is
/// shared by two fans (docs/rate-limits.md).
pub const RATE_PREFIX: &str = "RATE#";
pub fn rate_pk(counter: &domain::ratelimit::Counter) -> String {
    format!(
        "{RATE_PREFIX}{}#{}#{}",
        counter.class.name(),
        counter.scope.name(),
        counter.key
    )
}
pub fn rate_sk(counter: &domain::ratelimit::Counter) -> String {
    format!("W#{}", counter.window.start)
}
/// A counter's count of requests in its window.
pub const RATE_COUNT: &str = "n";

/// Spent human-check tokens, by the SHA-256 of the token: a token is used once.
pub const HUMAN_PREFIX: &str = "HUMAN#";
pub fn human_pk(token_hash: &str) -> String {
    format!("{HUMAN_PREFIX}{token_hash}")
}
pub const HUMAN_SK: &str = "HUMAN";

/// The table's time-to-live attribute (seconds since the epoch): DynamoDB deletes an item some
/// time after it passes. Only the counters and spent tokens carry it.
pub const TTL: &str = "ttl";
