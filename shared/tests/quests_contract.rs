//! The quests contract, run against both stores: DynamoStore on moto_server (through the proxy
//! that forwards one request at a time, so each request is atomic as on DynamoDB) and the
//! MemoryStore. Seeded quests read back; a claim credits once with its ledger entry naming the
//! quest, whatever the concurrency and whatever payments run beside it; a key of another
//! quest's claim writes nothing; the rewards list pages newest first.

use std::sync::Arc;

use shared::cash::ledger::{EntryKind, LedgerQuery};
use shared::cash::parse_credit;
use shared::ids::QuestId;
use shared::purchases::{StartRequest, purchase_id};
use shared::quests::{Claim, Goal, Quest, Reward, claim_id, reward_credit};
use shared::store::Store;
use shared::store::purchases::{Completed, Started};
use shared::store::quests::{ClaimError, Claimed};
use shared::timestamp::Timestamp;
use testkit::{at_once, ids};

testkit::store_contract!(
    arc:
    seeded_quests_read_back_and_a_reseed_replaces_them,
    a_claim_credits_once_and_its_ledger_entry_names_the_quest,
    a_key_of_another_quests_claim_is_refused_and_writes_nothing,
    twenty_concurrent_claims_beside_payments_credit_once_and_the_ledger_adds_up,
    rewards_are_listed_newest_first_a_page_at_a_time,
);

fn quest(id: &str, amount: u64) -> Quest {
    Quest {
        id: QuestId::parse(id).unwrap(),
        name: format!("Quest {id}"),
        description: String::new(),
        starts_at: Timestamp::parse("2026-01-01T00:00:00Z").unwrap(),
        ends_at: Timestamp::parse("2030-01-01T00:00:00Z").unwrap(),
        goal: Goal::OpenPacks {
            count: 1,
            league_id: None,
            pack_id: None,
        },
        reward: Reward::Cash {
            amount,
            currency: "USD".into(),
        },
        league_packs: None,
    }
}

fn claim(quest: &Quest, user: &str, key: &str, at: Timestamp) -> Claim {
    Claim {
        user_id: ids::user(user),
        quest_id: quest.id.clone(),
        claim_id: claim_id(&ids::user(user), key),
        reward: quest.reward.clone(),
        claimed_at: at,
    }
}

async fn claim_now(
    store: &impl Store,
    quest: &Quest,
    user: &str,
    key: &str,
) -> Result<Claimed, ClaimError> {
    store
        .claim_quest(
            &claim(quest, user, key, Timestamp::now()),
            &reward_credit(quest, &ids::user(user)),
        )
        .await
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
        store
            .claim_quest(
                &claim(q, "u1", &format!("k{i}"), at),
                &reward_credit(q, &ids::user("u1")),
            )
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
