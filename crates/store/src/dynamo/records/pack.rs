//! The pack item (`PACK#<packId>` / `PACK`) and a share of its supply (`PACK#<packId>#<k>` /
//! `SUPPLY`) as records: attribute lists (`Some` to set, `None` to remove, because a re-seed
//! updates the items in place) mapped explicitly from and to the domain's [`Pack`], versioned
//! by `schemaVersion` ([`PACK_VERSION`]).

use std::collections::HashMap;

use aws_sdk_dynamodb::types::AttributeValue;

use super::{PACK_VERSION, SCHEMA_VERSION, check_version, draw_inputs_from_item, json_text};
use crate::StoreError;
use crate::dynamo::{Item, key, number, s};
use crate::packs::StoredPack;
use crate::schema::{
    DRAW_ITEMS, DRAW_ITEMS_PER_PACK, DRAW_LEAGUE_ID, DRAW_ODDS, DRAW_TEAM_ID, ENDS_AT, ENTITY,
    GSI1_PK, GSI1_SK, GSI2_PK, GSI2_SK, GSI3_PK, GSI3_SK, LISTED_PACKS, PACK_AMOUNT, PACK_CURRENCY,
    PACK_DOC, PACK_LINE_FINISHED, PACK_MAX_PER_USER, PACK_QUEUE, PACK_REMAINING, PACK_REVISION,
    PACK_SHARDS, PACK_SK, PACK_STATUS, PK, QUEUE_CLOSES_AT, QUEUE_OPENS_AT, QUEUE_PASS_SECONDS, SK,
    STARTS_AT, SUPPLY_SK, league_pk, pack_pk, supply_pk, team_pk,
};
use domain::ids::{LeagueId, PackId, TeamId};
use domain::packs::document::PackDocument;
use domain::packs::listing::ListingKey;
use domain::packs::{MAX_SUPPLY_SHARDS, Pack};
use domain::queue::terms::QueueTerms;
use domain::timestamp::Timestamp;

/// The terms a start is conditioned on, each `Some` to set or `None` to remove: the pack item
/// and every share of its supply carry them, so that a start's transaction touches one share.
pub(crate) fn terms_attributes(pack: &Pack) -> Vec<(&'static str, Option<AttributeValue>)> {
    vec![
        (PACK_STATUS, Some(s(pack.status.as_str()))),
        (
            STARTS_AT,
            pack.sale_starts_at.map(|at| number(at.unix_nanos())),
        ),
        (ENDS_AT, pack.sale_ends_at.map(|at| number(at.unix_nanos()))),
        (PACK_AMOUNT, Some(number(pack.price.amount))),
        (PACK_CURRENCY, Some(s(&pack.price.currency))),
        (PACK_MAX_PER_USER, pack.max_per_user.map(number)),
        (
            PACK_QUEUE,
            pack.queue.map(|queue| queue_terms_value(&queue)),
        ),
    ]
}

/// A pack's queue terms as the pack item and its shares hold them (a start on a queued pack is
/// conditioned on the fan's admission): instants in nanoseconds, for conditions.
fn queue_terms_value(queue: &QueueTerms) -> AttributeValue {
    AttributeValue::M(HashMap::from([
        (
            QUEUE_OPENS_AT.to_owned(),
            number(queue.opens_at.unix_nanos()),
        ),
        (
            QUEUE_CLOSES_AT.to_owned(),
            number(queue.closes_at.unix_nanos()),
        ),
        (QUEUE_PASS_SECONDS.to_owned(), number(queue.pass_seconds)),
    ]))
}

/// The seeded attributes of a pack item, each `Some` to set or `None` to remove: everything but
/// the keys, `remaining` and `rev`.
pub(crate) fn seeded_attributes(pack: &Pack) -> Vec<(&'static str, Option<AttributeValue>)> {
    let listing = ListingKey::of(pack);
    let mut attributes = vec![
        (ENTITY, Some(s("pack"))),
        (SCHEMA_VERSION, Some(number(PACK_VERSION))),
        (PACK_DOC, Some(s(PackDocument::of(pack).fields()))),
        (PACK_SHARDS, Some(number(pack.shard_count()))),
        (GSI1_PK, listing.as_ref().map(|_| s(LISTED_PACKS))),
        (GSI1_SK, listing.as_ref().map(|key| s(key.as_str()))),
    ];
    // The packs of its league and of its team: the same sparse entry, in the other indexes.
    // (Seed files hold ids of the id grammar: a pack's league and team parse.)
    let listed_under = |partition: Option<String>| {
        listing
            .as_ref()
            .zip(partition)
            .map(|(key, partition)| (s(partition), s(key.as_str())))
            .unzip()
    };
    let league = pack
        .league_id
        .as_deref()
        .and_then(|id| LeagueId::parse(id).ok());
    let team = pack
        .team_id
        .as_deref()
        .and_then(|id| TeamId::parse(id).ok());
    let (league_pk_value, league_sk_value) = listed_under(league.as_ref().map(league_pk));
    let (team_pk_value, team_sk_value) = listed_under(team.as_ref().map(team_pk));
    attributes.extend([
        (GSI2_PK, league_pk_value),
        (GSI2_SK, league_sk_value),
        (GSI3_PK, team_pk_value),
        (GSI3_SK, team_sk_value),
    ]);
    attributes.extend(terms_attributes(pack));
    attributes
}

/// The item of share `shard` of `pack`'s supply, holding `remaining` units.
pub(crate) fn share_item(pack_id: &PackId, pack: &Pack, shard: u32, remaining: u64) -> Item {
    let mut item: Item = terms_attributes(pack)
        .into_iter()
        .filter_map(|(name, value)| Some((name.to_owned(), value?)))
        .collect();
    item.extend(share_key(pack_id, shard));
    item.insert(ENTITY.into(), s("supply"));
    item.insert(SCHEMA_VERSION.into(), number(PACK_VERSION));
    item.insert(PACK_REMAINING.into(), number(remaining));
    item
}

pub(crate) fn share_key(pack_id: &PackId, shard: u32) -> Item {
    key(supply_pk(pack_id, shard), SUPPLY_SK)
}

/// The units left in a share's item (0 when it has none).
pub(crate) fn share_units(item: Option<&Item>) -> u64 {
    item.and_then(|item| whole_number(item, PACK_REMAINING))
        .unwrap_or(0)
}

/// The whole item of a pack (`pack_id`) at `revision`: listable packs get the index keys; others
/// have none, so the sparse index never holds them.
pub fn pack_item(pack_id: &PackId, pack: &Pack, revision: u64) -> Item {
    let mut item: Item = seeded_attributes(pack)
        .into_iter()
        .filter_map(|(name, value)| Some((name.to_owned(), value?)))
        .collect();
    item.insert(PK.into(), s(pack_pk(pack_id)));
    item.insert(SK.into(), s(PACK_SK));
    item.insert(PACK_REMAINING.into(), number(pack.remaining));
    item.insert(PACK_REVISION.into(), number(revision));
    item
}

/// The document of a pack item (or of its projection holding `doc` and `remaining`).
pub fn document_from_item(item: &mut Item) -> Result<PackDocument, StoreError> {
    let doc = match item.remove(PACK_DOC) {
        Some(AttributeValue::S(doc)) => doc,
        _ => return Err(corrupt("pack", "no `doc` string")),
    };
    let remaining = whole_number(item, PACK_REMAINING)
        .ok_or_else(|| corrupt("pack", "no whole `remaining`"))?;
    let line_finished = matches!(
        item.get(PACK_LINE_FINISHED),
        Some(AttributeValue::Bool(true))
    );
    PackDocument::from_stored(doc, remaining)
        .map(|document| document.with_line_finished(line_finished))
        .map_err(|e| corrupt("pack", &e.to_string()))
}

pub(crate) fn corrupt(what: &str, problem: &str) -> StoreError {
    StoreError::internal(format!("{what} item: {problem}"))
}

pub(crate) fn whole_number(item: &Item, name: &str) -> Option<u64> {
    item.get(name)
        .and_then(|value| value.as_n().ok())
        .and_then(|text| text.parse().ok())
}

pub(crate) fn text<'a>(item: &'a Item, name: &str) -> Option<&'a str> {
    item.get(name)
        .and_then(|value| value.as_s().ok())
        .map(String::as_str)
}

/// The draw inputs of a pack that may change before its sale (its seed is set once, apart).
pub(crate) fn draw_inputs(pack: &Pack) -> [(&'static str, Option<AttributeValue>); 6] {
    [
        (DRAW_LEAGUE_ID, pack.league_id.clone().map(s)),
        (DRAW_TEAM_ID, pack.team_id.clone().map(s)),
        (DRAW_ITEMS, Some(s(json_text(&pack.items)))),
        (DRAW_ODDS, Some(s(json_text(&pack.odds)))),
        (DRAW_ITEMS_PER_PACK, Some(number(pack.items_per_pack))),
        (ENDS_AT, pack.sale_ends_at.map(|at| number(at.unix_nanos()))),
    ]
}

/// The sale end (`endsAt`, nanoseconds) of a pack or draw item (`what`), if it has one.
pub(crate) fn sale_ends_at(item: &Item, what: &str) -> Result<Option<Timestamp>, StoreError> {
    instant_attribute(item, ENDS_AT, what)
}

/// The instant held in nanoseconds by attribute `name` of a `what` item, if it has one.
pub(crate) fn instant_attribute(
    item: &Item,
    name: &str,
    what: &str,
) -> Result<Option<Timestamp>, StoreError> {
    item.get(name)
        .map(|value| {
            value
                .as_n()
                .ok()
                .and_then(|n| n.parse::<i128>().ok())
                .and_then(Timestamp::from_unix_nanos)
                .ok_or_else(|| corrupt(what, &format!("bad `{name}`")))
        })
        .transpose()
}

/// A pack from its item and its draw item.
pub(crate) fn stored_pack(pack_item: Item, draw_item: Item) -> Result<StoredPack, StoreError> {
    let revision =
        whole_number(&pack_item, PACK_REVISION).ok_or_else(|| corrupt("pack", "no `rev`"))?;
    let mut pack = pack_from_item(pack_item)?;
    let inputs = draw_inputs_from_item(draw_item)?;
    pack.items = inputs.items;
    Ok(StoredPack {
        pack,
        seed: inputs.seed,
        revision,
    })
}

/// The pack of a pack item (items left out: they live with the draw inputs).
pub(crate) fn pack_from_item(mut item: Item) -> Result<Pack, StoreError> {
    check_version(&item, "pack", PACK_VERSION)?;
    // A pack item written before the supply had shares has no `shards` (and its `remaining` is
    // the exact count): re-seeding it writes its shares (`SeedPack`).
    let shards = match item.get(PACK_SHARDS) {
        None => None,
        Some(_) => Some(
            whole_number(&item, PACK_SHARDS)
                .and_then(|n| u32::try_from(n).ok())
                .filter(|n| (1..=MAX_SUPPLY_SHARDS).contains(n))
                .ok_or_else(|| corrupt("pack", "`shards` is not 1-100"))?,
        ),
    };
    let mut pack = document_from_item(&mut item)?
        .to_pack()
        .map_err(|e| corrupt("pack", &e.to_string()))?;
    pack.supply_shards = shards;
    Ok(pack)
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use aws_sdk_dynamodb::types::AttributeValue;

    use super::*;

    fn s(text: &str) -> AttributeValue {
        AttributeValue::S(text.into())
    }

    fn n(number: u64) -> AttributeValue {
        AttributeValue::N(number.to_string())
    }

    /// The terms every share and the pack item carry, as today's release writes them.
    fn terms() -> Item {
        HashMap::from([
            ("amount".into(), n(499)),
            ("currency".into(), s("USD")),
            ("maxPerUser".into(), n(3)),
            ("schemaVersion".into(), n(1)),
            ("startsAt".into(), n(1_767_225_600_000_000_000)),
            ("status".into(), s("active")),
        ])
    }

    /// The sample pack's item exactly as today's release writes it, attribute by attribute.
    fn pack_item_of_today() -> Item {
        let doc = r#"{"description":"Five cards from this season.","id":"genesis","imageUrl":"https://cdn.example.com/packs/rookie.png","itemsPerPack":5,"leagueId":null,"maxPerUser":3,"name":"Rookie Pack","odds":[{"chanceBps":9000,"rarity":"common"},{"chanceBps":1000,"rarity":"rare"}],"price":{"amount":499,"currency":"USD"},"saleEndsAt":null,"saleStartsAt":"2026-01-01T00:00:00Z","status":"active","teamId":"team-1","totalSupply":1000}"#;
        let mut item = terms();
        item.extend([
            ("PK".into(), s("PACK#genesis")),
            ("SK".into(), s("PACK")),
            ("GSI1PK".into(), s("PACKS#LISTED")),
            ("GSI1SK".into(), s("251635075199999999999#genesis")),
            ("GSI3PK".into(), s("TEAM#team-1")),
            ("GSI3SK".into(), s("251635075199999999999#genesis")),
            ("entity".into(), s("pack")),
            ("doc".into(), s(doc)),
            ("remaining".into(), n(10)),
            ("rev".into(), n(3)),
            ("shards".into(), n(16)),
        ]);
        item
    }

    #[test]
    fn a_pack_item_of_today_reads_as_its_pack_and_is_what_the_record_writes() {
        let sample = domain::packs::fixtures::sample_pack("genesis");
        let id = sample.pack_id().unwrap();
        assert_eq!(pack_item(&id, &sample, 3), pack_item_of_today());

        let pack = pack_from_item(pack_item_of_today()).unwrap();
        assert_eq!(pack.id, "genesis");
        assert_eq!(pack.price.amount, 499);
        assert_eq!(pack.max_per_user, Some(3));
        assert_eq!(pack.remaining, 10);
        assert_eq!(pack.supply_shards, Some(16));
        assert_eq!(pack.team_id.as_deref(), Some("team-1"));
        assert_eq!(pack.league_id, None);
    }

    #[test]
    fn a_pack_item_of_before_shares_reads_without_them_and_bad_shares_are_refused() {
        let mut item = pack_item_of_today();
        item.remove("shards");
        assert_eq!(pack_from_item(item.clone()).unwrap().supply_shards, None);
        item.insert("shards".into(), n(101));
        assert!(
            pack_from_item(item).is_err(),
            "more shares than a pack may have"
        );
    }

    #[test]
    fn a_share_item_of_today_holds_its_units_and_the_terms_and_is_what_the_record_writes() {
        let mut share = terms();
        share.extend([
            ("PK".into(), s("PACK#genesis#1")),
            ("SK".into(), s("SUPPLY")),
            ("entity".into(), s("supply")),
            ("remaining".into(), n(7)),
        ]);
        let sample = domain::packs::fixtures::sample_pack("genesis");
        let id = sample.pack_id().unwrap();
        assert_eq!(share_item(&id, &sample, 1, 7), share);
        assert_eq!(share_units(Some(&share)), 7);
        assert_eq!(share_units(None), 0, "a share not there has no units");
    }
}
