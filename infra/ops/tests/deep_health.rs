//! The `deep-health` binary against moto_server and stand-ins for the dependencies (all on
//! loopback): `pass` when everything answers, `warn` when only a non-critical dependency does
//! not, `fail` (exit 1) when the table or the identity provider's keys cannot be had.

use serde_json::Value;
use testkit::http_stub::{HttpStub, Reply};

const BINARY: &str = env!("CARGO_BIN_EXE_deep-health");

async fn deep_health(table: &str, vars: &[(&str, &str)]) -> (Option<i32>, Value) {
    let output = crate::tool_with(
        BINARY,
        testkit::moto::shared_endpoint(),
        Some(table),
        &[],
        vars,
    )
    .await;
    let report = serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!("{e}: {}", String::from_utf8_lossy(&output.stderr));
    });
    (output.status.code(), report)
}

fn status_of(report: &Value, check: &str) -> String {
    report["checks"][check][0]["status"]
        .as_str()
        .unwrap_or("absent")
        .to_owned()
}

#[tokio::test]
async fn critical_parts_fail_the_check_and_the_others_warn() {
    let store = testkit::moto::shared_table().await;
    let keys = HttpStub::start(Reply::Json(testkit::tokens::jwks_json())).await;
    let relay = HttpStub::start(Reply::Json("{}".into())).await;
    let stripe = HttpStub::start(Reply::Status(401)).await;
    let closed = format!("http://127.0.0.1:{}", testkit::free_port());
    let jwks = keys.url("/.well-known/jwks.json");
    let relay_url = relay.url("");
    let stripe_url = stripe.url("");
    let every = [
        ("AUTH_JWKS_URL", jwks.as_str()),
        ("DRAND_URLS", relay_url.as_str()),
        ("STRIPE_SECRET_KEY", "sk_test_x"),
        ("STRIPE_API_BASE", stripe_url.as_str()),
    ];

    let (code, report) = deep_health(store.table(), &every).await;
    assert_eq!(
        (code, report["status"].as_str()),
        (Some(0), Some("pass")),
        "{report}"
    );
    for check in [
        "dynamodb:table",
        "identityProvider:keys",
        "drand:reachable",
        "stripe:reachable",
    ] {
        assert_eq!(status_of(&report, check), "pass", "{check}: {report}");
    }

    let mut stripe_down = every;
    stripe_down[3].1 = &closed;
    let (code, report) = deep_health(store.table(), &stripe_down).await;
    assert_eq!(
        (code, report["status"].as_str()),
        (Some(0), Some("warn")),
        "{report}"
    );
    assert_eq!(status_of(&report, "stripe:reachable"), "warn");

    let no_keys = HttpStub::start(Reply::Status(500)).await;
    let broken = no_keys.url("/.well-known/jwks.json");
    let mut keys_down = every;
    keys_down[0].1 = &broken;
    let (code, report) = deep_health(store.table(), &keys_down).await;
    assert_eq!(
        (code, report["status"].as_str()),
        (Some(1), Some("fail")),
        "{report}"
    );
    assert_eq!(status_of(&report, "identityProvider:keys"), "fail");

    let (code, report) = deep_health("no-such-table", &every).await;
    assert_eq!(
        (code, report["status"].as_str()),
        (Some(1), Some("fail")),
        "{report}"
    );
    assert_eq!(status_of(&report, "dynamodb:table"), "fail");
}
