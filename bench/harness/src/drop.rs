//! Drops: thousands of buyers pressing "buy" in the same seconds.
//!
//! - On the local API (in-memory store): `drop-api`, which is local-api's own server module
//!   (`infra/local-api/src/server.rs`, compiled in as it is) and handlers over the in-memory store,
//!   with every buyer credited through the store before it serves (local-api credits only
//!   demo-user). 5,000 buyers with their own ES256 tokens (local-api's identity provider signs
//!   ES256) start one purchase each over 64 connections for 1,000 units; then the 1,000 winners
//!   pay.
//! - Through the real binaries: 8 `start-purchase` processes, each behind its own Runtime API
//!   emulator, as Lambda runs concurrent instances, against moto behind a one-request-at-a-time
//!   proxy (moto alone is not atomic under concurrent requests): 1,000 buyers, 200 units.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use domain::ids::PackId;
use domain::packs::Pack;
use domain::packs::seed::parse_seed;
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use store::packs::ReadSupply;
use testkit::fault_proxy::FaultProxy;
use testkit::http_stub::{HttpStub, Reply};
use testkit::moto::{MotoServer, Rollback};
use testkit::purchases::{Function, start_event};
use testkit::tokens::{AUDIENCE, ISSUER, TestKey, jwks_json};

use crate::functions::SEED;
use crate::stats::{day_token, ms, percentile};

/// The drop's pack: the shipped seed's first pack (5 items per pack from 4 rarities), renamed,
/// with `units` left of `units`, one per buyer.
fn drop_pack(id: &str, units: u64) -> Pack {
    let mut pack = parse_seed(SEED).expect("the shipped seed").remove(0);
    pack.id = id.into();
    pack.name = format!("Drop {id}");
    pack.total_supply = units;
    pack.remaining = units;
    pack.max_per_user = Some(1);
    pack
}

/// One answer of the drop: status, error code or purchase id, latency.
struct Answer {
    status: u16,
    body: Value,
    latency_ms: f64,
}

impl Answer {
    fn code(&self) -> &str {
        self.body["error"]["code"].as_str().unwrap_or("")
    }
}

/// p50, p99 and max of some latencies (ms).
fn spread(mut sorted: Vec<f64>) -> (f64, f64, f64) {
    sorted.sort_by(f64::total_cmp);
    (
        percentile(&sorted, 0.5),
        percentile(&sorted, 0.99),
        sorted.last().copied().unwrap_or(0.0),
    )
}

/// Latency figures of some answers: p50, p99, max (ms).
fn latencies(answers: &[Answer]) -> (f64, f64, f64) {
    spread(answers.iter().map(|a| a.latency_ms).collect())
}

/// Answers counted by status and error code.
fn tally(answers: &[Answer]) -> BTreeMap<String, usize> {
    let mut counts = BTreeMap::new();
    for answer in answers {
        let key = match answer.code() {
            "" => answer.status.to_string(),
            code => format!("{} {code}", answer.status),
        };
        *counts.entry(key).or_default() += 1;
    }
    counts
}

async fn connect(addr: SocketAddr) -> SendRequest<Full<Bytes>> {
    let stream = tokio::net::TcpStream::connect(addr)
        .await
        .expect("connect to the API");
    stream.set_nodelay(true).expect("TCP_NODELAY");
    let (sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .expect("HTTP/1.1 handshake");
    tokio::spawn(connection);
    sender
}

/// Work shared by concurrent senders: each takes the next item, once.
type Queue<T> = Arc<std::sync::Mutex<Vec<Option<T>>>>;

fn queue<T>(items: Vec<T>) -> Queue<T> {
    Arc::new(std::sync::Mutex::new(items.into_iter().map(Some).collect()))
}

/// Sends `requests` over `connections` kept-alive connections, each taking the next request as
/// soon as its previous one is answered; the answers in request order, and the wall time.
async fn fire(
    addr: SocketAddr,
    connections: usize,
    requests: Vec<hyper::Request<Full<Bytes>>>,
) -> (Vec<Answer>, Duration) {
    let total = requests.len();
    let queue = queue(requests);
    let next = Arc::new(AtomicUsize::new(0));
    let mut senders = Vec::with_capacity(connections);
    for _ in 0..connections {
        senders.push(connect(addr).await);
    }
    let started = Instant::now();
    let mut tasks = Vec::new();
    for mut sender in senders {
        let (queue, next) = (queue.clone(), next.clone());
        tasks.push(tokio::spawn(async move {
            let mut answers = Vec::new();
            loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                if i >= total {
                    return answers;
                }
                let request = queue.lock().unwrap()[i].take().expect("each request once");
                sender.ready().await.expect("the connection is usable");
                let sent = Instant::now();
                let response = sender.send_request(request).await.expect("the API answers");
                let status = response.status().as_u16();
                let bytes = response
                    .into_body()
                    .collect()
                    .await
                    .expect("the whole answer")
                    .to_bytes();
                let latency_ms = ms(sent.elapsed());
                let body = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
                answers.push((
                    i,
                    Answer {
                        status,
                        body,
                        latency_ms,
                    },
                ));
            }
        }));
    }
    let mut answers: Vec<(usize, Answer)> = Vec::with_capacity(total);
    for task in tasks {
        answers.extend(task.await.expect("a connection task"));
    }
    let elapsed = started.elapsed();
    answers.sort_by_key(|(i, _)| *i);
    (answers.into_iter().map(|(_, a)| a).collect(), elapsed)
}

fn request(
    method: &str,
    uri: &str,
    token: &str,
    extra: &[(&str, &str)],
    body: &str,
) -> hyper::Request<Full<Bytes>> {
    let mut builder = hyper::Request::builder()
        .method(method)
        .uri(uri)
        .header("host", "127.0.0.1")
        .header("authorization", format!("Bearer {token}"));
    for (name, value) in extra {
        builder = builder.header(*name, *value);
    }
    builder
        .body(Full::new(Bytes::from(body.to_owned())))
        .expect("a valid request")
}

/// The local API's drop: `drop_api` serving 1,000 units to 5,000 buyers.
pub async fn local(drop_api: &Path, buyers: usize, units: u64, connections: usize) -> Value {
    const PACK: &str = "drop-local";
    let dir = tempdir();
    let seed = dir.join("drop-seed.json");
    std::fs::write(
        &seed,
        serde_json::to_vec(&[drop_pack(PACK, units)]).expect("the pack as JSON"),
    )
    .expect("write the drop's seed");
    let port = testkit::free_port();
    let mut server = tokio::process::Command::new(drop_api)
        .args([
            &port.to_string(),
            seed.to_str().expect("a UTF-8 path"),
            &buyers.to_string(),
        ])
        .env("RUST_LOG", "warn")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .expect("start drop-api");
    let addr: SocketAddr = ([127, 0, 0, 1], port).into();
    let waited = Instant::now();
    while tokio::net::TcpStream::connect(addr).await.is_err() {
        assert!(
            waited.elapsed() < Duration::from_secs(60),
            "drop-api did not start"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // One token per buyer, signed as local-api's identity provider signs (ES256).
    let tokens: Vec<String> = (0..buyers)
        .map(|i| day_token(TestKey::Ec, &format!("drop-buyer-{i}")))
        .collect();
    // The JWKS is fetched by the first request that checks a token: fetch it before the drop
    // (a purchase nobody made: 404), as a running API has.
    let (warm, _) = fire(
        addr,
        1,
        vec![request(
            "GET",
            &format!("/api/packs/{PACK}/purchases/nobody"),
            &tokens[0],
            &[],
            "",
        )],
    )
    .await;
    assert_eq!(warm[0].status, 404, "warming the keys: {}", warm[0].body);

    let starts: Vec<_> = tokens
        .iter()
        .enumerate()
        .map(|(i, token)| {
            request(
                "POST",
                &format!("/api/packs/{PACK}/purchases"),
                token,
                &[("idempotency-key", &format!("drop-{i}"))],
                "",
            )
        })
        .collect();
    let (started, start_time) = fire(addr, connections, starts).await;
    let reserved: Vec<(usize, String)> = started
        .iter()
        .enumerate()
        .filter(|(_, a)| a.status == 201)
        .map(|(i, a)| {
            (
                i,
                a.body["purchase"]["id"]
                    .as_str()
                    .expect("a purchase id")
                    .to_owned(),
            )
        })
        .collect();
    let start_tally = tally(&started);
    let sold_out = started
        .iter()
        .filter(|a| a.status == 409 && a.code() == "sold_out")
        .count();
    let (start_p50, start_p99, start_max) = latencies(&started);
    let (winners_p50, winners_p99, _) = spread(
        started
            .iter()
            .filter(|a| a.status == 201)
            .map(|a| a.latency_ms)
            .collect(),
    );

    let completes: Vec<_> = reserved
        .iter()
        .map(|(i, id)| {
            request(
                "PUT",
                &format!("/api/packs/{PACK}/purchases/{id}"),
                &tokens[*i],
                &[("content-type", "application/json")],
                r#"{"payment":{"method":"cash"}}"#,
            )
        })
        .collect();
    let (completed, complete_time) = fire(addr, connections, completes).await;
    let paid = completed.iter().filter(|a| a.status == 200).count();
    let emptied = completed
        .iter()
        .filter(|a| a.body["cash"]["balance"]["amount"] == 0)
        .count();
    let (complete_p50, complete_p99, complete_max) = latencies(&completed);
    let (after, _) = fire(
        addr,
        1,
        vec![request(
            "GET",
            &format!("/api/packs/{PACK}"),
            &tokens[0],
            &[],
            "",
        )],
    )
    .await;
    let remaining = after[0].body["pack"]["remaining"].as_u64();
    server.kill().await.expect("stop drop-api");
    let _ = std::fs::remove_dir_all(&dir);

    let exact = reserved.len() as u64 == units && sold_out == buyers - reserved.len();
    println!(
        "| phase | requests | answers | wall time (s) | per second | p50 (ms) | p99 (ms) | max (ms) |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    println!(
        "| starts: {buyers} buyers, {connections} connections, {units} units | {buyers} | {} | {:.2} | {:.0} | {start_p50:.2} | {start_p99:.2} | {start_max:.2} |",
        tally_text(&start_tally),
        start_time.as_secs_f64(),
        buyers as f64 / start_time.as_secs_f64(),
    );
    println!(
        "| completions of every reservation | {} | {} | {:.2} | {:.0} | {complete_p50:.2} | {complete_p99:.2} | {complete_max:.2} |",
        reserved.len(),
        tally_text(&tally(&completed)),
        complete_time.as_secs_f64(),
        reserved.len() as f64 / complete_time.as_secs_f64(),
    );
    println!(
        "\nReservations: {} of {units} units ({}), the other {sold_out} answers `sold_out`; the winners' starts p50 {winners_p50:.2} ms, p99 {winners_p99:.2} ms. \
         Paid: {paid} (balance 0 after: {emptied}); the pack's `remaining` after: {remaining:?}.",
        reserved.len(),
        if exact { "exact" } else { "**NOT EXACT**" },
    );
    assert!(
        exact,
        "the local drop reserved {} of {units} units",
        reserved.len()
    );
    assert_eq!(paid, reserved.len(), "every reservation is paid");
    assert_eq!(remaining, Some(0), "the pack is sold out");
    json!({
        "buyers": buyers, "units": units, "connections": connections,
        "starts": { "answers": start_tally, "seconds": start_time.as_secs_f64(),
            "per_second": buyers as f64 / start_time.as_secs_f64(),
            "p50_ms": start_p50, "p99_ms": start_p99, "max_ms": start_max,
            "winners_p50_ms": winners_p50, "winners_p99_ms": winners_p99 },
        "completions": { "answers": tally(&completed), "seconds": complete_time.as_secs_f64(),
            "per_second": reserved.len() as f64 / complete_time.as_secs_f64(),
            "p50_ms": complete_p50, "p99_ms": complete_p99, "max_ms": complete_max },
        "remaining_after": remaining,
    })
}

fn tally_text(tally: &BTreeMap<String, usize>) -> String {
    tally
        .iter()
        .map(|(k, n)| format!("{n} × {k}"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn tempdir() -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("fan-api-drop-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    dir
}

/// The pack of the drop through the real binaries.
pub const LAMBDA_PACK: &str = "drop-lambda";

/// What the drop through the real binaries leaves for the capacity analysis: moto, the table,
/// and a winner (buyer, purchase id).
pub struct LambdaDrop {
    pub figures: Value,
    pub moto: MotoServer,
    pub store: store::DynamoStore,
    pub winner: (String, String),
}

/// The drop through the real binaries: `instances` start-purchase processes against moto behind
/// a one-request-at-a-time proxy, `buyers` buyers for `units` units.
pub async fn lambda(
    start_purchase: &Path,
    buyers: usize,
    units: u64,
    instances: usize,
) -> LambdaDrop {
    const PACK: &str = LAMBDA_PACK;
    // Transactions rolled back by the items they name (testkit/moto/key_rollback.py), so that
    // moto's speed does not fall as the drop fills the table.
    let moto = MotoServer::start_with(Rollback::NamedItems).await;
    let store = moto.new_table().await;
    testkit::packs::save(&store, &drop_pack(PACK, units)).await;
    let proxy = FaultProxy::start(&moto.endpoint).await;
    proxy.one_at_a_time();
    let idp = HttpStub::start(Reply::Json(jwks_json())).await;
    let env: Vec<(String, String)> = [
        ("TABLE_NAME", store.table().to_owned()),
        ("AWS_ENDPOINT_URL_DYNAMODB", proxy.endpoint()),
        ("AUTH_ISSUER", ISSUER.to_owned()),
        ("AUTH_AUDIENCE", AUDIENCE.to_owned()),
        ("AUTH_JWKS_URL", idp.url("/.well-known/jwks.json")),
        ("RUST_LOG", "info".to_owned()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect();
    let binary = start_purchase.to_str().expect("a UTF-8 path");
    let mut functions = Vec::new();
    for _ in 0..instances {
        functions.push(Function::spawn(binary, &env).await);
    }
    // Every instance initialised (connection opened, keys fetched) before the drop opens.
    let waited = Instant::now();
    while functions.iter().any(|f| f.runtime.first_poll().is_none()) {
        assert!(
            waited.elapsed() < Duration::from_secs(30),
            "start-purchase did not start"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let events: Vec<Value> = (0..buyers)
        .map(|i| {
            let token = day_token(TestKey::Rsa, &format!("lambda-buyer-{i}"));
            start_event(PACK, Some(&token), Some(&format!("drop-{i}")), None).to_json()
        })
        .collect();
    let events = queue(events);
    let next = Arc::new(AtomicUsize::new(0));
    let before = proxy.operation_counts();
    let started = Instant::now();
    let functions: Vec<Arc<Function>> = functions.into_iter().map(Arc::new).collect();
    let mut tasks = Vec::new();
    for function in &functions {
        let (function, events, next) = (function.clone(), events.clone(), next.clone());
        tasks.push(tokio::spawn(async move {
            let mut answers = Vec::new();
            loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                if i >= buyers {
                    return answers;
                }
                let event = events.lock().unwrap()[i].take().expect("each event once");
                let sent = Instant::now();
                let outcome = function.invoke(event).await;
                let latency_ms = ms(sent.elapsed());
                let (status, body) = testkit::runtime_api::http_parts(&outcome);
                answers.push((
                    i,
                    Answer {
                        status,
                        body,
                        latency_ms,
                    },
                ));
            }
        }));
    }
    let mut numbered = Vec::with_capacity(buyers);
    for task in tasks {
        numbered.extend(task.await.expect("an instance's task"));
    }
    let elapsed = started.elapsed();
    numbered.sort_by_key(|(i, _)| *i);
    // A winner, for the sizes of what a start writes.
    let sample = numbered
        .iter()
        .find(|(_, a)| a.status == 201)
        .map(|(i, a)| {
            (
                format!("lambda-buyer-{i}"),
                a.body["purchase"]["id"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
            )
        })
        .expect("at least one reservation");
    let answers: Vec<Answer> = numbered.into_iter().map(|(_, a)| a).collect();
    let after = proxy.operation_counts();
    let calls: BTreeMap<String, usize> = after
        .iter()
        .filter(|(op, _)| !op.contains(' '))
        .map(|(op, n)| (op.clone(), n - before.get(op).copied().unwrap_or(0)))
        .collect();
    let reserved = answers.iter().filter(|a| a.status == 201).count();
    let sold_out = answers
        .iter()
        .filter(|a| a.status == 409 && a.code() == "sold_out")
        .count();
    let remaining = store
        .read_supply(&PackId::parse(PACK).expect("a pack id"))
        .await
        .expect("read the pack's supply")
        .map(|supply| supply.remaining());
    let (p50, p99, max) = latencies(&answers);
    let (winners_p50, _, _) = spread(
        answers
            .iter()
            .filter(|a| a.status == 201)
            .map(|a| a.latency_ms)
            .collect(),
    );
    let transacts = calls.get("TransactWriteItems").copied().unwrap_or(0);
    let exact = reserved as u64 == units && sold_out == buyers - reserved && remaining == Some(0);
    println!(
        "| instances | buyers | units | answers | wall time (s) | starts per second | p50 (ms) | p99 (ms) | max (ms) |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    println!(
        "| {instances} start-purchase processes | {buyers} | {units} | {} | {:.2} | {:.0} | {p50:.2} | {p99:.2} | {max:.2} |",
        tally_text(&tally(&answers)),
        elapsed.as_secs_f64(),
        buyers as f64 / elapsed.as_secs_f64(),
    );
    println!(
        "\nReservations: {reserved} of {units} ({}), `sold_out`: {sold_out}; `remaining` after: {remaining:?}; the winners' p50 {winners_p50:.2} ms. \
         DynamoDB requests through the one-at-a-time proxy: {}. \
         TransactWriteItems per reservation: {:.3} ({transacts} for {reserved}: every one beyond one per reservation is a transaction lost to a race and decided again, or a start that read a unit left and lost it at the end; moto never answers TransactionConflict, so conflicts between concurrent transactions on the pack item, which real DynamoDB reports and the store backs off from, do not happen here).",
        if exact { "exact" } else { "**NOT EXACT**" },
        tally_text(&calls),
        transacts as f64 / reserved.max(1) as f64,
    );
    assert!(
        exact,
        "the Lambda drop reserved {reserved} of {units} units"
    );
    drop(functions);
    let figures = json!({
        "instances": instances, "buyers": buyers, "units": units,
        "answers": tally(&answers), "seconds": elapsed.as_secs_f64(),
        "per_second": buyers as f64 / elapsed.as_secs_f64(),
        "p50_ms": p50, "p99_ms": p99, "max_ms": max, "winners_p50_ms": winners_p50,
        "dynamodb_requests": calls, "remaining_after": remaining,
        "transact_write_items_per_reservation": transacts as f64 / reserved.max(1) as f64,
    });
    LambdaDrop {
        figures,
        moto,
        store,
        winner: sample,
    }
}
