//! Locker rooms on DynamoDB (docs/fan-app.md). `PUT`: one `BatchGetItem` of the purchases named
//! (at most 12 keys, the fan's own partition), one `Query` of `FAN#<me>` (the room as it is, and
//! the answer's other fields), then, unless the room shows the same already, one transaction of
//! the update of `FAN#<me>` / `SHOW` on its revision as read (`lockerRev`) and the
//! `locker_room.updated` event. The public view: a `GetItem` of `NAME#<key>`, then one
//! `Query` of `FAN#<userId>` (`SHOW` and `STATS`).

use aws_sdk_dynamodb::types::{AttributeValue, TransactWriteItem};

use super::products::equipped_from_item;
use super::purchases::purchase_from_item;
use super::records::{
    LOCKER_VERSION, NameHolder, NameRecord, SCHEMA_VERSION, ShowRecord, ShownItemRecord,
    StoredShow, read_record, stats_from_item,
};
use super::transaction::{update, update_always};
use super::{Attempts, DynamoStore, Item, classify, key, number, s};
use crate::StoreError;
use crate::condition::Condition;
use crate::locker_room::{
    GetLockerRoom, GetOwnLockerRoom, PublicLockerRoom, PutLockerRoom, PutLockerRoomError,
};
use crate::products::COSMETICS_SK;
use crate::schema::{
    ENTITY, NAME_SK, PK, SHOW_SK, SK, STATS_ITEMS_OWNED, STATS_PACKS_OPENED, STATS_RARITY_PREFIX,
    STATS_SK, fan_pk, name_pk, purchase_sk, user_pk,
};
use domain::ids::UserId;
use domain::locker_room::stats::LockerStats;
use domain::locker_room::{LockerRoomBody, Shown, showcase};
use domain::products::cosmetics::Equipped;
use domain::profile::name::DisplayName;
use domain::purchases::OpenedItem;
use domain::timestamp::Timestamp;

/// The locker room's revision on the `SHOW` item: a put applies to the room it compared with.
const LOCKER_REV: &str = "lockerRev";

impl DynamoStore {
    /// The public face and stats of `user_id`: one Query of their `FAN#` partition (`consistent`
    /// for the fan's own answer). `None` when they have no public face yet.
    async fn read_fan(
        &self,
        user_id: &UserId,
        consistent: bool,
    ) -> Result<Option<StoredShow>, StoreError> {
        let (show, stats, cosmetics) = self.read_face(user_id, consistent).await?;
        Ok(show.map(|mut show| {
            show.room.stats = stats;
            show.room.cosmetics = cosmetics;
            show
        }))
    }

    /// The public face of `user_id` (`None`: not written yet), their stats and the cosmetics
    /// they show (`SHOW#COSMETICS`, between the two), as [`Self::read_fan`] reads them.
    async fn read_face(
        &self,
        user_id: &UserId,
        consistent: bool,
    ) -> Result<(Option<StoredShow>, LockerStats, Equipped), StoreError> {
        let output = self
            .client
            .query()
            .table_name(&self.table)
            // SHOW and STATS only: the fan's board items (`SAMPLE#`, `SCORE#`) sort before
            // them, and a read of those would grow with the boards the fan is on.
            .key_condition_expression("#pk = :pk AND #sk BETWEEN :show AND :stats")
            .expression_attribute_names("#pk", PK)
            .expression_attribute_names("#sk", SK)
            .expression_attribute_values(":pk", s(fan_pk(user_id)))
            .expression_attribute_values(":show", s(SHOW_SK))
            .expression_attribute_values(":stats", s(STATS_SK))
            .consistent_read(consistent)
            .send()
            .await
            .map_err(|e| classify("Query", e))?;
        let items = output.items.unwrap_or_default();
        let sk_is = |item: &&Item, sk: &str| {
            item.get(SK).and_then(|v| v.as_s().ok()) == Some(&sk.to_owned())
        };
        let stats = stats_from_item(items.iter().find(|item| sk_is(item, STATS_SK)))?;
        let show = items
            .iter()
            .find(|item| sk_is(item, SHOW_SK))
            .map(|show| read_record::<ShowRecord, StoredShow>(show.clone(), "show"))
            .transpose()?;
        let cosmetics =
            equipped_from_item(items.iter().find(|item| sk_is(item, COSMETICS_SK)).cloned())?;
        Ok((show, stats, cosmetics))
    }
}

impl PutLockerRoom for DynamoStore {
    async fn put_locker_room(
        &self,
        user_id: &UserId,
        body: &LockerRoomBody,
        now: Timestamp,
    ) -> Result<PublicLockerRoom, PutLockerRoomError> {
        let mut named: Vec<&domain::ids::PurchaseId> =
            body.items.iter().map(|item| &item.purchase_id).collect();
        named.sort_unstable();
        named.dedup();
        let keys: Vec<Item> = named
            .iter()
            .map(|id| key(user_pk(user_id), &purchase_sk(id)))
            .collect();
        let purchases = if keys.is_empty() {
            Vec::new()
        } else {
            self.batch_get_slice(&keys, true)
                .await?
                .into_iter()
                .flatten()
                .map(purchase_from_item)
                .collect::<Result<Vec<_>, _>>()?
        };
        let items = showcase(user_id, &body.items, &purchases)?;
        let shown: Vec<ShownItemRecord> = items.iter().map(ShownItemRecord::from).collect();
        let shown = serde_dynamo::to_attribute_value::<_, AttributeValue>(shown)
            .map_err(|e| StoreError::internal_from("show item", e))?;
        let title = body.title.as_deref().map_or(AttributeValue::Null(true), s);
        let putting = Shown {
            title: body.title.as_deref(),
            items: &items,
        };
        let mut attempts = Attempts::new("put locker room");
        loop {
            let (read, stats, cosmetics) = self.read_face(user_id, true).await?;
            let before = read.as_ref().map_or(Shown::NOTHING, |show| Shown {
                title: show.room.title.as_deref(),
                items: &show.room.items,
            });
            let events = putting.events(user_id, &before);
            let (mut room, rev) = match read {
                // A repeat: nothing to write, no event.
                Some(show) if events.is_empty() => {
                    return Ok(PublicLockerRoom {
                        stats,
                        cosmetics,
                        ..show.room
                    });
                }
                Some(show) => (show.room, show.locker_rev),
                None => (PublicLockerRoom::default(), 0),
            };
            let write = update(
                &self.table,
                key(fan_pk(user_id), SHOW_SK),
                "SET #entity = :entity, #sv = if_not_exists(#sv, :sv), title = :title, \
                 #items = :items, lockerUpdatedAt = :at, #rev = :rev",
                &Condition::version_as_read(LOCKER_REV, rev),
                &[
                    ("#entity", ENTITY),
                    ("#sv", SCHEMA_VERSION),
                    ("#items", "items"),
                    ("#rev", LOCKER_REV),
                ],
                vec![
                    (":entity", s("show")),
                    (":sv", number(LOCKER_VERSION)),
                    (":title", title.clone()),
                    (":items", shown.clone()),
                    (":at", s(now.to_string())),
                    (":rev", number(rev + 1)),
                ],
            )?;
            if self
                .write_emitting("put locker room", write, events, now)
                .await?
            {
                room.title = body.title.clone();
                room.items = items;
                room.stats = stats;
                room.cosmetics = cosmetics;
                return Ok(room);
            }
            // Another put changed the room meanwhile: decided again on what it shows now.
            attempts.again()?;
        }
    }
}

impl GetLockerRoom for DynamoStore {
    async fn get_locker_room(
        &self,
        name: &DisplayName,
    ) -> Result<Option<PublicLockerRoom>, StoreError> {
        let wanted = name.key();
        let holder = self
            .client
            .get_item()
            .table_name(&self.table)
            .set_key(Some(key(name_pk(&wanted), NAME_SK)))
            .send()
            .await
            .map_err(|e| classify("GetItem", e))?
            .item
            .map(|item| read_record::<NameRecord, NameHolder>(item, "name"))
            .transpose()?;
        let Some(NameHolder(user_id)) = holder else {
            return Ok(None);
        };
        // Renamed between the two reads: the old name no longer answers.
        Ok(self
            .read_fan(&user_id, false)
            .await?
            .filter(|show| show.name_key.as_deref() == Some(wanted.as_str()))
            .map(|show| show.room))
    }
}

impl GetOwnLockerRoom for DynamoStore {
    async fn own_locker_room(&self, user_id: &UserId) -> Result<PublicLockerRoom, StoreError> {
        let (show, stats, cosmetics) = self.read_face(user_id, false).await?;
        let mut room = show.map(|show| show.room).unwrap_or_default();
        room.stats = stats;
        room.cosmetics = cosmetics;
        Ok(room)
    }
}

/// The addition of one opening of `items` to the stats of `user_id` (created at the first):
/// packs opened, items owned, and each rarity's count, as [`LockerStats::add_opening`] counts
/// them.
pub(crate) fn stats_update(
    table: &str,
    user_id: &UserId,
    items: &[OpenedItem],
) -> Result<TransactWriteItem, StoreError> {
    let opening = LockerStats::of_openings([items]);
    let mut names: Vec<(String, String)> = vec![
        ("#entity".into(), ENTITY.into()),
        ("#sv".into(), SCHEMA_VERSION.into()),
        ("#opened".into(), STATS_PACKS_OPENED.into()),
        ("#owned".into(), STATS_ITEMS_OWNED.into()),
    ];
    let mut values: Vec<(String, AttributeValue)> = vec![
        (":entity".into(), s("stats")),
        (":sv".into(), number(LOCKER_VERSION)),
        (":opened".into(), number(opening.packs_opened)),
        (":owned".into(), number(opening.items_owned)),
    ];
    let mut additions = vec!["#opened :opened".to_owned(), "#owned :owned".to_owned()];
    for (n, (rarity, count)) in opening.by_rarity.iter().enumerate() {
        names.push((format!("#r{n}"), format!("{STATS_RARITY_PREFIX}{rarity}")));
        values.push((format!(":r{n}"), number(count)));
        additions.push(format!("#r{n} :r{n}"));
    }
    let expression = format!(
        "SET #entity = :entity, #sv = if_not_exists(#sv, :sv) ADD {}",
        additions.join(", ")
    );
    let names: Vec<(&str, &str)> = names
        .iter()
        .map(|(placeholder, name)| (placeholder.as_str(), name.as_str()))
        .collect();
    let values = values
        .iter()
        .map(|(placeholder, value)| (placeholder.as_str(), value.clone()))
        .collect();
    update_always(
        table,
        key(fan_pk(user_id), STATS_SK),
        &expression,
        &names,
        values,
    )
}
