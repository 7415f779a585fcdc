//! The Stripe events this API acts on, and what each does to a top-up or a card order. Stripe
//! delivers an event at least once and in no fixed order, so each rule is one that any order of
//! any number of deliveries leaves right: a paid session completes its top-up (and credits it)
//! or its order (and grants it) once; a completed one is final; a failure or an expiry changes
//! only one not completed.

use std::collections::BTreeMap;

use serde::Deserialize;

use super::{TopUp, TopUpStatus};
use crate::cash::Money;
use crate::ids::{OrderId, TopUpId, UserId};
use crate::products::order::{ORDER_REFERENCE_PREFIX, Order, OrderStatus};

pub const SESSION_COMPLETED: &str = "checkout.session.completed";
pub const ASYNC_PAYMENT_SUCCEEDED: &str = "checkout.session.async_payment_succeeded";
pub const ASYNC_PAYMENT_FAILED: &str = "checkout.session.async_payment_failed";
pub const SESSION_EXPIRED: &str = "checkout.session.expired";

/// An event as Stripe sends it (only what is read of it).
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[schema(as = StripeEvent)]
pub struct Event {
    pub id: String,
    #[serde(rename = "type")]
    pub kind: String,
    #[schema(inline)]
    pub data: EventData,
}

#[derive(Debug, Deserialize, utoipa::ToSchema)]
pub struct EventData {
    pub object: serde_json::Value,
}

/// A Checkout Session, as a `checkout.session.*` event's `data.object` (only what is read).
#[derive(Debug, Deserialize)]
pub struct Session {
    pub id: String,
    #[serde(default)]
    pub client_reference_id: Option<String>,
    #[serde(default)]
    pub amount_total: Option<u64>,
    #[serde(default)]
    pub currency: Option<String>,
    #[serde(default)]
    pub payment_status: Option<String>,
    /// The metadata the session was made with (a card order's: `orderId`, `userId`).
    #[serde(default)]
    pub metadata: BTreeMap<String, String>,
}

/// What an event does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Paid: complete the top-up and credit it.
    Complete,
    /// Completed but not paid yet (an asynchronous payment method): nothing until it succeeds
    /// or fails.
    AwaitPayment,
    /// Mark it failed or expired (never a completed one).
    Close(TopUpStatus),
    /// Not an event this API acts on.
    Ignore,
}

/// What an event of `kind`, whose session's `payment_status` is `payment_status`, does.
pub fn action(kind: &str, payment_status: Option<&str>) -> Action {
    match kind {
        SESSION_COMPLETED if payment_status == Some("paid") => Action::Complete,
        SESSION_COMPLETED => Action::AwaitPayment,
        ASYNC_PAYMENT_SUCCEEDED => Action::Complete,
        ASYNC_PAYMENT_FAILED => Action::Close(TopUpStatus::Failed),
        SESSION_EXPIRED => Action::Close(TopUpStatus::Expired),
        _ => Action::Ignore,
    }
}

impl Event {
    /// The Checkout Session of a `checkout.session.*` event; `None` for any other type.
    pub fn session(&self) -> Option<Result<Session, serde_json::Error>> {
        self.kind
            .starts_with("checkout.session.")
            .then(|| Session::deserialize(&self.data.object))
    }
}

impl Session {
    /// The top-up this session pays for, when its `client_reference_id` can name one (a card
    /// order's, `order:<orderId>`, cannot: no id has a `:`).
    pub fn top_up_id(&self) -> Option<TopUpId> {
        self.client_reference_id
            .as_deref()
            .and_then(|id| TopUpId::parse(id).ok())
    }

    /// The card order this session pays for: `client_reference_id` `order:<orderId>`, the same
    /// `orderId` in its metadata and its fan's `userId` (the order is stored under its fan).
    pub fn order(&self) -> Option<(UserId, OrderId)> {
        let reference = self.client_reference_id.as_deref()?;
        let id = reference.strip_prefix(ORDER_REFERENCE_PREFIX)?;
        if self.metadata.get("orderId").map(String::as_str) != Some(id) {
            return None;
        }
        let user_id = UserId::parse(self.metadata.get("userId")?.as_str()).ok()?;
        Some((user_id, OrderId::parse(id).ok()?))
    }

    /// Checks that this session is `stored` (the one stored for what it pays for), and, when it
    /// pays (`paying`), for exactly `price`'s amount and currency (Stripe writes currencies in
    /// lower case).
    fn matches(&self, stored: Option<&str>, price: &Money, paying: bool) -> Result<(), Mismatch> {
        if stored != Some(self.id.as_str()) {
            return Err(Mismatch::Session);
        }
        if paying {
            if self.amount_total != Some(price.amount) {
                return Err(Mismatch::Amount);
            }
            let same_currency = self
                .currency
                .as_deref()
                .is_some_and(|c| c.eq_ignore_ascii_case(&price.currency));
            if !same_currency {
                return Err(Mismatch::Currency);
            }
        }
        Ok(())
    }
}

/// How an event's session differs from the top-up or order it names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Mismatch {
    #[error("the session is not the one stored for what it names")]
    Session,
    #[error("the session's amount_total is not the amount asked")]
    Amount,
    #[error("the session's currency is not the one asked")]
    Currency,
}

/// Checks that `session` is the one stored for `top_up`, and, when it pays for it
/// (`paying`), for exactly its amount and currency (Stripe writes currencies in lower case).
pub fn check_session(top_up: &TopUp, session: &Session, paying: bool) -> Result<(), Mismatch> {
    session.matches(top_up.session_id(), &top_up.amount, paying)
}

/// Checks that `session` is the one stored for the card `order`, and, when it pays for it, for
/// exactly its price (as sold) and currency.
pub fn check_order_session(order: &Order, session: &Session, paying: bool) -> Result<(), Mismatch> {
    let stored = order.checkout.as_ref().map(|c| c.session_id.as_str());
    session.matches(stored, &order.price, paying)
}

impl TopUpStatus {
    /// The status a card order closed by the same event takes.
    pub fn of_order(self) -> OrderStatus {
        match self {
            TopUpStatus::Pending => OrderStatus::Pending,
            TopUpStatus::Completed => OrderStatus::Completed,
            TopUpStatus::Failed => OrderStatus::Failed,
            TopUpStatus::Expired => OrderStatus::Expired,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cash::Money;
    use crate::ids::UserId;
    use crate::timestamp::Timestamp;

    #[test]
    fn each_event_type_does_what_the_contract_says() {
        assert_eq!(action(SESSION_COMPLETED, Some("paid")), Action::Complete);
        assert_eq!(
            action(SESSION_COMPLETED, Some("unpaid")),
            Action::AwaitPayment
        );
        assert_eq!(action(SESSION_COMPLETED, None), Action::AwaitPayment);
        assert_eq!(action(ASYNC_PAYMENT_SUCCEEDED, None), Action::Complete);
        assert_eq!(
            action(ASYNC_PAYMENT_FAILED, None),
            Action::Close(TopUpStatus::Failed)
        );
        assert_eq!(
            action(SESSION_EXPIRED, None),
            Action::Close(TopUpStatus::Expired)
        );
        assert_eq!(action("payment_intent.succeeded", None), Action::Ignore);
        assert_eq!(
            action("checkout.session.created", Some("paid")),
            Action::Ignore
        );
    }

    #[test]
    fn a_session_must_be_the_stored_one_with_the_stored_amount_and_currency() {
        let mut top_up = TopUp::pending(
            TopUpId::parse("t1").unwrap(),
            UserId::parse("u").unwrap(),
            Money {
                amount: 500,
                currency: "USD".into(),
            },
            Timestamp::now(),
        );
        let session = |id: &str, amount, currency: &str| Session {
            id: id.into(),
            client_reference_id: Some("t1".into()),
            amount_total: Some(amount),
            currency: Some(currency.into()),
            payment_status: Some("paid".into()),
            metadata: BTreeMap::new(),
        };
        assert_eq!(
            check_session(&top_up, &session("cs_1", 500, "usd"), true),
            Err(Mismatch::Session),
            "no session stored yet"
        );
        top_up.checkout = Some(super::super::Checkout {
            session_id: "cs_1".into(),
            url: "https://checkout.stripe.com/c/pay/cs_1".into(),
        });
        assert_eq!(
            check_session(&top_up, &session("cs_1", 500, "usd"), true),
            Ok(())
        );
        assert_eq!(
            check_session(&top_up, &session("cs_2", 500, "usd"), true),
            Err(Mismatch::Session)
        );
        assert_eq!(
            check_session(&top_up, &session("cs_1", 499, "usd"), true),
            Err(Mismatch::Amount)
        );
        assert_eq!(
            check_session(&top_up, &session("cs_1", 500, "eur"), true),
            Err(Mismatch::Currency)
        );
        assert_eq!(
            check_session(&top_up, &session("cs_1", 1, "eur"), false),
            Ok(())
        );
        assert_eq!(
            session("cs_1", 1, "usd").top_up_id().unwrap().as_str(),
            "t1"
        );
    }

    #[test]
    fn a_session_names_an_order_only_with_its_reference_and_metadata() {
        let session = |reference: &str, order_id: &str, user_id: &str| Session {
            id: "cs_1".into(),
            client_reference_id: Some(reference.into()),
            amount_total: Some(300),
            currency: Some("usd".into()),
            payment_status: Some("paid".into()),
            metadata: BTreeMap::from([
                ("orderId".to_owned(), order_id.to_owned()),
                ("userId".to_owned(), user_id.to_owned()),
            ]),
        };
        let named = session("order:o1", "o1", "fan").order().unwrap();
        assert_eq!((named.0.as_str(), named.1.as_str()), ("fan", "o1"));
        assert_eq!(session("order:o1", "o1", "fan").top_up_id(), None);
        assert_eq!(session("order:o1", "o2", "fan").order(), None);
        assert_eq!(session("o1", "o1", "fan").order(), None);
        assert_eq!(session("order:o1", "o1", "").order(), None);
    }
}
