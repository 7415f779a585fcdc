//! Rate-limit counters and spent human-check tokens in memory, under the store's one lock, with
//! the conditions DynamoDB is given. Items past their TTL are dropped as the table's TTL drops
//! them (here when the maps are next written; counters only before their map would grow).

use std::collections::HashMap;
use std::collections::hash_map::Entry;

use super::MemoryStore;
use crate::StoreError;
use crate::condition::{Attributes, Condition, Value};
use crate::ratelimit::{SpendToken, TakeFromWindow, counted, under_quota, unspent};
use crate::schema::{PK, RATE_COUNT};
use domain::ratelimit::{Counter, Taken};
use domain::timestamp::unix_now;

/// The counters: the count of each window and when it expires, and the conditions of a take.
#[derive(Default)]
pub(super) struct Counters {
    windows: HashMap<Counter, (u32, i64)>,
    conditions: UnderQuota,
}

/// The condition of a take under each quota seen (the policy's few), built once per quota, not
/// on every take: it was an allocation and its drop per limited request.
#[derive(Default)]
struct UnderQuota(Vec<(u32, Condition)>);

impl UnderQuota {
    fn of(&mut self, quota: u32) -> &Condition {
        let at = match self.0.iter().position(|(of, _)| *of == quota) {
            Some(at) => at,
            None => {
                self.0.push((quota, under_quota(quota)));
                self.0.len() - 1
            }
        };
        &self.0[at].1
    }
}

/// A counter's item as DynamoDB holds it: its count, if it exists.
struct CountItem(Option<u32>);

impl Attributes for CountItem {
    fn attribute(&self, path: &[&str]) -> Option<Value> {
        match path {
            [name] if *name == RATE_COUNT => self.0.map(Value::from),
            [name] if *name == PK => self.0.map(|_| Value::from("RATE#")),
            _ => None,
        }
    }
}

/// A spent token's item: it exists.
struct SpentItem;

impl Attributes for SpentItem {
    fn attribute(&self, path: &[&str]) -> Option<Value> {
        (path == [PK]).then(|| Value::from("HUMAN#"))
    }
}

impl TakeFromWindow for MemoryStore {
    async fn take(&self, counter: &Counter, quota: u32) -> Result<Taken, StoreError> {
        let mut counters = self.counters();
        let Counters {
            windows,
            conditions,
        } = &mut *counters;
        // Ended windows are dropped before the map would grow, not on every take: its size
        // stays within twice the live windows'.
        if windows.len() == windows.capacity() {
            let now = unix_now();
            windows.retain(|_, (_, expires_at)| *expires_at > now);
        }
        // One lookup for the read and the write.
        let entry = windows.entry(counter.clone());
        let count = match &entry {
            Entry::Occupied(item) => Some(item.get().0),
            Entry::Vacant(_) => None,
        };
        if !conditions.of(quota).holds(Some(&CountItem(count))) {
            return Ok(Taken::Full);
        }
        let count = count.unwrap_or(0) + 1;
        *entry.or_default() = (count, counter.expires_at());
        Ok(Taken::Counted(count))
    }

    async fn give_back(&self, counter: &Counter) -> Result<(), StoreError> {
        let mut counters = self.counters();
        let count = counters.windows.get(counter).map(|(count, _)| *count);
        if counted().holds(Some(&CountItem(count)))
            && let Some((count, _)) = counters.windows.get_mut(counter)
        {
            *count = count.saturating_sub(1);
        }
        Ok(())
    }
}

impl SpendToken for MemoryStore {
    async fn spend(&self, token_hash: &str, expires_at: i64) -> Result<bool, StoreError> {
        let mut tables = self.write();
        let now = unix_now();
        tables.spent.retain(|_, until| *until > now);
        let item = tables
            .spent
            .get(token_hash)
            .map(|_| &SpentItem as &dyn Attributes);
        if !unspent().holds(item) {
            return Ok(false);
        }
        tables.spent.insert(token_hash.to_owned(), expires_at);
        Ok(true)
    }
}
