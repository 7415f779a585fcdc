//! Account deletion in memory: the same steps in the same order as on DynamoDB, each applied
//! whole under the tables' lock; a deletion runs them all at once, but waits at
//! [`Step::SettleTopUps`] as DynamoDB does.

use std::collections::BTreeMap;

use super::{MemoryStore, Tables};
use crate::StoreError;
use crate::account::{AccountDeletion, live_top_ups, top_ups_settled};
use crate::sessions::memory::SessionsTable;
use domain::account::{Deletion, Step};
use domain::ids::UserId;
use domain::purchases::PurchaseStatus;
use domain::timestamp::Timestamp;

/// The deletions, by fan.
#[derive(Default)]
struct Deletions(BTreeMap<UserId, Deletion>);

/// Re-keys the entries of `map` that `moves` gives a new key (the books kept under a
/// pseudonym).
fn rekey<K: Ord, V>(map: &mut BTreeMap<K, V>, moves: impl Fn(&K) -> Option<K>) {
    let all = std::mem::take(map);
    map.extend(all.into_iter().map(|(k, v)| (moves(&k).unwrap_or(k), v)));
}

impl Tables {
    /// Does `step` of `user_id`'s erasure whole: `false` when it must wait (pending top-ups).
    fn erase(&mut self, step: Step, user_id: &UserId, pseudonym: &UserId, now: Timestamp) -> bool {
        match step {
            Step::Done => {}
            Step::ReleaseHolds => {
                let reserved: Vec<_> = self
                    .purchases
                    .iter()
                    .filter(|(key, p)| key.0 == *user_id && p.status == PurchaseStatus::Reserved)
                    .map(|(key, p)| (key.clone(), p.expires_at))
                    .collect();
                for (key, expires_at) in reserved {
                    self.release(&key, now.max(expires_at));
                }
            }
            Step::PublicFace => {
                self.names.retain(|_, holder| holder != user_id);
                self.shown.remove(user_id);
                self.stats.remove(user_id);
                self.scores.retain(|(_, fan), _| fan != user_id);
                super::products::erase_shown(self, user_id);
            }
            Step::QueueEntries => self.queue_entries.retain(|(_, fan), _| fan != user_id),
            Step::SettleTopUps => {
                if let Some(pending) = self.pending_top_ups.get(user_id)
                    && !top_ups_settled(pending, now)
                {
                    return false;
                }
            }
            Step::TopUps => {
                for top_up in self.top_ups.values_mut() {
                    if top_up.user_id == *user_id {
                        top_up.user_id = pseudonym.clone();
                    }
                }
            }
            Step::Ledger => {
                for credit in self.credits.values_mut() {
                    if credit.user_id == *user_id {
                        credit.user_id = pseudonym.clone();
                    }
                }
                rekey(&mut self.debits, |(fan, id)| {
                    (fan == user_id).then(|| (pseudonym.clone(), id.clone()))
                });
                rekey(&mut self.ledger, |(fan, key)| {
                    (fan == user_id.as_str()).then(|| (pseudonym.to_string(), key.clone()))
                });
            }
            Step::Balance => {
                let held: Vec<_> = self
                    .balances
                    .keys()
                    .filter(|(fan, _)| fan == user_id)
                    .cloned()
                    .collect();
                for key in held {
                    if let Some(amount) = self.balances.remove(&key) {
                        *self.balances.entry((pseudonym.clone(), key.1)).or_default() += amount;
                    }
                }
            }
            Step::OwnItems => {
                self.links.retain(|(fan, _), _| fan != user_id.as_str());
                self.wallets.remove(user_id);
                self.purchases.retain(|(fan, _), _| fan != user_id);
                self.buys.retain(|(fan, _), _| fan != user_id);
                self.unpaid.remove(user_id.as_str());
                self.pending_top_ups.remove(user_id);
                self.profiles.remove(user_id);
                self.claims.retain(|(fan, _), _| fan != user_id);
                self.claim_keys.retain(|(fan, _), _| fan != user_id);
                super::products::erase_owned(self, user_id);
            }
        }
        true
    }
}

impl AccountDeletion for MemoryStore {
    async fn deletion(&self, user_id: &UserId) -> Result<Option<Deletion>, StoreError> {
        Ok(self
            .read()
            .table::<Deletions>()
            .and_then(|table| table.0.get(user_id).cloned()))
    }

    async fn pending_top_ups(&self, user_id: &UserId, now: Timestamp) -> Result<u32, StoreError> {
        Ok(self
            .read()
            .pending_top_ups
            .get(user_id)
            .map_or(0, |pending| live_top_ups(pending, now)))
    }

    async fn begin_deletion(&self, deletion: &Deletion) -> Result<Deletion, StoreError> {
        let mut tables = self.write();
        if let Some(existing) = tables
            .table::<Deletions>()
            .and_then(|t| t.0.get(&deletion.user_id))
        {
            return Ok(existing.clone());
        }
        tables
            .table_mut::<Deletions>()
            .0
            .insert(deletion.user_id.clone(), deletion.clone());
        tables
            .table_mut::<SessionsTable>()
            .refuse_all(&deletion.user_id);
        tables.emit(vec![deletion.event()], deletion.requested_at);
        Ok(deletion.clone())
    }

    async fn erase_step(
        &self,
        deletion: &Deletion,
        pseudonym: &UserId,
        now: Timestamp,
    ) -> Result<Deletion, StoreError> {
        let mut tables = self.write();
        let Some(mut stored) = tables
            .table::<Deletions>()
            .and_then(|t| t.0.get(&deletion.user_id).cloned())
        else {
            return Err(StoreError::internal("deletion: erased before it was begun"));
        };
        while !stored.is_done() && tables.erase(stored.step, &stored.user_id, pseudonym, now) {
            stored = stored.clone().finished(stored.step, now);
        }
        tables
            .table_mut::<Deletions>()
            .0
            .insert(stored.user_id.clone(), stored.clone());
        Ok(stored)
    }

    async fn unfinished_deletions(&self, max: usize) -> Result<Vec<Deletion>, StoreError> {
        let tables = self.read();
        let mut unfinished: Vec<Deletion> = tables
            .table::<Deletions>()
            .map(|t| t.0.values().filter(|d| !d.is_done()).cloned().collect())
            .unwrap_or_default();
        unfinished.sort_by_key(|d| d.requested_at);
        unfinished.truncate(max);
        Ok(unfinished)
    }
}
