//! The Misc group and the app configuration on both stores: the configuration is written only
//! from the revision its writer read (two operators never overwrite each other), an instance
//! reads it at most once per few seconds however many requests ask, and `GET /api/config`
//! answers what was written, with its tag.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use api::handlers::misc::MiscState;
use api::http::app_config::ConfigCache;
use api::http::layers::api_layers;
use api::http::routes::misc_routes;
use domain::app_config::AppConfig;
use domain::timestamp::Timestamp;
use store::StoreError;
use store::app_config::{AppConfigStore, GetAppConfig, PutAppConfigError, StoredAppConfig};
use testkit::events::ApiEvent;
use tower::ServiceExt;

testkit::store_contract!(
    arc:
    the_configuration_changes_only_from_the_revision_its_writer_read,
    of_two_operators_writing_at_once_exactly_one_wins,
    get_config_answers_what_was_written_with_its_tag,
);

fn flags(json: &str) -> AppConfig {
    AppConfig::parse(&format!(r#"{{"flags": {json}}}"#)).unwrap()
}

async fn the_configuration_changes_only_from_the_revision_its_writer_read<S: AppConfigStore>(
    store: Arc<S>,
) {
    assert_eq!(store.app_config().await.unwrap(), None, "never set");
    let now = Timestamp::now();
    let first = store
        .put_app_config(&flags(r#"{"a": true}"#), 0, now)
        .await
        .unwrap();
    assert_eq!(first.revision, 1);
    let stale = store.put_app_config(&flags(r#"{"b": true}"#), 0, now).await;
    assert_eq!(stale, Err(PutAppConfigError::Conflict { current: 1 }));
    let ahead = store.put_app_config(&flags(r#"{"b": true}"#), 2, now).await;
    assert_eq!(ahead, Err(PutAppConfigError::Conflict { current: 1 }));
    let second = store
        .put_app_config(&flags(r#"{"c": false}"#), 1, now)
        .await
        .unwrap();
    assert_eq!(second.revision, 2);
    assert_eq!(store.app_config().await.unwrap(), Some(second));
}

async fn of_two_operators_writing_at_once_exactly_one_wins<S: AppConfigStore + 'static>(
    store: Arc<S>,
) {
    let now = Timestamp::now();
    store.put_app_config(&flags("{}"), 0, now).await.unwrap();
    let writers = ["x", "y", "z"].map(|name| {
        let store = Arc::clone(&store);
        tokio::spawn(async move {
            let config = flags(&format!(r#"{{"{name}": true}}"#));
            store.put_app_config(&config, 1, now).await
        })
    });
    let mut won = Vec::new();
    for writer in writers {
        if let Ok(stored) = writer.await.unwrap() {
            won.push(stored);
        }
    }
    assert_eq!(won.len(), 1, "{won:?}");
    assert_eq!(store.app_config().await.unwrap(), won.pop());
}

async fn get_config_answers_what_was_written_with_its_tag<S>(store: Arc<S>)
where
    S: AppConfigStore + Clone + 'static,
{
    let config = AppConfig::parse(
        r#"{"minimumVersions": {"android": {"version": "3", "update": "flexible",
            "storeUrl": "https://play.google.com/store/apps/details?id=app"}},
            "maintenance": {"window": {"startsAt": "2099-01-01T00:00:00Z",
                "endsAt": "2099-01-01T01:00:00Z"}}}"#,
    )
    .unwrap();
    store
        .put_app_config(&config, 0, Timestamp::now())
        .await
        .unwrap();
    let cache = Arc::new(ConfigCache::new(&*store));
    let app = api_layers(
        misc_routes().function_app(Arc::new(MiscState::default())),
        None,
    )
    .with_config(cache);
    let answer = app
        .clone()
        .oneshot(ApiEvent::get("/api/config").request())
        .await
        .unwrap();
    let tag = answer.headers()["etag"].to_str().unwrap().to_owned();
    let body = axum::body::to_bytes(answer.into_body(), usize::MAX)
        .await
        .unwrap();
    assert_eq!(
        serde_json::from_slice::<serde_json::Value>(&body).unwrap(),
        serde_json::json!({
            "revision": 1,
            "minimumVersions": {"android": {"version": "3.0.0", "update": "flexible",
                "storeUrl": "https://play.google.com/store/apps/details?id=app"}},
            "flags": {},
            "maintenance": {"active": false, "window": {
                "startsAt": "2099-01-01T00:00:00Z", "endsAt": "2099-01-01T01:00:00Z"}},
        })
    );
    let again = app
        .oneshot(
            ApiEvent::get("/api/config")
                .header("if-none-match", &tag)
                .request(),
        )
        .await
        .unwrap();
    assert_eq!(again.status(), 304);
}

/// A store whose configuration reads are counted, and fail while `down`.
#[derive(Clone, Default)]
struct Counted {
    reads: Arc<AtomicUsize>,
    down: Arc<std::sync::atomic::AtomicBool>,
}

impl GetAppConfig for Counted {
    async fn app_config(&self) -> Result<Option<StoredAppConfig>, StoreError> {
        self.reads.fetch_add(1, Ordering::SeqCst);
        tokio::task::yield_now().await;
        if self.down.load(Ordering::SeqCst) {
            return Err(StoreError::unavailable("down"));
        }
        Ok(Some(StoredAppConfig {
            config: flags(r#"{"on": true}"#),
            revision: 4,
            updated_at: Timestamp::now(),
        }))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_instance_reads_the_configuration_once_however_many_requests_ask() {
    let store = Counted::default();
    let cache = Arc::new(ConfigCache::with_max_age(&store, Duration::from_secs(3600)));
    let askers: Vec<_> = (0..64)
        .map(|_| {
            let cache = Arc::clone(&cache);
            tokio::spawn(async move { cache.current().await.revision })
        })
        .collect();
    for asker in askers {
        assert_eq!(asker.await.unwrap(), 4);
    }
    assert_eq!(store.reads.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_copy_too_old_is_read_again_and_kept_while_the_store_is_down() {
    let store = Counted::default();
    let cache = ConfigCache::with_max_age(&store, Duration::ZERO);
    assert_eq!(cache.current().await.revision, 4);
    assert_eq!(cache.current().await.revision, 4);
    assert_eq!(
        store.reads.load(Ordering::SeqCst),
        2,
        "read again once too old"
    );
    store.down.store(true, Ordering::SeqCst);
    assert_eq!(cache.current().await.revision, 4, "the copy is kept");
    assert!(cache.current().await.config.flags["on"]);
}
