//! The human check against testkit's siteverify stub: a token solved for the door, on a
//! configured hostname, young enough and after the door opened, passes once; each check refuses
//! what it exists for (403 `human_check_failed`, the token not recorded as spent), and
//! siteverify unreachable or answering `internal-error` is a 503 with `Retry-After`.

use api::http::error::ApiError;
use api::http::human_check::{HumanCheck, HumanCheckToken, verify_human};
use axum::response::IntoResponse;
use clients::siteverify::Siteverify;
use domain::humancheck::{Door, token_hash};
use domain::secret::Secret;
use domain::timestamp::Timestamp;
use store::MemoryStore;
use store::ratelimit::SpendToken;
use testkit::ids::pack;
use testkit::packs::at;
use testkit::turnstile::{ALREADY_SPENT, ALWAYS_FAILS, ALWAYS_PASSES, SITE_SECRET, TurnstileStub};

const HOST: &str = "fans.example";

fn check(url: &str, secret: &str) -> HumanCheck {
    HumanCheck {
        siteverify: Siteverify::new(url, Secret::new(secret)),
        hostnames: vec!["app.example".into(), HOST.into()],
    }
}

fn sent(token: &str) -> HumanCheckToken {
    HumanCheckToken {
        token: Some(token.into()),
        remote_ip: Some("203.0.113.5".into()),
    }
}

fn door() -> Door {
    Door::Join(pack("drop-1"))
}

fn code(result: Result<(), ApiError>) -> (u16, String) {
    match result {
        Ok(()) => (200, String::new()),
        Err(error) => {
            let response = error.clone().into_response();
            assert!(
                response.status() != 503 || response.headers().contains_key("retry-after"),
                "a 503 says when to retry"
            );
            (response.status().as_u16(), error.code().to_string())
        }
    }
}

fn refused() -> (u16, String) {
    (403, "human_check_failed".into())
}

async fn spent(store: &MemoryStore, token: &str) -> bool {
    !store.spend(&token_hash(token), i64::MAX).await.unwrap()
}

#[tokio::test]
async fn a_token_for_the_door_passes_once_and_siteverify_gets_the_form_cloudflare_documents() {
    let stub = TurnstileStub::start().await;
    let store = MemoryStore::default();
    let check = check(&stub.url(), SITE_SECRET);
    let token = stub.solve("join_drop-1", HOST, &at(-10).to_string());
    let pass = verify_human(&check, &store, &sent(&token), &door(), Some(at(-60))).await;
    assert_eq!(code(pass), (200, String::new()));
    let form = &stub.received()[0];
    let field = |name: &str| {
        form.iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    };
    assert_eq!(field("secret"), Some(SITE_SECRET));
    assert_eq!(field("response"), Some(token.as_str()));
    assert_eq!(field("remoteip"), Some("203.0.113.5"));
    assert_eq!(field("idempotency_key").map(str::len), Some(36));
    // Used again: Cloudflare's own single use refuses it.
    let again = verify_human(&check, &store, &sent(&token), &door(), None).await;
    assert_eq!(code(again), refused());
}

#[tokio::test]
async fn a_token_spent_with_us_is_refused_even_where_siteverify_passes_it() {
    // The always-pass test secret passes a token however often: only our record refuses it.
    let stub = TurnstileStub::start().await;
    let store = MemoryStore::default();
    let check = check(&stub.url(), ALWAYS_PASSES);
    let token = stub.solve("join_drop-1", HOST, &at(-10).to_string());
    assert_eq!(
        code(verify_human(&check, &store, &sent(&token), &door(), None).await).0,
        200
    );
    let again = verify_human(&check, &store, &sent(&token), &door(), None).await;
    assert_eq!(code(again), refused());
}

#[tokio::test]
async fn each_check_refuses_what_it_exists_for_and_nothing_is_written() {
    let stub = TurnstileStub::start().await;
    let store = MemoryStore::default();
    let site = check(&stub.url(), SITE_SECRET);
    let opened = Some(at(-100));
    let cases = [
        (
            "another action",
            stub.solve("start_drop-1", HOST, &at(-10).to_string()),
            opened,
        ),
        (
            "another pack",
            stub.solve("join_drop-2", HOST, &at(-10).to_string()),
            opened,
        ),
        (
            "another hostname",
            stub.solve("join_drop-1", "evil.example", &at(-10).to_string()),
            opened,
        ),
        (
            "too old",
            stub.solve("join_drop-1", HOST, &at(-301).to_string()),
            None,
        ),
        (
            "before the door opened",
            stub.solve("join_drop-1", HOST, &at(-101).to_string()),
            opened,
        ),
    ];
    for (what, token, not_before) in &cases {
        let result = verify_human(&site, &store, &sent(token), &door(), *not_before).await;
        assert_eq!(code(result), refused(), "{what}");
        assert!(!spent(&store, token).await, "{what}: nothing written");
    }
    let unknown = verify_human(&site, &store, &sent("0.not-a-token"), &door(), None).await;
    assert_eq!(code(unknown), refused(), "unknown token");
    let none = HumanCheckToken::default();
    assert_eq!(
        code(verify_human(&site, &store, &none, &door(), None).await),
        refused()
    );
    for secret in [ALWAYS_FAILS, ALREADY_SPENT] {
        let token = stub.solve("join_drop-1", HOST, &at(-10).to_string());
        let test_check = check(&stub.url(), secret);
        let result = verify_human(&test_check, &store, &sent(&token), &door(), None).await;
        assert_eq!(code(result), refused(), "{secret}");
    }
    // The start door is its own action.
    let start = stub.solve("start_drop-1", HOST, &Timestamp::now().to_string());
    let start_door = Door::Start(pack("drop-1"));
    let result = verify_human(&site, &store, &sent(&start), &start_door, None).await;
    assert_eq!(code(result).0, 200);
}

#[tokio::test]
async fn siteverify_unreachable_or_failing_inside_is_a_503_and_the_token_stays_usable() {
    let stub = TurnstileStub::start().await;
    let store = MemoryStore::default();
    let token = stub.solve("join_drop-1", HOST, &at(-10).to_string());
    stub.internal_errors(1);
    let site = check(&stub.url(), SITE_SECRET);
    let failing = verify_human(&site, &store, &sent(&token), &door(), None).await;
    assert_eq!(code(failing), (503, "service_unavailable".into()));
    let port = testkit::free_port();
    let nowhere = check(
        &format!("http://127.0.0.1:{port}/turnstile/v0/siteverify"),
        SITE_SECRET,
    );
    let unreachable = verify_human(&nowhere, &store, &sent(&token), &door(), None).await;
    assert_eq!(code(unreachable), (503, "service_unavailable".into()));
    // The fan retries with the same token: it passes.
    assert_eq!(
        code(verify_human(&site, &store, &sent(&token), &door(), None).await).0,
        200
    );
}
