//! `scripts/verify-draw`, the buyers' independent Python implementation of the draw
//! (docs/fairness.md), agrees with `domain::packs::draw` and tells a tampered purchase apart.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use domain::packs::draw::{self, ALGORITHM, DrawInput, ServerSeed};
use domain::packs::{Odds, PackItem};
use serde_json::{Value, json};
use testkit::scripts::{Run, TempFiles, finish};

const PACK_ID: &str = "derby-day-2026";
const ITEMS_PER_PACK: u32 = 6;

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/verify-draw")
}

/// Starts the script; `stdin` is fed to it when one of the paths is `-`.
fn spawn(pack: &Path, purchase: &Path, user: &str, stdin: Option<&str>) -> Child {
    let mut child = Command::new("python3")
        .arg(script())
        .arg("--pack")
        .arg(pack)
        .arg("--purchase")
        .arg(purchase)
        .arg("--user")
        .arg(user)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python3 runs");
    let mut input = child.stdin.take().unwrap();
    input
        .write_all(stdin.unwrap_or_default().as_bytes())
        .unwrap();
    child
}

fn verify(pack: &Path, purchase: &Path, user: &str, stdin: Option<&str>) -> Run {
    finish(spawn(pack, purchase, user, stdin))
}

fn odds() -> Vec<Odds> {
    [("common", 6000), ("rare", 3000), ("legendary", 1000)]
        .into_iter()
        .map(|(rarity, chance_bps)| Odds {
            rarity: rarity.into(),
            chance_bps,
        })
        .collect()
}

fn items() -> Vec<PackItem> {
    [
        ("c-home", "Home Kit", "common", None),
        (
            "r-captain",
            "Captain",
            "rare",
            Some("https://cdn.example.com/r-captain.png"),
        ),
        (
            "c-away",
            "Away Kit",
            "common",
            Some("https://cdn.example.com/c-away.png"),
        ),
        ("c-scarf", "Scarf \"Derby\" Edition", "common", None),
        (
            "l-boot",
            "Golden Boot",
            "legendary",
            Some("https://cdn.example.com/l-boot.png"),
        ),
        ("r-wall", "The Wall", "rare", None),
        ("c-mascot", "Mascot", "common", None),
    ]
    .into_iter()
    .map(|(id, name, rarity, image_url)| PackItem {
        id: id.into(),
        name: name.into(),
        rarity: rarity.into(),
        image_url: image_url.map(Into::into),
    })
    .collect()
}

fn pack_json(seed: &ServerSeed) -> Value {
    json!({
        "id": PACK_ID,
        "name": "Derby Day",
        "itemsPerPack": ITEMS_PER_PACK,
        "odds": odds(),
        "items": items(),
        "saleEndsAt": "2026-03-01T00:00:00Z",
        "fairness": {
            "serverSeedHash": seed.commitment(),
            "serverSeed": seed.to_hex(),
        },
    })
}

/// The purchase as the server would answer it, its items drawn by `shared`.
fn purchase_json(seed: &ServerSeed, input: &DrawInput<'_>) -> Value {
    let items = items();
    let drawn = draw::draw(seed, &odds(), &items, ITEMS_PER_PACK, input).unwrap();
    let slots: Vec<Value> = drawn
        .iter()
        .zip(0..)
        .map(|(&index, slot)| {
            let item = &items[index];
            json!({
                "slot": slot,
                "itemId": item.id,
                "name": item.name,
                "rarity": item.rarity,
                "imageUrl": item.image_url,
            })
        })
        .collect();
    json!({
        "id": format!("purchase-{}", input.nonce),
        "packId": input.pack_id,
        "clientSeed": input.client_seed,
        "nonce": input.nonce,
        "items": slots,
        "fairness": {
            "algorithm": ALGORITHM,
            "serverSeedHash": seed.commitment(),
            "serverSeed": seed.to_hex(),
            "clientSeed": input.client_seed,
            "nonce": input.nonce,
        },
    })
}

/// Printable ASCII client seeds, spaces, quotes and backslashes included, from a fixed sequence.
fn client_seeds() -> Vec<String> {
    let mut seeds: Vec<String> = [
        "lucky",
        "say \"hi\"",
        "it's a  test \\ with a backslash",
        " leading and trailing ",
        "{\"json\": [1, 2]}",
        "🍀 four-leaf \"clover\"",
    ]
    .map(String::from)
    .into();
    let mut state: u64 = 0x2545_f491_4f6c_dd1d;
    while seeds.len() < 36 {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        let len = 1 + (state >> 58) as usize;
        let seed = (0..len)
            .map(|n| char::from(b' ' + ((state >> (n % 8 * 7)) as u8 ^ n as u8) % 95))
            .collect();
        seeds.push(seed);
    }
    seeds
}

fn assert_match(run: &Run, what: &str) {
    assert_eq!(run.code, 0, "{what}: {}\n{}", run.stdout, run.stderr);
    assert!(run.stdout.ends_with("\nMATCH\n"), "{what}: {}", run.stdout);
    assert!(!run.stdout.contains("MISMATCH"), "{what}: {}", run.stdout);
}

fn assert_mismatch(run: &Run, what: &str) {
    assert_eq!(run.code, 1, "{what}: {}\n{}", run.stdout, run.stderr);
    assert!(
        run.stdout.ends_with("\nMISMATCH\n"),
        "{what}: {}",
        run.stdout
    );
}

fn assert_bad_input(run: &Run, what: &str, message: &str) {
    assert_eq!(run.code, 2, "{what}: {}\n{}", run.stdout, run.stderr);
    assert!(run.stderr.contains(message), "{what}: {}", run.stderr);
}

#[test]
fn rust_and_the_script_agree() {
    let mut files = TempFiles::new("verify-draw");
    let mut legendary_slots = 0;
    // The runs go in parallel; each is checked once all have started.
    let mut runs = Vec::new();
    for (n, client_seed) in (0u8..).zip(client_seeds()) {
        let seed = ServerSeed::from_bytes([n.wrapping_mul(37); 32]);
        let user_id = if n % 2 == 0 {
            "user-1"
        } else {
            "auth0|5f1e 7a"
        };
        let input = DrawInput {
            pack_id: PACK_ID,
            user_id,
            nonce: 1 + u64::from(n) * 7,
            client_seed: &client_seed,
        };
        let purchase = purchase_json(&seed, &input);
        legendary_slots += purchase["items"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|slot| slot["itemId"] == "l-boot")
            .count();
        // Half the runs give the API's wrapped answers, half the bare objects.
        let (pack, purchase) = if n % 2 == 0 {
            (
                json!({"pack": pack_json(&seed)}),
                json!({"purchase": purchase}),
            )
        } else {
            (pack_json(&seed), purchase)
        };
        let pack_path = files.write(&pack.to_string());
        let purchase_path = files.write(&serde_json::to_string_pretty(&purchase).unwrap());
        let what = format!("client seed {client_seed:?}, nonce {}", input.nonce);
        runs.push((what, spawn(&pack_path, &purchase_path, user_id, None)));
    }
    for (what, child) in runs {
        let run = finish(child);
        assert_match(&run, &what);
        assert!(run.stdout.contains("\nslot 5: "), "{what}: {}", run.stdout);
    }
    assert!(legendary_slots > 0, "the single-item pool was never drawn");
}

struct Case {
    files: TempFiles,
    seed: ServerSeed,
    pack: Value,
    purchase: Value,
}

const USER: &str = "user-1";

impl Case {
    fn new() -> Self {
        let seed = ServerSeed::from_bytes([0x5a; 32]);
        let input = DrawInput {
            pack_id: PACK_ID,
            user_id: USER,
            nonce: 3,
            client_seed: "my \"lucky\" seed",
        };
        Self {
            files: TempFiles::new("verify-draw"),
            pack: json!({"pack": pack_json(&seed)}),
            purchase: json!({"purchase": purchase_json(&seed, &input)}),
            seed,
        }
    }

    fn run(&mut self) -> Run {
        self.run_as(USER)
    }

    fn run_as(&mut self, user: &str) -> Run {
        let pack = self.files.write(&self.pack.to_string());
        let purchase = self.files.write(&self.purchase.to_string());
        verify(&pack, &purchase, user, None)
    }
}

#[test]
fn the_untampered_case_matches() {
    let mut case = Case::new();
    assert_match(&case.run(), "untampered");
    let purchase = case.files.write(&case.purchase.to_string());
    let stdin = verify(
        Path::new("-"),
        &purchase,
        USER,
        Some(&case.pack.to_string()),
    );
    assert_match(&stdin, "pack from stdin");
}

#[test]
fn tampering_is_a_mismatch() {
    let mut case = Case::new();
    let slot_2 = &mut case.purchase["purchase"]["items"][2];
    let other = if slot_2["itemId"] == "c-home" {
        "c-away"
    } else {
        "c-home"
    };
    slot_2["itemId"] = other.into();
    assert_mismatch(&case.run(), "an item swapped");

    let mut case = Case::new();
    case.purchase["purchase"]["items"][0]["imageUrl"] = "https://evil.example.com/x.png".into();
    assert_mismatch(&case.run(), "an image changed");

    let mut case = Case::new();
    let items = &mut case.purchase["purchase"]["items"];
    items[0]["slot"] = 1.into();
    items[1]["slot"] = 0.into();
    assert_mismatch(&case.run(), "slot numbers swapped");

    let mut case = Case::new();
    case.purchase["purchase"]["items"]
        .as_array_mut()
        .unwrap()
        .pop();
    assert_mismatch(&case.run(), "a slot missing");

    let mut case = Case::new();
    case.purchase["purchase"]["nonce"] = 4.into();
    case.purchase["purchase"]["fairness"]["nonce"] = 4.into();
    assert_mismatch(&case.run(), "another nonce");

    let mut case = Case::new();
    case.purchase["purchase"]["clientSeed"] = "my lucky seed".into();
    case.purchase["purchase"]["fairness"]["clientSeed"] = "my lucky seed".into();
    assert_mismatch(&case.run(), "another client seed");

    let mut case = Case::new();
    assert_mismatch(&case.run_as("user-2"), "another buyer");

    let mut case = Case::new();
    let mut hash = case.seed.commitment();
    hash.replace_range(..1, if hash.starts_with('0') { "1" } else { "0" });
    case.pack["pack"]["fairness"]["serverSeedHash"] = hash.clone().into();
    let run = case.run();
    assert_mismatch(&run, "the pack's seed hash changed");
    assert!(run.stdout.contains("sha256(serverSeed)"), "{}", run.stdout);

    let mut case = Case::new();
    case.purchase["purchase"]["fairness"]["serverSeedHash"] = hash.into();
    assert_mismatch(&case.run(), "the purchase's seed hash changed");
}

#[test]
fn bad_input_is_refused() {
    let mut case = Case::new();
    let good_pack = case.files.write(&case.pack.to_string());
    let good_purchase = case.files.write(&case.purchase.to_string());

    let truncated = case.files.write("{\"pack\": {\"id\": ");
    let run = verify(&truncated, &good_purchase, USER, None);
    assert_bad_input(&run, "truncated pack", "not valid JSON");

    let missing = std::env::temp_dir().join("fan-api-verify-draw-no-such-file.json");
    let run = verify(&good_pack, &missing, USER, None);
    assert_bad_input(&run, "missing purchase file", "cannot read");

    let dash = Path::new("-");
    let run = verify(dash, dash, USER, Some("{}"));
    assert_bad_input(&run, "both from stdin", "only one of");

    let mut case = Case::new();
    case.pack["pack"]["fairness"]["serverSeed"] = Value::Null;
    assert_bad_input(&case.run(), "seed not revealed", "not revealed yet");

    let mut case = Case::new();
    case.pack["pack"]["fairness"]["serverSeed"] = "abc".into();
    assert_bad_input(&case.run(), "short seed", "64 hex digits");

    let mut case = Case::new();
    case.pack["pack"]["odds"][0]["chanceBps"] = 5999.into();
    assert_bad_input(&case.run(), "odds short of 10000", "add up to 9999");

    let mut case = Case::new();
    case.purchase["purchase"]["nonce"] = "3".into();
    assert_bad_input(&case.run(), "nonce as text", "purchase.nonce");

    let mut case = Case::new();
    case.purchase = json!([1, 2, 3]);
    assert_bad_input(
        &case.run(),
        "purchase not an object",
        "expected a JSON object",
    );
}

#[cfg(unix)]
#[test]
fn the_script_is_executable() {
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(script()).unwrap().permissions().mode();
    assert_eq!(mode & 0o111, 0o111, "mode {mode:o}");
}
