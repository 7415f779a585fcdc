//! The Stripe events this API acts on, and what each does to a top-up. Stripe delivers an event
//! at least once and in no fixed order, so each rule is one that any order of any number of
//! deliveries leaves right: a paid session completes its top-up (and credits it) once; a
//! completed top-up is final; a failure or an expiry changes only a top-up not completed.

use serde::Deserialize;

use super::{TopUp, TopUpStatus};
use crate::ids::TopUpId;

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
    /// The top-up this session pays for, when its `client_reference_id` can name one.
    pub fn top_up_id(&self) -> Option<TopUpId> {
        self.client_reference_id
            .as_deref()
            .and_then(|id| TopUpId::parse(id).ok())
    }
}

/// How an event's session differs from the top-up it names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Mismatch {
    #[error("the session is not the one stored for the top-up")]
    Session,
    #[error("the session's amount_total is not the top-up's amount")]
    Amount,
    #[error("the session's currency is not the top-up's")]
    Currency,
}

/// Checks that `session` is the one stored for `top_up`, and, when it pays for it
/// (`paying`), for exactly its amount and currency (Stripe writes currencies in lower case).
pub fn check_session(top_up: &TopUp, session: &Session, paying: bool) -> Result<(), Mismatch> {
    if top_up.session_id() != Some(session.id.as_str()) {
        return Err(Mismatch::Session);
    }
    if paying {
        if session.amount_total != Some(top_up.amount.amount) {
            return Err(Mismatch::Amount);
        }
        let same_currency = session
            .currency
            .as_deref()
            .is_some_and(|c| c.eq_ignore_ascii_case(&top_up.amount.currency));
        if !same_currency {
            return Err(Mismatch::Currency);
        }
    }
    Ok(())
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
}
