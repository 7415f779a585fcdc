//! The real `open-pack` binary, run through a Lambda Runtime API emulator against moto_server,
//! with its JWKS fetched from a loopback identity-provider stub.

use domain::packs::draw::{DrawInput, draw};
use domain::timestamp::Timestamp;
use store::packs::GetPack;
use store::purchases::{CompletePurchase, GetPurchase};
use testkit::countdowns::without_countdowns;
use testkit::events::ApiEvent;
use testkit::fault_proxy::THROTTLING;
use testkit::ids;
use testkit::packs::active;
use testkit::purchases::{PurchaseEnv, credit, fixture, reserve, reserve_fixture_purchase};
use testkit::tokens::token;

const BINARY: &str = env!("CARGO_BIN_EXE_open-pack");

fn open_event(pack: &str, purchase: &str, token: &str) -> ApiEvent {
    ApiEvent::post(&format!("/api/packs/{pack}/purchases/{purchase}/open")).bearer(token)
}

/// A purchase of `pack` by `user`, paid.
async fn paid(env: &PurchaseEnv, user: &str, pack: &str, key: &str) -> domain::purchases::Purchase {
    let purchase = reserve(&env.store, user, pack, key, 600).await;
    credit(
        &env.store,
        user,
        10_000,
        "USD",
        &format!("grant-{user}-{key}"),
    )
    .await;
    env.store
        .complete_purchase(
            &ids::user(user),
            &ids::pack(pack),
            &purchase.id,
            Timestamp::now(),
        )
        .await
        .expect("paid");
    purchase
}

#[tokio::test]
async fn opens_a_paid_pack_once_with_the_published_draw() {
    let env = PurchaseEnv::new().await;
    testkit::packs::save(&env.store, &active("p", 10)).await;
    let purchase = paid(&env, "buyer", "p", "k").await;
    let reserved = reserve(&env.store, "buyer", "p", "unpaid", 600).await;
    let stored = env
        .store
        .get_pack(&testkit::ids::pack("p"))
        .await
        .unwrap()
        .unwrap();
    let function = env.spawn(BINARY, &[]).await;
    let buyer = token("buyer", None);

    let opened = function
        .call(&open_event("p", purchase.id.as_str(), &buyer))
        .await;
    assert_eq!(opened.status, 200, "{opened:?}");
    assert_eq!(opened.header("idempotent-replayed"), None);
    let body = &opened.body["purchase"];
    assert_eq!(body["status"], "opened");
    let input = DrawInput {
        pack_id: "p",
        user_id: "buyer",
        nonce: purchase.nonce,
        client_seed: &purchase.client_seed,
    };
    let expected: Vec<String> = draw(
        &stored.seed,
        &stored.pack.odds,
        &stored.pack.items,
        stored.pack.items_per_pack,
        &input,
    )
    .unwrap()
    .into_iter()
    .map(|i| stored.pack.items[i].id.clone())
    .collect();
    let drawn: Vec<&str> = body["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|item| item["itemId"].as_str().unwrap())
        .collect();
    assert_eq!(drawn, expected);
    assert_eq!(body["fairness"]["serverSeedHash"], stored.seed.commitment());
    assert_eq!(body["fairness"]["serverSeed"], serde_json::Value::Null);

    let again = function
        .call(&open_event("p", purchase.id.as_str(), &buyer))
        .await;
    assert_eq!(
        (again.status, without_countdowns(again.body.clone())),
        (200, without_countdowns(opened.body.clone()))
    );
    assert_eq!(again.header("idempotent-replayed"), Some("true"));
    assert_eq!(
        env.store
            .get_purchase(&ids::user("buyer"), &purchase.id)
            .await
            .unwrap()
            .unwrap()
            .items
            .map(|items| items.len()),
        Some(stored.pack.items_per_pack as usize)
    );

    for (path_pack, id, user, status, code) in [
        (
            "p",
            reserved.id.as_str(),
            "buyer",
            409,
            "purchase_not_completed",
        ),
        (
            "p",
            purchase.id.as_str(),
            "thief",
            404,
            "purchase_not_found",
        ),
        (
            "q",
            purchase.id.as_str(),
            "buyer",
            404,
            "purchase_not_found",
        ),
        ("p", "a.b", "buyer", 404, "not_found"),
    ] {
        let answer = function
            .call(&open_event(path_pack, id, &token(user, None)))
            .await;
        assert_eq!(
            (answer.status, answer.code()),
            (status, Some(code)),
            "{answer:?}"
        );
    }
}

#[tokio::test]
async fn the_fixture_opens_the_purchase_the_start_fixture_makes() {
    let env = PurchaseEnv::new().await;
    let purchase = reserve_fixture_purchase(&env.store).await;
    let function = env.spawn(BINARY, &[]).await;
    let me = token("me", None);
    let unpaid = function.call_json(fixture("open-pack", Some(&me))).await;
    assert_eq!(
        (unpaid.status, unpaid.code()),
        (409, Some("purchase_not_completed"))
    );
    credit(&env.store, "me", 10_000, "USD", "grant-me").await;
    env.store
        .complete_purchase(
            &ids::user("me"),
            &purchase.pack_id,
            &purchase.id,
            Timestamp::now(),
        )
        .await
        .unwrap();
    let opened = function.call_json(fixture("open-pack", Some(&me))).await;
    assert_eq!(opened.status, 200, "{opened:?}");
}

#[tokio::test]
async fn missing_settings_stop_the_function_with_a_clear_message() {
    testkit::runtime_api::assert_init_needs_auth(BINARY).await;
}

#[tokio::test]
async fn a_dynamodb_outage_is_a_503_and_the_same_process_serves_again_after_it() {
    let (env, proxy) = PurchaseEnv::behind_proxy().await;
    let purchase = paid(&env, "buyer", "p", "k").await;
    let function = env.spawn(BINARY, &[]).await;
    let buyer = token("buyer", None);
    proxy.set(THROTTLING);
    let refused = function
        .call(&open_event("p", purchase.id.as_str(), &buyer))
        .await;
    refused.assert_unavailable();
    proxy.set(testkit::fault_proxy::Fault::None);
    let opened = function
        .call(&open_event("p", purchase.id.as_str(), &buyer))
        .await;
    assert_eq!(opened.status, 200, "{opened:?}");
}

/// `SCORE_WEIGHTS` is read at the cold start and scores the function's openings: the test
/// pack's five commons at 3 each.
#[tokio::test]
async fn an_opening_scores_with_the_configured_weights() {
    use domain::leaderboards::{Board, Rank};
    use store::leaderboards::GetStanding;
    let env = PurchaseEnv::new().await;
    testkit::packs::save(&env.store, &active("p", 10)).await;
    let purchase = paid(&env, "scorer", "p", "k").await;
    let function = env
        .spawn(BINARY, &[("SCORE_WEIGHTS", "common=3,rare=20")])
        .await;
    let opened = function
        .call(&open_event(
            "p",
            purchase.id.as_str(),
            &token("scorer", None),
        ))
        .await;
    assert_eq!(opened.status, 200, "{opened:?}");
    let standing = env
        .store
        .get_standing(&Board::Global, &ids::user("scorer"))
        .await
        .unwrap()
        .expect("a score on the global board");
    assert_eq!((standing.score.score, standing.rank), (15, Rank::Exact(1)));
}
