//! The real `misc` binary (health, time, config) through the Runtime API emulator against
//! moto_server, and the app configuration's gate in the binaries of other routes: an operator's
//! configuration, written as `app-config` writes it, is what the functions answer and enforce.

use domain::app_config::AppConfig;
use domain::timestamp::Timestamp;
use store::app_config::PutAppConfig;
use testkit::events::ApiEvent;
use testkit::purchases::PurchaseEnv;
use testkit::tokens::token;

const MISC: &str = env!("CARGO_BIN_EXE_misc");
const LIST_PACKS: &str = env!("CARGO_BIN_EXE_list-packs");
const WEB3_LINK: &str = env!("CARGO_BIN_EXE_web3-link");

/// A forced minimum on iOS, a flag, and writes in maintenance.
const MAINTENANCE: &str = r#"{
    "minimumVersions": {"ios": {"version": "2.3", "update": "forced",
        "storeUrl": "https://apps.apple.com/app/id000000000"}},
    "flags": {"lockerRooms": true},
    "maintenance": {"active": true}
}"#;

async fn configured(env: &PurchaseEnv, json: &str) {
    let config = AppConfig::parse(json).unwrap();
    env.store
        .put_app_config(&config, 0, Timestamp::now())
        .await
        .unwrap();
}

#[tokio::test]
async fn health_and_time_answer_without_the_store_and_config_with_its_tag() {
    let env = PurchaseEnv::new().await;
    configured(&env, MAINTENANCE).await;
    let function = env.spawn(MISC, &[]).await;

    let health = function.call(&ApiEvent::get("/api/health")).await;
    assert_eq!(health.status, 200, "{health:?}");
    assert_eq!(
        health.header("content-type"),
        Some("application/health+json")
    );
    assert_eq!(health.header("cache-control"), Some("no-store"));
    assert_eq!(
        health.body["status"], "warn",
        "maintenance is on: {health:?}"
    );
    assert_eq!(health.body["version"], "1");

    let before = Timestamp::now().unix_millis();
    let time = function.call(&ApiEvent::get("/api/time")).await;
    assert_eq!(time.header("cache-control"), Some("no-store"));
    let now = time.body["now"].as_str().unwrap();
    assert_eq!(now.len(), "2026-11-29T18:30:00.250Z".len(), "{now}");
    let unix_ms = time.body["unixMs"].as_i64().unwrap();
    assert!(unix_ms >= before, "{unix_ms} < {before}");
    assert_eq!(Timestamp::parse(now).unwrap().unix_millis(), unix_ms);

    let config = function.call(&ApiEvent::get("/api/config")).await;
    assert_eq!(config.status, 200, "{config:?}");
    assert_eq!(
        config.header("cache-control"),
        Some("public, max-age=5, stale-while-revalidate=25")
    );
    assert_eq!(
        config.body,
        serde_json::json!({
            "revision": 1,
            "minimumVersions": {"ios": {"version": "2.3.0", "update": "forced",
                "storeUrl": "https://apps.apple.com/app/id000000000"}},
            "flags": {"lockerRooms": true},
            "maintenance": {"active": true, "window": null},
        })
    );
    let tag = config.header("etag").unwrap().to_owned();
    let again = function
        .call(&ApiEvent::get("/api/config").header("if-none-match", &tag))
        .await;
    assert_eq!(again.status, 304, "{again:?}");
    assert_eq!(again.header("etag"), Some(tag.as_str()));
}

#[tokio::test]
async fn an_old_app_is_told_to_update_and_writes_wait_out_maintenance() {
    let env = PurchaseEnv::new().await;
    configured(&env, MAINTENANCE).await;
    let reads = env
        .spawn(LIST_PACKS, &[("CURSOR_SECRET", testkit::CURSOR_SECRET)])
        .await;
    let writes = env.spawn(WEB3_LINK, &[]).await;

    let served = reads.call(&ApiEvent::get("/api/packs")).await;
    assert_eq!(
        served.status, 200,
        "reads are served in maintenance: {served:?}"
    );
    let current = reads
        .call(&ApiEvent::get("/api/packs").header("x-app-version", "ios/2.3.0"))
        .await;
    assert_eq!(current.status, 200, "{current:?}");
    let old = reads
        .call(&ApiEvent::get("/api/packs").header("x-app-version", "ios/2.2.9"))
        .await;
    assert_eq!(
        (old.status, old.code()),
        (426, Some("app_version_unsupported"))
    );
    assert_eq!(
        old.header("link"),
        Some(r#"<https://apps.apple.com/app/id000000000>; rel="update""#)
    );
    let garbled = reads
        .call(&ApiEvent::get("/api/packs").header("x-app-version", "ios 2"))
        .await;
    assert_eq!(
        garbled.status, 200,
        "a header not of the form is as none: {garbled:?}"
    );

    let link = ApiEvent::post("/api/web3-link")
        .bearer(&token("fan-in-maintenance", None))
        .json(r#"{"payload":{"wallet":"0x1"}}"#);
    let refused = writes.call(&link).await;
    assert_eq!((refused.status, refused.code()), (503, Some("maintenance")));
    assert_eq!(refused.header("retry-after"), Some("60"));
    let none = store::links::GetLink::get_link(
        &env.store,
        &testkit::ids::user("fan-in-maintenance"),
        "web3",
    )
    .await
    .unwrap();
    assert_eq!(none, None, "a refused write wrote nothing");
}
