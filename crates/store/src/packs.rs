//! The operations on packs.

use std::future::Future;

use crate::StoreError;
use domain::ids::PackId;
use domain::packs::Pack;
use domain::packs::draw::ServerSeed;
use domain::packs::listing::{Page, PageRequest};
use domain::packs::seed::{ReseedRefusal, SeedWrite, plan_reseed};
use domain::timestamp::Timestamp;

/// A pack as stored: the pack (items and `remaining` included), its server seed, and its
/// revision, which every seeding write moves on (purchases change `remaining` only).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredPack {
    pub pack: Pack,
    pub seed: ServerSeed,
    pub revision: u64,
}

/// A page of the active packs, in list order, after `request.after`.
pub trait ListActivePacks: Send + Sync {
    fn list_active_packs(
        &self,
        request: &PageRequest,
    ) -> impl Future<Output = Result<Page, StoreError>> + Send;
}

/// The first `limit` packs of the listing whose sale has not started at `now`, soonest first
/// (the dashboard's upcoming drops): one Query of the listing index below the started bound.
pub trait ListUpcomingPacks: Send + Sync {
    fn list_upcoming_packs(
        &self,
        now: domain::timestamp::Timestamp,
        limit: usize,
    ) -> impl Future<Output = Result<Vec<domain::packs::document::PackDocument>, StoreError>> + Send;
}

/// A pack with its items and server seed, or `None`.
pub trait GetPack: Send + Sync {
    fn get_pack(
        &self,
        pack_id: &PackId,
    ) -> impl Future<Output = Result<Option<StoredPack>, StoreError>> + Send;
}

/// Why a seeding write did not happen.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SeedPackError {
    /// The stored pack is not as read (another write came between, or its sale started): nothing
    /// was written; read it again and decide again.
    #[error("the stored pack changed since it was read")]
    Changed,
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Writes a pack of a seed file as [`SeedWrite`] says, in one atomic write whose condition is
/// that the stored pack is still at `revision` (and, for [`SeedWrite::Replace`], that its sale
/// has not started at `now`). A created pack gets a new server seed; the seed never changes after.
pub trait SeedPack: Send + Sync {
    fn seed_pack(
        &self,
        pack: &Pack,
        write: SeedWrite,
        revision: u64,
        now: Timestamp,
    ) -> impl Future<Output = Result<(), SeedPackError>> + Send;
}

/// A pack's supply as its shares hold it, read strongly consistent: the exact `remaining`,
/// where a pack's `remaining` in the list and in get-pack is a summary that may lag; with the
/// units held (reserved purchases, their holds run out or not, until released or paid) and sold
/// (paid), each counted on its own, so that the books can be checked: remaining + held + sold
/// is what the pack was seeded with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Supply {
    /// The units left in each share, by share number.
    pub shares: Vec<u64>,
    pub held: u64,
    pub sold: u64,
}

impl Supply {
    pub fn remaining(&self) -> u64 {
        self.shares.iter().sum()
    }

    /// remaining + held + sold: the units the pack was seeded with, when its books balance.
    pub fn accounted(&self) -> u64 {
        self.remaining() + self.held + self.sold
    }
}

/// The supply of a pack, or `None` when no such pack is stored.
pub trait ReadSupply: Send + Sync {
    fn read_supply(
        &self,
        pack_id: &PackId,
    ) -> impl Future<Output = Result<Option<Supply>, StoreError>> + Send;
}

/// Writes each listed pack's `remaining` summary from its shares, where it differs; returns
/// how many packs it changed. The sweep runs it, so a list page or get-pack answers a
/// `remaining` at most one refresh old.
pub trait RefreshRemaining: Send + Sync {
    fn refresh_remaining(&self) -> impl Future<Output = Result<u64, StoreError>> + Send;
}

/// Copies the server seed of each listed pack whose seed is revealed at `now` onto the pack's
/// public item, once; returns how many it published. The sweep runs it, so that functions that
/// may not read a seed before its reveal (get-purchase) can show it after.
pub trait PublishRevealedSeeds: Send + Sync {
    fn publish_revealed_seeds(
        &self,
        now: Timestamp,
    ) -> impl Future<Output = Result<u64, StoreError>> + Send;
}

/// The server seed published on a pack's public item, once revealed.
pub trait GetRevealedSeed: Send + Sync {
    fn revealed_seed(
        &self,
        pack_id: &PackId,
    ) -> impl Future<Output = Result<Option<ServerSeed>, StoreError>> + Send;

    /// The published seeds of several packs (at most 100), in their order, in one read.
    fn revealed_seeds(
        &self,
        pack_ids: &[&PackId],
    ) -> impl Future<Output = Result<Vec<Option<ServerSeed>>, StoreError>> + Send;
}

/// Every pack operation.
pub trait PackStore:
    ListActivePacks
    + ListUpcomingPacks
    + GetPack
    + SeedPack
    + ReadSupply
    + RefreshRemaining
    + PublishRevealedSeeds
    + GetRevealedSeed
{
}
impl<
    S: ListActivePacks
        + ListUpcomingPacks
        + GetPack
        + SeedPack
        + ReadSupply
        + RefreshRemaining
        + PublishRevealedSeeds
        + GetRevealedSeed,
> PackStore for S
{
}

/// Why [`seed`] did not write a pack.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SeedFailure {
    #[error("refused: {0}; nothing was written for it")]
    Refused(#[from] ReseedRefusal),
    #[error(transparent)]
    Write(#[from] SeedPackError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Writes `pack` as a seed file says, if [`plan_reseed`] allows it over the stored pack: reads
/// it, decides, and writes on condition that nothing changed in between. Returns how it wrote.
///
/// A write refused because the pack changed is decided again on the pack as it is now, a few
/// times: another writer came between. (A write applied whose answer was lost needs no such
/// care: the SDK retries it with its ClientRequestToken, which DynamoDB answers as applied.)
pub async fn seed<S: GetPack + SeedPack>(
    store: &S,
    pack: &Pack,
    now: Timestamp,
) -> Result<SeedWrite, SeedFailure> {
    const TRIES: u32 = 3;
    let pack_id = pack
        .pack_id()
        .map_err(|e| StoreError::internal_from("seeding a pack", e))?;
    let mut tries = 1;
    loop {
        let stored = store.get_pack(&pack_id).await?;
        let write = plan_reseed(stored.as_ref().map(|stored| &stored.pack), pack, now)?;
        let revision = stored.map_or(0, |stored| stored.revision);
        match store.seed_pack(pack, write, revision, now).await {
            Err(SeedPackError::Changed) if tries < TRIES => tries += 1,
            written => return written.map(|()| write).map_err(Into::into),
        }
    }
}
