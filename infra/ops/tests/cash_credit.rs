//! The `cash-credit` binary against moto_server: credits, and top-ups settled by hand.

use std::process::Output;

use aws_sdk_dynamodb::types::AttributeValue;
use domain::cash::Money;
use domain::timestamp::Timestamp;
use domain::topups::{Checkout, TopUp, TopUpStatus, credit_reference, top_up_id};
use store::DynamoStore;
use store::cash::GetBalance;
use store::schema::{CREDIT_SK, PK, SK, credit_pk};
use store::topups::{CompletedTopUp, CreateTopUp, GetTopUp, SetCheckout, SettleTopUp};

const BINARY: &str = env!("CARGO_BIN_EXE_cash-credit");

async fn cash_credit_at(endpoint: &str, table: Option<&str>, args: &[&str]) -> Output {
    crate::tool(BINARY, endpoint, table, args).await
}

async fn cash_credit(store: &DynamoStore, args: &[&str]) -> Output {
    cash_credit_at(testkit::moto::shared_endpoint(), Some(store.table()), args).await
}

fn credit_args<'a>(
    user: &'a str,
    amount: &'a str,
    currency: &'a str,
    reference: &'a str,
) -> [&'a str; 8] {
    [
        "--user",
        user,
        "--amount",
        amount,
        "--currency",
        currency,
        "--reference",
        reference,
    ]
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

async fn balance(store: &DynamoStore, user: &str, currency: &str) -> u64 {
    store
        .get_balance(&testkit::ids::user(user), currency)
        .await
        .unwrap()
}

/// Whether the table holds a credit entry for `reference`.
async fn credit_entry_exists(store: &DynamoStore, reference: &str) -> bool {
    store
        .client()
        .get_item()
        .table_name(store.table())
        .key(PK, AttributeValue::S(credit_pk(reference)))
        .key(SK, AttributeValue::S(CREDIT_SK.into()))
        .consistent_read(true)
        .send()
        .await
        .unwrap()
        .item
        .is_some()
}

#[tokio::test]
async fn credits_and_prints_the_balance() {
    let store = testkit::moto::shared_table().await;
    let output = cash_credit(&store, &credit_args("user-1", "1500", "USD", "grant-1")).await;
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert!(
        stdout(&output).contains("credited 1500 USD to user-1; balance now 1500 USD"),
        "{output:?}"
    );
    let output = cash_credit(&store, &credit_args("user-1", "250", "USD", "grant-2")).await;
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert!(
        stdout(&output).contains("credited 250 USD to user-1; balance now 1750 USD"),
        "{output:?}"
    );
    assert_eq!(balance(&store, "user-1", "USD").await, 1750);
    assert_eq!(balance(&store, "user-1", "EUR").await, 0);
    assert!(credit_entry_exists(&store, "grant-1").await);
    assert!(stderr(&output).is_empty(), "{output:?}");
}

#[tokio::test]
async fn the_same_reference_credits_once_and_a_reused_one_is_refused() {
    let store = testkit::moto::shared_table().await;
    let args = credit_args("user-1", "1000", "EUR", "invoice-42");
    assert_eq!(cash_credit(&store, &args).await.status.code(), Some(0));
    let again = cash_credit(&store, &args).await;
    assert_eq!(again.status.code(), Some(0), "{again:?}");
    assert_eq!(
        stdout(&again).trim(),
        "already credited (reference invoice-42): nothing changed"
    );
    assert_eq!(balance(&store, "user-1", "EUR").await, 1000);

    for other in [
        credit_args("user-1", "1001", "EUR", "invoice-42"),
        credit_args("user-2", "1000", "EUR", "invoice-42"),
        credit_args("user-1", "1000", "USD", "invoice-42"),
    ] {
        let refused = cash_credit(&store, &other).await;
        assert_eq!(refused.status.code(), Some(1), "{refused:?}");
        assert!(
            stderr(&refused).contains("reference invoice-42 was already used for another credit"),
            "{refused:?}"
        );
        assert!(stdout(&refused).is_empty(), "{refused:?}");
    }
    assert_eq!(balance(&store, "user-1", "EUR").await, 1000);
    assert_eq!(balance(&store, "user-2", "EUR").await, 0);
    assert_eq!(balance(&store, "user-1", "USD").await, 0);
}

#[tokio::test]
async fn bad_values_exit_2_with_the_reason_and_write_nothing() {
    let store = testkit::moto::shared_table().await;
    let too_long = "r".repeat(256);
    for (args, reason) in [
        (credit_args("u", "0", "USD", "bad-0"), "--amount must be"),
        (credit_args("u", "-5", "USD", "bad-1"), "--amount must be"),
        (credit_args("u", "1.5", "USD", "bad-2"), "--amount must be"),
        (
            credit_args("u", "12abc", "USD", "bad-3"),
            "--amount must be",
        ),
        (credit_args("u", "", "USD", "bad-4"), "--amount must be"),
        (
            credit_args("u", "1000000000001", "USD", "bad-5"),
            "--amount must be",
        ),
        (
            credit_args("u", "99999999999999999999999", "USD", "bad-6"),
            "--amount must be",
        ),
        (
            credit_args("u", "100", "usd", "bad-7"),
            "--currency must be",
        ),
        (credit_args("u", "100", "US", "bad-8"), "--currency must be"),
        (
            credit_args("u", "100", "USDX", "bad-9"),
            "--currency must be",
        ),
        (credit_args("u", "100", "", "bad-10"), "--currency must be"),
        (credit_args("u", "100", "USD", ""), "--reference must be"),
        (
            credit_args("u", "100", "USD", "has space"),
            "--reference must be",
        ),
        (
            credit_args("u", "100", "USD", &too_long),
            "--reference must be",
        ),
        (
            credit_args("", "100", "USD", "bad-11"),
            "--user must not be empty",
        ),
        (
            credit_args(" ", "100", "USD", "bad-12"),
            "--user must not be empty",
        ),
    ] {
        let output = cash_credit(&store, &args).await;
        assert_eq!(output.status.code(), Some(2), "{args:?}: {output:?}");
        let stderr = stderr(&output);
        assert!(
            stderr.contains(reason) && stderr.contains("nothing was written"),
            "{args:?}: {stderr}"
        );
        assert!(stdout(&output).is_empty(), "{args:?}: {output:?}");
        assert!(!credit_entry_exists(&store, args[7]).await, "{args:?}");
        // A user id no token can carry (empty, over 255 bytes) has no balance to read.
        if domain::ids::UserId::parse(args[1]).is_ok() {
            for currency in ["USD", "usd", "US", "USDX"] {
                assert_eq!(balance(&store, args[1], currency).await, 0, "{args:?}");
            }
        }
    }
    // The largest credit is fine.
    let output = cash_credit(&store, &credit_args("u", "1000000000000", "USD", "max")).await;
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert_eq!(balance(&store, "u", "USD").await, 1_000_000_000_000);
}

#[tokio::test]
async fn usage_errors_exit_2_and_help_exits_0() {
    let full = credit_args("u", "1", "USD", "r");
    for args in [
        &[][..],
        &full[..6],
        &full[2..],
        &[
            "--user",
            "u",
            "--amount",
            "1",
            "--currency",
            "USD",
            "--reference",
        ][..],
        &["--bogus"][..],
        &[full.as_slice(), &["--amount", "2"]].concat()[..],
        &[full.as_slice(), &["extra"]].concat()[..],
    ] {
        // Nothing listens on port 9: nothing is reached either way.
        let output = cash_credit_at("http://127.0.0.1:9", Some("fan-api"), args).await;
        assert_eq!(output.status.code(), Some(2), "{args:?}: {output:?}");
        assert!(
            stderr(&output).contains("usage: cash-credit"),
            "{args:?}: {output:?}"
        );
    }
    let help = cash_credit_at("http://127.0.0.1:9", None, &["--help"]).await;
    assert_eq!(help.status.code(), Some(0), "{help:?}");
    assert!(stdout(&help).contains("usage: cash-credit"));
}

#[tokio::test]
async fn store_and_configuration_failures_exit_1() {
    let args = credit_args("u", "100", "USD", "r-1");
    let no_table = cash_credit_at(testkit::moto::shared_endpoint(), None, &args).await;
    assert_eq!(no_table.status.code(), Some(1), "{no_table:?}");
    assert!(stderr(&no_table).contains("TABLE_NAME"), "{no_table:?}");

    let missing = cash_credit_at(
        testkit::moto::shared_endpoint(),
        Some("no-such-table"),
        &args,
    )
    .await;
    assert_eq!(missing.status.code(), Some(1), "{missing:?}");
    assert!(
        stderr(&missing).contains("store failure")
            && stderr(&missing).contains("run the same command again"),
        "{missing:?}"
    );

    let unreachable = cash_credit_at("http://127.0.0.1:9", Some("fan-api"), &args).await;
    assert_eq!(unreachable.status.code(), Some(1), "{unreachable:?}");
    assert!(
        stderr(&unreachable).contains("store unavailable"),
        "{unreachable:?}"
    );
}

/// A pending top-up of `user` with a Checkout Session (as the create leaves it), or without one.
async fn top_up(store: &DynamoStore, user: &str, key: &str, session: bool) -> TopUp {
    let user = testkit::ids::user(user);
    let money = Money {
        amount: 1500,
        currency: "USD".into(),
    };
    let top_up = TopUp::pending(top_up_id(&user, key), user, money, Timestamp::now());
    store.create_top_up(&top_up).await.unwrap();
    if !session {
        return top_up;
    }
    let checkout = Checkout {
        session_id: format!("cs_{key}"),
        url: format!("https://checkout.stripe.com/c/pay/cs_{key}"),
    };
    store.set_checkout(&top_up.id, &checkout).await.unwrap()
}

/// `cash-credit --settle-top-up id` on `store`'s table, reached at `endpoint`.
async fn settle(endpoint: &str, store: &DynamoStore, id: &str) -> Output {
    cash_credit_at(endpoint, Some(store.table()), &["--settle-top-up", id]).await
}

#[tokio::test]
async fn a_paid_top_up_is_settled_by_hand_exactly_once() {
    // Concurrent transactions: moto applies each whole only behind the one-at-a-time proxy.
    let (proxy, store) = testkit::moto::atomic_table().await;
    let endpoint = proxy.endpoint();
    let paid = top_up(&store, "settle-fan-1", "k1", true).await;
    // Two operators at once, then the same command again: one credit.
    let (first, second) = tokio::join!(
        settle(&endpoint, &store, paid.id.as_str()),
        settle(&endpoint, &store, paid.id.as_str())
    );
    let outputs = [
        first,
        second,
        settle(&endpoint, &store, paid.id.as_str()).await,
    ];
    for output in &outputs {
        assert_eq!(output.status.code(), Some(0), "{output:?}");
    }
    let settled: Vec<String> = outputs.iter().map(stdout).collect();
    let credited = format!(
        "settled top-up {}: credited 1500 USD to settle-fan-1; balance now 1500 USD\n",
        paid.id
    );
    assert_eq!(
        settled.iter().filter(|out| **out == credited).count(),
        1,
        "{settled:?}"
    );
    assert!(settled[2].contains("nothing changed"), "{settled:?}");
    assert_eq!(balance(&store, "settle-fan-1", "USD").await, 1500);
    assert!(credit_entry_exists(&store, &credit_reference(&paid.id)).await);
    let stored = store.get_top_up(&paid.id).await.unwrap().unwrap();
    assert_eq!(stored.status, TopUpStatus::Completed);
    // A late delivery of Stripe's event credits nothing either.
    assert_eq!(
        store.complete_top_up(&paid, Timestamp::now()).await,
        Ok(CompletedTopUp::AlreadyCompleted)
    );
    assert_eq!(balance(&store, "settle-fan-1", "USD").await, 1500);
}

#[tokio::test]
async fn a_top_up_stripe_took_no_money_for_is_not_settled() {
    let store = testkit::moto::shared_table().await;
    let failed = top_up(&store, "settle-fan-2", "k1", true).await;
    store
        .close_top_up(&failed, "cs_k1", TopUpStatus::Failed, Timestamp::now())
        .await
        .unwrap();
    let no_session = top_up(&store, "settle-fan-2", "k2", false).await;
    for (id, reason) in [
        (failed.id.as_str(), "is failed"),
        (no_session.id.as_str(), "never had a Checkout Session"),
        ("no-such-top-up", "no top-up no-such-top-up"),
    ] {
        let output = settle(testkit::moto::shared_endpoint(), &store, id).await;
        assert_eq!(output.status.code(), Some(1), "{id}: {output:?}");
        assert!(stderr(&output).contains(reason), "{id}: {output:?}");
    }
    assert_eq!(balance(&store, "settle-fan-2", "USD").await, 0);
    // It takes the top-up alone: who, what and the reference are the top-up's.
    for args in [
        &["--settle-top-up", "t1", "--user", "u"][..],
        &["--settle-top-up", "not an id!"][..],
        &["--settle-top-up"][..],
    ] {
        let output = cash_credit_at("http://127.0.0.1:9", Some("fan-api"), args).await;
        assert_eq!(output.status.code(), Some(2), "{args:?}: {output:?}");
    }
}
