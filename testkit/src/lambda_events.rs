//! The events Lambda gives the webhook functions, shaped as it gives them: the table's stream
//! records (events-dispatcher) and the deliveries queue's messages (webhook-sender), and a real
//! event item to put in a stream record.

use std::collections::HashMap;

use aws_sdk_dynamodb::types::AttributeValue;
use domain::timestamp::Timestamp;
use serde_json::{Value, json};
use store::DynamoStore;

/// DynamoDB JSON of one attribute value, as a stream record carries it.
fn dynamodb_json(value: &AttributeValue) -> Value {
    match value {
        AttributeValue::S(text) => json!({ "S": text }),
        AttributeValue::N(number) => json!({ "N": number }),
        AttributeValue::Bool(flag) => json!({ "BOOL": flag }),
        AttributeValue::Null(_) => json!({ "NULL": true }),
        AttributeValue::M(map) => json!({ "M": image(map) }),
        AttributeValue::L(list) => {
            json!({ "L": list.iter().map(dynamodb_json).collect::<Vec<_>>() })
        }
        other => panic!("an event item holds no {other:?}"),
    }
}

fn image(item: &HashMap<String, AttributeValue>) -> Value {
    Value::Object(
        item.iter()
            .map(|(name, value)| (name.clone(), dynamodb_json(value)))
            .collect(),
    )
}

/// The stream record Lambda gives the dispatcher for `item`'s write (`name`: INSERT, MODIFY).
pub fn stream_record(name: &str, sequence: &str, item: &HashMap<String, AttributeValue>) -> Value {
    json!({
        "eventID": format!("id-{sequence}"),
        "eventName": name,
        "eventVersion": "1.1",
        "eventSource": "aws:dynamodb",
        "awsRegion": "us-east-1",
        "dynamodb": {
            "ApproximateCreationDateTime": 1795939200.0,
            "Keys": {"PK": dynamodb_json(&item["PK"]), "SK": dynamodb_json(&item["SK"])},
            "NewImage": image(item),
            "SequenceNumber": sequence,
            "SizeBytes": 512,
            "StreamViewType": "NEW_IMAGE"
        },
        "eventSourceARN": "arn:aws:dynamodb:us-east-1:123456789012:table/t/stream/2026-11-29T00:00:00.000"
    })
}

/// The SQS event Lambda gives the sender for these messages (each its id and body).
pub fn sqs_event<'a>(messages: impl IntoIterator<Item = (&'a str, &'a str)>) -> Value {
    let records: Vec<Value> = messages
        .into_iter()
        .map(|(id, body)| {
            json!({
                "messageId": id,
                "receiptHandle": format!("handle-{id}"),
                "body": body,
                "attributes": {"ApproximateReceiveCount": "1", "SentTimestamp": "1795939200000"},
                "messageAttributes": {},
                "eventSource": "aws:sqs",
                "eventSourceARN": "arn:aws:sqs:us-east-1:123456789012:deliveries",
                "awsRegion": "us-east-1"
            })
        })
        .collect();
    json!({ "Records": records })
}

/// The event item `fan`'s wallet link wrote: written by the real store, read back whole.
pub async fn wallet_event_item(store: &DynamoStore, fan: &str) -> HashMap<String, AttributeValue> {
    crate::wallets::link(
        store,
        &crate::ids::user(fan),
        r#"{"address":"0x00000000000000000000000000000000000000aa","chainId":1}"#,
        Timestamp::now(),
        None,
    )
    .await
    .unwrap();
    let items = store
        .client()
        .query()
        .table_name(store.table())
        .key_condition_expression("PK = :pk AND begins_with(SK, :e)")
        .expression_attribute_values(":pk", AttributeValue::S(format!("EVENTS#fan#{fan}")))
        .expression_attribute_values(":e", AttributeValue::S("E#".into()))
        .send()
        .await
        .unwrap()
        .items
        .unwrap_or_default();
    assert_eq!(items.len(), 1, "one wallet.linked event");
    items.into_iter().next().unwrap()
}
