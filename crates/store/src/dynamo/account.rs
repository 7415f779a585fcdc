//! Account deletion on DynamoDB (`crate::account`): each step reads one page (at most
//! [`PAGE`] items) of one of the fan's partitions, and writes what it found: a bounded piece,
//! repeated until the partition has nothing left of the step's kind.

use aws_sdk_dynamodb::types::{AttributeValue, DeleteRequest, WriteRequest};
use serde::{Deserialize, Serialize};

use super::purchases::purchase_from_item;
use super::transaction::{Transaction, delete, put, put_new, update};
use super::{Attempts, DynamoStore, Item, classify, key, s};
use crate::StoreError;
use crate::account::{
    AccountDeletion, DELETION_SK, PENDING_DELETIONS, deletion_pk, live_top_ups, top_ups_settled,
};
use crate::condition::Condition;
use crate::schema::{
    CASH_SK, ENTITY, GSI1, GSI1_PK, GSI1_SK, GSI3, GSI3_PK, GSI3_SK, LEDGER_USER_ID, NAME_SK,
    NAME_USER_ID, PK, PURCHASE_PREFIX, PURCHASE_STATUS, SHOW_SK, SK, cash_pk, entries_by_fan_pk,
    fan_pk, topups_by_fan_pk, user_pk,
};
use crate::sessions::as_read;
use crate::sessions::dynamo::sessions_item;
use domain::account::{Deletion, Step};
use domain::ids::UserId;
use domain::purchases::PurchaseStatus;
use domain::timestamp::{Timestamp, time_key};

/// The most items a step reads and writes in one piece (a `BatchWriteItem` takes 25).
const PAGE: i32 = 25;
/// The version of the deletion item this release writes, and the newest it reads.
const DELETION_VERSION: u32 = 1;
/// The attribute naming the step under way: the condition of every move to the next.
const STEP: &str = "step";

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct DeletionRecord {
    schema_version: u32,
    step: String,
    doc: String,
}

fn step_name(step: Step) -> Result<String, StoreError> {
    match serde_json::to_value(step) {
        Ok(serde_json::Value::String(name)) => Ok(name),
        _ => Err(StoreError::internal("deletion step: not a name")),
    }
}

fn deletion_item(deletion: &Deletion) -> Result<Item, StoreError> {
    let doc =
        serde_json::to_string(deletion).map_err(|e| StoreError::internal_from("deletion", e))?;
    let mut item: Item = serde_dynamo::to_item(DeletionRecord {
        schema_version: DELETION_VERSION,
        step: step_name(deletion.step)?,
        doc,
    })
    .map_err(|e| StoreError::internal_from("deletion item", e))?;
    item.extend(key(deletion_pk(&deletion.user_id), DELETION_SK));
    item.insert(ENTITY.into(), s("deletion"));
    if !deletion.is_done() {
        item.insert(GSI1_PK.into(), s(PENDING_DELETIONS));
        item.insert(
            GSI1_SK.into(),
            s(time_key(deletion.requested_at, deletion.user_id.as_str())),
        );
    }
    Ok(item)
}

fn deletion_from_item(item: Item) -> Result<Deletion, StoreError> {
    let record: DeletionRecord =
        serde_dynamo::from_item(item).map_err(|e| StoreError::internal_from("deletion item", e))?;
    super::records::readable("deletion", record.schema_version, DELETION_VERSION)?;
    serde_json::from_str(&record.doc).map_err(|e| StoreError::internal_from("deletion item", e))
}

fn text(item: &Item, name: &str) -> Option<String> {
    item.get(name)?.as_s().ok().cloned()
}

/// What a piece of a step found: whether the step's part is done, and where a walk goes on.
struct Piece {
    done: bool,
    after: Option<String>,
}

impl Piece {
    /// A piece of a step that works its partition down: done when it found nothing left.
    fn emptied(found: usize) -> Self {
        Self {
            done: found == 0,
            after: None,
        }
    }
}

impl DynamoStore {
    /// One page of a partition of the table (`index` None) or of an index, from `after` (a
    /// sort key of the table's partition).
    async fn page(
        &self,
        index: Option<&str>,
        pk: String,
        prefix: Option<&str>,
        after: Option<&str>,
    ) -> Result<(Vec<Item>, Option<String>), StoreError> {
        let (pk_name, sk_name) = match index {
            Some(_) => (GSI3_PK, GSI3_SK),
            None => (PK, SK),
        };
        let mut query = self
            .client
            .query()
            .table_name(&self.table)
            .set_index_name(index.map(str::to_owned))
            .expression_attribute_names("#pk", pk_name)
            .expression_attribute_values(":pk", s(pk.clone()))
            .limit(PAGE)
            .consistent_read(index.is_none());
        query = match prefix {
            Some(prefix) => query
                .key_condition_expression("#pk = :pk AND begins_with(#sk, :prefix)")
                .expression_attribute_names("#sk", sk_name)
                .expression_attribute_values(":prefix", s(prefix)),
            None => query.key_condition_expression("#pk = :pk"),
        };
        if let Some(after) = after {
            query = query
                .exclusive_start_key(PK, s(pk))
                .exclusive_start_key(SK, s(after));
        }
        let output = query.send().await.map_err(|e| classify("Query", e))?;
        let next = output
            .last_evaluated_key
            .as_ref()
            .and_then(|key| key.get(SK)?.as_s().ok().cloned());
        Ok((output.items.unwrap_or_default(), next))
    }

    /// Deletes the items `found` (their keys), unconditionally: what is erased is the fan's.
    async fn delete_all(&self, found: &[Item]) -> Result<(), StoreError> {
        if found.is_empty() {
            return Ok(());
        }
        let mut requests: Vec<WriteRequest> = found
            .iter()
            .map(|item| {
                let key: Item = [PK, SK]
                    .iter()
                    .filter_map(|name| Some(((*name).to_owned(), item.get(*name)?.clone())))
                    .collect();
                let delete = DeleteRequest::builder().set_key(Some(key)).build();
                super::transaction::build(delete)
                    .map(|delete| WriteRequest::builder().delete_request(delete).build())
            })
            .collect::<Result<_, _>>()?;
        let mut attempts = Attempts::new("erase");
        while !requests.is_empty() {
            let output = self
                .client
                .batch_write_item()
                .request_items(&self.table, requests)
                .send()
                .await
                .map_err(|e| classify("BatchWriteItem", e))?;
            requests = output
                .unprocessed_items
                .and_then(|mut items| items.remove(&self.table))
                .unwrap_or_default();
            if !requests.is_empty() {
                attempts.after_conflict().await?;
            }
        }
        Ok(())
    }

    /// Reserved purchases released (their units back on sale), a page of the fan's purchases
    /// at a time: a hold erased unreleased would keep its unit out of the supply.
    async fn release_fan_holds(
        &self,
        deletion: &Deletion,
        now: Timestamp,
    ) -> Result<Piece, StoreError> {
        let (found, next) = self
            .page(
                None,
                user_pk(&deletion.user_id),
                Some(PURCHASE_PREFIX),
                deletion.after.as_deref(),
            )
            .await?;
        self.release_reserved(&found, now).await?;
        Ok(Piece {
            done: next.is_none(),
            after: next,
        })
    }

    /// Releases the reserved purchases among `found` (ahead of their end: the release's condition
    /// reads the hold's end); the other items are left.
    async fn release_reserved(&self, found: &[Item], now: Timestamp) -> Result<(), StoreError> {
        let reserved = super::purchases::status_text(PurchaseStatus::Reserved);
        for item in found {
            if item.get(PURCHASE_STATUS) == Some(&reserved)
                && text(item, SK).is_some_and(|sk| sk.starts_with(PURCHASE_PREFIX))
            {
                let purchase = purchase_from_item(item.clone())?;
                self.release(&purchase, now.max(purchase.expires_at))
                    .await?;
            }
        }
        Ok(())
    }

    /// The public face erased: the display name freed (only if still the fan's), the locker
    /// room, stats and leaderboard scores (their index entries go with them).
    async fn erase_public_face(&self, user_id: &UserId) -> Result<Piece, StoreError> {
        let (found, _) = self.page(None, fan_pk(user_id), None, None).await?;
        for item in &found {
            if text(item, SK).as_deref() == Some(SHOW_SK)
                && let Some(name) = text(item, "nameKey")
            {
                let freed = delete(
                    &self.table,
                    key(format!("{}{name}", crate::schema::NAME_PREFIX), NAME_SK),
                    &Condition::eq(NAME_USER_ID, user_id.as_str()),
                )?;
                // Another fan holding the name now: theirs stays.
                let _ = self.transact(vec![freed]).await?;
            }
        }
        self.delete_all(&found).await?;
        Ok(Piece::emptied(found.len()))
    }

    /// The fan's items listed under `pk` of `GSI3` re-keyed to `pseudonym`: their owner and
    /// the list they are in, on condition they are still the fan's.
    async fn rekey_listed(
        &self,
        pk: String,
        user_id: &UserId,
        pseudonym_list: String,
        pseudonym: &UserId,
    ) -> Result<usize, StoreError> {
        let (found, _) = self.page(Some(GSI3), pk, None, None).await?;
        for item in &found {
            let at: Item = [PK, SK]
                .iter()
                .filter_map(|name| Some(((*name).to_owned(), item.get(*name)?.clone())))
                .collect();
            let moved = update(
                &self.table,
                at,
                "SET #owner = :pseudonym, #list = :list",
                &Condition::eq(LEDGER_USER_ID, user_id.as_str()),
                &[("#owner", LEDGER_USER_ID), ("#list", GSI3_PK)],
                vec![
                    (":pseudonym", s(pseudonym.as_str())),
                    (":list", s(pseudonym_list.clone())),
                ],
            )?;
            // Already moved (the index lags behind): nothing to do.
            let _ = self.transact(vec![moved]).await?;
        }
        Ok(found.len())
    }

    /// The fan's ledger kept under `pseudonym`: a credit (its own partition) re-keyed in place;
    /// a debit (under the fan's `CASH#`) moved, its copy put and the original deleted in one
    /// transaction.
    async fn rekey_ledger(
        &self,
        user_id: &UserId,
        pseudonym: &UserId,
    ) -> Result<usize, StoreError> {
        let fan_cash = cash_pk(user_id);
        let (found, _) = self.page(Some(GSI3), fan_cash.clone(), None, None).await?;
        for item in &found {
            if text(item, PK).as_deref() == Some(fan_cash.as_str()) {
                self.move_item(item.clone(), pseudonym, true).await?;
            } else {
                let credit_pk = text(item, PK).unwrap_or_default();
                let Some(sk) = text(item, SK) else { continue };
                let moved = update(
                    &self.table,
                    key(credit_pk, &sk),
                    "SET #owner = :pseudonym, #list = :list",
                    &Condition::eq(LEDGER_USER_ID, user_id.as_str()),
                    &[("#owner", LEDGER_USER_ID), ("#list", GSI3_PK)],
                    vec![
                        (":pseudonym", s(pseudonym.as_str())),
                        (":list", s(cash_pk(pseudonym))),
                    ],
                )?;
                let _ = self.transact(vec![moved]).await?;
            }
        }
        Ok(found.len())
    }

    /// `item` (under the fan's `CASH#`) moved under the pseudonym's: its copy put (only if
    /// new) and the original deleted (only if unchanged since read), in one transaction.
    async fn move_item(
        &self,
        item: Item,
        pseudonym: &UserId,
        listed: bool,
    ) -> Result<(), StoreError> {
        let Some(sk) = text(&item, SK) else {
            return Ok(());
        };
        let original = item.get(PK).cloned();
        let mut copy = item.clone();
        copy.insert(PK.into(), s(cash_pk(pseudonym)));
        if listed {
            copy.insert(GSI3_PK.into(), s(cash_pk(pseudonym)));
            copy.insert(LEDGER_USER_ID.into(), s(pseudonym.as_str()));
        }
        let mut unchanged = Condition::exists(PK);
        for (name, value) in &item {
            if let Some(number) = value.as_n().ok().and_then(|n| n.parse::<u64>().ok()) {
                unchanged = unchanged.and(Condition::eq(name.clone(), number));
            }
        }
        let Some(AttributeValue::S(original)) = original else {
            return Ok(());
        };
        let actions = vec![
            put_new(&self.table, copy)?,
            delete(&self.table, key(original, &sk), &unchanged)?,
        ];
        // A repeat finds the copy there and the original gone: done before.
        let _ = self.transact(actions).await?;
        Ok(())
    }

    /// Moves the deletion on from `step` to `moved` on condition it is still at `step` (two
    /// workers: the first moves it, the second reads it).
    async fn store_deletion(&self, step: Step, moved: &Deletion) -> Result<Deletion, StoreError> {
        let condition = Condition::eq(STEP, step_name(step)?.as_str());
        let write = put(&self.table, deletion_item(moved)?, &condition)?;
        match self.transact(vec![write]).await? {
            None => Ok(moved.clone()),
            Some(_) => self
                .deletion(&moved.user_id)
                .await?
                .ok_or_else(|| StoreError::internal("deletion: gone while under way")),
        }
    }
}

impl AccountDeletion for DynamoStore {
    async fn deletion(&self, user_id: &UserId) -> Result<Option<Deletion>, StoreError> {
        self.get_item(key(deletion_pk(user_id), DELETION_SK), true)
            .await?
            .map(deletion_from_item)
            .transpose()
    }

    async fn pending_top_ups(&self, user_id: &UserId, now: Timestamp) -> Result<u32, StoreError> {
        Ok(live_top_ups(&self.fan_pending_top_ups(user_id).await?, now))
    }

    async fn begin_deletion(&self, deletion: &Deletion) -> Result<Deletion, StoreError> {
        let mut attempts = Attempts::new("begin deletion");
        loop {
            let (mut revocations, revision) =
                self.read_revocations(&deletion.user_id, true).await?;
            revocations.deleted = true;
            let transaction = Transaction::new()
                .with(0, put_new(&self.table, deletion_item(deletion)?)?)
                .with(
                    1,
                    put(
                        &self.table,
                        sessions_item(&deletion.user_id, &revocations, revision + 1)?,
                        &as_read(revision),
                    )?,
                )
                .emit(vec![deletion.event()], deletion.requested_at);
            let Some(reasons) = self.run(transaction).await? else {
                return Ok(deletion.clone());
            };
            if reasons.failed(0) {
                return self
                    .deletion(&deletion.user_id)
                    .await?
                    .ok_or_else(|| StoreError::internal("deletion: refused but not there"));
            }
            attempts.after(reasons.all()).await?;
        }
    }

    async fn erase_step(
        &self,
        deletion: &Deletion,
        pseudonym: &UserId,
        now: Timestamp,
    ) -> Result<Deletion, StoreError> {
        let user_id = &deletion.user_id;
        let piece = match deletion.step {
            Step::Done => return Ok(deletion.clone()),
            Step::ReleaseHolds => self.release_fan_holds(deletion, now).await?,
            Step::PublicFace => self.erase_public_face(user_id).await?,
            Step::QueueEntries => {
                let (found, _) = self
                    .page(Some(GSI3), entries_by_fan_pk(user_id), None, None)
                    .await?;
                self.delete_all(&found).await?;
                Piece::emptied(found.len())
            }
            Step::SettleTopUps => Piece {
                done: top_ups_settled(&self.fan_pending_top_ups(user_id).await?, now),
                after: None,
            },
            Step::TopUps => Piece::emptied(
                self.rekey_listed(
                    topups_by_fan_pk(user_id),
                    user_id,
                    topups_by_fan_pk(pseudonym),
                    pseudonym,
                )
                .await?,
            ),
            Step::Ledger => Piece::emptied(self.rekey_ledger(user_id, pseudonym).await?),
            Step::Balance => {
                if let Some(balance) = self.get_item(key(cash_pk(user_id), CASH_SK), true).await? {
                    self.move_item(balance, pseudonym, false).await?;
                }
                let left = self.get_item(key(cash_pk(user_id), CASH_SK), true).await?;
                Piece::emptied(usize::from(left.is_some()))
            }
            Step::OwnItems => {
                let (found, _) = self.page(None, user_pk(user_id), None, None).await?;
                // A hold a start in flight at the deletion made after the first step: released
                // before its item goes, or its unit would stay off sale.
                self.release_reserved(&found, now).await?;
                self.delete_all(&found).await?;
                Piece::emptied(found.len())
            }
        };
        let moved = if piece.done {
            deletion.clone().finished(deletion.step, now)
        } else if piece.after.is_some() {
            Deletion {
                after: piece.after,
                ..deletion.clone()
            }
        } else {
            return Ok(deletion.clone());
        };
        self.store_deletion(deletion.step, &moved).await
    }

    async fn unfinished_deletions(&self, max: usize) -> Result<Vec<Deletion>, StoreError> {
        let output = self
            .client
            .query()
            .table_name(&self.table)
            .index_name(GSI1)
            .key_condition_expression("#pk = :pk")
            .expression_attribute_names("#pk", GSI1_PK)
            .expression_attribute_values(":pk", s(PENDING_DELETIONS))
            .limit(i32::try_from(max).unwrap_or(i32::MAX))
            .send()
            .await
            .map_err(|e| classify("Query", e))?;
        output
            .items
            .unwrap_or_default()
            .into_iter()
            .map(deletion_from_item)
            .collect()
    }
}
