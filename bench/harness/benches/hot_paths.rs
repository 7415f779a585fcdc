//! Micro-benchmarks of the hot paths: token verification per algorithm with cached keys, body
//! parsing with the truthiness check, writing a page of 100 packs, DynamoDB item to pack document
//! (the list) and to Pack (by id), the fair draw (one slot, one pack), and what a purchase request
//! is parsed for (client seed, payment, idempotency key), and an invocation's metrics line.

use std::hint::black_box;

use api::handlers::complete_purchase::parse_payment;
use api::handlers::list_packs::page_json;
use api::handlers::start_purchase::requested_client_seed;
use api::handlers::web3_link::parse_link_body;
use api::http::request::{
    DEFAULT_MAX_BODY_BYTES, idempotency_key, require_json_content_type, within_limit,
};
use criterion::{Criterion, criterion_group, criterion_main};
use domain::packs::Pack;
use domain::packs::document::PackDocument;
use domain::packs::draw::{DrawInput, ServerSeed, draw, uniform};
use domain::packs::seed::parse_seed;
use domain::timestamp::Timestamp;
use store::dynamo::{document_from_item, pack_item};
use store::metrics::{self, Metric};
use testkit::events::ApiEvent;
use testkit::tokens::{TestKey, claims};

const SEED: &[u8] = include_bytes!("../../../infra/seed/packs.json");

fn hundred_packs() -> Vec<Pack> {
    let seed = parse_seed(SEED).unwrap();
    (0..100)
        .map(|i| {
            let mut pack = seed[i % seed.len()].clone();
            pack.id = format!("pack-{i:03}");
            pack
        })
        .collect()
}

fn token_verification(c: &mut Criterion) {
    let verifier = testkit::tokens::verifier();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let mut group = c.benchmark_group("verify_token");
    for (name, key) in [
        ("RS256", TestKey::Rsa),
        ("ES256", TestKey::Ec),
        ("EdDSA", TestKey::Ed25519),
    ] {
        // Far from expiry, so the token stays valid for the whole run.
        let mut claims = claims("bench-user", Some("bench@example.com"));
        claims["exp"] = (testkit::tokens::now() + 86_400).into();
        let token = key.sign(&claims);
        group.bench_function(name, |b| {
            b.iter(|| {
                runtime
                    .block_on(verifier.verify(black_box(&token)))
                    .unwrap()
            })
        });
    }
    group.finish();
}

fn body_parsing(c: &mut Criterion) {
    let body = br#"{"payload":{"address":"0x52908400098527886E0F7030069857D2E4169EE7","chainId":1,"signature":"0x9f3c6a1b2d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f6071829301","message":"Sign in to fan-api"}}"#;
    c.bench_function("parse_link_body_with_truthiness", |b| {
        b.iter(|| parse_link_body(black_box(body)).unwrap())
    });
}

fn page_serialisation(c: &mut Criterion) {
    let packs: Vec<PackDocument> = hundred_packs().iter().map(PackDocument::of).collect();
    let cursor = "MToxMjM0NTY3ODkwMTIzNDU2Nzg5MDEjcGFjay0xMDA.AAAAAAAAAAAAAAAAAAAAAA";
    let now = Timestamp::now();
    c.bench_function("serialise_page_of_100_packs", |b| {
        b.iter(|| page_json(black_box(&packs), Some(cursor), now))
    });
}

fn item_conversion(c: &mut Criterion) {
    let pack = &hundred_packs()[0];
    let item = pack_item(&pack.pack_id().unwrap(), pack, 1);
    c.bench_function("dynamodb_item_to_pack_document", |b| {
        b.iter(|| document_from_item(&mut black_box(item.clone())).unwrap())
    });
    c.bench_function("dynamodb_item_to_pack", |b| {
        b.iter(|| {
            document_from_item(&mut black_box(item.clone()))
                .unwrap()
                .to_pack()
                .unwrap()
        })
    });
}

/// The draw of the shipped seed's first pack (5 slots; 4 rarities; 18 items): one slot's number,
/// then a whole pack.
fn fair_draw(c: &mut Criterion) {
    let pack = parse_seed(SEED).unwrap().remove(0);
    let seed = ServerSeed::from_bytes([7; 32]);
    let input = DrawInput {
        pack_id: &pack.id,
        user_id: "auth0|5f7c8ec7c33c6c004bbafe82",
        nonce: 3,
        client_seed: "my lucky seed",
    };
    c.bench_function("draw_uniform_one_slot", |b| {
        b.iter(|| uniform(black_box(&seed), "rarity", black_box(&input), 0, 10_000))
    });
    let name = format!("draw_one_pack_of_{}_slots", pack.items_per_pack);
    c.bench_function(&name, |b| {
        b.iter(|| {
            draw(
                black_box(&seed),
                &pack.odds,
                &pack.items,
                pack.items_per_pack,
                black_box(&input),
            )
            .unwrap()
        })
    });
}

/// What a start and a completion read from their request before the store is asked.
fn purchase_request_parsing(c: &mut Criterion) {
    let start = ApiEvent::post("/api/packs/nba-rookie-2026/purchases")
        .header("idempotency-key", "9b2f6c1e-4d2a-4f7e-9a57-2c1d3e4f5a6b")
        .json(r#"{"clientSeed":"my lucky seed"}"#)
        .request();
    c.bench_function("start_requested_client_seed", |b| {
        b.iter(|| {
            // What the body extractor does: the content type, the limit, the body.
            require_json_content_type(black_box(start.headers())).unwrap();
            let body = within_limit(black_box(start.body().as_ref()), DEFAULT_MAX_BODY_BYTES);
            requested_client_seed(body.unwrap()).unwrap()
        })
    });
    c.bench_function("start_idempotency_key", |b| {
        b.iter(|| {
            idempotency_key(black_box(start.headers()))
                .map(str::len)
                .unwrap()
        })
    });
    let payment = br#"{"payment":{"method":"cash"}}"#;
    c.bench_function("complete_parse_payment", |b| {
        b.iter(|| parse_payment(black_box(payment)).unwrap())
    });
}

/// What each invocation adds for its metrics: the scope around the handler, a business count
/// and a property, then `Requests`, `Latency` and the properties, and the EMF line of a start
/// (six values) written into a string; then that line's `write` (to /dev/null: the system call
/// without Lambda's pipe behind it).
fn metrics_line(c: &mut Criterion) {
    use std::io::Write;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let line = || {
        let ((), mut recorded) = runtime.block_on(metrics::record(async {
            metrics::property("packId", black_box("nba-rookie-2026"));
            metrics::count(Metric::PurchasesStarted);
        }));
        recorded.set(Metric::Latency, black_box(12.345));
        recorded.add(Metric::Requests, 1);
        recorded.property("statusClass", metrics::status_class(black_box(201)));
        recorded.property("requestId", black_box("JkVZbhbyoAMEbNw="));
        recorded.emf_line(
            black_box("fan-api-StartPurchaseFunction-AbCdEfGh"),
            black_box(1_764_000_000_123),
        )
    };
    c.bench_function("metrics_record_and_emf_line", |b| b.iter(|| line().len()));
    let mut null = std::fs::File::create("/dev/null").unwrap();
    let written = format!("{}\n", line());
    c.bench_function("metrics_write_line", |b| {
        b.iter(|| null.write_all(black_box(written.as_bytes())).unwrap())
    });
}

criterion_group!(
    benches,
    token_verification,
    body_parsing,
    page_serialisation,
    item_conversion,
    fair_draw,
    purchase_request_parsing,
    metrics_line
);
criterion_main!(benches);
