//! `template.yaml` and the table `seed-packs --create-table` makes agree: the table created on
//! moto_server is described and compared with the template's declaration.

use std::collections::BTreeSet;

use serde_norway::Value;

fn template() -> Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../template.yaml");
    serde_norway::from_str(&std::fs::read_to_string(path).unwrap()).expect("template.yaml parses")
}

fn text(value: &Value) -> String {
    value
        .as_str()
        .unwrap_or_else(|| panic!("expected a string, got {value:?}"))
        .to_owned()
}

/// (name, key schema, projection type) of a global secondary index.
type Index = (String, Vec<(String, String)>, String);

/// (name, type) pairs of the SDK's key schema.
fn sdk_keys(schema: &[aws_sdk_dynamodb::types::KeySchemaElement]) -> Vec<(String, String)> {
    schema
        .iter()
        .map(|k| {
            (
                k.attribute_name().to_owned(),
                k.key_type().as_str().to_owned(),
            )
        })
        .collect()
}

/// (name, type) pairs of a KeySchema list.
fn keys(list: &Value) -> Vec<(String, String)> {
    list.as_sequence()
        .unwrap()
        .iter()
        .map(|k| (text(&k["AttributeName"]), text(&k["KeyType"])))
        .collect()
}

#[tokio::test]
async fn created_table_matches_the_template() {
    let template = template();
    let declared = &template["Resources"]["Table"]["Properties"];

    let store = testkit::moto::shared_table().await;
    let table = store
        .client()
        .describe_table()
        .table_name(store.table())
        .send()
        .await
        .unwrap()
        .table
        .unwrap();

    let declared_attributes: BTreeSet<(String, String)> = declared["AttributeDefinitions"]
        .as_sequence()
        .unwrap()
        .iter()
        .map(|a| (text(&a["AttributeName"]), text(&a["AttributeType"])))
        .collect();
    let actual_attributes: BTreeSet<(String, String)> = table
        .attribute_definitions()
        .iter()
        .map(|a| {
            (
                a.attribute_name().to_owned(),
                a.attribute_type().as_str().to_owned(),
            )
        })
        .collect();
    assert_eq!(actual_attributes, declared_attributes);

    assert_eq!(sdk_keys(table.key_schema()), keys(&declared["KeySchema"]));

    let declared_indexes: BTreeSet<Index> = declared["GlobalSecondaryIndexes"]
        .as_sequence()
        .unwrap()
        .iter()
        .map(|i| {
            (
                text(&i["IndexName"]),
                keys(&i["KeySchema"]),
                text(&i["Projection"]["ProjectionType"]),
            )
        })
        .collect();
    let actual_indexes: BTreeSet<Index> = table
        .global_secondary_indexes()
        .iter()
        .map(|i| {
            let keys = sdk_keys(i.key_schema());
            let projection = i
                .projection()
                .and_then(|p| p.projection_type())
                .map(|p| p.as_str().to_owned())
                .unwrap_or_default();
            (i.index_name().unwrap().to_owned(), keys, projection)
        })
        .collect();
    assert_eq!(actual_indexes, declared_indexes);
    assert!(
        table.local_secondary_indexes().is_empty()
            && declared.get("LocalSecondaryIndexes").is_none()
    );

    assert_eq!(text(&declared["BillingMode"]), "PAY_PER_REQUEST");
    let billing = table
        .billing_mode_summary()
        .and_then(|b| b.billing_mode())
        .map(|b| b.as_str().to_owned());
    assert_eq!(billing.as_deref(), Some("PAY_PER_REQUEST"));
}

#[test]
fn functions_are_arm64_al2023_128mb_built_with_cargo_lambda() {
    let template = template();
    let globals = &template["Globals"]["Function"];
    assert_eq!(text(&globals["Runtime"]), "provided.al2023");
    assert_eq!(
        globals["Architectures"].as_sequence().unwrap(),
        &[Value::from("arm64")]
    );
    assert_eq!(globals["MemorySize"].as_u64(), Some(128));
    let mut binaries = BTreeSet::new();
    for (_, resource) in template["Resources"].as_mapping().unwrap() {
        if resource["Type"].as_str() == Some("AWS::Serverless::Function") {
            assert_eq!(
                text(&resource["Metadata"]["BuildMethod"]),
                "rust-cargolambda"
            );
            binaries.insert(text(&resource["Metadata"]["BuildProperties"]["Binary"]));
        }
    }
    // Every function of a route, and the scheduled sweep of expired purchase holds.
    let mut expected: BTreeSet<String> = shared::http::routes::ROUTES
        .iter()
        .map(|route| route.function.to_owned())
        .collect();
    expected.insert("release-holds".to_owned());
    assert_eq!(binaries, expected);
}
