//! What a start writes on DynamoDB, item by item, with sizes measured from items the real
//! functions wrote (moto stores what DynamoDB would), and the ceiling that puts on one pack's
//! drop (BENCHMARKS.md has the analysis).

use std::collections::HashMap;

use aws_sdk_dynamodb::types::AttributeValue;
use domain::ids::PackId;
use domain::packs::seed::parse_seed;
use serde_json::{Value, json};
use store::DynamoStore;
use store::schema::{DRAW_SK, PACK_SK, draw_pk, pack_pk};

use crate::functions::SEED;

/// Per-partition limits of DynamoDB (the figures): writes and reads per second.
const PARTITION_WCU: f64 = 1000.0;
const PARTITION_RCU: f64 = 3000.0;

/// The size of a number as DynamoDB counts it: 1 byte per two significant digits, plus 1.
fn number_size(text: &str) -> usize {
    let digits: String = text.chars().filter(char::is_ascii_digit).collect();
    let significant = digits.trim_start_matches('0').trim_end_matches('0');
    significant.len().max(1).div_ceil(2) + 1
}

/// The size of a value as DynamoDB counts it ("Item sizes and formats" in its developer guide).
fn value_size(value: &AttributeValue) -> usize {
    match value {
        AttributeValue::S(s) => s.len(),
        AttributeValue::N(n) => number_size(n),
        AttributeValue::B(b) => b.as_ref().len(),
        AttributeValue::Bool(_) | AttributeValue::Null(_) => 1,
        AttributeValue::Ss(set) => set.iter().map(String::len).sum(),
        AttributeValue::Ns(set) => set.iter().map(|n| number_size(n)).sum(),
        AttributeValue::Bs(set) => set.iter().map(|b| b.as_ref().len()).sum(),
        // 3 bytes for the container, 1 per element.
        AttributeValue::L(list) => 3 + list.iter().map(|v| 1 + value_size(v)).sum::<usize>(),
        AttributeValue::M(map) => {
            3 + map
                .iter()
                .map(|(k, v)| 1 + k.len() + value_size(v))
                .sum::<usize>()
        }
        _ => 0,
    }
}

/// An item's size in bytes: attribute names plus values.
pub fn item_size(item: &HashMap<String, AttributeValue>) -> usize {
    item.iter().map(|(k, v)| k.len() + value_size(v)).sum()
}

async fn get(store: &DynamoStore, pk: String, sk: &str) -> HashMap<String, AttributeValue> {
    store
        .client()
        .get_item()
        .table_name(store.table())
        .key("PK", AttributeValue::S(pk.clone()))
        .key("SK", AttributeValue::S(sk.into()))
        .consistent_read(true)
        .send()
        .await
        .expect("GetItem")
        .item
        .unwrap_or_else(|| panic!("no item {pk} / {sk}"))
}

/// Write units of a transactional write of an item of `bytes`: 2 per KB, rounded up.
fn transactional_wcu(bytes: usize) -> f64 {
    2.0 * bytes.div_ceil(1024).max(1) as f64
}

/// Sizes of what a start writes, from a table after a drop: the drop's pack item (after every
/// unit was reserved), a buyer's count and one purchase (`user`, `purchase_id`); the shipped
/// seed's pack and draw items on a new table of `store`'s server.
pub async fn analyse(
    store: &DynamoStore,
    fresh: &DynamoStore,
    pack_id: &str,
    user: &str,
    purchase_id: &str,
) -> Value {
    let typed = PackId::parse(pack_id).expect("a pack id");
    let pack = item_size(&get(store, pack_pk(&typed), PACK_SK).await);
    let buys = item_size(&get(store, format!("USER#{user}"), &format!("BUYS#{pack_id}")).await);
    let purchase = item_size(
        &get(
            store,
            format!("USER#{user}"),
            &format!("PURCHASE#{purchase_id}"),
        )
        .await,
    );
    let mut shipped = Vec::new();
    for seeded in parse_seed(SEED).expect("the shipped seed") {
        testkit::packs::save(fresh, &seeded).await;
        let id = seeded.pack_id().expect("a pack id");
        let pack_item = item_size(&get(fresh, pack_pk(&id), PACK_SK).await);
        let draw_item = item_size(&get(fresh, draw_pk(&id), DRAW_SK).await);
        shipped.push((seeded.id, pack_item, draw_item));
    }
    let pack_wcu = transactional_wcu(pack);
    let per_start = pack_wcu + transactional_wcu(buys) + transactional_wcu(purchase);
    let pack_read_rcu = pack.div_ceil(4096).max(1) as f64;
    let write_ceiling = PARTITION_WCU / pack_wcu;
    let read_ceiling = PARTITION_RCU / pack_read_rcu;
    let largest = shipped.iter().map(|s| s.1).max().unwrap_or(0);
    let largest_draw = shipped.iter().map(|s| s.2).max().unwrap_or(0);
    println!("| item a start writes | key | size (bytes) | write units in the transaction |");
    println!("|---|---|---|---|");
    println!(
        "| the pack (`remaining` - 1): every start of the pack | `PACK#{pack_id}` / `PACK` | {pack} | {pack_wcu:.0} |"
    );
    println!(
        "| the buyer's count of the pack | `USER#<buyer>` / `BUYS#{pack_id}` | {buys} | {:.0} |",
        transactional_wcu(buys)
    );
    println!(
        "| the purchase (new) | `USER#<buyer>` / `PURCHASE#<id>` | {purchase} | {:.0} |",
        transactional_wcu(purchase)
    );
    let listing_index = pack.div_ceil(1024).max(1) as f64;
    let holds_index = purchase.div_ceil(1024).max(1) as f64;
    println!(
        "| the pack's entry in GSI1 (listing; every listed pack shares the key `PACKS#LISTED`) | `PACKS#LISTED` / listing key | {pack} (all attributes projected) | {listing_index:.0} (index write) |"
    );
    println!(
        "| the purchase's entry in GSI2 (holds; every hold of every pack shares the key `HOLDS`), removed again by its completion or expiry | `HOLDS` / expiry#id | {purchase} (all attributes projected) | {holds_index:.0} (index write), and {holds_index:.0} more at completion |"
    );
    println!(
        "\nPer start: {per_start:.0} write units in the transaction ({pack_wcu:.0} of them on the pack's partition) and a strongly consistent read of the pack ({pack_read_rcu:.0} read unit). \
         The shipped seed's pack items: {} to {largest} bytes; their draw items (read by each open): up to {largest_draw} bytes. \
         One pack's ceiling from its partition's {PARTITION_WCU:.0} write units/s: {write_ceiling:.0} reservations/s; from {PARTITION_RCU:.0} read units/s: {read_ceiling:.0} reads of the pack/s.",
        shipped.iter().map(|s| s.1).min().unwrap_or(0),
    );
    json!({
        "pack_item_bytes": pack, "buys_item_bytes": buys, "purchase_item_bytes": purchase,
        "write_units_per_start": per_start, "pack_write_units_per_start": pack_wcu,
        "pack_read_units_per_start": pack_read_rcu,
        "reservations_per_second_ceiling_writes": write_ceiling,
        "listing_index_write_units_per_start": listing_index,
        "holds_index_write_units_per_start": holds_index,
        "pack_reads_per_second_ceiling": read_ceiling,
        "shipped_pack_items_bytes": shipped.iter().map(|(id, p, d)| json!({"id": id, "pack": p, "draw": d})).collect::<Vec<_>>(),
    })
}
