//! Issue 45: where the edge is on (`EDGE_ORIGIN_SECRETS`), a function serves only requests that
//! carry a secret CloudFront adds, and reads the fan's address from the header CloudFront writes:
//! the limits count it and the human check sends it to siteverify as `remoteip`. Through the
//! binaries, on moto.

use domain::timestamp::Timestamp;
use store::packs::seed;
use testkit::events::ApiEvent;
use testkit::packs::{at, queued};
use testkit::purchases::{PurchaseEnv, start_event};
use testkit::tokens::token;
use testkit::turnstile::{FUNCTION_HOSTNAME, SITE_SECRET, TurnstileStub, function_vars};

const GET_PACK: &str = env!("CARGO_BIN_EXE_get-pack");
const START_PURCHASE: &str = env!("CARGO_BIN_EXE_start-purchase");
const QUEUE: &str = env!("CARGO_BIN_EXE_queue");
const EVENTS: &str = env!("CARGO_BIN_EXE_events");

const SENT: &str = "the-value-cloudfront-sends-0001";
const NEXT: &str = "the-value-it-sends-after-rotation";
/// What API Gateway sees as the source behind the edge: one of CloudFront's addresses.
const CLOUDFRONT: &str = "130.176.0.10";

fn secrets() -> String {
    format!("{SENT},{NEXT}")
}

/// `event` as CloudFront forwards it: its secret and the viewer's address, from CloudFront's.
fn through_edge(event: ApiEvent, secret: &str, viewer: &str) -> ApiEvent {
    event
        .source_ip(CLOUDFRONT)
        .header("x-origin-verify", secret)
        .header("cloudfront-viewer-address", viewer)
}

#[tokio::test]
async fn a_request_around_the_edge_is_refused_and_either_secret_of_a_rotation_passes() {
    let (env, _proxy) = PurchaseEnv::behind_proxy().await;
    let get_pack = env
        .spawn(GET_PACK, &[("EDGE_ORIGIN_SECRETS", &secrets())])
        .await;
    let ask = || ApiEvent::get("/api/packs/p");
    for (case, event) in [
        ("no secret", ask().source_ip("198.51.100.30")),
        (
            "a wrong secret",
            through_edge(
                ask(),
                "the-value-nobody-was-ever-given",
                "198.51.100.30:443",
            ),
        ),
        (
            "a viewer address but no secret",
            ask().header("cloudfront-viewer-address", "198.51.100.30:443"),
        ),
    ] {
        let answer = get_pack.call(&event).await;
        assert_eq!(
            (answer.status, answer.code(), answer.header("cache-control")),
            (403, Some("edge_required"), Some("no-store")),
            "{case}: {answer:?}"
        );
    }
    for secret in [SENT, NEXT] {
        let answer = get_pack
            .call(&through_edge(ask(), secret, "198.51.100.30:443"))
            .await;
        assert_eq!(answer.status, 200, "{answer:?}");
    }
}

/// An operator's request, signed with SigV4 for API Gateway's own host (so never through the
/// edge), is admitted on the authorizer's word; a fan's request to the same function is not.
#[tokio::test]
async fn an_operator_signed_by_iam_reaches_the_function_around_the_edge() {
    let env = PurchaseEnv::new().await;
    let events = env
        .spawn(EVENTS, &[("EDGE_ORIGIN_SECRETS", &secrets())])
        .await;
    let operator = ApiEvent::get("/api/events").iam("arn:aws:iam::123456789012:role/operator");
    assert_eq!(events.call(&operator).await.status, 200);
    let fan = ApiEvent::get("/api/me/events").bearer(&token("fan-1", None));
    assert_eq!(events.call(&fan).await.code(), Some("edge_required"));
}

/// Two fans behind CloudFront's one address are two addresses to the limits: each viewer's
/// own window refuses its second start, the other's first passes.
#[tokio::test]
async fn the_limits_count_the_viewers_address_not_cloudfronts() {
    let (env, _proxy) = PurchaseEnv::behind_proxy().await;
    let start = env
        .spawn(
            START_PURCHASE,
            &[
                ("EDGE_ORIGIN_SECRETS", &secrets()),
                ("RATE_LIMIT_START", "fan=10/600,addr=1/600"),
            ],
        )
        .await;
    let press = |fan: &str, key: &str, viewer: &str| {
        through_edge(
            start_event("p", Some(&token(fan, None)), Some(key), None),
            SENT,
            viewer,
        )
    };
    let first = start
        .call(&press("fan-a", "a-1", "198.51.100.31:50000"))
        .await;
    assert_eq!(first.status, 201, "{first:?}");
    let same_viewer = start
        .call(&press("fan-b", "b-1", "198.51.100.31:50001"))
        .await;
    assert_eq!(
        (same_viewer.status, same_viewer.code()),
        (429, Some("rate_limited")),
        "{same_viewer:?}"
    );
    let other_viewer = start
        .call(&press("fan-c", "c-1", "2001:db8::31:50002"))
        .await;
    assert_eq!(other_viewer.status, 201, "{other_viewer:?}");
}

#[tokio::test]
async fn siteverify_is_told_the_viewers_address() {
    let env = PurchaseEnv::new().await;
    seed(
        &env.store,
        &queued("edge-drop", -120, 3600),
        Timestamp::now(),
    )
    .await
    .unwrap();
    let stub = TurnstileStub::start().await;
    let url = stub.url();
    let secrets = secrets();
    let vars = function_vars(
        &url,
        SITE_SECRET,
        &[
            (
                "QUEUE_RECEIPT_KEY",
                "a receipt key of at least thirty-two characters",
            ),
            ("EDGE_ORIGIN_SECRETS", &secrets),
        ],
    );
    let queue = env.spawn(QUEUE, &vars).await;
    let action = domain::humancheck::Door::Join(testkit::ids::pack("edge-drop")).action();
    let solved = stub.solve(&action, FUNCTION_HOSTNAME, &at(-5).to_string());
    let join = ApiEvent::post("/api/packs/edge-drop/queue")
        .bearer(&token("fan-edge", None))
        .header("human-check", &solved);
    let joined = queue
        .call(&through_edge(join, SENT, "203.0.113.44:443"))
        .await;
    assert_eq!(joined.status, 201, "{joined:?}");
    let form = &stub.received()[0];
    assert!(
        form.contains(&("remoteip".into(), "203.0.113.44".into())),
        "{form:?}"
    );
}
