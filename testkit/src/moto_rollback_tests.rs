//! `testkit/moto/key_rollback.py` changes only what moto copies to roll a transaction back and
//! which items its index Query sorts: the same transactions, cancelled or applied, leave both
//! servers' tables exactly alike, and the same index Query answers alike.

use std::collections::HashMap;

use crate::moto::{MotoServer, Rollback};
use aws_sdk_dynamodb::types::{AttributeValue, ConditionCheck, Put, TransactWriteItem, Update};

type Item = HashMap<String, AttributeValue>;

fn s(value: &str) -> AttributeValue {
    AttributeValue::S(value.to_owned())
}

fn item(pk: &str, sk: &str, n: &str) -> Item {
    HashMap::from([
        ("PK".to_owned(), s(pk)),
        ("SK".to_owned(), s(sk)),
        ("n".to_owned(), AttributeValue::N(n.to_owned())),
    ])
}

fn put(table: &str, item: Item) -> TransactWriteItem {
    let put = Put::builder()
        .table_name(table)
        .set_item(Some(item))
        .build()
        .unwrap();
    TransactWriteItem::builder().put(put).build()
}

fn add(table: &str, pk: &str, sk: &str, condition: &str) -> TransactWriteItem {
    let update = Update::builder()
        .table_name(table)
        .key("PK", s(pk))
        .key("SK", s(sk))
        .update_expression("ADD n :one")
        .condition_expression(condition)
        .expression_attribute_values(":one", AttributeValue::N("1".into()))
        .build()
        .unwrap();
    TransactWriteItem::builder().update(update).build()
}

fn check(table: &str, pk: &str, sk: &str, condition: &str) -> TransactWriteItem {
    let check = ConditionCheck::builder()
        .table_name(table)
        .key("PK", s(pk))
        .key("SK", s(sk))
        .condition_expression(condition)
        .build()
        .unwrap();
    TransactWriteItem::builder().condition_check(check).build()
}

/// Runs the same writes on `moto` and answers which transactions applied and the whole table.
async fn run(moto: &MotoServer) -> (Vec<bool>, Vec<Item>) {
    let store = moto.new_table().await;
    let (client, table) = (store.client(), store.table());
    for (pk, sk) in [
        ("USER#1", "BUYS#p"),
        ("USER#1", "UNPAID"),
        ("USER#2", "BUYS#p"),
    ] {
        client
            .put_item()
            .table_name(table)
            .set_item(Some(item(pk, sk, "1")))
            .send()
            .await
            .unwrap();
    }
    let transactions = [
        // Two changes under one partition key and a new item there, then a failed condition:
        // nothing of it may stay.
        vec![
            add(table, "USER#1", "BUYS#p", "n = :one"),
            put(table, item("USER#1", "PURCHASE#a", "7")),
            add(table, "USER#1", "UNPAID", "n = :one"),
            check(
                table,
                "USER#2",
                "BUYS#p",
                "n = :one AND attribute_not_exists(n)",
            ),
        ],
        // A new partition key, and a change elsewhere, cancelled by the last action.
        vec![
            put(table, item("USER#3", "BUYS#p", "1")),
            add(table, "USER#2", "BUYS#p", "n = :one"),
            add(
                table,
                "USER#1",
                "BUYS#p",
                "n = :one AND attribute_not_exists(n)",
            ),
        ],
        // Applied.
        vec![
            add(table, "USER#1", "BUYS#p", "n = :one"),
            put(table, item("USER#1", "PURCHASE#b", "3")),
        ],
    ];
    let mut applied = Vec::new();
    for actions in transactions {
        let outcome = client
            .transact_write_items()
            .set_transact_items(Some(actions))
            .send()
            .await;
        applied.push(outcome.is_ok());
    }
    let mut items = client
        .scan()
        .table_name(table)
        .send()
        .await
        .unwrap()
        .items
        .unwrap_or_default();
    items.sort_by_key(|item| format!("{:?}{:?}", item["PK"], item["SK"]));
    (applied, items)
}

#[tokio::test]
async fn named_item_rollback_leaves_the_table_as_moto_own_does() {
    let stock = MotoServer::start_with(Rollback::WholeTable).await;
    let named = MotoServer::start_with(Rollback::NamedItems).await;
    let (stock_applied, stock_items) = run(&stock).await;
    let (named_applied, named_items) = run(&named).await;
    assert_eq!(stock_applied, [false, false, true]);
    assert_eq!(named_applied, stock_applied);
    assert_eq!(named_items, stock_items);
    // What the cancelled ones would have left, had they not been rolled back, is absent.
    let keys: Vec<String> = named_items
        .iter()
        .map(|item| {
            format!(
                "{}/{}",
                item["PK"].as_s().unwrap(),
                item["SK"].as_s().unwrap()
            )
        })
        .collect();
    assert_eq!(
        keys,
        [
            "USER#1/BUYS#p",
            "USER#1/PURCHASE#b",
            "USER#1/UNPAID",
            "USER#2/BUYS#p"
        ]
    );
    assert_eq!(named_items[0]["n"], AttributeValue::N("2".into()));
}

/// Answers a Query of GSI2's `HOLDS#p#1` partition, up to `2#`, in both directions, on a table
/// whose other items would sort before, between and after that partition's.
async fn index_queries(moto: &MotoServer) -> Vec<Vec<Item>> {
    let store = moto.new_table().await;
    let (client, table) = (store.client(), store.table());
    for (pk, gsi_pk, gsi_sk) in [
        ("USER#1", "HOLDS#p#1", "3#c"),
        ("USER#2", "HOLDS#p#0", "1#a"),
        ("USER#3", "HOLDS#p#1", "1#b"),
        ("USER#4", "HOLDS#p#2", "0#d"),
        ("USER#5", "HOLDS#p#1", "2#a"),
        ("USER#0", "HOLDS#p#1", "1#a"),
    ] {
        let mut item = item(pk, "PURCHASE#x", "1");
        item.insert("GSI2PK".into(), s(gsi_pk));
        item.insert("GSI2SK".into(), s(gsi_sk));
        client
            .put_item()
            .table_name(table)
            .set_item(Some(item))
            .send()
            .await
            .unwrap();
    }
    // An item outside the index (no GSI2 attributes) is in the table all the same.
    client
        .put_item()
        .table_name(table)
        .set_item(Some(item("USER#6", "PROFILE", "1")))
        .send()
        .await
        .unwrap();
    let mut answers = Vec::new();
    for forward in [true, false] {
        let output = client
            .query()
            .table_name(table)
            .index_name("GSI2")
            .key_condition_expression("GSI2PK = :p AND GSI2SK <= :end")
            .expression_attribute_values(":p", s("HOLDS#p#1"))
            .expression_attribute_values(":end", s("2#~"))
            .scan_index_forward(forward)
            .send()
            .await
            .unwrap();
        answers.push(output.items.unwrap_or_default());
    }
    answers
}

#[tokio::test]
async fn an_index_query_answers_as_moto_own_does() {
    let stock = MotoServer::start_with(Rollback::WholeTable).await;
    let named = MotoServer::start_with(Rollback::NamedItems).await;
    let stock_answers = index_queries(&stock).await;
    let named_answers = index_queries(&named).await;
    let users = |items: &Vec<Item>| -> Vec<String> {
        items
            .iter()
            .map(|item| item["PK"].as_s().unwrap().clone())
            .collect()
    };
    assert_eq!(
        stock_answers.iter().map(users).collect::<Vec<_>>(),
        [
            ["USER#0", "USER#3", "USER#5"],
            ["USER#5", "USER#3", "USER#0"]
        ]
    );
    assert_eq!(named_answers, stock_answers);
}

/// DynamoDB answers a TransactWriteItems repeating a succeeded call's ClientRequestToken (within
/// 10 minutes) as applied, changing nothing, and refuses the token with other parameters. The
/// SDK keeps the token across its retries, so this is what a retry after a lost answer meets.
#[tokio::test]
async fn a_repeated_client_request_token_is_answered_as_applied() {
    let moto = MotoServer::start_with(Rollback::NamedItems).await;
    let store = moto.new_table().await;
    let (client, table) = (store.client(), store.table());
    client
        .put_item()
        .table_name(table)
        .set_item(Some(item("USER#1", "BUYS#p", "1")))
        .send()
        .await
        .unwrap();
    let once = || vec![add(table, "USER#1", "BUYS#p", "n = :one")];
    let send = |token: &str, actions: Vec<TransactWriteItem>| {
        client
            .transact_write_items()
            .client_request_token(token)
            .set_transact_items(Some(actions))
            .send()
    };
    let n = || async {
        client
            .get_item()
            .table_name(table)
            .key("PK", s("USER#1"))
            .key("SK", s("BUYS#p"))
            .send()
            .await
            .unwrap()
            .item
            .unwrap()["n"]
            .clone()
    };
    send("token-1", once()).await.expect("applied");
    assert_eq!(n().await, AttributeValue::N("2".into()));
    // The retry of an applied call: answered as applied, nothing changed (its condition, now
    // false, is not run again).
    send("token-1", once()).await.expect("answered as applied");
    assert_eq!(n().await, AttributeValue::N("2".into()));
    // The same token with other parameters is refused.
    let other = vec![add(table, "USER#1", "BUYS#p", "n = :one OR n > :one")];
    let mismatch = send("token-1", other)
        .await
        .unwrap_err()
        .into_service_error();
    assert!(
        mismatch.is_idempotent_parameter_mismatch_exception(),
        "{mismatch:?}"
    );
    // Another token is another call: cancelled on its condition.
    let cancelled = send("token-2", once())
        .await
        .unwrap_err()
        .into_service_error();
    assert!(
        cancelled.is_transaction_canceled_exception(),
        "{cancelled:?}"
    );
    assert_eq!(n().await, AttributeValue::N("2".into()));
}
