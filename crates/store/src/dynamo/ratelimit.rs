//! Rate-limit counters and spent human-check tokens on DynamoDB: each request is one
//! conditional `UpdateItem` (or `PutItem`) on a key of its own fan or address; a refusal is the
//! condition failing, which writes nothing.

use aws_sdk_dynamodb::types::{AttributeValue, ReturnValue};

use super::condition::{render, written};
use super::records::{ABUSE_VERSION, SCHEMA_VERSION};
use super::{DynamoStore, key, number, s};
use crate::StoreError;
use crate::ratelimit::{SpendToken, TakeFromWindow, counted, under_quota, unspent};
use crate::schema::{ENTITY, HUMAN_SK, PK, RATE_COUNT, SK, TTL, human_pk, rate_pk, rate_sk};
use domain::ratelimit::{Counter, Taken};

impl TakeFromWindow for DynamoStore {
    async fn take(&self, counter: &Counter, quota: u32) -> Result<Taken, StoreError> {
        let condition = render(&under_quota(quota));
        let result = self
            .client
            .update_item()
            .table_name(&self.table)
            .set_key(Some(key(rate_pk(counter), &rate_sk(counter))))
            .update_expression("SET #entity = :entity, #sv = :sv, #ttl = :ttl ADD #n :one")
            .condition_expression(condition.expression)
            .set_expression_attribute_names(Some(condition.names.into_iter().collect()))
            .set_expression_attribute_values(Some(condition.values.into_iter().collect()))
            .expression_attribute_names("#entity", ENTITY)
            .expression_attribute_names("#sv", SCHEMA_VERSION)
            .expression_attribute_names("#ttl", TTL)
            .expression_attribute_names("#n", RATE_COUNT)
            .expression_attribute_values(":entity", s("rate"))
            .expression_attribute_values(":sv", number(ABUSE_VERSION))
            .expression_attribute_values(":ttl", number(counter.expires_at()))
            .expression_attribute_values(":one", number(1))
            .return_values(ReturnValue::UpdatedNew)
            .send()
            .await;
        let Some(output) = written("UpdateItem", result)? else {
            return Ok(Taken::Full);
        };
        let count = output
            .attributes
            .as_ref()
            .and_then(|item| item.get(RATE_COUNT))
            .and_then(|value| value.as_n().ok())
            .and_then(|n| n.parse::<u32>().ok())
            .ok_or_else(|| StoreError::internal("rate counter: no count answered"))?;
        Ok(Taken::Counted(count))
    }

    async fn give_back(&self, counter: &Counter) -> Result<(), StoreError> {
        let condition = render(&counted());
        let result = self
            .client
            .update_item()
            .table_name(&self.table)
            .set_key(Some(key(rate_pk(counter), &rate_sk(counter))))
            .update_expression("ADD #n :minus")
            .condition_expression(condition.expression)
            .set_expression_attribute_names(Some(condition.names.into_iter().collect()))
            .set_expression_attribute_values(Some(condition.values.into_iter().collect()))
            .expression_attribute_names("#n", RATE_COUNT)
            .expression_attribute_values(":minus", number(-1))
            .send()
            .await;
        // A counter that fails `counted` has nothing to give back: done all the same.
        written("UpdateItem", result).map(drop)
    }
}

impl SpendToken for DynamoStore {
    async fn spend(&self, token_hash: &str, expires_at: i64) -> Result<bool, StoreError> {
        let condition = render(&unspent());
        let result = self
            .client
            .put_item()
            .table_name(&self.table)
            .item(PK, s(human_pk(token_hash)))
            .item(SK, s(HUMAN_SK))
            .item(ENTITY, s("humanCheck"))
            .item(SCHEMA_VERSION, number(ABUSE_VERSION))
            .item(TTL, AttributeValue::N(expires_at.to_string()))
            .condition_expression(condition.expression)
            .set_expression_attribute_names(Some(condition.names.into_iter().collect()))
            .set_expression_attribute_values(
                (!condition.values.is_empty()).then(|| condition.values.into_iter().collect()),
            )
            .send()
            .await;
        Ok(written("PutItem", result)?.is_some())
    }
}
