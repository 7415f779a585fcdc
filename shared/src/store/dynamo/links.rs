//! Web3 links on DynamoDB.

use aws_sdk_dynamodb::types::AttributeValue;

use super::records::{LINK_VERSION, LinkRecord, SCHEMA_VERSION, read_record};
use super::{DynamoStore, Item, classify, number, s};
use crate::ids::UserId;
use crate::links::{LinkUpsert, Web3Link};
use crate::store::StoreError;
use crate::store::links::{GetLink, UpsertLink};
use crate::store::schema::{ENTITY, PK, SK, link_sk, user_pk};

impl UpsertLink for DynamoStore {
    async fn upsert_link(&self, link: &LinkUpsert<'_>) -> Result<(), StoreError> {
        let at = s(link.at.to_string());
        let email = link.email.map_or(AttributeValue::Null(true), s);
        self.client
            .update_item()
            .table_name(&self.table)
            .key(PK, s(user_pk(link.user_id)))
            .key(SK, s(link_sk(link.provider)))
            .update_expression(
                "SET #entity = :entity, #sv = :sv, userId = :user, email = :email, provider = :provider, payload = :payload, \
                 updatedAt = :at, linkedAt = if_not_exists(linkedAt, :at)",
            )
            .expression_attribute_names("#entity", ENTITY)
            .expression_attribute_names("#sv", SCHEMA_VERSION)
            .expression_attribute_values(":entity", s("link"))
            .expression_attribute_values(":sv", number(LINK_VERSION))
            .expression_attribute_values(":user", s(link.user_id.as_str()))
            .expression_attribute_values(":email", email)
            .expression_attribute_values(":provider", s(link.provider))
            .expression_attribute_values(":payload", s(link.payload.get()))
            .expression_attribute_values(":at", at)
            .send()
            .await
            .map_err(|e| classify("UpdateItem", e))?;
        Ok(())
    }
}

impl GetLink for DynamoStore {
    async fn get_link(
        &self,
        user_id: &UserId,
        provider: &str,
    ) -> Result<Option<Web3Link>, StoreError> {
        let output = self
            .client
            .get_item()
            .table_name(&self.table)
            .key(PK, s(user_pk(user_id)))
            .key(SK, s(link_sk(provider)))
            .consistent_read(true)
            .send()
            .await
            .map_err(|e| classify("GetItem", e))?;
        output.item.map(link_from_item).transpose()
    }
}

/// A link from its item, through its record.
pub(crate) fn link_from_item(item: Item) -> Result<Web3Link, StoreError> {
    read_record::<LinkRecord, _>(item, "link")
}
