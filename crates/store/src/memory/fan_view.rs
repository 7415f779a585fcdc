//! The fan's own view in memory: the same lists, in the same order, from the same keys as the
//! DynamoDB indexes (a page here is always full when more follow; DynamoDB's may be short).

use super::MemoryStore;
use crate::StoreError;
use crate::cash::{GetBalances, ListLedger};
use crate::purchases::{ListMyItems, ListMyPurchases};
use domain::cash::Money;
use domain::cash::ledger::{LedgerEntry, LedgerQuery};
use domain::ids::UserId;
use domain::purchases::Purchase;
use domain::purchases::mine::{
    ItemsPosition, MyItem, MyItemsQuery, MyPurchasesQuery, Page, opened_list_key, purchase_list_key,
};

/// `entries` (key, entry), newest first, below `after`: the first `limit` that `wanted` keeps,
/// and the key of the last one when entries follow it.
fn page_below<T>(
    mut entries: Vec<(String, T)>,
    after: Option<&str>,
    limit: usize,
    wanted: impl Fn(&T) -> bool,
) -> Page<T> {
    entries.sort_by(|a, b| b.0.cmp(&a.0));
    let mut rest = entries
        .into_iter()
        .filter(|(key, _)| after.is_none_or(|after| key.as_str() < after))
        .filter(|(_, entry)| wanted(entry))
        .peekable();
    let mut page = Vec::new();
    let mut last = None;
    while page.len() < limit {
        let Some((key, entry)) = rest.next() else {
            break;
        };
        page.push(entry);
        last = Some(key);
    }
    Page {
        entries: page,
        next: rest.peek().and(last),
    }
}

impl MemoryStore {
    fn purchases_of(&self, user_id: &UserId) -> Vec<Purchase> {
        self.read()
            .purchases
            .iter()
            .filter(|((user, _), _)| user == user_id)
            .map(|(_, purchase)| purchase.clone())
            .collect()
    }
}

impl ListMyPurchases for MemoryStore {
    async fn list_my_purchases(
        &self,
        query: &MyPurchasesQuery,
    ) -> Result<Page<Purchase>, StoreError> {
        let keyed = self
            .purchases_of(&query.user_id)
            .into_iter()
            .map(|purchase| (purchase_list_key(&purchase), purchase))
            .collect();
        Ok(page_below(
            keyed,
            query.after.as_deref(),
            query.limit,
            |purchase| query.matches(purchase),
        ))
    }
}

impl ListMyItems for MemoryStore {
    async fn list_my_items(&self, query: &MyItemsQuery) -> Result<Page<MyItem>, StoreError> {
        let mut opened: Vec<(String, Purchase)> = self
            .purchases_of(&query.user_id)
            .into_iter()
            .filter_map(|purchase| Some((opened_list_key(&purchase)?, purchase)))
            .collect();
        opened.sort_by(|a, b| b.0.cmp(&a.0));
        let mut page = Vec::new();
        let resumes = |key: &str| match &query.after {
            None => true,
            Some(ItemsPosition { key: after, slot }) => {
                key < after.as_str() || (slot.is_some() && key == after)
            }
        };
        for (key, purchase) in opened.iter().filter(|(key, _)| resumes(key)) {
            if let Some(position) = query.take_items(purchase, &mut page) {
                // Full: a next page only when something follows the position.
                let more = match position.slot {
                    Some(_) => true,
                    None => opened.iter().any(|(other, _)| other < key),
                };
                return Ok(Page {
                    entries: page,
                    next: more.then(|| position.encode()),
                });
            }
        }
        Ok(Page {
            entries: page,
            next: None,
        })
    }
}

impl ListLedger for MemoryStore {
    async fn list_ledger(&self, query: &LedgerQuery) -> Result<Page<LedgerEntry>, StoreError> {
        let entries = self
            .read()
            .ledger
            .range((query.user_id.to_string(), String::new())..)
            .take_while(|((user, _), _)| user == query.user_id.as_str())
            .map(|((_, key), entry)| (key.clone(), entry.clone()))
            .collect();
        Ok(page_below(
            entries,
            query.after.as_deref(),
            query.limit,
            |entry| query.matches(entry),
        ))
    }
}

impl GetBalances for MemoryStore {
    async fn get_balances(&self, user_id: &UserId) -> Result<Vec<Money>, StoreError> {
        let mut balances: Vec<Money> = self
            .read()
            .balances
            .iter()
            .filter(|((user, _), _)| user == user_id)
            .map(|((_, currency), amount)| Money {
                amount: *amount,
                currency: currency.clone(),
            })
            .collect();
        balances.sort_by(|a, b| a.currency.cmp(&b.currency));
        Ok(balances)
    }
}

impl crate::purchases::SeedPurchases for MemoryStore {
    async fn seed_purchases(&self, purchases: &[Purchase]) -> Result<(), StoreError> {
        let mut tables = self.write();
        for purchase in purchases {
            tables.purchases.insert(
                (purchase.user_id.clone(), purchase.id.clone()),
                purchase.clone(),
            );
        }
        Ok(())
    }
}
