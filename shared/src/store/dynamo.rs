//! [`DynamoStore`]: the storage traits on the app's DynamoDB table.

use std::collections::HashMap;

use aws_sdk_dynamodb::Client;
use aws_sdk_dynamodb::error::{DisplayErrorContext, ProvideErrorMetadata, SdkError};
use aws_sdk_dynamodb::types::AttributeValue;
use aws_smithy_runtime_api::client::orchestrator::HttpResponse;

use crate::links::{LinkUpsert, Web3Link};
use crate::packs::Pack;
use crate::packs::document::PackDocument;
use crate::packs::listing::{ListingKey, Page, PageRequest};
use crate::store::schema::{
    ENTITY, GSI1, GSI1_PK, GSI1_SK, LIST_ENDS_AT, LISTED_PACKS, PACK_DOC, PACK_REMAINING, PACK_SK,
    PK, SK, link_sk, pack_pk, user_pk,
};
use crate::store::{GetLink, GetPack, ListActivePacks, SavePack, StoreError, UpsertLink};

type Item = HashMap<String, AttributeValue>;

/// The app's table, through a client built once per cold start.
#[derive(Clone, Debug)]
pub struct DynamoStore {
    client: Client,
    table: String,
}

fn s(value: impl Into<String>) -> AttributeValue {
    AttributeValue::S(value.into())
}

/// Sorts an SDK failure into "unavailable" (throttling, timeouts, unreachable, 5xx: a 503) and
/// anything else (a 500), keeping the full detail for the logs.
fn classify<E>(operation: &str, error: SdkError<E, HttpResponse>) -> StoreError
where
    E: ProvideErrorMetadata + std::error::Error + Send + Sync + 'static,
{
    let unavailable = match &error {
        SdkError::TimeoutError(_) | SdkError::DispatchFailure(_) | SdkError::ResponseError(_) => {
            true
        }
        SdkError::ServiceError(service) => {
            matches!(
                service.err().code(),
                Some(
                    "ThrottlingException"
                        | "ProvisionedThroughputExceededException"
                        | "RequestLimitExceeded"
                        | "InternalServerError"
                        | "ServiceUnavailable"
                )
            ) || service.raw().status().is_server_error()
        }
        _ => false,
    };
    let detail = format!("{operation}: {}", DisplayErrorContext(&error));
    if unavailable {
        StoreError::Unavailable(detail)
    } else {
        StoreError::Internal(detail)
    }
}

impl DynamoStore {
    pub fn new(client: Client, table: impl Into<String>) -> Self {
        Self {
            client,
            table: table.into(),
        }
    }

    pub fn client(&self) -> &Client {
        &self.client
    }

    pub fn table(&self) -> &str {
        &self.table
    }
}

/// The item of a pack: its document, `remaining`, and the keys (the index keys while it can be
/// listed).
pub fn pack_item(pack: &Pack) -> Item {
    let document = PackDocument::of(pack);
    let mut item = HashMap::from([
        (PK.to_owned(), s(pack_pk(&pack.id))),
        (SK.to_owned(), s(PACK_SK)),
        (ENTITY.to_owned(), s("pack")),
        (PACK_DOC.to_owned(), s(document.fields())),
        (PACK_REMAINING.to_owned(), number(document.remaining())),
    ]);
    if let Some(key) = ListingKey::of(pack) {
        item.insert(GSI1_PK.into(), s(LISTED_PACKS));
        item.insert(GSI1_SK.into(), s(key.as_str()));
        if let Some(ends) = pack.sale_ends_at {
            item.insert(LIST_ENDS_AT.into(), number(ends.unix_nanos()));
        }
    }
    item
}

fn number(value: impl ToString) -> AttributeValue {
    AttributeValue::N(value.to_string())
}

/// The document of a pack item (or of its projection holding `doc` and `remaining`).
pub fn document_from_item(item: &mut Item) -> Result<PackDocument, StoreError> {
    let corrupt = |problem: &str| StoreError::Internal(format!("pack item: {problem}"));
    let doc = match item.remove(PACK_DOC) {
        Some(AttributeValue::S(doc)) => doc,
        _ => return Err(corrupt("no `doc` string")),
    };
    let remaining = item
        .get(PACK_REMAINING)
        .and_then(|value| value.as_n().ok())
        .and_then(|text| text.parse::<u64>().ok())
        .ok_or_else(|| corrupt("no whole `remaining`"))?;
    PackDocument::from_stored(doc, remaining).map_err(|e| corrupt(&e.to_string()))
}

impl ListActivePacks for DynamoStore {
    async fn list_active_packs(&self, request: &PageRequest) -> Result<Page, StoreError> {
        // One more than asked, to know without a second call whether another page follows.
        let read_limit = i32::try_from(request.limit + 1).unwrap_or(i32::MAX);
        let exclusive_start = request.after.as_ref().map(|key| {
            HashMap::from([
                (GSI1_PK.to_owned(), s(LISTED_PACKS)),
                (GSI1_SK.to_owned(), s(key.as_str())),
                (PK.to_owned(), s(pack_pk(key.pack_id()))),
                (SK.to_owned(), s(PACK_SK)),
            ])
        });
        let output = self
            .client
            .query()
            .table_name(&self.table)
            .index_name(GSI1)
            .key_condition_expression("#pk = :listed AND #sk >= :started")
            .filter_expression("attribute_not_exists(#ends) OR #ends > :now")
            .projection_expression("#doc, #remaining, #sk")
            .expression_attribute_names("#pk", GSI1_PK)
            .expression_attribute_names("#sk", GSI1_SK)
            .expression_attribute_names("#ends", LIST_ENDS_AT)
            .expression_attribute_names("#doc", PACK_DOC)
            .expression_attribute_names("#remaining", PACK_REMAINING)
            .expression_attribute_values(":listed", s(LISTED_PACKS))
            .expression_attribute_values(":started", s(ListingKey::started_bound(request.now)))
            .expression_attribute_values(":now", number(request.now.unix_nanos()))
            .limit(read_limit)
            .set_exclusive_start_key(exclusive_start)
            .send()
            .await
            .map_err(|e| classify("Query", e))?;

        let mut items = output.items.unwrap_or_default().into_iter();
        let mut packs = Vec::with_capacity(items.len().min(request.limit));
        let mut last_key = None;
        while packs.len() < request.limit {
            let Some(mut item) = items.next() else { break };
            match document_from_item(&mut item) {
                Ok(document) => {
                    packs.push(document);
                    last_key = item.remove(GSI1_SK);
                }
                // One corrupt item must not hide every other pack.
                Err(error) => tracing::error!(error = %error, "skipping an unreadable pack item"),
            }
        }
        let next = if items.len() > 0 {
            // The page is full and the extra item read shows that more follow.
            last_key.as_ref().and_then(listing_key)
        } else {
            // Items read but filtered out (ended sales) still move the position forward.
            output
                .last_evaluated_key
                .as_ref()
                .and_then(|key| key.get(GSI1_SK))
                .and_then(listing_key)
        };
        Ok(Page { packs, next })
    }
}

fn listing_key(value: &AttributeValue) -> Option<ListingKey> {
    value.as_s().ok().and_then(|text| ListingKey::parse(text))
}

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
                "SET #entity = :entity, userId = :user, email = :email, provider = :provider, payload = :payload, \
                 updatedAt = :at, linkedAt = if_not_exists(linkedAt, :at)",
            )
            .expression_attribute_names("#entity", ENTITY)
            .expression_attribute_values(":entity", s("link"))
            .expression_attribute_values(":user", s(link.user_id))
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

impl SavePack for DynamoStore {
    /// Listable packs get the index keys; others have none, so the sparse index never holds them.
    async fn save_pack(&self, pack: &Pack) -> Result<(), StoreError> {
        self.client
            .put_item()
            .table_name(&self.table)
            .set_item(Some(pack_item(pack)))
            .send()
            .await
            .map_err(|e| classify("PutItem", e))?;
        Ok(())
    }
}

impl GetPack for DynamoStore {
    async fn get_pack(&self, pack_id: &str) -> Result<Option<Pack>, StoreError> {
        let output = self
            .client
            .get_item()
            .table_name(&self.table)
            .key(PK, s(pack_pk(pack_id)))
            .key(SK, s(PACK_SK))
            .send()
            .await
            .map_err(|e| classify("GetItem", e))?;
        output
            .item
            .map(|mut item| {
                document_from_item(&mut item)?
                    .to_pack()
                    .map_err(|e| StoreError::Internal(e.to_string()))
            })
            .transpose()
    }
}

impl GetLink for DynamoStore {
    async fn get_link(
        &self,
        user_id: &str,
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
        output
            .item
            .map(|item| {
                serde_dynamo::from_item(item)
                    .map_err(|e| StoreError::Internal(format!("link item: {e}")))
            })
            .transpose()
    }
}
