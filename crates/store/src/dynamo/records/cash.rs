//! The Cash items as records: the balances (`CASH#<userId>` / `CASH`), a debit
//! (`CASH#<userId>` / `DEBIT#<purchaseId>`) and a credit (`CREDIT#<reference>` / `CREDIT`).
//! The completion, the credit and the fan's ledger all read them through these, so that the
//! ledger and the debits cannot parse one item two ways.

use serde::{Deserialize, Serialize};

use super::{CASH_VERSION, read_record, readable, version_one};
use crate::StoreError;
use crate::dynamo::Item;
use crate::schema::{CREDIT_PREFIX, ENTITY, PK};
use domain::cash::ledger::LedgerEntry;
use domain::cash::{Credit, Debit, Money, is_currency};
use domain::ids::{OrderId, PurchaseId};
use domain::timestamp::Timestamp;

/// A debit entry's attributes (besides its keys, `entity` and index keys).
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct DebitRecord {
    #[serde(default = "version_one")]
    schema_version: u32,
    purchase_id: PurchaseId,
    amount: u64,
    currency: String,
    at: Timestamp,
}

impl From<&Debit> for DebitRecord {
    fn from(debit: &Debit) -> Self {
        let Debit {
            purchase_id,
            amount: Money { amount, currency },
            at,
        } = debit.clone();
        Self {
            schema_version: CASH_VERSION,
            purchase_id,
            amount,
            currency,
            at,
        }
    }
}

impl TryFrom<DebitRecord> for Debit {
    type Error = StoreError;

    fn try_from(record: DebitRecord) -> Result<Self, StoreError> {
        readable("debit", record.schema_version, CASH_VERSION)?;
        Ok(Debit {
            purchase_id: record.purchase_id,
            amount: Money {
                amount: record.amount,
                currency: record.currency,
            },
            at: record.at,
        })
    }
}

/// An order's debit entry's attributes (`CASH#<userId>` / `ODEBIT#<orderId>`, besides its keys,
/// `entity` and index keys): the fan's ledger reads it as the debit naming the order.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct OrderDebitRecord {
    #[serde(default = "version_one")]
    schema_version: u32,
    order_id: OrderId,
    amount: u64,
    currency: String,
    at: Timestamp,
}

impl OrderDebitRecord {
    pub(crate) fn new(order_id: &OrderId, price: &Money, at: Timestamp) -> Self {
        Self {
            schema_version: CASH_VERSION,
            order_id: order_id.clone(),
            amount: price.amount,
            currency: price.currency.clone(),
            at,
        }
    }
}

impl TryFrom<OrderDebitRecord> for LedgerEntry {
    type Error = StoreError;

    fn try_from(record: OrderDebitRecord) -> Result<Self, StoreError> {
        readable("order debit", record.schema_version, CASH_VERSION)?;
        Ok(LedgerEntry::order_debit(
            record.order_id,
            Money {
                amount: record.amount,
                currency: record.currency,
            },
            record.at,
        ))
    }
}

/// A credit entry's attributes (besides its keys, `entity` and index keys). Its reference is
/// its key (`CREDIT#<reference>`), so that a reference credits once.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CreditRecord {
    #[serde(default = "version_one")]
    schema_version: u32,
    user_id: String,
    amount: u64,
    currency: String,
    at: Timestamp,
}

impl CreditRecord {
    /// The record of `credit` made at `at`.
    pub(crate) fn new(credit: &Credit, at: Timestamp) -> Self {
        Self {
            schema_version: CASH_VERSION,
            user_id: credit.user_id.to_string(),
            amount: credit.amount.amount,
            currency: credit.amount.currency.clone(),
            at,
        }
    }

    /// Whether this entry is the credit `credit` (same fan and amount; the key is its
    /// reference).
    pub(crate) fn is(&self, credit: &Credit) -> Result<bool, StoreError> {
        readable("credit", self.schema_version, CASH_VERSION)?;
        Ok(credit.user_id.as_str() == self.user_id
            && self.amount == credit.amount.amount
            && self.currency == credit.amount.currency)
    }

    /// The fan's ledger entry of this credit, of reference `reference`.
    fn entry(self, reference: &str) -> Result<LedgerEntry, StoreError> {
        readable("credit", self.schema_version, CASH_VERSION)?;
        Ok(LedgerEntry::credit(
            reference,
            Money {
                amount: self.amount,
                currency: self.currency,
            },
            self.at,
        ))
    }
}

pub(crate) fn debit_from_item(item: Item) -> Result<Debit, StoreError> {
    read_record::<DebitRecord, _>(item, "debit")
}

pub(crate) fn credit_record_from_item(item: Item) -> Result<CreditRecord, StoreError> {
    serde_dynamo::from_item(item).map_err(|e| StoreError::internal_from("credit item", e))
}

/// The `entity` of an order's debit entry.
pub(crate) const ORDER_DEBIT_ENTITY: &str = "order-debit";

/// A fan's ledger entry: a credit or a debit, told apart by `entity`.
pub(crate) fn ledger_entry_from_item(item: Item) -> Result<LedgerEntry, StoreError> {
    let text = |name: &str| item.get(name).and_then(|value| value.as_s().ok()).cloned();
    match text(ENTITY).as_deref() {
        Some("credit") => {
            let reference = text(PK)
                .and_then(|pk| pk.strip_prefix(CREDIT_PREFIX).map(str::to_owned))
                .ok_or_else(|| {
                    StoreError::internal("ledger entry: a credit not keyed by its reference")
                })?;
            credit_record_from_item(item)?.entry(&reference)
        }
        Some("debit") => debit_from_item(item).map(LedgerEntry::from),
        Some(ORDER_DEBIT_ENTITY) => read_record::<OrderDebitRecord, _>(item, "order debit"),
        _ => Err(StoreError::internal(
            "ledger entry: neither a credit nor a debit",
        )),
    }
}

/// A fan's balances item: one number attribute per currency, named by its code (`USD`); the
/// others are the item's keys and bookkeeping. Written by updates that add to a balance, never
/// put whole, so this record is read-only.
#[derive(Debug)]
pub(crate) struct CashRecord {
    schema_version: u32,
    balances: Vec<Money>,
}

impl TryFrom<Item> for CashRecord {
    type Error = StoreError;

    fn try_from(item: Item) -> Result<Self, StoreError> {
        let schema_version = super::item_version(&item, "cash")?;
        let balances = item
            .into_iter()
            .filter(|(name, _)| is_currency(name))
            .map(|(currency, value)| {
                let amount = value
                    .as_n()
                    .ok()
                    .and_then(|n| n.parse().ok())
                    .ok_or_else(|| {
                        StoreError::internal(format!(
                            "cash item: `{currency}` is not a whole number"
                        ))
                    })?;
                Ok(Money { amount, currency })
            })
            .collect::<Result<_, StoreError>>()?;
        Ok(Self {
            schema_version,
            balances,
        })
    }
}

impl TryFrom<CashRecord> for Vec<Money> {
    type Error = StoreError;

    /// The balances, by currency code.
    fn try_from(record: CashRecord) -> Result<Self, StoreError> {
        readable("cash", record.schema_version, CASH_VERSION)?;
        let mut balances = record.balances;
        balances.sort_by(|a, b| a.currency.cmp(&b.currency));
        Ok(balances)
    }
}

/// The balances of the item `item` (none when there is no item).
pub(crate) fn balances_from_item(item: Option<Item>) -> Result<Vec<Money>, StoreError> {
    let Some(item) = item else {
        return Ok(Vec::new());
    };
    CashRecord::try_from(item)?.try_into()
}

/// The balance in `currency` of the item `item` (0 when there is none).
pub(crate) fn balance_from_item(item: Option<Item>, currency: &str) -> Result<u64, StoreError> {
    Ok(balances_from_item(item)?
        .into_iter()
        .find(|balance| balance.currency == currency)
        .map_or(0, |balance| balance.amount))
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;
    use crate::dynamo::records::SCHEMA_VERSION;
    use crate::dynamo::records::tests::{n, newer, refused, s};
    use domain::cash::ledger::{EntryKind, credit_entry_id, debit_entry_id};
    use domain::ids::UserId;

    /// A ledger entry exactly as it was written before records (no `schemaVersion`): its keys,
    /// `entity`, its index keys and `attributes`.
    fn entry_item(pk: &str, sk: &str, entity: &str, attributes: [(&str, &str); 2]) -> Item {
        let mut item = HashMap::from([
            ("PK".into(), s(pk)),
            ("SK".into(), s(sk)),
            ("entity".into(), s(entity)),
            ("GSI3PK".into(), s("CASH#fan")),
            ("GSI3SK".into(), s("01780315200000000000#entry")),
        ]);
        item.extend(attributes.map(|(name, value)| (name.to_owned(), s(value))));
        item
    }

    fn debit_item() -> Item {
        let mut item = entry_item(
            "CASH#fan",
            "DEBIT#pur_1",
            "debit",
            [("purchaseId", "pur_1"), ("at", "2026-06-01T12:01:00Z")],
        );
        item.extend([("amount".into(), n(1999)), ("currency".into(), s("USD"))]);
        item
    }

    fn credit_item() -> Item {
        let mut item = entry_item(
            "CREDIT#stripe-cs_1",
            "CREDIT",
            "credit",
            [("userId", "fan"), ("at", "2026-06-01T12:00:00Z")],
        );
        item.extend([("amount".into(), n(5000)), ("currency".into(), s("EUR"))]);
        item
    }

    /// Asserts that `written` holds exactly the attributes of today's `item` (keys, `entity`
    /// and index keys aside, which the store adds) and the version.
    fn writes_todays_attributes(written: Item, mut item: Item) {
        item.retain(|name, _| !["PK", "SK", "entity", "GSI3PK", "GSI3SK"].contains(&name.as_str()));
        item.insert(SCHEMA_VERSION.into(), n(1));
        assert_eq!(written, item);
    }

    #[test]
    fn a_debit_of_todays_format_reads_as_debit_and_ledger_entry() {
        let debit = debit_from_item(debit_item()).unwrap();
        assert_eq!(debit.purchase_id.as_str(), "pur_1");
        assert_eq!(
            (debit.amount.amount, debit.amount.currency.as_str()),
            (1999, "USD")
        );
        assert_eq!(debit.at.to_string(), "2026-06-01T12:01:00Z");
        let entry = ledger_entry_from_item(debit_item()).unwrap();
        assert_eq!(entry, LedgerEntry::from(debit.clone()));
        assert_eq!(entry.id, debit_entry_id("pur_1"));
        assert_eq!(entry.kind, EntryKind::Debit);
        let written = serde_dynamo::to_item::<_, Item>(DebitRecord::from(&debit)).unwrap();
        writes_todays_attributes(written, debit_item());
        refused(debit_from_item(newer(debit_item())));
        refused(ledger_entry_from_item(newer(debit_item())));
    }

    #[test]
    fn a_credit_of_todays_format_reads_as_the_same_credit_and_a_ledger_entry() {
        let credit = Credit {
            user_id: UserId::parse("fan").unwrap(),
            amount: Money {
                amount: 5000,
                currency: "EUR".into(),
            },
            reference: "stripe-cs_1".into(),
        };
        let record = credit_record_from_item(credit_item()).unwrap();
        assert!(record.is(&credit).unwrap());
        let other = Credit {
            user_id: UserId::parse("someone-else").unwrap(),
            ..credit.clone()
        };
        assert!(!record.is(&other).unwrap());
        let entry = ledger_entry_from_item(credit_item()).unwrap();
        assert_eq!(entry.id, credit_entry_id("stripe-cs_1"));
        assert_eq!((entry.kind, entry.purchase_id), (EntryKind::Credit, None));
        assert_eq!(
            (entry.amount.amount, entry.amount.currency.as_str()),
            (5000, "EUR")
        );
        assert_eq!(entry.at.to_string(), "2026-06-01T12:00:00Z");
        let at = Timestamp::parse("2026-06-01T12:00:00Z").unwrap();
        let written = serde_dynamo::to_item::<_, Item>(CreditRecord::new(&credit, at)).unwrap();
        writes_todays_attributes(written, credit_item());
        refused(credit_record_from_item(newer(credit_item())).and_then(|r| r.is(&credit)));
        refused(ledger_entry_from_item(newer(credit_item())));
    }

    #[test]
    fn a_balances_item_of_todays_format_reads_as_balances_by_currency() {
        let item = HashMap::from([
            ("PK".into(), s("CASH#fan")),
            ("SK".into(), s("CASH")),
            ("entity".into(), s("cash")),
            ("USD".into(), n(1200)),
            ("EUR".into(), n(0)),
        ]);
        let balances = balances_from_item(Some(item.clone())).unwrap();
        let pairs: Vec<_> = balances
            .iter()
            .map(|m| (m.currency.as_str(), m.amount))
            .collect();
        assert_eq!(pairs, [("EUR", 0), ("USD", 1200)]);
        assert!(balances_from_item(None).unwrap().is_empty());
        assert_eq!(balance_from_item(Some(item.clone()), "USD").unwrap(), 1200);
        assert_eq!(balance_from_item(Some(item.clone()), "GBP").unwrap(), 0);
        assert_eq!(balance_from_item(None, "USD").unwrap(), 0);
        refused(balances_from_item(Some(newer(item.clone()))));
        let mut broken = item;
        broken.insert("USD".into(), s("lots"));
        assert!(balances_from_item(Some(broken)).is_err());
    }
}
