//! The fan's own view on DynamoDB: each page one `Query` of one fan's partition of an index,
//! newest first, with the filters as a `FilterExpression`; when the entries it skipped left the
//! page short, one more `Query` from where the first stopped (never more: the page may then be
//! short, with a cursor). Balances are one strongly consistent `GetItem`.
//!
//! - purchases: GSI3, `USER#<userId>`, by `<reservedAt>#<purchaseId>`;
//! - items: GSI2, `USER#<userId>`, by `<openedAt>#<purchaseId>` (opened purchases only);
//! - ledger: GSI3, `CASH#<userId>`, by `<at>#<entryId>` (credits and debits).

use aws_sdk_dynamodb::types::AttributeValue;

use super::purchases::{purchase_from_item, status_text};
use super::records::{balances_from_item, ledger_entry_from_item};
use super::{DynamoStore, Item, classify, number, s};
use crate::StoreError;
use crate::cash::{GetBalances, ListLedger};
use crate::purchases::{ListMyItems, ListMyPurchases};
use crate::schema::{
    CASH_SK, GSI2, GSI2_PK, GSI2_SK, GSI3, GSI3_PK, GSI3_SK, LEDGER_CURRENCY, PURCHASE_EXPIRES_NS,
    PURCHASE_STATUS, cash_pk, user_pk,
};
use domain::cash::Money;
use domain::cash::ledger::{LedgerEntry, LedgerQuery};
use domain::ids::{PackId, UserId};
use domain::purchases::mine::{MyItem, MyItemsQuery, MyPurchasesQuery, Page};
use domain::purchases::{Purchase, PurchaseStatus};

/// The most Queries one page costs.
const MAX_QUERIES_PER_PAGE: usize = 2;

/// One Query of a fan's partition of an index, newest first.
pub(super) struct NewestFirst<'a> {
    pub(super) index: &'a str,
    pub(super) pk_name: &'a str,
    pub(super) sk_name: &'a str,
    pub(super) pk: String,
    /// Only keys below this one (or at it, when `inclusive`).
    pub(super) below: Option<(&'a str, bool)>,
    /// A filter expression with its `#name`s and `:value`s, or none.
    pub(super) filter: Filter,
}

#[derive(Default)]
pub(super) struct Filter {
    terms: Vec<String>,
    names: Vec<(&'static str, &'static str)>,
    values: Vec<(&'static str, AttributeValue)>,
}

impl Filter {
    fn and(&mut self, term: &str) {
        self.terms.push(format!("({term})"));
    }
}

impl DynamoStore {
    /// Up to `limit` entries evaluated from `start` on: the ones the filter kept, and the key of
    /// the last one evaluated when more may follow.
    async fn query_newest(
        &self,
        query: &NewestFirst<'_>,
        limit: usize,
        start: Option<Item>,
    ) -> Result<(Vec<Item>, Option<Item>), StoreError> {
        let mut condition = "#pk = :pk".to_owned();
        let mut request = self
            .client
            .query()
            .table_name(&self.table)
            .index_name(query.index)
            .scan_index_forward(false)
            .limit(i32::try_from(limit).unwrap_or(i32::MAX))
            .expression_attribute_names("#pk", query.pk_name)
            .expression_attribute_values(":pk", s(&query.pk))
            .set_exclusive_start_key(start);
        if let Some((below, inclusive)) = query.below {
            condition.push_str(if inclusive {
                " AND #sk <= :below"
            } else {
                " AND #sk < :below"
            });
            request = request
                .expression_attribute_names("#sk", query.sk_name)
                .expression_attribute_values(":below", s(below));
        }
        if !query.filter.terms.is_empty() {
            request = request.filter_expression(query.filter.terms.join(" AND "));
            for (name, attribute) in &query.filter.names {
                request = request.expression_attribute_names(*name, *attribute);
            }
            for (name, value) in &query.filter.values {
                request = request.expression_attribute_values(*name, value.clone());
            }
        }
        let output = request
            .key_condition_expression(condition)
            .send()
            .await
            .map_err(|e| classify("Query", e))?;
        let last = output.last_evaluated_key.filter(|key| !key.is_empty());
        Ok((output.items.unwrap_or_default(), last))
    }

    /// A page of `limit` entries of `query` (fewer when [`MAX_QUERIES_PER_PAGE`] Queries found
    /// no more), each read by `take`, which answers whether the page is full and, when it
    /// filled up inside the entries read, where the next page starts.
    pub(super) async fn page_newest<T>(
        &self,
        query: &NewestFirst<'_>,
        wanted: impl Fn(usize) -> usize,
        mut take: impl FnMut(Item, &mut Vec<T>) -> Result<Option<String>, StoreError>,
        next_of_last: impl Fn(&Item) -> Option<String>,
    ) -> Result<Page<T>, StoreError> {
        let mut entries = Vec::new();
        let mut start = None;
        for round in 1..=MAX_QUERIES_PER_PAGE {
            let (items, last) = self
                .query_newest(query, wanted(entries.len()), start)
                .await?;
            for item in items {
                if let Some(next) = take(item, &mut entries)? {
                    return Ok(Page {
                        entries,
                        next: Some(next),
                    });
                }
            }
            match last {
                None => {
                    return Ok(Page {
                        entries,
                        next: None,
                    });
                }
                Some(last) if round == MAX_QUERIES_PER_PAGE || wanted(entries.len()) == 0 => {
                    let next = next_of_last(&last).ok_or_else(|| {
                        StoreError::internal("a list's last key has no index key")
                    })?;
                    return Ok(Page {
                        entries,
                        next: Some(next),
                    });
                }
                Some(last) => start = Some(last),
            }
        }
        unreachable!("the last round returns")
    }
}

impl DynamoStore {
    /// A page of `limit` entries of a fan's partition `pk` of GSI3, newest first, below the
    /// list key `after`, each read by `read` (a fan's claims, orders).
    pub(super) async fn page_of_gsi3<T>(
        &self,
        pk: String,
        limit: usize,
        after: Option<&str>,
        read: fn(Item) -> Result<T, StoreError>,
    ) -> Result<Page<T>, StoreError> {
        let query = NewestFirst {
            index: GSI3,
            pk_name: GSI3_PK,
            sk_name: GSI3_SK,
            pk,
            below: after.map(|after| (after, false)),
            filter: Filter::default(),
        };
        self.page_newest(
            &query,
            |found| limit - found,
            |item, page| {
                page.push(read(item)?);
                Ok(None)
            },
            |last| index_key(last, GSI3_SK),
        )
        .await
    }
}

pub(super) fn index_key(item: &Item, name: &str) -> Option<String> {
    item.get(name)?.as_s().ok().cloned()
}

/// The filter of a purchase list: the status as shown at `now` (a hold past `expiresAt` is
/// `expired`), the pack.
fn purchases_filter(query: &MyPurchasesQuery) -> Filter {
    let mut filter = Filter::default();
    if let Some(status) = query.status {
        filter.names.push(("#status", PURCHASE_STATUS));
        let term = match status.status() {
            PurchaseStatus::Reserved => "#status = :reserved AND #expires > :now",
            PurchaseStatus::Expired => {
                "#status = :expired OR (#status = :reserved AND #expires <= :now)"
            }
            PurchaseStatus::Completed => "#status = :completed",
            PurchaseStatus::Opened => "#status = :opened",
        };
        if term.contains("#expires") {
            filter.names.push(("#expires", PURCHASE_EXPIRES_NS));
            filter.values.push((":now", number(query.now.unix_nanos())));
            filter
                .values
                .push((":reserved", status_text(PurchaseStatus::Reserved)));
        }
        for (placeholder, status) in [
            (":expired", PurchaseStatus::Expired),
            (":completed", PurchaseStatus::Completed),
            (":opened", PurchaseStatus::Opened),
        ] {
            if term.contains(placeholder) {
                filter.values.push((placeholder, status_text(status)));
            }
        }
        filter.and(term);
    }
    pack_filter(&mut filter, query.pack_id.as_ref());
    filter
}

fn pack_filter(filter: &mut Filter, pack_id: Option<&PackId>) {
    if let Some(pack_id) = pack_id {
        filter.names.push(("#pack", "packId"));
        filter.values.push((":pack", s(pack_id.as_str())));
        filter.and("#pack = :pack");
    }
}

impl ListMyPurchases for DynamoStore {
    async fn list_my_purchases(
        &self,
        query: &MyPurchasesQuery,
    ) -> Result<Page<Purchase>, StoreError> {
        let index_query = NewestFirst {
            index: GSI3,
            pk_name: GSI3_PK,
            sk_name: GSI3_SK,
            pk: user_pk(&query.user_id),
            below: query.after.as_deref().map(|after| (after, false)),
            filter: purchases_filter(query),
        };
        self.page_newest(
            &index_query,
            |found| query.limit - found,
            |item, page: &mut Vec<Purchase>| {
                let purchase = purchase_from_item(item)?;
                // The filter expression decided already; the rule is checked here too, so that
                // the list and the rule cannot drift apart.
                if query.matches(&purchase) {
                    page.push(purchase);
                }
                Ok(None)
            },
            |last| index_key(last, GSI3_SK),
        )
        .await
    }
}

impl ListMyItems for DynamoStore {
    async fn list_my_items(&self, query: &MyItemsQuery) -> Result<Page<MyItem>, StoreError> {
        let mut filter = Filter::default();
        pack_filter(&mut filter, query.pack_id.as_ref());
        let index_query = NewestFirst {
            index: GSI2,
            pk_name: GSI2_PK,
            sk_name: GSI2_SK,
            pk: user_pk(&query.user_id),
            // A page that stopped inside a purchase resumes in it.
            below: query
                .after
                .as_ref()
                .map(|after| (after.key.as_str(), after.slot.is_some())),
            filter,
        };
        self.page_newest(
            &index_query,
            // Purchases to read: every opened purchase holds at least one item; one more for the
            // purchase the page before stopped inside.
            |found| (query.limit - found) + usize::from(found < query.limit),
            |item, page| {
                let purchase = purchase_from_item(item)?;
                Ok(query
                    .take_items(&purchase, page)
                    .map(|position| position.encode()))
            },
            |last| {
                index_key(last, GSI2_SK)
                    .map(|key| domain::purchases::mine::ItemsPosition { key, slot: None }.encode())
            },
        )
        .await
    }
}

impl ListLedger for DynamoStore {
    async fn list_ledger(&self, query: &LedgerQuery) -> Result<Page<LedgerEntry>, StoreError> {
        let mut filter = Filter::default();
        if let Some(currency) = &query.currency {
            filter.names.push(("#currency", LEDGER_CURRENCY));
            filter.values.push((":currency", s(currency)));
            filter.and("#currency = :currency");
        }
        let index_query = NewestFirst {
            index: GSI3,
            pk_name: GSI3_PK,
            sk_name: GSI3_SK,
            pk: cash_pk(&query.user_id),
            below: query.after.as_deref().map(|after| (after, false)),
            filter,
        };
        self.page_newest(
            &index_query,
            |found| query.limit - found,
            |item, page| {
                let entry = ledger_entry_from_item(item)?;
                if query.matches(&entry) {
                    page.push(entry);
                }
                Ok(None)
            },
            |last| index_key(last, GSI3_SK),
        )
        .await
    }
}

impl GetBalances for DynamoStore {
    async fn get_balances(&self, user_id: &UserId) -> Result<Vec<Money>, StoreError> {
        let output = self
            .client
            .get_item()
            .table_name(&self.table)
            .set_key(Some(super::key(cash_pk(user_id), CASH_SK)))
            .consistent_read(true)
            .send()
            .await
            .map_err(|e| classify("GetItem", e))?;
        balances_from_item(output.item)
    }
}

impl crate::purchases::SeedPurchases for DynamoStore {
    async fn seed_purchases(&self, purchases: &[Purchase]) -> Result<(), StoreError> {
        use aws_sdk_dynamodb::types::{PutRequest, WriteRequest};
        // BatchWriteItem: 25 puts a request, not a transaction each.
        for chunk in purchases.chunks(25) {
            let mut writes = chunk
                .iter()
                .map(|purchase| {
                    let put = PutRequest::builder()
                        .set_item(Some(super::purchases::purchase_item(purchase)?))
                        .build()
                        .map_err(|e| StoreError::internal_from("put request", e))?;
                    Ok(WriteRequest::builder().put_request(put).build())
                })
                .collect::<Result<Vec<_>, StoreError>>()?;
            while !writes.is_empty() {
                let output = self
                    .client
                    .batch_write_item()
                    .request_items(&self.table, writes)
                    .send()
                    .await
                    .map_err(|e| classify("BatchWriteItem", e))?;
                writes = output
                    .unprocessed_items
                    .and_then(|mut left| left.remove(&self.table))
                    .unwrap_or_default();
            }
        }
        Ok(())
    }
}
