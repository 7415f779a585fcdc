//! `scripts/verify-queue`, the public's independent Python implementation of the waiting room's
//! order (docs/fairness.md, "The queue"), agrees with `domain::queue::{fairness, merkle}` on
//! data they produce, with a real quicknet round, and tells a tampered record apart.

use std::ffi::OsString;
use std::path::PathBuf;

use aws_lc_rs::digest;
use domain::beacon::{self, Beacon, quicknet};
use domain::queue::{fairness, merkle};
use serde_json::{Value, json};
use testkit::scripts::{Run, TempFiles, run_python};

const SEED: [u8; 32] = [0x5e; 32];
/// Five minutes before quicknet round 1000 (2023-08-23T15:59:24Z).
const CLOSES_AT: &str = "2023-08-23T15:54:24Z";
/// The keeper's close, a minute after `CLOSES_AT`: four minutes before the round.
const COMMITTED_AT: &str = "2023-08-23T15:55:24Z";

/// 128-bit random-looking entry ids, sorted as the close publishes them.
fn entrants(count: u32) -> Vec<String> {
    let mut ids: Vec<String> = (0..count)
        .map(|i| hex::encode(&digest::digest(&digest::SHA256, &i.to_be_bytes()).as_ref()[..16]))
        .collect();
    ids.sort();
    ids
}

fn real_beacon() -> Beacon {
    let recorded = testkit::drand::round(1000);
    let beacon: Beacon = serde_json::from_value(json!({
        "chain": quicknet::CHAIN_HASH,
        "round": recorded.round,
        "randomness": recorded.randomness,
        "signature": recorded.signature,
    }))
    .unwrap();
    assert_eq!(beacon::verify(&beacon), Ok(()));
    beacon
}

/// The public queue object of a drawn line over `ids` with `beacon`, as the Rust side computes it.
fn queue(ids: &[String], beacon: &Beacon) -> Value {
    json!({"queue": {
        "packId": "derby-day-2026",
        "opensAt": "2023-08-23T15:00:00Z",
        "closesAt": CLOSES_AT,
        "status": "drawn",
        "committedAt": COMMITTED_AT,
        "seedHash": hex::encode(digest::digest(&digest::SHA256, &SEED)),
        "beacon": beacon,
        "entrants": ids.len(),
        "entrantsRoot": hex::encode(merkle::root(ids)),
        "seed": hex::encode(SEED),
        "admittedThrough": 0,
    }})
}

struct Case {
    files: TempFiles,
    queue: Value,
    /// The entrants pages as the API pages them.
    pages: Vec<Value>,
}

impl Case {
    fn new(ids: &[String], beacon: &Beacon) -> Self {
        let pages = ids
            .chunks(70)
            .map(|page| json!({"entrants": page, "nextCursor": "opaque"}))
            .collect();
        Self {
            files: TempFiles::new("verify-queue"),
            queue: queue(ids, beacon),
            pages,
        }
    }

    fn run(&mut self, extra: &[&str]) -> Run {
        let queue = self.files.write(&self.queue.to_string());
        let pages: Vec<PathBuf> = self
            .pages
            .iter()
            .map(|page| self.files.write(&page.to_string()))
            .collect();
        let mut args: Vec<OsString> = vec![
            "--queue".into(),
            queue.into_os_string(),
            "--entrants".into(),
        ];
        args.extend(pages.into_iter().map(PathBuf::into_os_string));
        args.extend(extra.iter().map(|arg| arg.into()));
        run_python("verify-queue", args)
    }
}

fn positions(stdout: &str) -> Vec<String> {
    stdout
        .lines()
        .filter_map(|line| line.strip_prefix("position "))
        .map(|rest| rest.split_once(": ").unwrap().1.to_owned())
        .collect()
}

#[test]
fn the_script_recomputes_every_position_as_rust_draws_them() {
    let ids = entrants(333);
    let beacon = real_beacon();
    let mut case = Case::new(&ids, &beacon);
    let run = case.run(&[]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let expected = fairness::draw_order(&SEED, &beacon.randomness, &ids);
    assert_eq!(positions(&run.stdout), expected);
    assert!(run.stdout.contains("seedHash = sha256(seed)"));
    assert!(run.stdout.contains("300 s after closesAt: ok"));
    assert!(run.stdout.contains(&format!(
        "entrants committed at {COMMITTED_AT}, 240 s before round 1000: ok"
    )));
    assert!(run.stdout.contains("round 1000 is the terms' round"));
    assert!(run.stdout.contains("randomness = sha256(signature)"));
    // The signature's own check runs where py_ecc is installed, and says so where it is not.
    assert!(
        run.stdout.contains("signature: BLS check SKIPPED")
            || run.stdout.contains("by quicknet's key (py_ecc): ok"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains(&format!(
        "entrantsRoot = {}: ok",
        hex::encode(merkle::root(&ids))
    )));
    assert!(run.stdout.ends_with("MATCH\n"));

    // One fan's position, and a plain list of ids (pages given out of order) as the input.
    let fan = expected[41];
    case.pages = vec![json!(ids[200..]), json!(ids[..200])];
    let run = case.run(&["--entry", fan]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert!(run.stdout.contains(&format!("position 42 of 333: {fan}\n")));
    assert_eq!(positions(&run.stdout).len(), 1);
}

#[test]
fn a_tampered_record_is_a_mismatch() {
    let ids = entrants(50);
    let beacon = real_beacon();
    let tamper = |what: &str, change: &dyn Fn(&mut Case), message: &str| {
        let mut case = Case::new(&ids, &beacon);
        change(&mut case);
        let run = case.run(&[]);
        assert_eq!(run.code, 1, "{what}: {}\n{}", run.stdout, run.stderr);
        assert!(run.stdout.contains(message), "{what}: {}", run.stdout);
        assert!(run.stdout.ends_with("MISMATCH\n"), "{what}");
    };
    let other_hash = hex::encode([0x11; 32]);
    tamper(
        "seed hash",
        &|case| case.queue["queue"]["seedHash"] = json!(other_hash),
        "MISMATCH: queue.seedHash",
    );
    tamper(
        "randomness",
        &|case| {
            let mut randomness = beacon.randomness;
            randomness[0] ^= 1;
            case.queue["queue"]["beacon"]["randomness"] = json!(hex::encode(randomness));
        },
        "but sha256(signature) is",
    );
    tamper(
        "an entrant left out",
        &|case| {
            case.pages[0]["entrants"].as_array_mut().unwrap().remove(3);
        },
        "the entrants' root is",
    );
    tamper(
        "an entrant twice",
        &|case| {
            let first = case.pages[0]["entrants"][0].clone();
            case.pages[0]["entrants"]
                .as_array_mut()
                .unwrap()
                .push(first);
        },
        "twice",
    );
    tamper(
        "a root over another set",
        &|case| case.queue["queue"]["entrantsRoot"] = json!(other_hash),
        "MISMATCH: queue.entrantsRoot",
    );
    tamper(
        "a round that came before the close",
        &|case| case.queue["queue"]["closesAt"] = json!("2023-08-23T16:00:00Z"),
        "not after closesAt",
    );
    tamper(
        "another chain",
        &|case| {
            case.queue["queue"]["beacon"]["chain"] =
                json!("8990e7a9aaed2ffed73dbd7092123d6f289930540d7651336225dc172e51b2ce")
        },
        "not drand quicknet",
    );
    let mut case = Case::new(&ids, &beacon);
    let run = case.run(&["--entry", "not-an-entrant"]);
    assert_eq!(run.code, 1);
    assert!(run.stdout.contains("is not among the entrants"));
}

#[test]
fn a_local_beacon_checks_out_and_says_it_is_not_drand() {
    let ids = entrants(20);
    let beacon = beacon::local(1000);
    let mut case = Case::new(&ids, &beacon);
    let run = case.run(&[]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("NOT a drand beacon"));
    assert!(!run.stdout.contains("BLS"));
    assert_eq!(
        positions(&run.stdout),
        fairness::draw_order(&SEED, &beacon.randomness, &ids)
    );
    assert!(
        run.stdout
            .ends_with("MATCH (local beacon: not a drand round)\n")
    );
}

#[test]
fn nothing_is_checked_before_the_draw() {
    let ids = entrants(5);
    let mut case = Case::new(&ids, &real_beacon());
    case.queue["queue"]["seed"] = Value::Null;
    let run = case.run(&[]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("not drawn yet"), "{}", run.stderr);
}

/// The round is the terms' one (at closesAt + 300 s) unless the close committed the entrants
/// less than 60 s before it; then the round at committedAt + 300 s. Round 1000 (a recorded one)
/// stands for both here: the terms' round of a line closing 5 minutes before it, or the moved
/// round of a line whose terms named round 900 and whose close came at round 900's time.
#[test]
fn the_round_follows_the_commit_rule() {
    let ids = entrants(12);
    let beacon = real_beacon();
    let run_with = |closes_at: &str, committed_at: Value| {
        let mut case = Case::new(&ids, &beacon);
        case.queue["queue"]["closesAt"] = json!(closes_at);
        case.queue["queue"]["committedAt"] = committed_at;
        case.run(&[])
    };
    // Terms naming round 900 (15:54:24Z), committed at that round's time: drawn with the round
    // at the commit + 300 s, 1000.
    let moved = run_with("2023-08-23T15:49:24Z", json!("2023-08-23T15:54:24Z"));
    assert_eq!(moved.code, 0, "{}\n{}", moved.stdout, moved.stderr);
    assert!(
        moved
            .stdout
            .contains("round 1000 replaces the terms' round 900: the close came too late for it"),
        "{}",
        moved.stdout
    );

    let refused = |closes_at: &str, committed_at: Value, message: &str| {
        let run = run_with(closes_at, committed_at);
        assert_eq!(run.code, 1, "{message}: {}\n{}", run.stdout, run.stderr);
        assert!(run.stdout.contains(message), "{}", run.stdout);
    };
    // The round's randomness was out (or nearly) when the set was fixed.
    refused(
        CLOSES_AT,
        json!("2023-08-23T15:58:30Z"),
        "54 s before round 1000: less than 60 s",
    );
    refused(
        CLOSES_AT,
        json!("2023-08-23T16:10:00Z"),
        "is not the one the rule gives",
    );
    // A round moved although the close came in time for the terms' one.
    refused(
        "2023-08-23T15:49:24Z",
        json!("2023-08-23T15:50:00Z"),
        "is not the one the rule gives (900; the terms' round is 900)",
    );
    // A set committed before the line closed leaves out fans who joined after.
    refused(
        CLOSES_AT,
        json!("2023-08-23T15:54:00Z"),
        "before the line closed: fans who joined after are left out",
    );
    // Without a commit time, only the terms' round is accepted.
    let unchecked = run_with(CLOSES_AT, Value::Null);
    assert_eq!(unchecked.code, 0, "{}", unchecked.stdout);
    assert!(unchecked.stdout.contains("committedAt not given"));
    refused(
        "2023-08-23T15:49:24Z",
        Value::Null,
        "is not the terms' round 900, and no committedAt says why",
    );
}
