//! The real `local-api` binary (embedded store, local identity provider, the production token
//! verifier fetching the local JWKS over loopback) answers as `openapi.yaml` says: every status
//! it returns is documented for the operation, and every body matches the documented schema.

use std::process::Stdio;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

const BINARY: &str = env!("CARGO_BIN_EXE_local-api");

struct LocalApi {
    _child: Child,
    base: String,
    state_dir: std::path::PathBuf,
    openapi: Value,
}

impl LocalApi {
    async fn start() -> Self {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let state_dir = std::env::temp_dir().join(format!(
            "fan-api-contract-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let mut child = Command::new(BINARY)
            .args(["--port", "0"])
            .env_remove("TABLE_NAME")
            .env_remove("AUTH_ISSUER")
            .env("FAN_API_STATE_DIR", &state_dir)
            .env("RUST_LOG", "warn")
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("start local-api");
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let first = tokio::time::timeout(Duration::from_secs(30), lines.next_line())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        let base = first.rsplit(' ').next().unwrap().to_owned();
        assert!(base.starts_with("http://127.0.0.1:"), "{first}");
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        let openapi: Value = reqwest::get(format!("{base}/openapi.json"))
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        Self {
            _child: child,
            base,
            state_dir,
            openapi,
        }
    }

    async fn token(&self, sub: &str, email: Option<&str>) -> String {
        let mut command = Command::new(BINARY);
        command
            .args(["token", "--sub", sub])
            .env("FAN_API_STATE_DIR", &self.state_dir);
        if let Some(email) = email {
            command.args(["--email", email]);
        }
        let output = command.output().await.unwrap();
        assert!(output.status.success());
        String::from_utf8(output.stdout).unwrap().trim().to_owned()
    }

    /// Sends the request, checks the answer against the document, returns status and body.
    async fn call(
        &self,
        request: reqwest::RequestBuilder,
        method: &str,
        path: &str,
    ) -> (u16, Value) {
        let response = request.send().await.unwrap();
        let status = response.status().as_u16();
        assert_eq!(
            response.headers()["content-type"],
            "application/json",
            "{method} {path} {status}"
        );
        let body: Value = response.json().await.unwrap();
        let schema = self.response_schema(method, path, status);
        let validator = jsonschema::validator_for(&schema).expect("schema compiles");
        let errors: Vec<String> = validator
            .iter_errors(&body)
            .map(|e| format!("{e} at {}", e.instance_path))
            .collect();
        assert!(
            errors.is_empty(),
            "{method} {path} {status}: {errors:?}\n{body}"
        );
        (status, body)
    }

    /// The documented JSON schema of `status` for the operation, as a root that resolves the
    /// document's `$ref`s.
    fn response_schema(&self, method: &str, path: &str, status: u16) -> Value {
        let mut response = &self.openapi["paths"][path][method]["responses"][status.to_string()];
        assert!(
            !response.is_null(),
            "{method} {path} answered {status}, which the document does not list"
        );
        if let Some(reference) = response["$ref"].as_str() {
            let name = reference.rsplit('/').next().unwrap();
            response = &self.openapi["components"]["responses"][name];
        }
        let mut root = json!({ "components": self.openapi["components"].clone() });
        root["$schema"] = json!("https://json-schema.org/draft/2020-12/schema");
        root["allOf"] = json!([response["content"]["application/json"]["schema"].clone()]);
        root
    }
}

impl Drop for LocalApi {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.state_dir);
    }
}

#[tokio::test]
async fn both_operations_answer_as_documented() {
    let api = LocalApi::start().await;
    let client = reqwest::Client::new();
    let packs = format!("{}/api/packs", api.base);
    let link = format!("{}/api/web3-link", api.base);

    // The checks below can fail: the document's schemas refuse a malformed list.
    let list_schema = api.response_schema("get", "/api/packs", 200);
    assert!(!jsonschema::is_valid(
        &list_schema,
        &json!({"packs": [{"id": "x"}], "nextCursor": null})
    ));
    assert!(jsonschema::is_valid(
        &list_schema,
        &json!({"packs": [], "nextCursor": null})
    ));

    let (status, body) = api.call(client.get(&packs), "get", "/api/packs").await;
    assert_eq!(status, 200);
    assert!(
        body["packs"].as_array().unwrap().len() >= 5,
        "the shipped seed is listed"
    );
    let (status, page) = api
        .call(
            client.get(&packs).query(&[("limit", "2")]),
            "get",
            "/api/packs",
        )
        .await;
    assert_eq!((status, page["packs"].as_array().unwrap().len()), (200, 2));
    let cursor = page["nextCursor"].as_str().unwrap();
    let (status, _) = api
        .call(
            client
                .get(&packs)
                .query(&[("limit", "2"), ("cursor", cursor)]),
            "get",
            "/api/packs",
        )
        .await;
    assert_eq!(status, 200);
    for query in [("limit", "0"), ("limit", "x"), ("cursor", "forged")] {
        assert_eq!(
            api.call(client.get(&packs).query(&[query]), "get", "/api/packs")
                .await
                .0,
            400
        );
    }

    let token = api.token("contract-user", Some("fan@example.com")).await;
    let (status, body) = api
        .call(
            client
                .post(&link)
                .bearer_auth(&token)
                .json(&json!({"payload": {"address": "0x1"}})),
            "post",
            "/api/web3-link",
        )
        .await;
    assert_eq!(
        (status, &body["data"]["userId"]),
        (200, &json!("contract-user"))
    );
    let no_email = api.token("no-email", None).await;
    let (status, body) = api
        .call(
            client
                .post(&link)
                .bearer_auth(&no_email)
                .json(&json!({"payload": 1})),
            "post",
            "/api/web3-link",
        )
        .await;
    assert_eq!((status, &body["data"]["email"]), (200, &Value::Null));

    let cases = [
        (client.post(&link).json(&json!({"payload": 1})), 401),
        (
            client
                .post(&link)
                .bearer_auth("x.y.z")
                .json(&json!({"payload": 1})),
            401,
        ),
        (
            client
                .post(&link)
                .bearer_auth(&token)
                .json(&json!({"payload": 0})),
            400,
        ),
        (
            client
                .post(&link)
                .bearer_auth(&token)
                .header("content-type", "application/json")
                .body("{"),
            400,
        ),
        (
            client
                .post(&link)
                .bearer_auth(&token)
                .header("content-type", "text/plain")
                .body("{}"),
            415,
        ),
        (
            client
                .post(&link)
                .bearer_auth(&token)
                .header("content-type", "application/json")
                .body(vec![b' '; 70_000]),
            413,
        ),
    ];
    for (request, expected) in cases {
        assert_eq!(
            api.call(request, "post", "/api/web3-link").await.0,
            expected
        );
    }
}

#[tokio::test]
async fn unknown_routes_and_methods_get_json_404_and_405() {
    let api = LocalApi::start().await;
    let client = reqwest::Client::new();
    let response = client
        .get(format!("{}/api/nothing", api.base))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 404);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["error"]["code"], "not_found");
    for (method, path, allow) in [
        ("DELETE", "/api/packs", "GET"),
        ("GET", "/api/web3-link", "POST"),
    ] {
        let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
        let response = client
            .request(method, format!("{}{path}", api.base))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 405, "{path}");
        assert_eq!(response.headers()["allow"], allow);
    }
    let jwks: Value = client
        .get(format!("{}/.well-known/jwks.json", api.base))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(jwks["keys"][0]["alg"], "ES256");
}
