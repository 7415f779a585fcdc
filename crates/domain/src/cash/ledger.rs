//! A fan's view of their Cash: their balances, and their ledger (every credit and debit),
//! newest first. For every fan and currency, credits minus debits is the balance: each movement
//! of a balance writes its entry in the same transaction.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

use crate::cash::{Debit, Money};
use crate::ids::{OrderId, PurchaseId, UserId};
use crate::timestamp::{Timestamp, time_key};

pub const DEFAULT_LEDGER_LIMIT: usize = 20;

/// Which way an entry moved the balance.
#[derive(Debug, Clone, Copy, PartialEq, Eq, utoipa::ToSchema, strum::IntoStaticStr)]
#[schema(rename_all = "lowercase")]
#[strum(serialize_all = "lowercase")]
pub enum EntryKind {
    Credit,
    Debit,
}

impl EntryKind {
    /// As the API writes it.
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// One movement of a balance.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LedgerEntry {
    /// Stable and unique per entry ([`credit_entry_id`], [`debit_entry_id`]).
    pub id: String,
    pub kind: EntryKind,
    pub amount: Money,
    pub at: Timestamp,
    /// The purchase a debit paid for; `None` for credits.
    pub purchase_id: Option<PurchaseId>,
    /// The quest a credit rewarded; `None` for other credits and debits.
    pub quest_id: Option<crate::ids::QuestId>,
    /// The order a debit paid for, or a Cash bundle's credit came from; `None` for the others.
    pub order_id: Option<OrderId>,
}

// Here, not in the store that reads debits: a trait impl between two domain types can only be
// written in the domain's crate.
impl From<Debit> for LedgerEntry {
    fn from(debit: Debit) -> Self {
        LedgerEntry::debit(debit.purchase_id, debit.amount, debit.at)
    }
}

impl LedgerEntry {
    /// The entry of the credit of `reference`: a quest's names its quest.
    pub fn credit(reference: &str, amount: Money, at: Timestamp) -> Self {
        Self {
            id: credit_entry_id(reference),
            kind: EntryKind::Credit,
            amount,
            at,
            purchase_id: None,
            quest_id: crate::quests::quest_of_reference(reference),
            order_id: crate::products::order::order_of_reference(reference),
        }
    }

    /// The entry of the debit that paid for `purchase_id`.
    pub fn debit(purchase_id: PurchaseId, amount: Money, at: Timestamp) -> Self {
        Self {
            id: debit_entry_id(purchase_id.as_str()),
            kind: EntryKind::Debit,
            amount,
            at,
            purchase_id: Some(purchase_id),
            quest_id: None,
            order_id: None,
        }
    }

    /// The entry of the debit that paid for order `order_id`.
    pub fn order_debit(order_id: OrderId, amount: Money, at: Timestamp) -> Self {
        Self {
            id: order_debit_entry_id(&order_id),
            kind: EntryKind::Debit,
            amount,
            at,
            purchase_id: None,
            quest_id: None,
            order_id: Some(order_id),
        }
    }

    /// Its key in the fan's ledger: time order, then id.
    pub fn list_key(&self) -> String {
        time_key(self.at, &self.id)
    }
}

/// 22 base64url characters of SHA-256 over the entry's own key: an id in the id grammar however
/// long the credit's reference is, that does not show the reference (an operator's or a
/// payment provider's) to the fan.
fn entry_id(kind: EntryKind, key: &str) -> String {
    let digest = aws_lc_rs::digest::digest(
        &aws_lc_rs::digest::SHA256,
        format!("ledger-v1\n{}\n{key}", kind.as_str()).as_bytes(),
    );
    URL_SAFE_NO_PAD.encode(&digest.as_ref()[..16])
}

/// The ledger id of the credit with `reference`.
pub fn credit_entry_id(reference: &str) -> String {
    entry_id(EntryKind::Credit, reference)
}

/// The ledger id of the debit that paid for `purchase_id`.
pub fn debit_entry_id(purchase_id: &str) -> String {
    entry_id(EntryKind::Debit, purchase_id)
}

/// The ledger id of the debit that paid for an order (`order:` cannot begin a purchase id).
pub fn order_debit_entry_id(order_id: &OrderId) -> String {
    entry_id(
        EntryKind::Debit,
        &crate::products::order::credit_reference(order_id),
    )
}

/// What a fan asked of their ledger.
#[derive(Debug, Clone)]
pub struct LedgerQuery {
    pub user_id: UserId,
    pub currency: Option<String>,
    pub limit: usize,
    /// The list key of the last entry of the page before.
    pub after: Option<String>,
}

impl LedgerQuery {
    pub fn matches(&self, entry: &LedgerEntry) -> bool {
        self.currency
            .as_ref()
            .is_none_or(|currency| entry.amount.currency == *currency)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entry_ids_are_ids_distinct_per_kind_and_key() {
        let ids = [
            credit_entry_id("grant-1"),
            credit_entry_id("grant-2"),
            debit_entry_id("grant-1"),
            credit_entry_id(&"r".repeat(255)),
        ];
        for id in &ids {
            assert!(crate::ids::is_valid_id(id), "{id}");
        }
        let unique: std::collections::BTreeSet<&String> = ids.iter().collect();
        assert_eq!(unique.len(), ids.len());
        assert_eq!(credit_entry_id("grant-1"), ids[0], "stable");
    }
}
