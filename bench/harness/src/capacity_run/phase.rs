//! One phase of the capacity run (the drop's starts, its get-packs, the presses after the
//! sell-out): what it sent, billed per partition key, and the figures and ceilings that follow.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::{Value, json};
use store::schema::RATE_PREFIX;
use testkit::fault_proxy::{Exchange, FaultProxy};

use super::{
    KEY_RCU, KEY_WCU, LAMBDA_CONCURRENCY, ONE_PACK_RATE, PLATFORM_PACKS, PLATFORM_RATE, READ_PRICE,
    WRITE_PRICE,
};
use crate::units::{Ledger, Units};

/// One phase's figures.
pub(super) struct Phase {
    name: &'static str,
    /// The requests the phase made: starts, presses or get-packs.
    starts: usize,
    /// Its requests per start at the rates (get-pack: ten times the start rate).
    pub(super) per_start: f64,
    pub(super) answers: BTreeMap<String, usize>,
    keys: BTreeMap<String, Units>,
    requests: BTreeMap<String, usize>,
    billing: Billing,
    /// How many of its DynamoDB requests read the item it watches (sold out: the shares).
    reads: Option<usize>,
}

/// What a phase's pack keys are billed per.
pub(super) enum Billing {
    /// Each request: a start while units remain.
    PerRequest,
    /// Each of the `reads` an instance makes at most once per `keep`, however many requests it
    /// serves: a get-pack its pack and draw items once per `KEEP_PACKS_FOR`.
    PerInstanceRead { reads: usize, keep: Duration },
}

/// Whether `exchange` reads an item whose sort key is `sort_key` (`SUPPLY`: a pack's shares).
fn reads_item(exchange: &Exchange, sort_key: &str) -> bool {
    exchange.operation == "BatchGetItem"
        && serde_json::from_slice::<Value>(&exchange.request).is_ok_and(|request| {
            request["RequestItems"]
                .as_object()
                .into_iter()
                .flatten()
                .any(|(_, table)| {
                    table["Keys"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .any(|key| key["SK"]["S"] == sort_key)
                })
        })
}

/// What a key is shared by: one fan (their items, and the rate counters of them and of their
/// address), one pack, or every pack.
enum Scope {
    Fan,
    Pack,
    Shared,
}

/// A pack's key with the pack and the share left out: `table PACK#<pack>#<k>`.
fn kind_of(key: &str) -> String {
    let mut kind = String::new();
    for (n, part) in key.split('#').enumerate() {
        if n > 0 {
            kind.push('#');
        }
        if part.starts_with("cap-") {
            kind.push_str("<pack>");
        } else if !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit()) {
            kind.push_str("<k>");
        } else {
            kind.push_str(part);
        }
    }
    kind
}

fn scope(key: &str) -> Scope {
    let partition = key.split_once(' ').map_or(key, |(_, p)| p);
    if ["USER#", "CASH#", RATE_PREFIX]
        .iter()
        .any(|prefix| partition.starts_with(prefix))
    {
        Scope::Fan
    } else if partition.contains("cap-") || partition.contains("<pack>") {
        Scope::Pack
    } else {
        Scope::Shared
    }
}

impl Phase {
    /// The phase of `requests` answered `answers`: what `proxy` recorded since the last phase,
    /// billed on `ledger`, its reads of items of the sort key `watch` counted. `keep`: its pack
    /// keys are billed per such read, which an instance makes at most once per that long;
    /// otherwise per request.
    pub(super) fn billed(
        name: &'static str,
        (requests, answers): (usize, BTreeMap<String, usize>),
        proxy: &FaultProxy,
        ledger: &mut Ledger,
        watch: Option<&str>,
        keep: Option<Duration>,
    ) -> Phase {
        let mut reads = 0;
        for exchange in proxy.take_recorded() {
            reads += usize::from(watch.is_some_and(|sort_key| reads_item(&exchange, sort_key)));
            ledger.count(&exchange);
        }
        Phase {
            name,
            starts: requests,
            per_start: 1.0,
            answers,
            keys: std::mem::take(&mut ledger.keys),
            requests: std::mem::take(&mut ledger.requests),
            billing: match keep {
                Some(keep) => Billing::PerInstanceRead { reads, keep },
                None => Billing::PerRequest,
            },
            reads: watch.map(|_| reads),
        }
    }

    /// Units per start on each kind of key: a pack's keys per start of that pack, averaged over
    /// the keys of their kind (`table PACK#<pack>#<k>`: every share of every pack; a few hundred
    /// starts spread unevenly over 16 shares, where 5,000 a second do not), a fan's per start
    /// of that fan (one each), the others per start of any pack.
    fn per_start(&self, packs: usize) -> Vec<(String, Scope, Units)> {
        let per_pack = self.pack_events() / packs as f64;
        let mut kinds: BTreeMap<String, (Units, f64)> = BTreeMap::new();
        for (key, units) in &self.keys {
            let (label, divisor) = match scope(key) {
                Scope::Fan => (key.clone(), 1.0),
                Scope::Pack => (kind_of(key), per_pack),
                Scope::Shared => (key.clone(), self.starts as f64),
            };
            let (sum, keys) = kinds.entry(label).or_default();
            sum.read += units.read / divisor;
            sum.write += units.write / divisor;
            *keys += 1.0;
        }
        kinds
            .into_iter()
            .map(|(label, (sum, keys))| {
                let scope = scope(&label);
                let mean = Units {
                    read: sum.read / keys,
                    write: sum.write / keys,
                };
                (label, scope, mean)
            })
            .collect()
    }

    /// What a pack's keys are billed per, in the phase: its requests or its instances' reads.
    fn pack_events(&self) -> f64 {
        match self.billing {
            Billing::PerRequest => self.starts as f64,
            Billing::PerInstanceRead { reads, .. } => reads.max(1) as f64,
        }
    }

    /// How many of those a second, per pack, at `starts` a second on it: every request, or at
    /// most one read per instance and `keep`, so never more than `LAMBDA_CONCURRENCY` of them.
    fn pack_rate(&self, starts: f64) -> f64 {
        let requests = starts * self.per_start;
        match self.billing {
            Billing::PerRequest => requests,
            Billing::PerInstanceRead { keep, .. } => {
                requests.min(LAMBDA_CONCURRENCY / keep.as_secs_f64())
            }
        }
    }

    fn totals(&self) -> Units {
        let mut total = Units::default();
        for units in self.keys.values() {
            total.read += units.read;
            total.write += units.write;
        }
        total
    }

    /// The figures of this phase, printed and as JSON.
    pub(super) fn report(&self, design: &str, packs: usize) -> Value {
        let phase = self.name;
        let starts = self.starts as f64;
        let totals = self.totals();
        let round_trips = self.requests.values().sum::<usize>() as f64 / starts;
        let keys = self.per_start(packs);
        // The busiest pack-scoped and shared keys, per start of the pack / of any pack.
        let busiest = |wanted: fn(&Scope) -> bool, pick: fn(&Units) -> f64| {
            keys.iter()
                .filter(|(_, scope, _)| wanted(scope))
                .map(|(key, _, units)| (key.clone(), pick(units)))
                .max_by(|a, b| a.1.total_cmp(&b.1))
                .unwrap_or_default()
        };
        let pack_w = busiest(|s| matches!(s, Scope::Pack), |u| u.write);
        let pack_r = busiest(|s| matches!(s, Scope::Pack), |u| u.read);
        let shared_w = busiest(|s| matches!(s, Scope::Shared), |u| u.write);
        let shared_r = busiest(|s| matches!(s, Scope::Shared), |u| u.read);
        let fan_w = busiest(|s| matches!(s, Scope::Fan), |u| u.write);
        // One pack at ONE_PACK_RATE: its own keys at their rate, the shared ones at every request.
        let one_pack = self.pack_rate(ONE_PACK_RATE);
        let requests = ONE_PACK_RATE * self.per_start;
        let one_pack_w = (pack_w.1 * one_pack).max(shared_w.1 * requests);
        let one_pack_r = (pack_r.1 * one_pack).max(shared_r.1 * requests);
        // Many drops: each pack's keys at its share of the rate, shared keys at all of it.
        let per_pack = self.pack_rate(PLATFORM_RATE / PLATFORM_PACKS);
        let requests = PLATFORM_RATE * self.per_start;
        let many_w = (pack_w.1 * per_pack).max(shared_w.1 * requests);
        let many_r = (pack_r.1 * per_pack).max(shared_r.1 * requests);
        let ceiling = |w: f64, r: f64| {
            let by_w = if w > 0.0 { KEY_WCU / w } else { f64::INFINITY };
            let by_r = if r > 0.0 { KEY_RCU / r } else { f64::INFINITY };
            by_w.min(by_r)
        };
        let show = |v: f64| {
            if v.is_finite() {
                format!("{v:.0}")
            } else {
                "no shared key".to_owned()
            }
        };
        // In starts a second: the shared keys bound the requests; a pack's keys its requests, or
        // its instances' reads: as many instances as each read once per `keep`.
        let platform_ceiling = ceiling(shared_w.1, shared_r.1) / self.per_start;
        let own_ceiling = ceiling(pack_w.1, pack_r.1);
        let reads = self.reads.map_or("-".to_owned(), |reads| reads.to_string());
        let pack_ceiling = match self.billing {
            Billing::PerRequest => show((own_ceiling / self.per_start).min(platform_ceiling)),
            Billing::PerInstanceRead { keep, .. } => {
                format!(
                    "{} on up to {:.0} instances",
                    if platform_ceiling.is_finite() {
                        format!("{platform_ceiling:.0}/s")
                    } else {
                        "any rate".to_owned()
                    },
                    own_ceiling * keep.as_secs_f64()
                )
            }
        };
        // Units per request times dollars per million units: dollars per million requests.
        let dollars = totals.write / starts * WRITE_PRICE + totals.read / starts * READ_PRICE;
        println!(
            "| {design} | {phase} | {} | {} | {} | {round_trips:.2} | {:.2} | {:.2} | {} ({:.3}) | {} ({:.3}) | {} ({:.4}) | {:.0} W / {:.0} R | {:.0} W / {:.0} R | {} | {} | {dollars:.2} |",
            self.starts,
            answers_text(&self.answers),
            reads,
            totals.read / starts,
            totals.write / starts,
            pack_w.0,
            pack_w.1,
            pack_r.0,
            pack_r.1,
            if shared_w.0.is_empty() {
                "none".to_owned()
            } else {
                shared_w.0.clone()
            },
            shared_w.1,
            one_pack_w,
            one_pack_r,
            many_w,
            many_r,
            pack_ceiling,
            show(platform_ceiling),
        );
        json!({
            "design": design, "phase": phase, "starts": self.starts, "answers": self.answers,
            "instance_reads": reads, "requests_per_start": self.per_start,
            "pack_key_events_per_second_one_pack": one_pack,
            "round_trips_per_start": round_trips,
            "read_units_per_start": totals.read / starts,
            "write_units_per_start": totals.write / starts,
            "busiest_pack_key_write": pack_w, "busiest_pack_key_read": pack_r,
            "busiest_shared_key_write": shared_w, "busiest_shared_key_read": shared_r,
            "busiest_fan_key_write": fan_w,
            "one_pack_5000_per_s": {"write": one_pack_w, "read": one_pack_r},
            "fifty_packs_20000_per_s": {"write": many_w, "read": many_r},
            "ceiling_per_pack": pack_ceiling,
            "ceiling_platform": if platform_ceiling.is_finite() { json!(platform_ceiling) } else { Value::Null },
            "dollars_per_million_starts": dollars,
            "requests": self.requests,
            "keys": self.keys.iter().map(|(k, u)| (k.clone(), json!({"read": u.read, "write": u.write}))).collect::<serde_json::Map<_, _>>(),
        })
    }
}

fn answers_text(answers: &BTreeMap<String, usize>) -> String {
    answers
        .iter()
        .map(|(answer, n)| format!("{n} {answer}"))
        .collect::<Vec<_>>()
        .join(", ")
}
