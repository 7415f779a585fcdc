//! The quests contract, run against both stores: DynamoStore on moto_server (through the proxy
//! that forwards one request at a time, so each request is atomic as on DynamoDB) and the
//! MemoryStore. Seeded quests read back; a claim credits once with its ledger entry naming the
//! quest, whatever the concurrency and whatever payments run beside it; a key of another
//! quest's claim writes nothing; the rewards list pages newest first. A pack reward makes one
//! paid purchase at price 0 that opens and takes one unit, whatever the concurrency, and a sold
//! out pack writes nothing and leaves the quest claimable.

use std::sync::Arc;

use domain::cash::ledger::{EntryKind, LedgerQuery};
use domain::cash::parse_credit;
use domain::ids::QuestId;
use domain::purchases::PurchaseStatus;
use domain::purchases::{StartRequest, purchase_id};
use domain::quests::{Claim, Quest, Reward, grant, reward_purchase_id};
use domain::timestamp::Timestamp;
use store::Store;
use store::purchases::{Completed, Started};
use store::quests::{ClaimError, Claimed};
use testkit::{at_once, ids};

testkit::store_contract!(
    arc:
    seeded_quests_read_back_and_a_reseed_replaces_them,
    a_claim_credits_once_and_its_ledger_entry_names_the_quest,
    a_key_of_another_quests_claim_is_refused_and_writes_nothing,
    twenty_concurrent_claims_beside_payments_credit_once_and_the_ledger_adds_up,
    rewards_are_listed_newest_first_a_page_at_a_time,
    a_pack_reward_is_one_paid_purchase_at_0_that_opens_and_takes_one_unit,
    twenty_concurrent_pack_reward_claims_make_one_purchase_and_take_one_unit,
    a_sold_out_pack_reward_writes_nothing_and_the_quest_stays_claimable,
);

fn quest(id: &str, amount: u64) -> Quest {
    testkit::quests::quest(
        id,
        Reward::Cash {
            amount,
            currency: "USD".into(),
        },
    )
}

/// A quest whose reward is a pack of `pack_id`.
fn pack_quest(id: &str, pack_id: &str) -> Quest {
    Quest {
        reward: Reward::Pack {
            pack_id: ids::pack(pack_id),
        },
        ..quest(id, 1)
    }
}

async fn claim_at(
    store: &impl Store,
    quest: &Quest,
    user: &str,
    key: &str,
    at: Timestamp,
) -> Result<Claimed, ClaimError> {
    let grant = grant(quest, &ids::user(user));
    let claim = Claim::new(quest, &ids::user(user), key, &grant, at);
    store.claim_quest(&claim, &grant).await
}

async fn claim_now(
    store: &impl Store,
    quest: &Quest,
    user: &str,
    key: &str,
) -> Result<Claimed, ClaimError> {
    claim_at(store, quest, user, key, Timestamp::now()).await
}

async fn balance(store: &impl Store, user: &str) -> u64 {
    store.get_balance(&ids::user(user), "USD").await.unwrap()
}

async fn seeded_quests_read_back_and_a_reseed_replaces_them(store: Arc<impl Store>) {
    let (a, b) = (quest("a", 100), quest("b", 200));
    store.seed_quests(&[b.clone(), a.clone()]).await.unwrap();
    assert_eq!(
        store.list_quests().await.unwrap(),
        vec![a.clone(), b.clone()]
    );
    assert_eq!(store.get_quest(&a.id).await.unwrap(), Some(a.clone()));
    let unknown = QuestId::parse("nope").unwrap();
    assert_eq!(store.get_quest(&unknown).await.unwrap(), None);
    let renamed = Quest {
        name: "Renamed".into(),
        ..a.clone()
    };
    store
        .seed_quests(std::slice::from_ref(&renamed))
        .await
        .unwrap();
    assert_eq!(store.get_quest(&a.id).await.unwrap(), Some(renamed));
}

async fn a_claim_credits_once_and_its_ledger_entry_names_the_quest(store: Arc<impl Store>) {
    let q = quest("first", 150);
    let first = match claim_now(&*store, &q, "u1", "k1").await {
        Ok(Claimed::Created(claim)) => claim,
        other => panic!("expected a claim, got {other:?}"),
    };
    assert_eq!(balance(&*store, "u1").await, 150);
    // Another key, the same key: the first claim answers, nothing is credited again.
    for key in ["k2", "k1"] {
        assert_eq!(
            claim_now(&*store, &q, "u1", key).await,
            Ok(Claimed::Repeated(first.clone()))
        );
    }
    assert_eq!(balance(&*store, "u1").await, 150);
    assert_eq!(
        store.get_claim(&ids::user("u1"), &q.id).await.unwrap(),
        Some(first)
    );
    assert!(
        store
            .claimed_quests(&ids::user("u1"))
            .await
            .unwrap()
            .contains(&q.id)
    );
    assert!(
        store
            .claimed_quests(&ids::user("u2"))
            .await
            .unwrap()
            .is_empty()
    );
    let ledger = store
        .list_ledger(&LedgerQuery {
            user_id: ids::user("u1"),
            currency: None,
            limit: 10,
            after: None,
        })
        .await
        .unwrap();
    assert_eq!(ledger.entries.len(), 1);
    let entry = &ledger.entries[0];
    assert_eq!(
        (entry.kind, entry.amount.amount, entry.quest_id.as_ref()),
        (EntryKind::Credit, 150, Some(&q.id))
    );
    // Another fan claims the same quest for themselves.
    assert!(matches!(
        claim_now(&*store, &q, "u2", "k1").await,
        Ok(Claimed::Created(_))
    ));
    assert_eq!(balance(&*store, "u2").await, 150);
}

async fn a_key_of_another_quests_claim_is_refused_and_writes_nothing(store: Arc<impl Store>) {
    let (a, b) = (quest("a", 100), quest("b", 200));
    assert!(matches!(
        claim_now(&*store, &a, "u1", "k").await,
        Ok(Claimed::Created(_))
    ));
    assert_eq!(
        claim_now(&*store, &b, "u1", "k").await,
        Err(ClaimError::KeyReused)
    );
    assert_eq!(balance(&*store, "u1").await, 100);
    assert_eq!(
        store.get_claim(&ids::user("u1"), &b.id).await.unwrap(),
        None
    );
    // With a key of its own, b is claimed.
    assert!(matches!(
        claim_now(&*store, &b, "u1", "k-b").await,
        Ok(Claimed::Created(_))
    ));
    assert_eq!(balance(&*store, "u1").await, 300);
}

async fn twenty_concurrent_claims_beside_payments_credit_once_and_the_ledger_adds_up(
    store: Arc<impl Store + 'static>,
) {
    let pack = testkit::packs::active("p", 60);
    testkit::packs::save(&*store, &pack).await;
    let credit = parse_credit("u1", "10000", "USD", "grant-1").unwrap();
    store.credit_cash(&credit, Timestamp::now()).await.unwrap();
    let mut purchases = Vec::new();
    for key in ["s1", "s2"] {
        let now = Timestamp::now();
        let start = StartRequest {
            user_id: ids::user("u1"),
            pack_id: ids::pack("p"),
            purchase_id: purchase_id(&ids::user("u1"), key),
            requested_seed: None,
            client_seed: "server-picked".into(),
            now,
            expires_at: now.plus_seconds(600).unwrap(),
            policy: testkit::purchases::ROOMY,
            human_checked: false,
        };
        match store.start_purchase(&start).await.unwrap() {
            Started::Created(purchase) => purchases.push(purchase.id),
            other => panic!("{other:?}"),
        }
    }
    let q = Arc::new(quest("q", 250));
    let paid = Arc::new(purchases);
    let outcomes = at_once(22, |i| {
        let (store, q, paid) = (store.clone(), q.clone(), paid.clone());
        async move {
            if i < 20 {
                match claim_now(&*store, &q, "u1", &format!("k{i}"))
                    .await
                    .unwrap()
                {
                    Claimed::Created(_) => 1,
                    Claimed::Repeated(_) => 0,
                }
            } else {
                let completed = store
                    .complete_purchase(
                        &ids::user("u1"),
                        &ids::pack("p"),
                        &paid[i - 20],
                        Timestamp::now(),
                    )
                    .await
                    .unwrap();
                assert!(matches!(completed, Completed::Paid { .. }), "{completed:?}");
                0
            }
        }
    })
    .await;
    assert_eq!(outcomes.iter().sum::<u32>(), 1, "exactly one claim credits");
    let expected = 10_000 + 250 - 2 * pack.price.amount;
    assert_eq!(balance(&*store, "u1").await, expected);
    assert_eq!(
        testkit::mine::ledger_sum(&*store, "u1", "USD").await,
        i128::from(expected),
        "the ledger's credits less its debits"
    );
}

async fn rewards_are_listed_newest_first_a_page_at_a_time(store: Arc<impl Store>) {
    let quests: Vec<Quest> = (0..5).map(|i| quest(&format!("q{i}"), 10)).collect();
    let base = Timestamp::parse("2026-06-01T00:00:00Z").unwrap();
    for (i, q) in quests.iter().enumerate() {
        let at = base.plus_seconds(i as i64).unwrap();
        claim_at(&*store, q, "u1", &format!("k{i}"), at)
            .await
            .unwrap();
    }
    let mut seen = Vec::new();
    let mut after = None;
    loop {
        let page = store
            .list_claims(&ids::user("u1"), 2, after.as_deref())
            .await
            .unwrap();
        assert!(page.entries.len() <= 2);
        seen.extend(page.entries.iter().map(|c| c.quest_id.to_string()));
        match page.next {
            Some(next) => after = Some(next),
            None => break,
        }
    }
    assert_eq!(seen, ["q4", "q3", "q2", "q1", "q0"]);
    assert!(
        store
            .list_claims(&ids::user("u2"), 2, None)
            .await
            .unwrap()
            .entries
            .is_empty()
    );
}

/// A pack of `units` units split over `shards` shares, saved.
async fn pack_of(store: &impl Store, id: &str, units: u64, shards: u32) {
    let mut pack = testkit::packs::active(id, 60);
    (pack.total_supply, pack.remaining, pack.supply_shards) = (units, units, Some(shards));
    // A reward does not count towards the limit: the fan may still buy one after it.
    pack.max_per_user = Some(1);
    testkit::packs::save(store, &pack).await;
}

async fn a_pack_reward_is_one_paid_purchase_at_0_that_opens_and_takes_one_unit(
    store: Arc<impl Store>,
) {
    pack_of(&*store, "p", 3, 3).await;
    let q = pack_quest("pq", "p");
    let first = match claim_now(&*store, &q, "u1", "k1").await {
        Ok(Claimed::Created(claim)) => claim,
        other => panic!("expected a claim, got {other:?}"),
    };
    let purchase_id = reward_purchase_id(&q.id, &ids::user("u1"));
    assert_eq!(first.purchase_id.as_ref(), Some(&purchase_id));
    assert_eq!(testkit::packs::remaining(&*store, "p").await, 2);
    let purchase = store
        .get_purchase(&ids::user("u1"), &purchase_id)
        .await
        .unwrap()
        .expect("the reward's purchase");
    assert_eq!(purchase.status, PurchaseStatus::Completed);
    assert_eq!(
        (purchase.price.amount, purchase.price.currency.as_str()),
        (0, "USD")
    );
    assert!(purchase.completed_at.is_some() && purchase.hold_slot.is_none());
    // Another key, the same key: the first claim answers, no unit taken again.
    for key in ["k2", "k1"] {
        assert_eq!(
            claim_now(&*store, &q, "u1", key).await,
            Ok(Claimed::Repeated(first.clone()))
        );
    }
    assert_eq!(testkit::packs::remaining(&*store, "p").await, 2);
    let opened = store
        .open_purchase(
            &ids::user("u1"),
            &ids::pack("p"),
            &purchase_id,
            Timestamp::now(),
        )
        .await
        .unwrap();
    assert_eq!(opened.purchase.status, PurchaseStatus::Opened);
    assert_eq!(opened.purchase.items.as_ref().map(Vec::len), Some(5));
    // Nothing paid, nothing credited; on the fan's rewards list with its purchase.
    assert_eq!(balance(&*store, "u1").await, 0);
    let listed = store.list_claims(&ids::user("u1"), 10, None).await.unwrap();
    assert_eq!(listed.entries, vec![first]);
    // Not counted towards `maxPerUser` (1), and its nonce was the buyer's first.
    let start = testkit::purchases::start_request("u1", "p", "s1", Timestamp::now(), 600);
    match store.start_purchase(&start).await.unwrap() {
        Started::Created(bought) => assert_eq!((purchase.nonce, bought.nonce), (1, 2)),
        other => panic!("{other:?}"),
    }
    assert_eq!(testkit::packs::remaining(&*store, "p").await, 1);
}

async fn twenty_concurrent_pack_reward_claims_make_one_purchase_and_take_one_unit(
    store: Arc<impl Store + 'static>,
) {
    pack_of(&*store, "p", 50, 4).await;
    let q = Arc::new(pack_quest("pq", "p"));
    let outcomes = at_once(20, |i| {
        let (store, q) = (store.clone(), q.clone());
        async move {
            match claim_now(&*store, &q, "u1", &format!("k{i}"))
                .await
                .unwrap()
            {
                Claimed::Created(claim) => (1, claim),
                Claimed::Repeated(claim) => (0, claim),
            }
        }
    })
    .await;
    assert_eq!(
        outcomes.iter().map(|(n, _)| n).sum::<u32>(),
        1,
        "exactly one claim"
    );
    let made = &outcomes.iter().find(|(n, _)| *n == 1).unwrap().1;
    assert!(
        outcomes.iter().all(|(_, claim)| claim == made),
        "all answer it"
    );
    assert_eq!(
        testkit::packs::remaining(&*store, "p").await,
        49,
        "one unit taken"
    );
    let supply = store.read_supply(&ids::pack("p")).await.unwrap().unwrap();
    assert_eq!(supply.sold, 1, "one unit sold");
    assert_eq!(
        supply.remaining() + supply.held + supply.sold,
        50,
        "the books balance"
    );
}

async fn a_sold_out_pack_reward_writes_nothing_and_the_quest_stays_claimable(
    store: Arc<impl Store>,
) {
    // One unit over two shares (one always empty), held by another fan's start.
    pack_of(&*store, "p", 1, 2).await;
    let start = testkit::purchases::start_request("u2", "p", "s1", Timestamp::now(), 600);
    assert!(matches!(
        store.start_purchase(&start).await,
        Ok(Started::Created(_))
    ));
    let q = pack_quest("pq", "p");
    for key in ["k1", "k2"] {
        assert_eq!(
            claim_now(&*store, &q, "u1", key).await,
            Err(ClaimError::Pack(domain::purchases::StartRefusal::SoldOut))
        );
    }
    let purchase_id = reward_purchase_id(&q.id, &ids::user("u1"));
    assert_eq!(
        store.get_claim(&ids::user("u1"), &q.id).await.unwrap(),
        None
    );
    assert!(
        store
            .claimed_quests(&ids::user("u1"))
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        store
            .get_purchase(&ids::user("u1"), &purchase_id)
            .await
            .unwrap(),
        None
    );
    assert_eq!(testkit::packs::remaining(&*store, "p").await, 0);
    // The hold runs out and is released: its unit comes back, and the claim (its key unused)
    // succeeds.
    let later = testkit::packs::at(700);
    let released = store
        .release_holds(Some(&ids::pack("p")), later, 10)
        .await
        .unwrap();
    assert_eq!(released.released, 1);
    let made = match claim_at(&*store, &q, "u1", "k1", later).await {
        Ok(Claimed::Created(claim)) => claim,
        other => panic!("expected a claim, got {other:?}"),
    };
    assert_eq!(testkit::packs::remaining(&*store, "p").await, 0);
    // Sold out again, a claim made still answers (replayed), not `sold_out`; and another
    // fan's key of another quest's claim is refused before the supply.
    assert_eq!(
        claim_at(&*store, &q, "u1", "k3", later).await,
        Ok(Claimed::Repeated(made))
    );
    assert!(matches!(
        claim_now(&*store, &quest("cash", 10), "u2", "k-u2").await,
        Ok(Claimed::Created(_))
    ));
    assert_eq!(
        claim_at(&*store, &q, "u2", "k-u2", later).await,
        Err(ClaimError::KeyReused)
    );
    assert!(
        store
            .get_purchase(&ids::user("u1"), &purchase_id)
            .await
            .unwrap()
            .is_some()
    );
}
