//! The operations on quests and their claims.

use std::collections::BTreeSet;
use std::future::Future;

use crate::StoreError;
use domain::ids::{QuestId, UserId};
use domain::purchases::mine::Page;
use domain::quests::{Claim, Grant, Quest};

/// Writes the operator's quests (each put whole: a re-seed replaces a quest as the file has it).
pub trait SeedQuests: Send + Sync {
    fn seed_quests(&self, quests: &[Quest]) -> impl Future<Output = Result<(), StoreError>> + Send;
}

/// Every quest seeded, by id: one Query of the quests' partition (the operator seeds a few).
pub trait ListQuests: Send + Sync {
    fn list_quests(&self) -> impl Future<Output = Result<Vec<Quest>, StoreError>> + Send;
}

/// One quest, or `None`.
pub trait GetQuest: Send + Sync {
    fn get_quest(
        &self,
        quest_id: &QuestId,
    ) -> impl Future<Output = Result<Option<Quest>, StoreError>> + Send;
}

/// The quests a fan claimed (one Query of their claim items), and one claim.
pub trait GetClaims: Send + Sync {
    fn claimed_quests(
        &self,
        user_id: &UserId,
    ) -> impl Future<Output = Result<BTreeSet<QuestId>, StoreError>> + Send;

    fn get_claim(
        &self,
        user_id: &UserId,
        quest_id: &QuestId,
    ) -> impl Future<Output = Result<Option<Claim>, StoreError>> + Send;
}

/// What a claim did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Claimed {
    /// Claimed now: the reward credited, or its purchase made, in the same transaction.
    Created(Claim),
    /// Claimed before (with this key or another): that claim, nothing changed.
    Repeated(Claim),
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ClaimError {
    /// The key was used before for another quest's claim.
    #[error("the idempotency key was used for another claim")]
    KeyReused,
    /// The balance would pass the largest amount: nothing was written.
    #[error("the balance would pass the largest amount")]
    BalanceFull,
    /// A pack reward's pack has no unit left, or is not on sale (`SoldOut` or `NotOnSale`):
    /// nothing was written, the quest stays claimable.
    #[error("the reward's pack cannot be had: {0}")]
    Pack(domain::purchases::StartRefusal),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// The answer to a Cash claim whose credit was refused (the claim and its key free), the same in
/// both stores: the credit's reference in use (by any credit) means the quest's credit exists
/// without its claim; else the fan's balance is full.
pub fn credit_refused(reference_used: bool) -> ClaimError {
    if reference_used {
        StoreError::internal("claim: the quest's credit exists without its claim").into()
    } else {
        ClaimError::BalanceFull
    }
}

/// Claims a quest's reward for a fan, in one transaction: the claim item (only while the fan
/// has none for the quest), the key item (only while the key names no claim), then for Cash the
/// credit entry (only while its reference, the quest's and the fan's, is unused) and the
/// balance; for a pack a unit of one of its shares (only while it has one and the pack sells,
/// its terms as read), the buyer's nonce (only as read) and the purchase, paid at price 0 (only
/// while its id is free). Any number of concurrent claims grant once; all of them answer that
/// claim. A pack reward does not count towards the pack's `maxPerUser` (the fan did not choose
/// to buy it; the limit caps what a fan buys, and the quest already caps the reward to one).
pub trait ClaimQuest: Send + Sync {
    fn claim_quest(
        &self,
        claim: &Claim,
        grant: &Grant,
    ) -> impl Future<Output = Result<Claimed, ClaimError>> + Send;
}

/// A page of the fan's claims, newest first (`after`: the list key the page before ended on).
pub trait ListClaims: Send + Sync {
    fn list_claims(
        &self,
        user_id: &UserId,
        limit: usize,
        after: Option<&str>,
    ) -> impl Future<Output = Result<Page<Claim>, StoreError>> + Send;
}

/// Every quest operation.
pub trait QuestStore:
    SeedQuests + ListQuests + GetQuest + GetClaims + ClaimQuest + ListClaims
{
}
impl<S: SeedQuests + ListQuests + GetQuest + GetClaims + ClaimQuest + ListClaims> QuestStore for S {}
