//! `moto_server` on a free loopback port: one per test binary ([`shared_table`], a new table
//! per test), or one of a test's own ([`MotoServer::start`], killed when dropped) where a test
//! stops or slows it.

use std::os::unix::process::CommandExt as _;
use std::process::Stdio;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use aws_config::{BehaviorVersion, Region};
use aws_sdk_dynamodb::config::Credentials;
use store::DynamoStore;

use crate::fault_proxy::FaultProxy;
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

/// How a moto_server rolls back a cancelled transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rollback {
    /// moto's own: a deep copy of the whole table before each action, so a transaction's time
    /// grows with the table (1.6 s for four actions on 4,500 items).
    WholeTable,
    /// `testkit/moto/key_rollback.py`: moto's own transaction code, snapshotting only the items
    /// the transaction names (17 ms on the same table), for drops of thousands of buyers; and a
    /// retried transaction's ClientRequestToken honoured as DynamoDB honours it. Every test
    /// binary's shared server runs it.
    NamedItems,
}

/// The Python that runs the project's moto: the `.venv`'s, else `python3`.
pub(crate) fn python_command() -> String {
    let venv = concat!(env!("CARGO_MANIFEST_DIR"), "/../.venv/bin/python");
    if std::path::Path::new(venv).exists() {
        venv.into()
    } else {
        "python3".into()
    }
}

/// `moto_server -H 127.0.0.1 -p PORT`, killed with the thread that starts it even when this
/// process dies by a signal (an interrupted test or benchmark), when no drop runs.
fn moto_process(port: u16, rollback: Rollback) -> std::process::Command {
    let mut command = match rollback {
        Rollback::WholeTable => std::process::Command::new(moto_command()),
        Rollback::NamedItems => {
            let mut command = std::process::Command::new(python_command());
            command.arg(concat!(env!("CARGO_MANIFEST_DIR"), "/moto/key_rollback.py"));
            command
        }
    };
    command
        .args(["-H", "127.0.0.1", "-p", &port.to_string()])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    // SAFETY: prctl is async-signal-safe and touches nothing of the parent's memory.
    unsafe {
        command.pre_exec(|| {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) == -1 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    command
}

fn spawn_failed(error: std::io::Error) -> ! {
    panic!(
        "cannot start {} ({error}): run the README's test command, or pip install 'moto[server]'",
        moto_command()
    )
}

/// Waits until something listens on `port` (a few seconds at most).
fn wait_for(port: u16) {
    let started = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "moto_server did not start on port {port}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The endpoint of this test binary's one moto_server, started on first use by a thread that
/// lives as long as the process (so the server dies with the process, not with a test).
pub fn shared_endpoint() -> &'static str {
    static ENDPOINT: OnceLock<String> = OnceLock::new();
    ENDPOINT.get_or_init(|| {
        let port = crate::free_port();
        let (started, spawned) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            // The faithful one: a retry after a lost answer meets DynamoDB's idempotency.
            let child = moto_process(port, Rollback::NamedItems).spawn();
            let ok = child.is_ok();
            started.send(child.map(|_| ())).expect("the starter waits");
            if ok {
                loop {
                    std::thread::park();
                }
            }
        });
        spawned
            .recv()
            .expect("the moto thread answers")
            .unwrap_or_else(|e| spawn_failed(e));
        wait_for(port);
        format!("http://127.0.0.1:{port}")
    })
}

/// A new table with a unique name on this test binary's moto_server.
pub async fn shared_table() -> DynamoStore {
    new_table_at(shared_endpoint()).await
}

/// A new table with a unique name at `endpoint`, made like `seed-packs --create-table` makes it.
async fn new_table_at(endpoint: &str) -> DynamoStore {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let name = format!(
        "fan-api-test-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    );
    let client = client_for(endpoint).await;
    store::schema::create_table(&client, &name)
        .await
        .expect("create table");
    DynamoStore::new(client, name)
}

impl MotoServer {
    /// Starts a moto of this test's own on a free port and waits until it answers.
    pub async fn start() -> Self {
        Self::start_with(Rollback::WholeTable).await
    }

    /// [`MotoServer::start`] with the given way of rolling transactions back.
    pub async fn start_with(rollback: Rollback) -> Self {
        let port = crate::free_port();
        let child = Command::from(moto_process(port, rollback))
            .kill_on_drop(true)
            .spawn()
            .unwrap_or_else(|e| spawn_failed(e));
        tokio::task::spawn_blocking(move || wait_for(port))
            .await
            .expect("waiting for moto");
        Self {
            child,
            endpoint: format!("http://127.0.0.1:{port}"),
        }
    }

    /// A DynamoDB client for this server, with the production timeouts and retries.
    pub async fn client(&self) -> aws_sdk_dynamodb::Client {
        client_for(&self.endpoint).await
    }

    /// A new table with a unique name, made like `seed-packs --create-table` makes it.
    pub async fn new_table(&self) -> DynamoStore {
        new_table_at(&self.endpoint).await
    }

    pub fn pid(&self) -> Option<u32> {
        self.child.id()
    }
}

/// A DynamoDB client against `endpoint` with dummy credentials, built like production's.
pub async fn client_for(endpoint: &str) -> aws_sdk_dynamodb::Client {
    let sdk = lambda::aws::sdk_config_with(
        aws_config::defaults(BehaviorVersion::latest())
            .region(Region::new("us-east-1"))
            .credentials_provider(Credentials::new("test", "test", None, None, "testkit"))
            .endpoint_url(endpoint),
    )
    .await;
    aws_sdk_dynamodb::Client::new(&sdk)
}

/// A client for `endpoint` that waits as long as a queue of concurrent requests (or a Scan of a
/// large table) takes on moto, instead of production's seconds.
pub async fn patient_client(endpoint: &str) -> aws_sdk_dynamodb::Client {
    let patient = client_for(endpoint)
        .await
        .config()
        .to_builder()
        .timeout_config(
            aws_config::timeout::TimeoutConfig::builder()
                .operation_attempt_timeout(Duration::from_secs(60))
                .operation_timeout(Duration::from_secs(120))
                .build(),
        )
        .build();
    aws_sdk_dynamodb::Client::from_conf(patient)
}

/// A table on this test binary's moto_server, reached through a proxy that forwards one request
/// at a time: each request is applied whole before the next, as DynamoDB applies each request
/// atomically (moto alone does not; see [`FaultProxy::one_at_a_time`]). The client waits as long
/// as a queue of concurrent requests takes. Keep the proxy alive while the store is used.
pub async fn atomic_table() -> (FaultProxy, DynamoStore) {
    atomic_table_at(shared_endpoint()).await
}

/// [`atomic_table`] on the moto_server at `endpoint`.
pub async fn atomic_table_at(endpoint: &str) -> (FaultProxy, DynamoStore) {
    let proxy = FaultProxy::start(endpoint).await;
    proxy.one_at_a_time();
    let table = new_table_at(endpoint).await;
    let store = DynamoStore::new(patient_client(&proxy.endpoint()).await, table.table());
    (proxy, store)
}
