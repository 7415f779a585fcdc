//! The table itself: its key attributes, key and indexes (as `template.yaml` declares them),
//! and the `CreateTable` that tests, local-api and seed-packs run.

use aws_sdk_dynamodb::client::Waiters;
use aws_sdk_dynamodb::error::DisplayErrorContext;
use aws_sdk_dynamodb::types::{
    AttributeDefinition, BillingMode, GlobalSecondaryIndex, KeySchemaElement, KeyType, Projection,
    ProjectionType, ScalarAttributeType,
};

use super::{
    GSI1, GSI1_PK, GSI1_SK, GSI2, GSI2_PK, GSI2_SK, GSI3, GSI3_PK, GSI3_SK, GSI4, GSI4_PK, GSI4_SK,
    GSI5, GSI5_PK, GSI5_SK, PK, SK,
};

/// Key attributes and their types, as declared in `template.yaml`'s `AttributeDefinitions`.
pub const KEY_ATTRIBUTES: [(&str, ScalarAttributeType); 12] = [
    (PK, ScalarAttributeType::S),
    (SK, ScalarAttributeType::S),
    (GSI1_PK, ScalarAttributeType::S),
    (GSI1_SK, ScalarAttributeType::S),
    (GSI2_PK, ScalarAttributeType::S),
    (GSI2_SK, ScalarAttributeType::S),
    (GSI3_PK, ScalarAttributeType::S),
    (GSI3_SK, ScalarAttributeType::S),
    (GSI4_PK, ScalarAttributeType::S),
    (GSI4_SK, ScalarAttributeType::N),
    (GSI5_PK, ScalarAttributeType::S),
    (GSI5_SK, ScalarAttributeType::S),
];

/// The table's (hash, range) key.
pub const TABLE_KEY: (&str, &str) = (PK, SK);

/// Each global secondary index: (name, hash key, range key); all project every attribute.
pub const INDEXES: [(&str, &str, &str); 5] = [
    (GSI1, GSI1_PK, GSI1_SK),
    (GSI2, GSI2_PK, GSI2_SK),
    (GSI3, GSI3_PK, GSI3_SK),
    (GSI4, GSI4_PK, GSI4_SK),
    (GSI5, GSI5_PK, GSI5_SK),
];

fn key_schema(hash: &str, range: &str) -> Vec<KeySchemaElement> {
    [(hash, KeyType::Hash), (range, KeyType::Range)]
        .into_iter()
        .map(|(name, key_type)| {
            KeySchemaElement::builder()
                .attribute_name(name)
                .key_type(key_type)
                .build()
                .expect("name and type are set")
        })
        .collect()
}

/// Creates the table (on-demand billing, the index above) and waits until it is active.
/// Returns `false` when a table of that name already existed (it is not changed).
pub async fn create_table(
    client: &aws_sdk_dynamodb::Client,
    table_name: &str,
) -> Result<bool, String> {
    let definitions = KEY_ATTRIBUTES
        .into_iter()
        .map(|(name, kind)| {
            AttributeDefinition::builder()
                .attribute_name(name)
                .attribute_type(kind)
                .build()
                .expect("name and type are set")
        })
        .collect();
    let indexes = INDEXES
        .into_iter()
        .map(|(name, hash, range)| {
            GlobalSecondaryIndex::builder()
                .index_name(name)
                .set_key_schema(Some(key_schema(hash, range)))
                .projection(
                    Projection::builder()
                        .projection_type(ProjectionType::All)
                        .build(),
                )
                .build()
                .expect("name, keys and projection are set")
        })
        .collect();
    let created = client
        .create_table()
        .table_name(table_name)
        .billing_mode(BillingMode::PayPerRequest)
        .set_attribute_definitions(Some(definitions))
        .set_key_schema(Some(key_schema(TABLE_KEY.0, TABLE_KEY.1)))
        .set_global_secondary_indexes(Some(indexes))
        .send()
        .await;
    let created = match created {
        Ok(_) => true,
        Err(error)
            if error
                .as_service_error()
                .is_some_and(|e| e.is_resource_in_use_exception()) =>
        {
            false
        }
        Err(error) => {
            return Err(format!(
                "CreateTable {table_name}: {}",
                DisplayErrorContext(error)
            ));
        }
    };
    client
        .wait_until_table_exists()
        .table_name(table_name)
        .wait(std::time::Duration::from_secs(120))
        .await
        .map_err(|e| format!("waiting for table {table_name}: {}", DisplayErrorContext(e)))?;
    Ok(created)
}
