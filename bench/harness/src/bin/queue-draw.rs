//! The draw of a waiting room of 200,000 entrants (issue 29) on the in-memory store: how long
//! the keeper's close and draw take in process and the memory they need, and how many DynamoDB
//! requests the same close and draw make (computed from the line's size: BENCHMARKS.md, "Queue").
//! Run by `scripts/bench queue` (release build); `QUEUE_ENTRANTS` sets the size.

use std::time::Instant;

use domain::ids::{PackId, UserId};
use domain::queue::entry::{ENTRY_SHARDS, QueueEntry, ReceiptSigner};
use domain::queue::state::{Beacon, ENTRANTS_PAGE_SIZE, ORDER_PAGE_SIZE};
use domain::queue::terms::QueueTerms;
use domain::timestamp::Timestamp;
use store::MemoryStore;
use store::queue::JoinQueue;
use store::queue_keeper::{CloseQueue, DrawQueue};

/// An entry item on DynamoDB, about: keys and index keys (~130 bytes), ids and user id (~100),
/// the receipt (86), times, status, position and counters (~80).
const ENTRY_ITEM_BYTES: u64 = 400;
/// What one Query page returns at most.
const QUERY_PAGE_BYTES: u64 = 1 << 20;
const BATCH_WRITE: u64 = 25;

/// Peak resident memory of this process, in MiB (Linux).
fn peak_mib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find_map(|line| line.strip_prefix("VmHWM:"))
                .and_then(|kb| kb.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        })
        .map_or(0, |kb| kb / 1024)
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let entrants: u64 = std::env::var("QUEUE_ENTRANTS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(200_000);
    let store = MemoryStore::default();
    // Closed a few seconds ago: the close below comes in time for the terms' beacon round.
    let closes_at = Timestamp::now().plus_seconds(-20).unwrap();
    let mut pack = testkit::packs::active("queue-bench", 0);
    pack.sale_starts_at = Some(closes_at);
    pack.max_per_user = Some(4);
    pack.queue = Some(QueueTerms {
        opens_at: closes_at.plus_seconds(-3600).unwrap(),
        closes_at,
        pass_seconds: 600,
    });
    testkit::packs::save(&store, &pack).await;
    let pack_id = PackId::parse(&pack.id).unwrap();
    let signer = ReceiptSigner::from_seed(&[7; 32]).unwrap();
    let joining = Instant::now();
    for n in 0..entrants {
        let user = UserId::parse(format!("auth0|fan-{n:08}")).unwrap();
        let entry = QueueEntry::new(pack_id.clone(), user, Timestamp::now(), &signer);
        store.join_queue(&entry).await.unwrap();
    }
    let joined = joining.elapsed();
    let before = peak_mib();
    let closing = Instant::now();
    let closed = store
        .close_queue(&pack_id, Timestamp::now())
        .await
        .unwrap()
        .expect("closed");
    let close = closing.elapsed();
    let local = domain::beacon::local(closed.round);
    let beacon = Beacon {
        chain: local.chain,
        round: local.round,
        randomness: local.randomness,
        signature: local.signature,
    };
    let drawing = Instant::now();
    let drawn = store
        .draw_queue(&pack_id, &beacon, Timestamp::now())
        .await
        .unwrap()
        .expect("drawn");
    let draw = drawing.elapsed();
    assert_eq!((closed.entrants, drawn.entrants), (entrants, entrants));

    // DynamoDB: the same steps' requests (store/dynamo/queue_keeper.rs).
    let per_shard = entrants.div_ceil(u64::from(ENTRY_SHARDS));
    let pages_per_shard = (per_shard * ENTRY_ITEM_BYTES)
        .div_ceil(QUERY_PAGE_BYTES)
        .max(1);
    let queries = u64::from(ENTRY_SHARDS) * pages_per_shard;
    let entrant_pages = entrants.div_ceil(ENTRANTS_PAGE_SIZE as u64);
    let order_pages = entrants.div_ceil(ORDER_PAGE_SIZE as u64);
    let close_requests = 1 + queries + entrant_pages.div_ceil(BATCH_WRITE) + 1;
    let entry_writes = entrants.div_ceil(BATCH_WRITE);
    let draw_requests = 1 + 1 + queries + entry_writes + order_pages.div_ceil(BATCH_WRITE) + 1;
    // Each entry put is 1 WCU on the table and 1 on GSI2 (items under 1 KB).
    let draw_wcu = 2 * entrants;

    println!("queue draw, {entrants} entrants, in-memory store (one core):");
    println!("  join (setup):   {:>8.2} s", joined.as_secs_f64());
    println!(
        "  close:          {:>8.3} s ({entrant_pages} entrant pages)",
        close.as_secs_f64()
    );
    println!(
        "  draw:           {:>8.3} s ({order_pages} order pages)",
        draw.as_secs_f64()
    );
    println!(
        "  peak memory:    {:>8} MiB (after joins {before} MiB)",
        peak_mib()
    );
    println!("DynamoDB requests, computed ({ENTRY_ITEM_BYTES}-byte entry items):");
    println!(
        "  close: {close_requests} = GetItem + {queries} Query ({pages_per_shard} page(s) x 64 shards) + {} BatchWriteItem + UpdateItem",
        entrant_pages.div_ceil(BATCH_WRITE)
    );
    println!(
        "  draw:  {draw_requests} = UpdateItem (lease) + BatchGetItem + {queries} Query + {entry_writes} BatchWriteItem (entries) + {} BatchWriteItem (order pages) + UpdateItem; {draw_wcu} WCU",
        order_pages.div_ceil(BATCH_WRITE)
    );
}
