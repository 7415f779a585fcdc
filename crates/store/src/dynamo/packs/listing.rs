//! Listing active packs: one Query of the listing index (a league's or team's, if asked).

use std::collections::HashMap;

use aws_sdk_dynamodb::types::AttributeValue;

use crate::StoreError;
use crate::dynamo::records::document_from_item;
use crate::dynamo::{DynamoStore, classify, number, s};
use crate::packs::{ListActivePacks, ListUpcomingPacks};
use crate::schema::{
    ENDS_AT, GSI1, GSI1_PK, GSI1_SK, GSI2, GSI2_PK, GSI2_SK, GSI3, GSI3_PK, GSI3_SK, LISTED_PACKS,
    PACK_DOC, PACK_LINE_FINISHED, PACK_REMAINING, PACK_SK, PK, SK, league_pk, pack_pk, team_pk,
};
use domain::ids::PackId;
use domain::packs::document::PackDocument;
use domain::packs::listing::{ListingKey, PackFilter, Page, PageRequest};
use domain::timestamp::Timestamp;

/// The index a page of `filter`'s packs is read from, with its key attributes and the
/// partition holding them: a team's packs (its league's ones among them, when both are asked,
/// are filtered on the item's league entry), a league's, or every listed pack.
fn listing_index(filter: &PackFilter) -> (&'static str, &'static str, &'static str, String) {
    match (&filter.team, &filter.league) {
        (Some(team), _) => (GSI3, GSI3_PK, GSI3_SK, team_pk(team)),
        (None, Some(league)) => (GSI2, GSI2_PK, GSI2_SK, league_pk(league)),
        (None, None) => (GSI1, GSI1_PK, GSI1_SK, LISTED_PACKS.to_owned()),
    }
}

impl ListActivePacks for DynamoStore {
    async fn list_active_packs(&self, request: &PageRequest) -> Result<Page, StoreError> {
        let (index, index_pk, index_sk, partition) = listing_index(&request.filter);
        // One more than asked, to know without a second call whether another page follows.
        let read_limit = i32::try_from(request.limit + 1).unwrap_or(i32::MAX);
        let after = request
            .after
            .as_ref()
            .map(|key| Ok::<_, StoreError>((key, listed_pack_id(key.pack_id())?)))
            .transpose()?;
        let exclusive_start = after.map(|(key, pack_id)| {
            HashMap::from([
                (index_pk.to_owned(), s(partition.as_str())),
                (index_sk.to_owned(), s(key.as_str())),
                (PK.to_owned(), s(pack_pk(&pack_id))),
                (SK.to_owned(), s(PACK_SK)),
            ])
        });
        let mut filter = "(attribute_not_exists(#ends) OR #ends > :now)".to_owned();
        let mut names = HashMap::from([
            ("#pk".to_owned(), index_pk.to_owned()),
            ("#sk".to_owned(), index_sk.to_owned()),
            ("#ends".to_owned(), ENDS_AT.to_owned()),
            ("#doc".to_owned(), PACK_DOC.to_owned()),
            ("#remaining".to_owned(), PACK_REMAINING.to_owned()),
            ("#finished".to_owned(), PACK_LINE_FINISHED.to_owned()),
        ]);
        let mut values = HashMap::from([
            (":listed".to_owned(), s(partition.as_str())),
            (
                ":started".to_owned(),
                s(ListingKey::started_bound(request.now)),
            ),
            (":now".to_owned(), number(request.now.unix_nanos())),
        ]);
        if let (Some(_), Some(league)) = (&request.filter.team, &request.filter.league) {
            filter.push_str(" AND #league = :league");
            names.insert("#league".into(), GSI2_PK.into());
            values.insert(":league".into(), s(league_pk(league)));
        }
        let output = self
            .client
            .query()
            .table_name(&self.table)
            .index_name(index)
            .key_condition_expression("#pk = :listed AND #sk >= :started")
            .filter_expression(filter)
            .projection_expression("#doc, #remaining, #finished, #sk")
            .set_expression_attribute_names(Some(names))
            .set_expression_attribute_values(Some(values))
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
                    last_key = item.remove(index_sk);
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
                .and_then(|key| key.get(index_sk))
                .and_then(listing_key)
        };
        Ok(Page { packs, next })
    }
}

impl ListUpcomingPacks for DynamoStore {
    async fn list_upcoming_packs(
        &self,
        now: Timestamp,
        limit: usize,
    ) -> Result<Vec<PackDocument>, StoreError> {
        // Listing keys invert the start: the keys below the started bound are the packs whose
        // sale starts later, and read downwards from it they come soonest first.
        let output = self
            .client
            .query()
            .table_name(&self.table)
            .index_name(GSI1)
            .key_condition_expression("#pk = :listed AND #sk < :started")
            .projection_expression("#doc, #remaining, #finished")
            .expression_attribute_names("#pk", GSI1_PK)
            .expression_attribute_names("#sk", GSI1_SK)
            .expression_attribute_names("#doc", PACK_DOC)
            .expression_attribute_names("#remaining", PACK_REMAINING)
            .expression_attribute_names("#finished", PACK_LINE_FINISHED)
            .expression_attribute_values(":listed", s(LISTED_PACKS))
            .expression_attribute_values(":started", s(ListingKey::started_bound(now)))
            .scan_index_forward(false)
            .limit(i32::try_from(limit).unwrap_or(i32::MAX))
            .send()
            .await
            .map_err(|e| classify("Query", e))?;
        let mut packs = Vec::new();
        for mut item in output.items.unwrap_or_default() {
            match document_from_item(&mut item) {
                Ok(document) => packs.push(document),
                Err(error) => tracing::error!(error = %error, "skipping an unreadable pack item"),
            }
        }
        Ok(packs)
    }
}

/// The id of a listed pack, as its listing key or partition key has it.
fn listed_pack_id(text: &str) -> Result<PackId, StoreError> {
    PackId::parse(text).map_err(|e| StoreError::internal_from("a listed pack's id", e))
}

fn listing_key(value: &AttributeValue) -> Option<ListingKey> {
    value.as_s().ok().and_then(|text| ListingKey::parse(text))
}
