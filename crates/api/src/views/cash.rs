//! Cash as the fan sees it: a ledger entry (`GET /api/me/cash/transactions`, the export) and a
//! top-up (`GET /api/cash/top-ups/{topUpId}`, the export).

use serde::Serialize;
use utoipa::ToSchema;

use crate::openapi::schemas::{Currency, Id};
use domain::cash::ledger::{EntryKind, LedgerEntry};
use domain::ids::{PurchaseId, QuestId};
use domain::timestamp::Timestamp;
use domain::topups::{TopUp, TopUpStatus};

/// One credit or debit of a balance.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schema(as = LedgerEntry)]
pub struct EntryJson<'a> {
    #[schema(value_type = Id)]
    id: &'a str,
    #[serde(rename = "type")]
    #[schema(value_type = EntryKind)]
    kind: &'static str,
    /// Minor units (cents); always positive, `type` says which way.
    amount: u64,
    #[schema(value_type = Currency)]
    currency: &'a str,
    at: Timestamp,
    /// The purchase a debit paid for; null for credits.
    #[schema(value_type = Option<Id>, required)]
    purchase_id: Option<&'a str>,
    /// The quest whose reward a credit is; null for other entries.
    #[schema(value_type = Option<Id>, required)]
    quest_id: Option<&'a str>,
    /// The order a debit paid for, or a Cash bundle's credit came from; null for other entries.
    #[schema(value_type = Option<Id>, required)]
    order_id: Option<&'a str>,
}

impl<'a> EntryJson<'a> {
    pub fn of(entry: &'a LedgerEntry) -> Self {
        Self {
            id: &entry.id,
            kind: entry.kind.as_str(),
            amount: entry.amount.amount,
            currency: &entry.amount.currency,
            at: entry.at,
            purchase_id: entry.purchase_id.as_ref().map(PurchaseId::as_str),
            quest_id: entry.quest_id.as_ref().map(QuestId::as_str),
            order_id: entry.order_id.as_ref().map(domain::ids::OrderId::as_str),
        }
    }
}

/// A top-up as the API shows it.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schema(as = TopUp)]
pub struct TopUpJson<'a> {
    #[schema(value_type = Id)]
    id: &'a str,
    #[schema(minimum = 1)]
    amount: u64,
    #[schema(value_type = Currency)]
    currency: &'a str,
    status: TopUpStatus,
    /// Stripe's Checkout page for it (`null` only while Stripe could not be reached).
    #[schema(required)]
    checkout_url: Option<&'a str>,
    created_at: Timestamp,
    #[schema(required)]
    completed_at: Option<Timestamp>,
}

impl<'a> TopUpJson<'a> {
    pub fn of(top_up: &'a TopUp) -> Self {
        Self {
            id: top_up.id.as_str(),
            amount: top_up.amount.amount,
            currency: &top_up.amount.currency,
            status: top_up.status,
            checkout_url: top_up.checkout.as_ref().map(|c| c.url.as_str()),
            created_at: top_up.created_at,
            completed_at: top_up.completed_at,
        }
    }
}
