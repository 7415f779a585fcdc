//! Dependency faults: DynamoDB (moto behind a fault-injecting proxy on loopback) throttling,
//! failing, too slow, hanging up, cutting answers short, refusing connections, then recovering;
//! and the identity provider's JWKS under a flood of unknown kids. A fault the SDK's retries can
//! ride out is invisible; any other gives a fast 503 with `Retry-After`; the next request after
//! recovery succeeds, nothing is half-written or duplicated, and the logs hold no secret.

use api::http::routes::{list_packs_routes, web3_link_routes};
use std::sync::Arc;
use std::time::{Duration, Instant};

use api::auth::TokenVerifier;
use api::config::JwksSetting;
use api::handlers::list_packs::ListPacksState;
use api::handlers::web3_link::LinkState;
use api::http::request::DEFAULT_MAX_BODY_BYTES;
use aws_sdk_dynamodb::types::AttributeValue;
use store::DynamoStore;
use store::links::GetLink;
use testkit::events::{ApiEvent, call, parts};
use testkit::fault_proxy::{Fault, FaultProxy, INTERNAL_ERROR, THROTTLING, THROUGHPUT_EXCEEDED};
use testkit::http_stub::{HttpStub, Reply};
use testkit::moto::{MotoServer, client_for};
use testkit::tokens::{TestKey, auth_config, claims, jwks_json, token};

/// A 503 must come well within this (the SDK's operation timeout is 4 s).
const FAST: Duration = Duration::from_secs(6);
const EMAIL: &str = "secret.fan@example.com";
const PAYLOAD: &str = r#"{"wallet":"0xSECRETPAYLOAD"}"#;

/// Both handlers on a table reached through the proxy; the table is made directly on moto.
struct Setup {
    list: Arc<ListPacksState<DynamoStore>>,
    link: Arc<LinkState<DynamoStore>>,
    direct: DynamoStore,
    token: String,
}

async fn setup(moto: &MotoServer, endpoint: &str) -> Setup {
    let direct = moto.new_table().await;
    testkit::packs::save(&direct, &testkit::packs::active("p1", 10)).await;
    let through = DynamoStore::new(client_for(endpoint).await, direct.table());
    Setup {
        list: Arc::new(ListPacksState {
            store: through.clone(),
            cursors: testkit::cursor_signer(),
        }),
        link: testkit::link_state(through),
        direct,
        token: token("fault-user", Some(EMAIL)),
    }
}

/// Status, `Retry-After` and how long the handler took.
async fn timed(
    answer: impl Future<Output = lambda_http::Response<lambda_http::Body>>,
) -> (u16, Option<String>, Duration) {
    let started = Instant::now();
    let response = answer.await;
    let retry = response
        .headers()
        .get("retry-after")
        .map(|v| v.to_str().unwrap().to_owned());
    (response.status().as_u16(), retry, started.elapsed())
}

impl Setup {
    async fn list(&self) -> (u16, Option<String>, Duration) {
        timed(call(
            list_packs_routes(),
            &self.list,
            ApiEvent::get("/api/packs").request(),
        ))
        .await
    }

    async fn link(&self) -> (u16, Option<String>, Duration) {
        let event = ApiEvent::post("/api/web3-link")
            .bearer(&self.token)
            .json(&format!(r#"{{"payload":{PAYLOAD}}}"#));
        timed(call(web3_link_routes(), &self.link, event.request())).await
    }

    /// Items stored for the fault user (links and anything else under the user), by sort key;
    /// the count of wallets with its `n`.
    async fn user_items(&self) -> Vec<String> {
        let output = self
            .direct
            .client()
            .query()
            .table_name(self.direct.table())
            .key_condition_expression("PK = :pk")
            .expression_attribute_values(":pk", AttributeValue::S("USER#fault-user".into()))
            .consistent_read(true)
            .send()
            .await
            .unwrap();
        output
            .items()
            .iter()
            .map(|item| {
                let sk = item["SK"].as_s().unwrap();
                match item.get("n") {
                    Some(n) => format!("{sk} n={}", n.as_n().unwrap()),
                    None => sk.clone(),
                }
            })
            .collect()
    }
}

/// What one link of [`PAYLOAD`] leaves, however often it was tried: the link, its wallet, and
/// the fan's count of wallets at 1.
fn one_link() -> Vec<String> {
    vec![
        "LINK#web3".to_owned(),
        format!("WALLET#{}", domain::wallets::wallet_id(PAYLOAD).unwrap()),
        "WALLETS n=1".to_owned(),
    ]
}

fn assert_fast_503((status, retry, elapsed): (u16, Option<String>, Duration), what: &str) {
    assert_eq!(status, 503, "{what}");
    assert_eq!(retry.as_deref(), Some("1"), "{what}: Retry-After");
    assert!(elapsed < FAST, "{what}: took {elapsed:?}");
}

/// Each fault, on both handlers, then recovery on the same state (the same warm process).
async fn fault_then_recovery(faults: &[Fault]) {
    let (logs, _guard) = testkit::logs::capture();
    let moto = MotoServer::start().await;
    let proxy = FaultProxy::start(&moto.endpoint).await;
    let setup = setup(&moto, &proxy.endpoint()).await;
    for fault in faults {
        proxy.set(fault.clone());
        assert_fast_503(setup.list().await, &format!("list under {fault:?}"));
        assert_fast_503(setup.link().await, &format!("link under {fault:?}"));
        proxy.set(Fault::None);
        assert_eq!(setup.list().await.0, 200, "list after {fault:?}");
        assert_eq!(setup.link().await.0, 200, "link after {fault:?}");
    }
    assert_eq!(
        setup.user_items().await,
        one_link(),
        "one link record, however often it was retried"
    );
    logs.assert_free_of(&[
        &setup.token,
        setup.token.rsplit('.').next().unwrap(),
        EMAIL,
        "0xSECRETPAYLOAD",
    ]);
}

#[tokio::test]
async fn throttling_and_internal_errors_give_503_then_recover() {
    fault_then_recovery(&[THROTTLING, THROUGHPUT_EXCEEDED, INTERNAL_ERROR]).await;
}

#[tokio::test]
async fn slow_and_hung_dynamodb_gives_503_within_the_timeout_then_recovers() {
    fault_then_recovery(&[Fault::Delay(Duration::from_secs(10)), Fault::Hangup]).await;
}

#[tokio::test]
async fn refused_connections_give_503_then_recover_when_dynamodb_is_back() {
    let moto = MotoServer::start().await;
    let port = testkit::free_port();
    let setup = setup(&moto, &format!("http://127.0.0.1:{port}")).await;
    assert_fast_503(setup.list().await, "list, connection refused");
    assert_fast_503(setup.link().await, "link, connection refused");
    let _proxy = FaultProxy::start_on(&moto.endpoint, port).await;
    assert_eq!(setup.list().await.0, 200);
    assert_eq!(setup.link().await.0, 200);
}

#[tokio::test]
async fn a_write_reported_failed_is_a_503_and_a_retry_leaves_one_record() {
    let moto = MotoServer::start().await;
    let proxy = FaultProxy::start(&moto.endpoint).await;
    let setup = setup(&moto, &proxy.endpoint()).await;
    // DynamoDB applies the write, but the answer is lost: the SDK retries, then gives up. (The
    // link's read of the fan's event sequence before it is answered.)
    proxy.set_for_operation(
        Fault::ErrorAfterForwarding(500, "InternalServerError"),
        "TransactWriteItems",
        usize::MAX,
    );
    let before = proxy.requests();
    assert_fast_503(setup.link().await, "write applied, answer lost");
    assert!(proxy.requests() - before > 1, "the SDK retried");
    assert_eq!(setup.user_items().await, one_link());
    // The client retries once DynamoDB answers again: still one record, the first linkedAt kept.
    let first = setup
        .direct
        .get_link(&testkit::ids::user("fault-user"), "web3")
        .await
        .unwrap()
        .unwrap();
    proxy.set(Fault::None);
    assert_eq!(setup.link().await.0, 200);
    assert_eq!(setup.user_items().await, one_link());
    let second = setup
        .direct
        .get_link(&testkit::ids::user("fault-user"), "web3")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(second.linked_at, first.linked_at);
}

#[tokio::test]
async fn a_flood_of_unknown_kids_refetches_the_jwks_at_most_once() {
    let (logs, _guard) = testkit::logs::capture();
    let idp = HttpStub::start(Reply::Json(jwks_json())).await;
    let moto = MotoServer::start().await;
    let state = Arc::new(LinkState {
        store: moto.new_table().await,
        verifier: TokenVerifier::from_config(&auth_config(JwksSetting::Url(idp.url("/jwks"))))
            .unwrap(),
        max_body_bytes: DEFAULT_MAX_BODY_BYTES,
    });
    let mut forged = Vec::new();
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..200 {
        let mut header = TestKey::Rsa.header();
        header.kid = Some(format!("flood-{i}"));
        let token = TestKey::Rsa.sign_with_header(&header, &claims("attacker", None));
        forged.push(token.clone());
        let state = state.clone();
        tasks.spawn(async move {
            let event = ApiEvent::post("/api/web3-link")
                .bearer(&token)
                .json(r#"{"payload":1}"#);
            parts(&call(web3_link_routes(), &state, event.request()).await).0
        });
    }
    while let Some(status) = tasks.join_next().await {
        assert_eq!(status.unwrap(), 401);
    }
    assert_eq!(
        idp.hits(),
        1,
        "the first request fetched; the flood could not refetch within 30 s"
    );
    let good = token("after-flood", None);
    let event = ApiEvent::post("/api/web3-link")
        .bearer(&good)
        .json(r#"{"payload":1}"#);
    assert_eq!(
        parts(&call(web3_link_routes(), &state, event.request()).await).0,
        200,
        "a valid token still works"
    );
    let signatures: Vec<&str> = forged
        .iter()
        .map(|t| t.rsplit('.').next().unwrap())
        .collect();
    logs.assert_free_of(&signatures);
    logs.assert_free_of(&[good.as_str()]);
}

/// A handler call's status and how many requests reached the proxy meanwhile.
async fn status_and_attempts(
    proxy: &FaultProxy,
    call: impl Future<Output = (u16, Option<String>, Duration)>,
) -> (u16, usize) {
    let before = proxy.requests();
    let status = call.await.0;
    (status, proxy.requests() - before)
}

#[tokio::test]
async fn an_answer_cut_short_is_retried_and_the_caller_never_sees_it() {
    let moto = MotoServer::start().await;
    let proxy = FaultProxy::start(&moto.endpoint).await;
    let setup = setup(&moto, &proxy.endpoint()).await;
    // A relink is two transactions (the add, cancelled by the wallet the fan holds, then the
    // refresh): the first link is made before the faults, so that each link below is one.
    assert_eq!(setup.link().await.0, 200);
    // The SDK makes up to three attempts: one or two lost answers (of the link's first
    // transaction) are invisible.
    for lost in [1, 2] {
        proxy.set_for(Fault::Truncate, lost);
        assert_eq!(
            status_and_attempts(&proxy, setup.list()).await,
            (200, lost + 1),
            "list, {lost} answer(s) cut short"
        );
        proxy.set_for_operation(Fault::Truncate, "TransactWriteItems", lost);
        // Each transaction follows its read of the fan's event sequence (BatchGetItem).
        assert_eq!(
            status_and_attempts(&proxy, setup.link()).await,
            (200, lost + 4),
            "link, {lost} answer(s) cut short"
        );
    }
    proxy.set(Fault::Truncate);
    assert_fast_503(setup.list().await, "list, every answer cut short");
    assert_fast_503(setup.link().await, "link, every answer cut short");
    assert_eq!(
        setup.user_items().await,
        one_link(),
        "the retried write left one record"
    );
}
