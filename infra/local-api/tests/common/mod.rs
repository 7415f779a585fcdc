//! Runs the real `local-api` binary on a free port, with its own state directory.

use std::process::Stdio;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, Command};

pub const BINARY: &str = env!("CARGO_BIN_EXE_local-api");

pub struct LocalApi {
    /// Held for its drop, which kills the server.
    _child: Child,
    pub base: String,
    pub state_dir: std::path::PathBuf,
    pub openapi: Value,
    /// What the server printed on stdout (its banner), as it comes.
    stdout: Arc<Mutex<String>>,
}

impl LocalApi {
    pub async fn start() -> Self {
        Self::start_with(&[]).await
    }

    /// Started with these environment variables as well.
    pub async fn start_with(vars: &[(&str, &str)]) -> Self {
        Self::start_args(&[], vars).await
    }

    /// Started with these arguments and environment variables as well.
    pub async fn start_args(args: &[&str], vars: &[(&str, &str)]) -> Self {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let state_dir = std::env::temp_dir().join(format!(
            "fan-api-contract-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&state_dir).unwrap();
        let stderr = std::fs::File::create(state_dir.join("stderr.log")).unwrap();
        let mut child = Command::new(BINARY)
            .args(["--port", "0"])
            .args(args)
            .env_remove("TABLE_NAME")
            .env_remove("AUTH_ISSUER")
            .env("FAN_API_STATE_DIR", &state_dir)
            .env("RUST_LOG", "debug")
            .envs(vars.iter().copied())
            .stdout(Stdio::piped())
            .stderr(Stdio::from(stderr))
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
        let stdout = Arc::new(Mutex::new(format!("{first}\n")));
        let printed = stdout.clone();
        tokio::spawn(async move {
            while let Ok(Some(line)) = lines.next_line().await {
                let mut printed = printed.lock().unwrap();
                printed.push_str(&line);
                printed.push('\n');
            }
        });
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
            stdout,
        }
    }

    /// The line of the banner that contains `needle` (waits for it a little).
    pub async fn printed_line(&self, needle: &str) -> String {
        let printed = self.printed_through(needle).await;
        let line = printed.lines().find(|line| line.contains(needle));
        line.unwrap_or_default().to_owned()
    }

    /// What the server printed, once a line that contains `needle` is among it (waits for it a
    /// little).
    pub async fn printed_through(&self, needle: &str) -> String {
        for _ in 0..100 {
            let stdout = self.stdout.lock().unwrap().clone();
            if stdout.lines().any(|line| line.contains(needle)) {
                return stdout;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!(
            "no line with {needle:?} in:\n{}",
            self.stdout.lock().unwrap()
        );
    }

    /// Connects and sends `bytes`; the open stream.
    pub async fn send(&self, bytes: &[u8]) -> tokio::net::TcpStream {
        let address = self.base.trim_start_matches("http://");
        let mut stream = tokio::net::TcpStream::connect(address).await.unwrap();
        stream.write_all(bytes).await.unwrap();
        stream
    }

    /// Sends raw bytes, returns whatever comes back (the connection may just be closed).
    pub async fn raw(&self, bytes: &[u8]) -> String {
        let mut stream = self.send(bytes).await;
        let mut answer = Vec::new();
        let _ = tokio::time::timeout(Duration::from_secs(5), stream.read_to_end(&mut answer)).await;
        String::from_utf8_lossy(&answer).into_owned()
    }

    /// What the server logged so far.
    pub fn logs(&self) -> String {
        std::fs::read_to_string(self.state_dir.join("stderr.log")).unwrap_or_default()
    }

    pub async fn token(&self, sub: &str, email: Option<&str>) -> String {
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
    pub async fn call(
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

    /// `GET path` with `token`, checked as [`LocalApi::call`] checks it (`path` has no query:
    /// it is also the document's path).
    pub async fn get_as(&self, token: &str, path: &str) -> (u16, Value) {
        let request = reqwest::Client::new()
            .get(format!("{}{path}", self.base))
            .bearer_auth(token);
        self.call(request, "get", path).await
    }

    /// The documented JSON schema of `status` for the operation, as a root that resolves the
    /// document's `$ref`s.
    pub fn response_schema(&self, method: &str, path: &str, status: u16) -> Value {
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

/// What the server sent on `stream` before closing it, if it closed it within `within`.
pub async fn closed_within(stream: &mut tokio::net::TcpStream, within: Duration) -> Option<String> {
    let mut answer = Vec::new();
    tokio::time::timeout(within, stream.read_to_end(&mut answer))
        .await
        .ok()
        .map(|_| String::from_utf8_lossy(&answer).into_owned())
}

/// The answer on `stream` while its request's body is still unsent: one small write, which one
/// read on loopback has whole. Panics when none comes, `what` saying which request.
pub async fn answer_before_the_body(stream: &mut tokio::net::TcpStream, what: &str) -> String {
    let mut answer = vec![0; 4096];
    let read = tokio::time::timeout(Duration::from_secs(2), stream.read(&mut answer))
        .await
        .unwrap_or_else(|_| panic!("{what}: not answered before the body was sent"))
        .unwrap();
    String::from_utf8_lossy(&answer[..read]).into_owned()
}
