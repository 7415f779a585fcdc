//! `moto_server` on a free loopback port, killed when dropped.

use std::process::Stdio;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use aws_config::{BehaviorVersion, Region};
use aws_sdk_dynamodb::config::Credentials;
use shared::store::DynamoStore;
use tokio::process::{Child, Command};

pub struct MotoServer {
    child: Child,
    pub endpoint: String,
}

/// The `moto_server` command: `$MOTO_SERVER`, else the project's `.venv`, else `PATH`.
fn moto_command() -> String {
    if let Ok(path) = std::env::var("MOTO_SERVER") {
        return path;
    }
    let venv = concat!(env!("CARGO_MANIFEST_DIR"), "/../.venv/bin/moto_server");
    if std::path::Path::new(venv).exists() {
        venv.into()
    } else {
        "moto_server".into()
    }
}

impl MotoServer {
    /// Starts moto on a free port and waits until it answers (a few seconds at most).
    pub async fn start() -> Self {
        let port = crate::free_port();
        let command = moto_command();
        let mut child = Command::new(&command);
        child
            .args(["-H", "127.0.0.1", "-p", &port.to_string()])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true);
        // Killed with the thread that started it even when this process dies by a signal (an
        // interrupted test or benchmark), when `kill_on_drop` never runs.
        // SAFETY: prctl is async-signal-safe and touches nothing of the parent's memory.
        unsafe {
            child.pre_exec(|| {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) == -1 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = child
            .spawn()
            .unwrap_or_else(|e| {
                panic!("cannot start {command} ({e}): run the README's test command, or pip install 'moto[server]'")
            });
        let endpoint = format!("http://127.0.0.1:{port}");
        let started = Instant::now();
        while tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_err()
        {
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "moto_server did not start on port {port}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        Self { child, endpoint }
    }

    /// A DynamoDB client for this server, with the production timeouts and retries.
    pub async fn client(&self) -> aws_sdk_dynamodb::Client {
        client_for(&self.endpoint).await
    }

    /// A new table with a unique name, made like `seed-packs --create-table` makes it.
    pub async fn new_table(&self) -> DynamoStore {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let name = format!(
            "fan-api-test-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let client = self.client().await;
        shared::store::schema::create_table(&client, &name)
            .await
            .expect("create table");
        DynamoStore::new(client, name)
    }

    pub fn pid(&self) -> Option<u32> {
        self.child.id()
    }
}

/// A DynamoDB client against `endpoint` with dummy credentials, built like production's.
pub async fn client_for(endpoint: &str) -> aws_sdk_dynamodb::Client {
    let sdk = shared::aws::sdk_config_with(
        aws_config::defaults(BehaviorVersion::latest())
            .region(Region::new("us-east-1"))
            .credentials_provider(Credentials::new("test", "test", None, None, "testkit"))
            .endpoint_url(endpoint),
    )
    .await;
    aws_sdk_dynamodb::Client::new(&sdk)
}
