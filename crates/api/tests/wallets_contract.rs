//! A fan's wallets, on both stores (DynamoStore on moto through a one-request-at-a-time proxy,
//! and MemoryStore): each link records its payload's wallet in the link's own write, at most
//! `MAX_WALLETS_PER_FAN` of them however links race; a removal frees its slot.

use std::sync::Arc;

use domain::ids::{UserId, WalletId};
use domain::links::WEB3_PROVIDER;
use domain::timestamp::Timestamp;
use domain::wallets::{MAX_WALLETS_PER_FAN, WalletLimitReached, WalletWrite, wallet_id};
use store::Store;
use store::links::LinkError;
use store::wallets::Removal;
use testkit::ids::user;
use testkit::packs::at;
use testkit::wallets::link;

testkit::store_contract!(
    arc:
    a_relink_refreshes_its_wallet_and_a_new_identity_adds_one,
    a_new_identity_past_the_cap_writes_neither_link_nor_wallet,
    a_removal_frees_one_slot_and_only_the_callers_wallet_is_removed,
    concurrent_links_of_distinct_identities_never_pass_the_cap,
    concurrent_first_links_of_one_identity_add_one_wallet,
    concurrent_removals_of_one_wallet_free_one_slot,
);

/// The n-th distinct identity of the tests.
fn identity(n: u32) -> String {
    format!(r#"{{"address":"0x{n:040x}","chainId":1}}"#)
}

fn id_of(payload: &str) -> WalletId {
    wallet_id(payload).unwrap()
}

async fn ids_listed(store: &impl Store, fan: &UserId) -> Vec<WalletId> {
    store
        .list_wallets(fan)
        .await
        .unwrap()
        .into_iter()
        .map(|wallet| wallet.id)
        .collect()
}

/// Links identities `from..to` for `fan`, one after the other, each added.
async fn link_all(store: &impl Store, fan: &UserId, from: u32, to: u32) {
    for n in from..to {
        let write = link(store, fan, &identity(n), at(i64::from(n) - 1000), None).await;
        assert_eq!(write, Ok(WalletWrite::Add), "identity {n}");
    }
}

async fn a_relink_refreshes_its_wallet_and_a_new_identity_adds_one(store: Arc<impl Store>) {
    let (fan, (t1, t2, t3)) = (user("fan"), (at(-300), at(-200), at(-100)));
    let first = r#"{"address":"0xAbC","chainId":1}"#;
    assert_eq!(
        link(&*store, &fan, first, t1, None).await,
        Ok(WalletWrite::Add)
    );
    // The same identity, spelled otherwise: one wallet, its payload the one last sent.
    let respelled = r#"{ "chainId" : 1.0 , "address" : "0x\u0041bC" }"#;
    assert_eq!(
        link(&*store, &fan, respelled, t2, None).await,
        Ok(WalletWrite::Refresh)
    );
    let wallets = store.list_wallets(&fan).await.unwrap();
    assert_eq!(wallets.len(), 1);
    assert_eq!(wallets[0].id, id_of(first));
    assert_eq!(wallets[0].payload, respelled);
    assert_eq!((wallets[0].linked_at, wallets[0].last_linked_at), (t1, t2));

    let second = r#"["another",{"identity":true}]"#;
    assert_eq!(
        link(&*store, &fan, second, t3, None).await,
        Ok(WalletWrite::Add)
    );
    // Newest first by first link.
    assert_eq!(
        ids_listed(&*store, &fan).await,
        [id_of(second), id_of(first)]
    );
    // The link itself is the last one, as before wallets.
    let linked = store.get_link(&fan, WEB3_PROVIDER).await.unwrap().unwrap();
    assert_eq!((linked.payload.as_str(), linked.linked_at), (second, t1));
    // Wallets are the fan's own.
    assert!(ids_listed(&*store, &user("stranger")).await.is_empty());
}

async fn a_new_identity_past_the_cap_writes_neither_link_nor_wallet(store: Arc<impl Store>) {
    let fan = user("fan");
    link_all(&*store, &fan, 0, MAX_WALLETS_PER_FAN).await;
    let last = identity(MAX_WALLETS_PER_FAN - 1);
    let before = store.get_link(&fan, WEB3_PROVIDER).await.unwrap().unwrap();
    assert_eq!(before.payload, last);

    let refused = link(
        &*store,
        &fan,
        &identity(99),
        Timestamp::now(),
        Some("x@y.z"),
    )
    .await;
    assert_eq!(refused, Err(LinkError::Refused(WalletLimitReached)));
    // Nothing written: not the link, not a wallet.
    assert_eq!(
        store.get_link(&fan, WEB3_PROVIDER).await.unwrap().unwrap(),
        before
    );
    let listed = ids_listed(&*store, &fan).await;
    assert_eq!(listed.len(), 20);
    assert!(!listed.contains(&id_of(&identity(99))));

    // A relink of a held identity is never refused.
    assert_eq!(
        link(&*store, &fan, &identity(3), Timestamp::now(), None).await,
        Ok(WalletWrite::Refresh)
    );
    // Another fan has a cap of their own.
    assert_eq!(
        link(
            &*store,
            &user("other"),
            &identity(99),
            Timestamp::now(),
            None
        )
        .await,
        Ok(WalletWrite::Add)
    );
}

async fn a_removal_frees_one_slot_and_only_the_callers_wallet_is_removed(store: Arc<impl Store>) {
    let (fan, other) = (user("fan"), user("other"));
    link_all(&*store, &fan, 0, MAX_WALLETS_PER_FAN).await;
    link_all(&*store, &other, 50, 51).await;
    let others = id_of(&identity(50));

    // Another fan's wallet, and one nobody holds: not found, nothing freed.
    assert_eq!(
        store.delete_wallet(&fan, &others, at(0)).await,
        Ok(Removal::NotHeld)
    );
    assert_eq!(
        store.delete_wallet(&fan, &id_of("true"), at(0)).await,
        Ok(Removal::NotHeld)
    );
    assert_eq!(
        ids_listed(&*store, &other).await,
        std::slice::from_ref(&others)
    );
    assert_eq!(
        link(&*store, &fan, &identity(99), Timestamp::now(), None).await,
        Err(LinkError::Refused(WalletLimitReached)),
        "a removal that removed nothing freed a slot"
    );

    let removed = id_of(&identity(7));
    assert_eq!(
        store.delete_wallet(&fan, &removed, at(0)).await,
        Ok(Removal::Removed)
    );
    assert_eq!(
        store.delete_wallet(&fan, &removed, at(0)).await,
        Ok(Removal::NotHeld)
    );
    let listed = ids_listed(&*store, &fan).await;
    assert_eq!(listed.len(), 19);
    assert!(!listed.contains(&removed));

    // The freed slot takes exactly one new identity.
    assert_eq!(
        link(&*store, &fan, &identity(99), Timestamp::now(), None).await,
        Ok(WalletWrite::Add)
    );
    assert_eq!(
        link(&*store, &fan, &identity(100), Timestamp::now(), None).await,
        Err(LinkError::Refused(WalletLimitReached))
    );
    // The removed identity linked again is a new wallet: no slot for it now.
    assert_eq!(
        link(&*store, &fan, &identity(7), Timestamp::now(), None).await,
        Err(LinkError::Refused(WalletLimitReached))
    );
}

/// Links every identity of `identities` for `fan` at once; their answers.
async fn race(
    store: &Arc<impl Store + 'static>,
    fan: &UserId,
    identities: impl IntoIterator<Item = u32>,
) -> Vec<Result<WalletWrite, LinkError>> {
    let identities: Vec<u32> = identities.into_iter().collect();
    let barrier = Arc::new(tokio::sync::Barrier::new(identities.len()));
    let mut tasks = tokio::task::JoinSet::new();
    for n in identities {
        let (store, barrier, fan) = (store.clone(), barrier.clone(), fan.clone());
        tasks.spawn(async move {
            barrier.wait().await;
            link(&*store, &fan, &identity(n), Timestamp::now(), None).await
        });
    }
    tasks.join_all().await
}

fn count(
    answers: &[Result<WalletWrite, LinkError>],
    answer: Result<WalletWrite, LinkError>,
) -> usize {
    answers.iter().filter(|a| **a == answer).count()
}

async fn concurrent_links_of_distinct_identities_never_pass_the_cap(
    store: Arc<impl Store + 'static>,
) {
    let fan = user("fan");
    link_all(&*store, &fan, 0, 16).await;
    let answers = race(&store, &fan, 100..110).await;
    assert_eq!(count(&answers, Ok(WalletWrite::Add)), 4, "{answers:?}");
    assert_eq!(
        count(&answers, Err(LinkError::Refused(WalletLimitReached))),
        6,
        "{answers:?}"
    );
    assert_eq!(ids_listed(&*store, &fan).await.len(), 20);
}

async fn concurrent_first_links_of_one_identity_add_one_wallet(store: Arc<impl Store + 'static>) {
    let fan = user("fan");
    let answers = race(&store, &fan, [5; 6]).await;
    assert_eq!(count(&answers, Ok(WalletWrite::Add)), 1, "{answers:?}");
    assert_eq!(count(&answers, Ok(WalletWrite::Refresh)), 5, "{answers:?}");
    assert_eq!(ids_listed(&*store, &fan).await, [id_of(&identity(5))]);
    // Counted once: 19 more identities fit, the 21st does not.
    link_all(&*store, &fan, 100, 119).await;
    assert_eq!(
        link(&*store, &fan, &identity(200), Timestamp::now(), None).await,
        Err(LinkError::Refused(WalletLimitReached))
    );
}

async fn concurrent_removals_of_one_wallet_free_one_slot(store: Arc<impl Store + 'static>) {
    let fan = user("fan");
    link_all(&*store, &fan, 0, MAX_WALLETS_PER_FAN).await;
    let removed = id_of(&identity(2));
    let barrier = Arc::new(tokio::sync::Barrier::new(6));
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..6 {
        let (store, barrier, fan, removed) =
            (store.clone(), barrier.clone(), fan.clone(), removed.clone());
        tasks.spawn(async move {
            barrier.wait().await;
            store.delete_wallet(&fan, &removed, at(0)).await.unwrap()
        });
    }
    let removals = tasks.join_all().await;
    assert_eq!(
        removals.iter().filter(|r| **r == Removal::Removed).count(),
        1,
        "{removals:?}"
    );
    let answers = race(&store, &fan, 300..303).await;
    assert_eq!(count(&answers, Ok(WalletWrite::Add)), 1, "{answers:?}");
    assert_eq!(ids_listed(&*store, &fan).await.len(), 20);
}
