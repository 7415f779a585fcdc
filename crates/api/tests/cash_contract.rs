//! The Cash storage contract, run against both stores: DynamoStore on moto_server and the local
//! API's MemoryStore. Plus what only DynamoDB has: the items as the table holds them.
//!
//! DynamoDB applies each request atomically; moto does not (a failed transaction puts its whole
//! table back as it was when it started, undoing what concurrent requests wrote meanwhile). So
//! the contract reaches moto through a proxy that forwards one request at a time: requests still
//! interleave as they would on DynamoDB, and a store that checks in one request and writes in
//! another is still caught by the concurrent tests.

use std::collections::HashMap;

use aws_sdk_dynamodb::types::AttributeValue;
use domain::cash::{Credit, Money, parse_credit};
use domain::timestamp::Timestamp;
use store::DynamoStore;
use store::cash::{CashStore, CreditCash, CreditCashError, CreditOutcome, GetBalance, ListDebits};
use store::schema::{
    CASH_SK, CREDIT_SK, ENTITY, LEDGER_AMOUNT, LEDGER_AT, LEDGER_CURRENCY, LEDGER_PURCHASE_ID,
    LEDGER_USER_ID, PK, SK, cash_pk, credit_pk, debit_sk, user_pk,
};

testkit::store_contract!(
    by_value:
    a_credit_adds_to_the_balance,
    the_same_reference_credits_once,
    a_reused_reference_is_refused_and_changes_nothing,
    balances_are_per_user_and_per_currency,
    nobody_has_a_zero_balance_and_no_debits,
    concurrent_credits_add_up_exactly,
    concurrent_credits_of_one_reference_credit_once,
    a_credit_past_the_largest_balance_is_refused_and_writes_nothing,
);

fn credit(user: &str, amount: u64, currency: &str, reference: &str) -> Credit {
    parse_credit(user, &amount.to_string(), currency, reference).expect("a valid credit")
}

async fn balance(store: &impl GetBalance, user: &str, currency: &str) -> u64 {
    store
        .get_balance(&testkit::ids::user(user), currency)
        .await
        .expect("balance")
}

async fn a_credit_adds_to_the_balance(store: impl CashStore) {
    let outcome = store
        .credit_cash(&credit("u1", 1500, "USD", "grant-1"), Timestamp::now())
        .await;
    assert_eq!(outcome, Ok(CreditOutcome::Credited { balance: 1500 }));
    assert_eq!(balance(&store, "u1", "USD").await, 1500);

    let outcome = store
        .credit_cash(&credit("u1", 250, "USD", "grant-2"), Timestamp::now())
        .await;
    assert_eq!(outcome, Ok(CreditOutcome::Credited { balance: 1750 }));
    assert_eq!(balance(&store, "u1", "USD").await, 1750);

    // The largest single credit, twice: far beyond 32 bits, still exact.
    let max = domain::cash::MAX_CREDIT;
    for reference in ["big-1", "big-2"] {
        store
            .credit_cash(&credit("u1", max, "USD", reference), Timestamp::now())
            .await
            .unwrap();
    }
    assert_eq!(balance(&store, "u1", "USD").await, 1750 + 2 * max);
}

async fn the_same_reference_credits_once(store: impl CashStore) {
    let grant = credit("u1", 500, "EUR", "ref-once");
    assert_eq!(
        store.credit_cash(&grant, Timestamp::now()).await,
        Ok(CreditOutcome::Credited { balance: 500 })
    );
    for _ in 0..2 {
        // A later `at` does not make it another credit.
        assert_eq!(
            store.credit_cash(&grant, Timestamp::now()).await,
            Ok(CreditOutcome::AlreadyCredited)
        );
    }
    assert_eq!(balance(&store, "u1", "EUR").await, 500);
}

async fn a_reused_reference_is_refused_and_changes_nothing(store: impl CashStore) {
    let grant = credit("u1", 500, "USD", "ref-reused");
    store.credit_cash(&grant, Timestamp::now()).await.unwrap();
    let others = [
        credit("u1", 501, "USD", "ref-reused"),
        credit("u2", 500, "USD", "ref-reused"),
        credit("u1", 500, "EUR", "ref-reused"),
        credit("u2", 7, "GBP", "ref-reused"),
    ];
    for other in &others {
        assert_eq!(
            store.credit_cash(other, Timestamp::now()).await,
            Err(CreditCashError::ReferenceReused),
            "{other:?}"
        );
    }
    assert_eq!(balance(&store, "u1", "USD").await, 500);
    for (user, currency) in [("u1", "EUR"), ("u2", "USD"), ("u2", "GBP")] {
        assert_eq!(
            balance(&store, user, currency).await,
            0,
            "{user} {currency}"
        );
    }
    // The entry still holds the first credit.
    assert_eq!(
        store.credit_cash(&grant, Timestamp::now()).await,
        Ok(CreditOutcome::AlreadyCredited)
    );
}

async fn balances_are_per_user_and_per_currency(store: impl CashStore) {
    let credits = [
        credit("alice", 100, "USD", "a-usd"),
        credit("alice", 200, "EUR", "a-eur"),
        credit("bob", 300, "USD", "b-usd"),
        // A user id that extends another's is another user.
        credit("alice#2", 400, "USD", "a2-usd"),
    ];
    for credit in &credits {
        store.credit_cash(credit, Timestamp::now()).await.unwrap();
    }
    for (user, currency, expected) in [
        ("alice", "USD", 100),
        ("alice", "EUR", 200),
        ("alice", "GBP", 0),
        ("bob", "USD", 300),
        ("bob", "EUR", 0),
        ("alice#2", "USD", 400),
    ] {
        assert_eq!(
            balance(&store, user, currency).await,
            expected,
            "{user} {currency}"
        );
    }
}

/// A balance cannot pass `u64::MAX`: the credit is refused as such (the tool says nothing was
/// credited), and neither the balance nor the ledger changes.
async fn a_credit_past_the_largest_balance_is_refused_and_writes_nothing(store: impl CashStore) {
    let full = Credit {
        user_id: testkit::ids::user("u1"),
        amount: Money {
            amount: u64::MAX,
            currency: "USD".into(),
        },
        reference: "full".into(),
    };
    store.credit_cash(&full, Timestamp::now()).await.unwrap();
    let one_more = credit("u1", 1, "USD", "one-more");
    assert!(matches!(
        store.credit_cash(&one_more, Timestamp::now()).await,
        Err(CreditCashError::BalanceFull)
    ));
    assert_eq!(balance(&store, "u1", "USD").await, u64::MAX);
    // Nothing was written under the reference either: the same credit is refused again as
    // full, not answered as already credited.
    assert!(matches!(
        store.credit_cash(&one_more, Timestamp::now()).await,
        Err(CreditCashError::BalanceFull)
    ));
}

async fn nobody_has_a_zero_balance_and_no_debits(store: impl CashStore) {
    assert_eq!(balance(&store, "nobody", "USD").await, 0);
    assert_eq!(
        store.list_debits(&testkit::ids::user("nobody")).await,
        Ok(Vec::new())
    );
    // Credits are not debits.
    store
        .credit_cash(&credit("somebody", 10, "USD", "r"), Timestamp::now())
        .await
        .unwrap();
    assert_eq!(
        store.list_debits(&testkit::ids::user("somebody")).await,
        Ok(Vec::new())
    );
}

/// Runs `credits` all at once, each on its own task.
async fn all_at_once<S: CashStore + Clone + 'static>(
    store: &S,
    credits: Vec<Credit>,
) -> Vec<Result<CreditOutcome, CreditCashError>> {
    let barrier = std::sync::Arc::new(tokio::sync::Barrier::new(credits.len()));
    let tasks: Vec<_> = credits
        .into_iter()
        .map(|credit| {
            let (store, barrier) = (store.clone(), barrier.clone());
            tokio::spawn(async move {
                barrier.wait().await;
                store.credit_cash(&credit, Timestamp::now()).await
            })
        })
        .collect();
    let mut outcomes = Vec::new();
    for task in tasks {
        outcomes.push(task.await.expect("credit task"));
    }
    outcomes
}

async fn concurrent_credits_add_up_exactly<S: CashStore + Clone + 'static>(store: S) {
    let credits = (1..=20)
        .map(|i| credit("u1", i * 1000 + i, "USD", &format!("concurrent-{i}")))
        .collect();
    let outcomes = all_at_once(&store, credits).await;
    let mut balances: Vec<u64> = outcomes
        .into_iter()
        .map(|outcome| match outcome {
            Ok(CreditOutcome::Credited { balance }) => balance,
            other => panic!("{other:?}"),
        })
        .collect();
    let total: u64 = (1..=20).map(|i| i * 1000 + i).sum();
    assert_eq!(balance(&store, "u1", "USD").await, total);
    // Each saw a balance its own credit was in, and the last saw them all.
    balances.sort_unstable();
    assert!(balances[0] >= 1001, "{balances:?}");
    assert_eq!(balances[19], total, "{balances:?}");
}

async fn concurrent_credits_of_one_reference_credit_once<S: CashStore + Clone + 'static>(store: S) {
    let credits = vec![credit("u1", 700, "USD", "one-reference"); 20];
    let outcomes = all_at_once(&store, credits).await;
    let credited = outcomes
        .iter()
        .filter(|outcome| **outcome == Ok(CreditOutcome::Credited { balance: 700 }))
        .count();
    let already = outcomes
        .iter()
        .filter(|outcome| **outcome == Ok(CreditOutcome::AlreadyCredited))
        .count();
    assert_eq!((credited, already), (1, 19), "{outcomes:?}");
    assert_eq!(balance(&store, "u1", "USD").await, 700);
}

// DynamoDB only: the items as they are in the table.

async fn item(
    store: &DynamoStore,
    pk: String,
    sk: &str,
) -> Option<HashMap<String, AttributeValue>> {
    store
        .client()
        .get_item()
        .table_name(store.table())
        .key(PK, AttributeValue::S(pk))
        .key(SK, AttributeValue::S(sk.into()))
        .consistent_read(true)
        .send()
        .await
        .unwrap()
        .item
}

fn text(value: &str) -> AttributeValue {
    AttributeValue::S(value.into())
}

fn number(value: u64) -> AttributeValue {
    AttributeValue::N(value.to_string())
}

#[tokio::test]
async fn a_credit_writes_its_ledger_entry_and_one_balance_per_currency() {
    let store = testkit::moto::shared_table().await;
    let at = Timestamp::parse("2026-11-20T10:00:00.5Z").unwrap();
    store
        .credit_cash(&credit("u1", 1500, "USD", "grant/2026-11"), at)
        .await
        .unwrap();
    store
        .credit_cash(&credit("u1", 20, "EUR", "grant/eur"), at)
        .await
        .unwrap();
    assert_eq!(
        item(&store, credit_pk("grant/2026-11"), CREDIT_SK).await,
        Some(HashMap::from([
            (PK.to_owned(), text("CREDIT#grant/2026-11")),
            (SK.to_owned(), text("CREDIT")),
            (ENTITY.to_owned(), text("credit")),
            ("schemaVersion".to_owned(), number(1)),
            (LEDGER_USER_ID.to_owned(), text("u1")),
            (LEDGER_AMOUNT.to_owned(), number(1500)),
            (LEDGER_CURRENCY.to_owned(), text("USD")),
            (LEDGER_AT.to_owned(), text("2026-11-20T10:00:00.5Z")),
            // The fan's ledger entry, in the credit's own put.
            ("GSI3PK".to_owned(), text("CASH#u1")),
            (
                "GSI3SK".to_owned(),
                text(&domain::timestamp::time_key(
                    at,
                    &domain::cash::ledger::credit_entry_id("grant/2026-11")
                )),
            ),
        ]))
    );
    assert_eq!(
        item(&store, cash_pk(&testkit::ids::user("u1")), CASH_SK).await,
        Some(HashMap::from([
            (PK.to_owned(), text("CASH#u1")),
            (SK.to_owned(), text("CASH")),
            (ENTITY.to_owned(), text("cash")),
            ("schemaVersion".to_owned(), number(1)),
            ("USD".to_owned(), number(1500)),
            ("EUR".to_owned(), number(20)),
        ]))
    );
}

#[tokio::test]
async fn debits_written_by_purchases_are_listed_oldest_first() {
    let store = testkit::moto::shared_table().await;
    let put = |pk: String, sk: String, attributes: Vec<(&str, AttributeValue)>| {
        let mut item: HashMap<String, AttributeValue> = attributes
            .into_iter()
            .map(|(name, value)| (name.to_owned(), value))
            .collect();
        item.insert(PK.into(), text(&pk));
        item.insert(SK.into(), text(&sk));
        store
            .client()
            .put_item()
            .table_name(store.table())
            .set_item(Some(item))
            .send()
    };
    let debit = |purchase: &str, amount: u64, at: &str| {
        vec![
            (ENTITY, text("debit")),
            (LEDGER_PURCHASE_ID, text(purchase)),
            (LEDGER_AMOUNT, number(amount)),
            (LEDGER_CURRENCY, text("USD")),
            (LEDGER_AT, text(at)),
        ]
    };
    for (user, purchase, amount, at) in [
        ("u1", "p-b", 399, "2026-11-20T10:00:00Z"),
        ("u1", "p-a", 499, "2026-11-21T10:00:00Z"),
        ("u1", "p-c", 100, "2026-11-19T10:00:00Z"),
        ("u2", "p-d", 5, "2026-11-19T10:00:00Z"),
    ] {
        put(
            cash_pk(&testkit::ids::user(user)),
            debit_sk(&testkit::ids::purchase(purchase)),
            debit(purchase, amount, at),
        )
        .await
        .unwrap();
    }
    // Other items of the user, and a key that only looks like a debit's prefix.
    put(
        cash_pk(&testkit::ids::user("u1")),
        CASH_SK.into(),
        vec![("USD", number(9))],
    )
    .await
    .unwrap();
    put(
        user_pk(&testkit::ids::user("u1")),
        "PURCHASE#p-a".into(),
        vec![],
    )
    .await
    .unwrap();
    put(
        user_pk(&testkit::ids::user("u1")),
        debit_sk(&testkit::ids::purchase("p-e")),
        debit("p-e", 7, "2026-11-18T10:00:00Z"),
    )
    .await
    .unwrap();
    put(cash_pk(&testkit::ids::user("u1")), "DEBIT".into(), vec![])
        .await
        .unwrap();

    let debits = store.list_debits(&testkit::ids::user("u1")).await.unwrap();
    let listed: Vec<(&str, u64, &str, String)> = debits
        .iter()
        .map(|d| {
            (
                d.purchase_id.as_str(),
                d.amount.amount,
                d.amount.currency.as_str(),
                d.at.to_string(),
            )
        })
        .collect();
    assert_eq!(
        listed,
        [
            ("p-c", 100, "USD", "2026-11-19T10:00:00Z".to_owned()),
            ("p-b", 399, "USD", "2026-11-20T10:00:00Z".to_owned()),
            ("p-a", 499, "USD", "2026-11-21T10:00:00Z".to_owned()),
        ]
    );
    assert_eq!(
        store
            .list_debits(&testkit::ids::user("u2"))
            .await
            .unwrap()
            .len(),
        1
    );
    assert_eq!(
        debits[0].amount,
        Money {
            amount: 100,
            currency: "USD".into()
        }
    );
}

/// A credit cancelled by conflicting transactions wrote nothing and is tried again (8 tries at
/// most); a throttled one is reported unavailable at once, the balance unchanged.
#[tokio::test]
async fn a_credit_cancelled_by_a_conflict_is_tried_again_and_by_throttling_is_not() {
    use store::StoreError;
    use testkit::fault_proxy::{Fault, FaultProxy};
    let direct = testkit::moto::shared_table().await;
    let proxy = FaultProxy::start(testkit::moto::shared_endpoint()).await;
    let store = DynamoStore::new(
        testkit::moto::client_for(&proxy.endpoint()).await,
        direct.table(),
    );
    let transactions = || proxy.operation_count("TransactWriteItems");

    proxy.set_for_operation(
        Fault::Cancelled("TransactionConflict"),
        "TransactWriteItems",
        2,
    );
    let outcome = store
        .credit_cash(&credit("u1", 700, "USD", "r1"), Timestamp::now())
        .await
        .unwrap();
    assert_eq!(outcome, CreditOutcome::Credited { balance: 700 });
    assert_eq!(transactions(), 3);

    proxy.set_for_operation(Fault::Cancelled("ThrottlingError"), "TransactWriteItems", 9);
    let refused = store
        .credit_cash(&credit("u1", 300, "USD", "r2"), Timestamp::now())
        .await
        .unwrap_err();
    assert!(
        matches!(
            refused,
            CreditCashError::Store(StoreError::Unavailable { .. })
        ),
        "{refused:?}"
    );
    assert_eq!(transactions(), 4, "a throttled credit is not tried again");
    assert_eq!(balance(&direct, "u1", "USD").await, 700);
}
