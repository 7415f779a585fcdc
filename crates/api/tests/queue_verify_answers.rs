//! `scripts/verify-queue` on the service's own answers, on both stores: a line drawn by the
//! keeper with a recorded quicknet round (testkit's drand stub), its public record and every
//! entrants page as the queue function serves them; the script recomputes for each fan the
//! position `queue/me` gives them, and refuses the record with a changed seed, a changed
//! randomness or an entrant left out.

use std::collections::HashMap;
use std::path::PathBuf;

use serde_json::{Value, json};
use store::Store;
use testkit::scripts::{Run, TempFiles, run_python};
use testkit::waiting_room::{
    api, beacon, close_and_draw, entrant_pages, fan, get, line, queued_pack,
};

testkit::store_contract!(
    by_value:
    the_script_recomputes_every_fans_position_from_the_public_answers,
);

const FANS: usize = 25;

/// The script run over `queue` and `pages`, with `extra` arguments.
fn verify(queue: &Value, pages: &[Value], extra: &[&str]) -> Run {
    let mut files = TempFiles::new("verify-answers");
    let mut args = vec!["--queue".into(), files.write(&queue.to_string())];
    args.push("--entrants".into());
    args.extend(pages.iter().map(|page| files.write(&page.to_string())));
    args.extend(extra.iter().map(PathBuf::from));
    run_python("verify-queue", args)
}

/// entry id -> position, as the script printed them (`position N: id`, or with `--entry`
/// `position N of M: id`).
fn positions(run: &Run) -> HashMap<String, u64> {
    run.stdout
        .lines()
        .filter_map(|line| line.strip_prefix("position "))
        .map(|rest| {
            let (position, id) = rest.split_once(": ").expect("position N: id");
            let number = position.split(' ').next().unwrap_or(position);
            (id.to_owned(), number.parse().expect("a position"))
        })
        .collect()
}

fn refused(what: &str, run: &Run, message: &str) {
    assert_eq!(run.code, 1, "{what}: {}\n{}", run.stdout, run.stderr);
    assert!(run.stdout.contains(message), "{what}: {}", run.stdout);
    assert!(run.stdout.ends_with("MISMATCH\n"), "{what}: {}", run.stdout);
}

async fn the_script_recomputes_every_fans_position_from_the_public_answers<S>(store: S)
where
    S: Store + 'static,
{
    let (_stub, beacon) = beacon().await;
    line(&store, &queued_pack("verified", 5, 1), FANS).await;
    close_and_draw(&store, &beacon).await;
    let state = api(store);
    let (status, queue) = get(&state, "/api/packs/verified/queue", None).await;
    assert_eq!((status, &queue["queue"]["status"]), (200, &json!("drawn")));
    let pages = entrant_pages(&state, "verified").await;

    let run = verify(&queue, &pages, &[]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert!(run.stdout.ends_with("MATCH\n"), "{}", run.stdout);
    let recomputed = positions(&run);
    assert_eq!(recomputed.len(), FANS);
    let mut seen: Vec<u64> = recomputed.values().copied().collect();
    seen.sort_unstable();
    assert_eq!(seen, (1..=FANS as u64).collect::<Vec<_>>());
    // Each fan's own answer is the script's.
    let mut mine = Vec::new();
    for n in 0..FANS {
        let who = fan(n);
        let (status, body) = get(&state, "/api/packs/verified/queue/me", Some(who.as_str())).await;
        assert_eq!(status, 200, "{body}");
        let entry = &body["entry"];
        let id = entry["entryId"].as_str().unwrap().to_owned();
        assert_eq!(entry["status"], "queued");
        assert_eq!(
            entry["position"].as_u64(),
            recomputed.get(&id).copied(),
            "{who}'s position"
        );
        mine.push((id, entry["position"].as_u64().unwrap()));
    }

    // One fan checks their own position.
    let (id, position) = &mine[7];
    let run = verify(&queue, &pages, &["--entry", id]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stdout
            .contains(&format!("position {position} of {FANS}: {id}\n")),
        "{}",
        run.stdout
    );
    assert_eq!(positions(&run).len(), 1);

    // A record that is not the one drawn is refused.
    let mut other_seed = queue.clone();
    other_seed["queue"]["seed"] = json!(hex::encode([0x42; 32]));
    refused(
        "a changed seed",
        &verify(&other_seed, &pages, &[]),
        "MISMATCH: queue.seedHash",
    );
    let mut other_randomness = queue.clone();
    let randomness = queue["queue"]["beacon"]["randomness"].as_str().unwrap();
    let flipped = format!(
        "{}{}",
        if randomness.starts_with('0') {
            "1"
        } else {
            "0"
        },
        &randomness[1..]
    );
    other_randomness["queue"]["beacon"]["randomness"] = json!(flipped);
    refused(
        "a changed randomness",
        &verify(&other_randomness, &pages, &[]),
        "but sha256(signature) is",
    );
    let mut dropped = pages.clone();
    dropped[0]["entrants"]
        .as_array_mut()
        .unwrap()
        .remove(FANS / 2);
    refused(
        "an entrant left out",
        &verify(&queue, &dropped, &[]),
        "the entrants' root is",
    );
}
