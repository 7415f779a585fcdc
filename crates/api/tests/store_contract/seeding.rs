//! Seeding packs: a pack reads back whole, re-seeding keeps what buyers rely on, a write over a
//! stale read changes nothing.

use super::*;

/// A pack with three rarities and items of each, as a seed file gives it.
pub(crate) fn pack_with_items(id: &str) -> Pack {
    let mut pack = active(id, 60);
    pack.odds = vec![
        Odds {
            rarity: "common".into(),
            chance_bps: 8000,
        },
        Odds {
            rarity: "rare".into(),
            chance_bps: 1900,
        },
        Odds {
            rarity: "legendary".into(),
            chance_bps: 100,
        },
    ];
    pack.items = ["common", "common", "rare", "legendary"]
        .iter()
        .enumerate()
        .map(|(i, rarity)| PackItem {
            id: format!("item-{i}"),
            name: format!("Card «{i}» with \"quotes\""),
            rarity: (*rarity).into(),
            image_url: (i % 2 == 0).then(|| format!("https://cdn.example.com/{i}.png")),
        })
        .collect();
    pack.max_per_user = Some(3);
    pack.sale_ends_at = Some(testkit::packs::at(86_400));
    pack.remaining = 42;
    pack.supply_shards = Some(5);
    pack
}

pub(crate) async fn a_pack_reads_back_field_for_field_with_items_and_a_seed(store: &impl Store) {
    let pack = pack_with_items("full");
    testkit::packs::save(store, &pack).await;
    let stored = store
        .get_pack(&testkit::ids::pack("full"))
        .await
        .unwrap()
        .expect("stored");
    assert_eq!(stored.pack, pack);
    assert_eq!(stored.seed.commitment().len(), 64);
    let listed = page(store, 10, None).await;
    assert_eq!(listed.packs.len(), 1);
    assert_eq!(whole(&listed.packs), as_listed([pack]), "no items in pages");
}

pub(crate) async fn reseeding_a_pack_on_sale_keeps_remaining_and_its_seed(store: &impl Store) {
    let pack = pack_with_items("live");
    testkit::packs::save(store, &pack).await;
    let first = store
        .get_pack(&testkit::ids::pack("live"))
        .await
        .unwrap()
        .unwrap();
    let mut renamed = pack.clone();
    renamed.name = "Renamed".into();
    renamed.remaining = pack.total_supply;
    renamed.status = PackStatus::Archived;
    let write = seed(store, &renamed, Timestamp::now()).await.unwrap();
    assert_eq!(write, SeedWrite::Update);
    let second = store
        .get_pack(&testkit::ids::pack("live"))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(second.pack.name, "Renamed");
    assert_eq!(second.pack.remaining, 42, "remaining belongs to the buyers");
    assert_eq!(second.seed, first.seed, "the server seed never changes");
    assert!(second.revision > first.revision);
}

pub(crate) async fn reseeding_refuses_to_change_what_buyers_pay_for(store: &impl Store) {
    let pack = pack_with_items("frozen");
    testkit::packs::save(store, &pack).await;
    let before = store
        .get_pack(&testkit::ids::pack("frozen"))
        .await
        .unwrap()
        .unwrap();
    let mut repriced = pack.clone();
    repriced.price.amount += 1;
    repriced.name = "Should not land".into();
    assert_eq!(
        seed(store, &repriced, Timestamp::now()).await,
        Err(SeedFailure::Refused(ReseedRefusal::Frozen("price")))
    );
    assert_eq!(
        store
            .get_pack(&testkit::ids::pack("frozen"))
            .await
            .unwrap()
            .unwrap(),
        before
    );
}

pub(crate) async fn a_pack_before_its_sale_is_replaced_whole(store: &impl Store) {
    let mut pack = pack_with_items("soon");
    pack.sale_starts_at = Some(testkit::packs::at(3600));
    testkit::packs::save(store, &pack).await;
    let seed_before = store
        .get_pack(&testkit::ids::pack("soon"))
        .await
        .unwrap()
        .unwrap()
        .seed;
    pack.price.amount = 1;
    pack.remaining = 7;
    pack.supply_shards = Some(3);
    pack.items.pop();
    pack.odds[1].chance_bps += pack.odds[2].chance_bps;
    pack.odds.pop();
    assert_eq!(
        seed(store, &pack, Timestamp::now()).await,
        Ok(SeedWrite::Replace)
    );
    let stored = store
        .get_pack(&testkit::ids::pack("soon"))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored.pack, pack);
    assert_eq!(stored.seed, seed_before);
    assert_eq!(
        store
            .read_supply(&testkit::ids::pack("soon"))
            .await
            .unwrap()
            .unwrap()
            .shares,
        [3, 2, 2],
        "re-sized before the sale: 7 units split exactly over 3 shares, the other 2 gone"
    );
}

/// Four minutes before its sale a pack is frozen as if on sale: an operator whose clock runs up
/// to 5 minutes behind cannot replace it whole (its `remaining` with it) once it sells. The
/// plan refuses, and so does the write's own condition.
pub(crate) async fn a_pack_whose_sale_starts_within_the_freeze_keeps_its_terms(store: &impl Store) {
    let mut pack = pack_with_items("close");
    pack.sale_starts_at = Some(testkit::packs::at(240));
    testkit::packs::save(store, &pack).await;
    let before = store
        .get_pack(&testkit::ids::pack("close"))
        .await
        .unwrap()
        .unwrap();
    let mut repriced = pack.clone();
    repriced.price.amount += 1;
    assert_eq!(
        seed(store, &repriced, Timestamp::now()).await,
        Err(SeedFailure::Refused(ReseedRefusal::Frozen("price")))
    );
    assert_eq!(
        store
            .seed_pack(
                &repriced,
                SeedWrite::Replace,
                before.revision,
                Timestamp::now()
            )
            .await,
        Err(SeedPackError::Changed)
    );
    assert_eq!(
        store
            .get_pack(&testkit::ids::pack("close"))
            .await
            .unwrap()
            .unwrap(),
        before
    );
}

pub(crate) async fn a_seeding_write_over_a_stale_read_changes_nothing(store: &impl Store) {
    let pack = pack_with_items("raced");
    testkit::packs::save(store, &pack).await;
    let read = store
        .get_pack(&testkit::ids::pack("raced"))
        .await
        .unwrap()
        .unwrap();
    let mut first = pack.clone();
    first.name = "First".into();
    store
        .seed_pack(&first, SeedWrite::Update, read.revision, Timestamp::now())
        .await
        .unwrap();
    let mut second = pack.clone();
    second.name = "Second".into();
    assert_eq!(
        store
            .seed_pack(&second, SeedWrite::Update, read.revision, Timestamp::now())
            .await,
        Err(SeedPackError::Changed)
    );
    assert_eq!(
        store
            .seed_pack(&second, SeedWrite::Create, 0, Timestamp::now())
            .await,
        Err(SeedPackError::Changed),
        "a pack is created once"
    );
    // A replace holds only while the sale has not started.
    assert_eq!(
        store
            .seed_pack(
                &second,
                SeedWrite::Replace,
                read.revision + 1,
                Timestamp::now()
            )
            .await,
        Err(SeedPackError::Changed)
    );
    assert_eq!(
        store
            .get_pack(&testkit::ids::pack("raced"))
            .await
            .unwrap()
            .unwrap()
            .pack
            .name,
        "First"
    );
}
