//! The Misc group on `scripts/local` (the in-memory store): health, time and config answer as
//! documented, and the app's configuration from `--app-config FILE` is followed as the file
//! changes: an old app is told to update, and maintenance refuses writes and serves reads.

use std::time::Duration;

use crate::common::LocalApi;

const FORCED: &str = r#"{"minimumVersions": {"ios": {"version": "2.0", "update": "forced",
    "storeUrl": "https://apps.apple.com/app/id000000000"}}, "flags": {"quests": true}}"#;

/// `GET path` with `headers`: status, the response's headers and its JSON body.
async fn get(
    api: &LocalApi,
    path: &str,
    headers: &[(&str, &str)],
) -> (u16, reqwest::header::HeaderMap, serde_json::Value) {
    let mut request = reqwest::Client::new().get(format!("{}{path}", api.base));
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = request.send().await.unwrap();
    let (status, headers) = (response.status().as_u16(), response.headers().clone());
    let body = response.json().await.unwrap_or(serde_json::Value::Null);
    (status, headers, body)
}

#[tokio::test]
async fn the_app_configuration_follows_its_file_and_gates_every_route() {
    let dir = std::env::temp_dir().join(format!("local-app-config-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("app-config.json");
    std::fs::write(&file, FORCED).unwrap();
    let api = LocalApi::start_args(&["--app-config", file.to_str().unwrap()], &[]).await;

    let (status, headers, health) = get(&api, "/api/health", &[]).await;
    assert_eq!(
        (status, &health["status"]),
        (200, &serde_json::json!("pass"))
    );
    assert_eq!(headers["content-type"], "application/health+json");
    let (status, _, time) = get(&api, "/api/time", &[]).await;
    assert_eq!(status, 200);
    assert!(time["now"].as_str().unwrap().ends_with('Z'), "{time}");
    let (status, headers, config) = get(&api, "/api/config", &[]).await;
    assert_eq!(
        (status, config["revision"].as_u64()),
        (200, Some(1)),
        "{config}"
    );
    assert_eq!(config["minimumVersions"]["ios"]["version"], "2.0.0");
    let tag = headers["etag"].to_str().unwrap().to_owned();
    let (status, _, _) = get(&api, "/api/config", &[("if-none-match", &tag)]).await;
    assert_eq!(status, 304);

    let (status, _, body) = get(&api, "/api/packs", &[("x-app-version", "ios/1.9")]).await;
    assert_eq!(
        (status, &body["error"]["code"]),
        (426, &serde_json::json!("app_version_unsupported"))
    );
    let (status, _, _) = get(&api, "/api/packs", &[("x-app-version", "android/1.0")]).await;
    assert_eq!(status, 200);

    std::fs::write(
        &file,
        FORCED.replace(r#""flags""#, r#""maintenance": {"active": true}, "flags""#),
    )
    .unwrap();
    let token = api.token("fan-local", None).await;
    let link = || {
        reqwest::Client::new()
            .post(format!("{}/api/web3-link", api.base))
            .bearer_auth(&token)
            .json(&serde_json::json!({"payload": {"wallet": "0x1"}}))
            .send()
    };
    // The file is looked at every second and the copy read again every 5 s: waits for both.
    let mut refused = None;
    for _ in 0..60 {
        let answer = link().await.unwrap();
        if answer.status() == 503 {
            refused = Some(answer);
            break;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    let refused = refused.expect("maintenance reached the write within 30 s");
    assert_eq!(refused.headers()["retry-after"], "60");
    let body: serde_json::Value = refused.json().await.unwrap();
    assert_eq!(body["error"]["code"], "maintenance");
    let (status, _, health) = get(&api, "/api/health", &[]).await;
    assert_eq!(
        (status, &health["status"]),
        (200, &serde_json::json!("warn"))
    );
    let (status, _, _) = get(&api, "/api/packs", &[]).await;
    assert_eq!(status, 200, "reads are served in maintenance");
    std::fs::remove_dir_all(&dir).unwrap();
}
