//! The Cash top-up storage contract, run against both stores (DynamoStore on moto_server behind
//! the one-request-at-a-time proxy, and MemoryStore): a top-up is created once per id, keeps the
//! first Checkout Session stored, and is completed and credited exactly once, however many
//! deliveries of its events race and in whatever order they come.

use std::sync::Arc;

use domain::cash::ledger::{EntryKind, LedgerQuery};
use domain::cash::{Money, parse_credit};
use domain::ids::TopUpId;
use domain::timestamp::Timestamp;
use domain::topups::pending::{MAX_PENDING_TOP_UPS, SESSION_LIFETIME_SECONDS, TooManyPending};
use domain::topups::{Checkout, TopUp, TopUpStatus, credit_reference, top_up_id};
use store::cash::{CreditCash, CreditCashError, GetBalance, ListLedger};
use store::topups::{CompletedTopUp, CreateTopUpError, CreatedTopUp, TopUpStore};

testkit::store_contract!(
    by_value:
    a_top_up_is_created_once_per_id,
    the_first_checkout_session_stored_stands,
    a_completion_credits_once_and_is_final,
    failures_and_expiries_never_change_a_completed_top_up,
    events_of_another_session_change_nothing,
    a_credit_reference_taken_by_an_operator_is_not_credited_again,
    a_fans_pending_top_ups_are_capped_and_a_settled_or_expired_one_frees_its_place,
);

mod concurrent {
    use super::{
        eight_concurrent_completions_credit_once, twenty_concurrent_creates_hold_at_most_the_cap,
    };
    testkit::store_contract!(
        arc:
        eight_concurrent_completions_credit_once,
        twenty_concurrent_creates_hold_at_most_the_cap,
    );
}

fn pending(user: &str, key: &str, amount: u64) -> TopUp {
    let user = testkit::ids::user(user);
    TopUp::pending(
        top_up_id(&user, key),
        user,
        Money {
            amount,
            currency: "USD".into(),
        },
        Timestamp::now(),
    )
}

fn checkout(session: &str) -> Checkout {
    Checkout {
        session_id: session.into(),
        url: format!("https://checkout.stripe.com/c/pay/{session}"),
    }
}

/// A pending top-up with session `session` stored.
async fn with_session(store: &impl TopUpStore, key: &str, amount: u64, session: &str) -> TopUp {
    let top_up = pending("fan", key, amount);
    store.create_top_up(&top_up).await.unwrap();
    store
        .set_checkout(&top_up.id, &checkout(session))
        .await
        .unwrap()
}

async fn status(store: &impl TopUpStore, id: &TopUpId) -> TopUpStatus {
    store.get_top_up(id).await.unwrap().unwrap().status
}

async fn balance(store: &impl GetBalance) -> u64 {
    store
        .get_balance(&testkit::ids::user("fan"), "USD")
        .await
        .unwrap()
}

async fn a_top_up_is_created_once_per_id(store: impl TopUpStore) {
    let top_up = pending("fan", "k1", 500);
    assert_eq!(
        store.create_top_up(&top_up).await.unwrap(),
        CreatedTopUp::New(top_up.clone())
    );
    // A repeat of the key with another amount finds the first, unchanged.
    let mut again = top_up.clone();
    again.amount.amount = 900;
    assert_eq!(
        store.create_top_up(&again).await.unwrap(),
        CreatedTopUp::Existing(top_up.clone())
    );
    assert_eq!(store.get_top_up(&top_up.id).await.unwrap(), Some(top_up));
    let unknown = TopUpId::parse("nobody").unwrap();
    assert_eq!(store.get_top_up(&unknown).await.unwrap(), None);
}

async fn the_first_checkout_session_stored_stands(store: impl TopUpStore) {
    let top_up = pending("fan", "k1", 500);
    store.create_top_up(&top_up).await.unwrap();
    let stored = store
        .set_checkout(&top_up.id, &checkout("cs_1"))
        .await
        .unwrap();
    assert_eq!(stored.checkout, Some(checkout("cs_1")));
    // The same again (a retry): the same.
    let again = store
        .set_checkout(&top_up.id, &checkout("cs_1"))
        .await
        .unwrap();
    assert_eq!(again, stored);
    // Another session: the first stands.
    let other = store
        .set_checkout(&top_up.id, &checkout("cs_2"))
        .await
        .unwrap();
    assert_eq!(other.checkout, Some(checkout("cs_1")));
    assert_eq!(other.status, TopUpStatus::Pending);
    assert_eq!(other.amount, top_up.amount);
}

async fn a_completion_credits_once_and_is_final(store: impl TopUpStore + GetBalance) {
    let top_up = with_session(&store, "k1", 700, "cs_1").await;
    let at = Timestamp::now();
    assert_eq!(
        store.complete_top_up(&top_up, at).await,
        Ok(CompletedTopUp::Credited { balance: 700 })
    );
    let stored = store.get_top_up(&top_up.id).await.unwrap().unwrap();
    assert_eq!(stored.status, TopUpStatus::Completed);
    assert_eq!(stored.completed_at, Some(at));
    for _ in 0..2 {
        assert_eq!(
            store.complete_top_up(&top_up, Timestamp::now()).await,
            Ok(CompletedTopUp::AlreadyCompleted)
        );
    }
    assert_eq!(balance(&store).await, 700);
    // A second top-up adds to the same balance.
    let second = with_session(&store, "k2", 300, "cs_2").await;
    assert_eq!(
        store.complete_top_up(&second, Timestamp::now()).await,
        Ok(CompletedTopUp::Credited { balance: 1000 })
    );
}

async fn failures_and_expiries_never_change_a_completed_top_up(
    store: impl TopUpStore + GetBalance,
) {
    // failed, then expired, then paid: the payment wins, and stays.
    let top_up = with_session(&store, "k1", 500, "cs_1").await;
    assert!(
        store
            .close_top_up(&top_up, "cs_1", TopUpStatus::Failed, Timestamp::now())
            .await
            .unwrap()
    );
    assert_eq!(status(&store, &top_up.id).await, TopUpStatus::Failed);
    assert!(
        store
            .close_top_up(&top_up, "cs_1", TopUpStatus::Expired, Timestamp::now())
            .await
            .unwrap()
    );
    assert_eq!(
        store.complete_top_up(&top_up, Timestamp::now()).await,
        Ok(CompletedTopUp::Credited { balance: 500 })
    );
    for late in [TopUpStatus::Expired, TopUpStatus::Failed] {
        assert!(
            !store
                .close_top_up(&top_up, "cs_1", late, Timestamp::now())
                .await
                .unwrap()
        );
        assert_eq!(status(&store, &top_up.id).await, TopUpStatus::Completed);
    }
    assert_eq!(balance(&store).await, 500);
}

async fn events_of_another_session_change_nothing(store: impl TopUpStore + GetBalance) {
    let top_up = with_session(&store, "k1", 500, "cs_1").await;
    assert!(
        !store
            .close_top_up(&top_up, "cs_2", TopUpStatus::Expired, Timestamp::now())
            .await
            .unwrap()
    );
    let mut other = top_up.clone();
    other.checkout = Some(checkout("cs_2"));
    assert_eq!(
        store.complete_top_up(&other, Timestamp::now()).await,
        Ok(CompletedTopUp::AlreadyCompleted),
        "the condition on the stored session refuses it"
    );
    assert_eq!(status(&store, &top_up.id).await, TopUpStatus::Pending);
    assert_eq!(balance(&store).await, 0);
    // Unknown top-ups are never created by an event.
    let unknown = TopUpId::parse("unknown").unwrap();
    let unknown_top_up = TopUp {
        id: unknown.clone(),
        ..top_up.clone()
    };
    assert!(
        !store
            .close_top_up(
                &unknown_top_up,
                "cs_1",
                TopUpStatus::Failed,
                Timestamp::now()
            )
            .await
            .unwrap()
    );
    assert_eq!(store.get_top_up(&unknown).await.unwrap(), None);
}

async fn a_credit_reference_taken_by_an_operator_is_not_credited_again(
    store: impl TopUpStore + CreditCash + GetBalance,
) {
    // Credits under a top-up's reference, as an earlier release's cash-credit could write them
    // (it now refuses `topup:` references).
    let operator = |amount: &str, top_up: &TopUp| domain::cash::Credit {
        reference: credit_reference(&top_up.id),
        ..parse_credit("fan", amount, "USD", "any").unwrap()
    };
    let top_up = with_session(&store, "k1", 500, "cs_1").await;
    let same = operator("500", &top_up);
    store.credit_cash(&same, Timestamp::now()).await.unwrap();
    assert_eq!(
        store.complete_top_up(&top_up, Timestamp::now()).await,
        Ok(CompletedTopUp::AlreadyCompleted)
    );
    let other = with_session(&store, "k2", 500, "cs_2").await;
    let taken = operator("1", &other);
    store.credit_cash(&taken, Timestamp::now()).await.unwrap();
    assert_eq!(
        store.complete_top_up(&other, Timestamp::now()).await,
        Err(CreditCashError::ReferenceReused)
    );
    assert_eq!(balance(&store).await, 501);
}

async fn eight_concurrent_completions_credit_once<S>(store: Arc<S>)
where
    S: TopUpStore + GetBalance + ListLedger + 'static,
{
    let top_up = with_session(&*store, "k1", 1234, "cs_1").await;
    let tasks: Vec<_> = (0..8)
        .map(|_| {
            let (store, top_up) = (store.clone(), top_up.clone());
            tokio::spawn(async move { store.complete_top_up(&top_up, Timestamp::now()).await })
        })
        .collect();
    let mut credited = 0;
    for task in tasks {
        match task.await.unwrap() {
            Ok(CompletedTopUp::Credited { balance }) => {
                credited += 1;
                assert_eq!(balance, 1234);
            }
            Ok(CompletedTopUp::AlreadyCompleted) => {}
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(credited, 1);
    assert_eq!(balance(&*store).await, 1234);
    assert_eq!(status(&*store, &top_up.id).await, TopUpStatus::Completed);
    // The fan's ledger shows the one credit, and credits less debits are the balance.
    let ledger = store
        .list_ledger(&LedgerQuery {
            user_id: testkit::ids::user("fan"),
            currency: None,
            limit: 100,
            after: None,
        })
        .await
        .unwrap();
    let entries: Vec<_> = ledger
        .entries
        .iter()
        .map(|e| (e.kind, e.amount.amount, e.purchase_id.clone()))
        .collect();
    assert_eq!(entries, [(EntryKind::Credit, 1234, None)]);
}

fn is_new(created: Result<CreatedTopUp, CreateTopUpError>) -> bool {
    matches!(created, Ok(CreatedTopUp::New(_)))
}

const FULL: Result<CreatedTopUp, CreateTopUpError> =
    Err(CreateTopUpError::TooManyPending(TooManyPending));

async fn a_fans_pending_top_ups_are_capped_and_a_settled_or_expired_one_frees_its_place(
    store: impl TopUpStore + GetBalance,
) {
    let mut held = Vec::new();
    for k in 0..MAX_PENDING_TOP_UPS {
        held.push(with_session(&store, &format!("k{k}"), 100, &format!("cs_{k}")).await);
    }
    let one_more = pending("fan", "one-more", 100);
    assert_eq!(store.create_top_up(&one_more).await, FULL);
    assert_eq!(
        store.get_top_up(&one_more.id).await.unwrap(),
        None,
        "nothing written"
    );
    // A repeat of a held key is its top-up, at the cap or not; another fan has their own places.
    assert!(matches!(
        store.create_top_up(&pending("fan", "k0", 100)).await,
        Ok(CreatedTopUp::Existing(_))
    ));
    assert!(is_new(
        store
            .create_top_up(&pending("other", "one-more", 100))
            .await
    ));

    // Completed, failed, expired: each frees one place, taken at once by one more create.
    store
        .complete_top_up(&held[0], Timestamp::now())
        .await
        .unwrap();
    store
        .close_top_up(&held[1], "cs_1", TopUpStatus::Failed, Timestamp::now())
        .await
        .unwrap();
    store
        .close_top_up(&held[2], "cs_2", TopUpStatus::Expired, Timestamp::now())
        .await
        .unwrap();
    for k in 0..3 {
        assert!(
            is_new(
                store
                    .create_top_up(&pending("fan", &format!("freed-{k}"), 100))
                    .await
            ),
            "{k}"
        );
    }
    assert_eq!(
        store.create_top_up(&pending("fan", "full", 100)).await,
        FULL
    );

    // Once their sessions' lifetime has passed, no event needed: every place is free again.
    let later = Timestamp::now()
        .plus_seconds(i64::try_from(SESSION_LIFETIME_SECONDS).unwrap() + 2)
        .unwrap();
    for k in 0..MAX_PENDING_TOP_UPS {
        let mut top_up = pending("fan", &format!("later-{k}"), 100);
        top_up.created_at = later;
        assert!(is_new(store.create_top_up(&top_up).await), "{k}");
    }
    let mut top_up = pending("fan", "later-full", 100);
    top_up.created_at = later;
    assert_eq!(store.create_top_up(&top_up).await, FULL);
}

/// Twenty creates of one fan at once, each with its own key: exactly the cap are created, every
/// other one is refused as over it (none fails), and the fan holds the cap's top-ups.
async fn twenty_concurrent_creates_hold_at_most_the_cap<S>(store: Arc<S>)
where
    S: TopUpStore + 'static,
{
    let tasks: Vec<_> = (0..20)
        .map(|k| {
            let (store, top_up) = (store.clone(), pending("fan", &format!("k{k}"), 100));
            tokio::spawn(async move { (store.create_top_up(&top_up).await, top_up.id) })
        })
        .collect();
    let mut created = Vec::new();
    for task in tasks {
        match task.await.unwrap() {
            (Ok(CreatedTopUp::New(_)), id) => created.push(id),
            (refused, id) => {
                assert_eq!(refused, FULL);
                assert_eq!(store.get_top_up(&id).await.unwrap(), None);
            }
        }
    }
    assert_eq!(created.len(), MAX_PENDING_TOP_UPS as usize);
    for id in &created {
        assert_eq!(status(&*store, id).await, TopUpStatus::Pending);
    }
}
