use super::*;

fn odds(list: &[(&str, u32)]) -> Vec<Odds> {
    list.iter()
        .map(|&(rarity, chance_bps)| Odds {
            rarity: rarity.into(),
            chance_bps,
        })
        .collect()
}

fn items(list: &[(&str, &str, &str)]) -> Vec<PackItem> {
    list.iter()
        .map(|&(id, name, rarity)| PackItem {
            id: id.into(),
            name: name.into(),
            rarity: rarity.into(),
            image_url: None,
        })
        .collect()
}

/// The contract's `x` of one attempt, written as plainly as the document states it.
fn x_of(seed: &ServerSeed, label: &str, input: &DrawInput<'_>, slot: u32, attempt: u64) -> u64 {
    let message = format!(
        "{label}\n{}\n{}\n{}\n{}\n{slot}\n{attempt}",
        input.pack_id, input.user_id, input.nonce, input.client_seed
    );
    let key = hmac::Key::new(hmac::HMAC_SHA256, seed.as_bytes());
    let tag = hmac::sign(&key, message.as_bytes());
    u64::from_be_bytes(tag.as_ref()[..8].try_into().unwrap())
}

/// One slot of a documented test vector: the x of every attempt (all but the last rejected).
struct Slot {
    rarity_xs: &'static [u64],
    r: u64,
    rarity: &'static str,
    item_xs: &'static [u64],
    i: u64,
    item: &'static str,
}

fn check_vector(
    seed: &ServerSeed,
    odds: &[Odds],
    items: &[PackItem],
    input: &DrawInput<'_>,
    slots: &[Slot],
) {
    let pool_of = |rarity: &str| -> Vec<&PackItem> {
        items.iter().filter(|item| item.rarity == rarity).collect()
    };
    for (slot, expected) in (0..).zip(slots) {
        for (attempt, &x) in (0..).zip(expected.rarity_xs) {
            assert_eq!(x_of(seed, "rarity", input, slot, attempt), x, "slot {slot}");
        }
        assert_eq!(uniform(seed, "rarity", input, slot, 10_000), expected.r);
        let rarity_index = draw_rarity(seed, odds, input, slot).unwrap();
        assert_eq!(odds[rarity_index].rarity, expected.rarity, "slot {slot}");
        let pool = pool_of(expected.rarity);
        for (attempt, &x) in (0..).zip(expected.item_xs) {
            assert_eq!(x_of(seed, "item", input, slot, attempt), x, "slot {slot}");
        }
        let i = uniform(seed, "item", input, slot, pool.len() as u64);
        assert_eq!(i, expected.i, "slot {slot}");
        assert_eq!(pool[i as usize].id, expected.item, "slot {slot}");
    }
    let drawn: Vec<&str> = draw(seed, odds, items, slots.len() as u32, input)
        .unwrap()
        .into_iter()
        .map(|index| items[index].id.as_str())
        .collect();
    let expected: Vec<&str> = slots.iter().map(|slot| slot.item).collect();
    assert_eq!(drawn, expected);
}

fn rookie_odds() -> Vec<Odds> {
    odds(&[("common", 7000), ("rare", 2500), ("legendary", 500)])
}

fn rookie_items() -> Vec<PackItem> {
    items(&[
        ("c1", "Rookie Forward", "common"),
        ("c2", "Rookie Keeper", "common"),
        ("c3", "Rookie Defender", "common"),
        ("c4", "Rookie Midfielder", "common"),
        ("r1", "Captain", "rare"),
        ("r2", "Top Scorer", "rare"),
        ("l1", "Golden Boot", "legendary"),
    ])
}

const ROOKIE: DrawInput<'static> = DrawInput {
    pack_id: "rookie-2026",
    user_id: "user-1",
    nonce: 1,
    client_seed: "lucky",
};

#[test]
fn vector_1_rookie_pack() {
    let seed = ServerSeed::from_bytes([0; SEED_LEN]);
    assert_eq!(
        seed.commitment(),
        "66687aadf862bd776c8fc18b8e9f8e20089714856ee233b3902a591d0d5f2925"
    );
    // The first message and its whole HMAC, as docs/fairness.md spells them out.
    let key = hmac::Key::new(hmac::HMAC_SHA256, seed.as_bytes());
    for (message, tag) in [
        (
            "rarity\nrookie-2026\nuser-1\n1\nlucky\n0\n0",
            "9fdb1ddc01083eeed86d90b4101ef64f5b6561cf4c22c88ff3914464a5bff034",
        ),
        (
            "item\nrookie-2026\nuser-1\n1\nlucky\n0\n0",
            "445074c50ab948f8c1a96d719ba277075604d6a81ee461da6ae829dd2d21cc7d",
        ),
    ] {
        assert_eq!(
            lower_hex(hmac::sign(&key, message.as_bytes()).as_ref()),
            tag
        );
    }
    #[rustfmt::skip]
    let slots = [
        Slot { rarity_xs: &[11518833302677503726], r: 3726, rarity: "common",
               item_xs: &[4922562782353246456], i: 0, item: "c1" },
        Slot { rarity_xs: &[12665714368819708506], r: 8506, rarity: "rare",
               item_xs: &[2964501671982901452], i: 0, item: "r1" },
        Slot { rarity_xs: &[10019081750315842197], r: 2197, rarity: "common",
               item_xs: &[15270145042151399885], i: 1, item: "c2" },
    ];
    check_vector(&seed, &rookie_odds(), &rookie_items(), &ROOKIE, &slots);
}

#[test]
fn vector_2_utf8_client_seed_and_a_single_item_pool() {
    let seed =
        ServerSeed::from_hex("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f")
            .unwrap();
    assert_eq!(
        seed.commitment(),
        "630dcd2966c4336691125448bbb25b4ff412a49c732db2c8abc1b8581bd710dd"
    );
    let odds = odds(&[
        ("legendary", 100),
        ("epic", 900),
        ("rare", 2000),
        ("common", 7000),
    ]);
    let items = items(&[
        ("leg-1", "Golden Boot", "legendary"),
        ("epic-1", "Derby Hero", "epic"),
        ("epic-2", "Last-Minute Winner", "epic"),
        ("rare-1", "Captain", "rare"),
        ("rare-2", "Top Scorer", "rare"),
        ("rare-3", "Wall", "rare"),
        ("com-1", "Home Kit", "common"),
        ("com-2", "Away Kit", "common"),
        ("com-3", "Stadium", "common"),
        ("com-4", "Scarf", "common"),
        ("com-5", "Mascot", "common"),
    ]);
    let input = DrawInput {
        pack_id: "derby-day",
        user_id: "user-42",
        nonce: 9,
        client_seed: "🍀 four-leaf \"clover\"",
    };
    #[rustfmt::skip]
    let slots = [
        Slot { rarity_xs: &[17046222941832439060], r: 9060, rarity: "common",
               item_xs: &[9459737592434954275], i: 0, item: "com-1" },
        Slot { rarity_xs: &[15144768531702274684], r: 4684, rarity: "common",
               item_xs: &[6688288039555812525], i: 0, item: "com-1" },
        Slot { rarity_xs: &[17917907079588270086], r: 86, rarity: "legendary",
               item_xs: &[9260531863269774701], i: 0, item: "leg-1" },
        Slot { rarity_xs: &[15656830238892834493], r: 4493, rarity: "common",
               item_xs: &[17369133396377263439], i: 4, item: "com-5" },
        Slot { rarity_xs: &[13107768966729280848], r: 848, rarity: "epic",
               item_xs: &[4485651938184635354], i: 0, item: "epic-1" },
    ];
    check_vector(&seed, &odds, &items, &input, &slots);
}

/// 2^63 + 1: floor(2^64 / bound) is 1, so every x of 2^63 + 1 or more (about half) is rejected.
const HALF_REJECTED: u64 = (1 << 63) + 1;

#[test]
fn vector_3_rejected_attempts() {
    let seed = ServerSeed::from_bytes([0x42; SEED_LEN]);
    assert_eq!(
        seed.commitment(),
        "425ed4e4a36b30ea21b90e21c712c649e8214c29b7eaf68089d1039c6e55384c"
    );
    // (nonce, every attempt's x, result): nonces 1, 2 and 3 of the rookie inputs, slot 0.
    let cases: [(u64, &[u64], u64); 3] = [
        (
            1,
            &[12994715748099312326, 2125450259983458770],
            2125450259983458770,
        ),
        (2, &[2353565639566022552], 2353565639566022552),
        (
            3,
            &[
                14748881141309442416,
                10977413832856384738,
                14300382076002207496,
                7467389940094275071,
            ],
            7467389940094275071,
        ),
    ];
    for (nonce, xs, result) in cases {
        let input = DrawInput { nonce, ..ROOKIE };
        for (attempt, &x) in (0..).zip(xs) {
            assert_eq!(x_of(&seed, "rarity", &input, 0, attempt), x);
            let rejected = attempt + 1 < xs.len() as u64;
            assert_eq!(
                x >= HALF_REJECTED,
                rejected,
                "nonce {nonce} attempt {attempt}"
            );
        }
        assert_eq!(uniform(&seed, "rarity", &input, 0, HALF_REJECTED), result);
    }
}

#[test]
fn rejection_path_of_uniform() {
    let seed = ServerSeed::from_bytes([0x42; SEED_LEN]);
    let first = x_of(&seed, "rarity", &ROOKIE, 0, 0);
    let second = x_of(&seed, "rarity", &ROOKIE, 0, 1);
    assert!(first >= HALF_REJECTED && second < HALF_REJECTED);
    // Rejected: not `first % bound`, but the second attempt's x.
    let drawn = uniform(&seed, "rarity", &ROOKIE, 0, HALF_REJECTED);
    assert_eq!(drawn, second);
    assert_ne!(drawn, first % HALF_REJECTED);
    assert_eq!(first % HALF_REJECTED, 3771343711244536517);
    // A power of two divides 2^64: every x is accepted, the first attempt decides.
    assert_eq!(
        uniform(&seed, "rarity", &ROOKIE, 0, 1 << 63),
        first % (1 << 63)
    );
    assert_eq!(uniform(&seed, "rarity", &ROOKIE, 0, 1), 0);
    // u64::MAX: the limit is 2^64 - 1, so only x = 2^64 - 1 would be rejected.
    assert_eq!(uniform(&seed, "rarity", &ROOKIE, 0, u64::MAX), first);
}

/// Pearson's chi-square statistic of `observed` counts against `expected` counts.
fn chi_square(observed: &[u64], expected: &[f64]) -> f64 {
    observed
        .iter()
        .zip(expected)
        .map(|(&o, &e)| (o as f64 - e).powi(2) / e)
        .sum()
}

#[test]
fn rarities_follow_the_odds() {
    let seed = ServerSeed::from_bytes([7; SEED_LEN]);
    let odds = odds(&[
        ("common", 6000),
        ("uncommon", 2500),
        ("rare", 1000),
        ("epic", 400),
        ("legendary", 100),
    ]);
    const DRAWS: u64 = 100_000;
    let mut counts = vec![0u64; odds.len()];
    for nonce in 1..=DRAWS {
        let input = DrawInput { nonce, ..ROOKIE };
        counts[draw_rarity(&seed, &odds, &input, 0).unwrap()] += 1;
    }
    let expected: Vec<f64> = odds
        .iter()
        .map(|o| DRAWS as f64 * f64::from(o.chance_bps) / f64::from(TOTAL_BPS))
        .collect();
    // 5 rarities: 4 degrees of freedom, whose chi-square exceeds 18.467 with probability
    // 0.001. The seed and inputs are fixed, so this is deterministic, never flaky.
    let statistic = chi_square(&counts, &expected);
    assert!(statistic < 18.467, "chi-square {statistic} of {counts:?}");
}

#[test]
fn items_are_uniform_within_their_pool() {
    let seed = ServerSeed::from_bytes([9; SEED_LEN]);
    let odds = odds(&[("common", 10_000)]);
    // Seven commons (not a power of two) between items of a rarity never drawn.
    let mut pool = Vec::new();
    for n in 0..7 {
        pool.push((format!("c{n}"), "common"));
        pool.push((format!("x{n}"), "other"));
    }
    let list: Vec<(&str, &str, &str)> = pool
        .iter()
        .map(|(id, rarity)| (id.as_str(), id.as_str(), *rarity))
        .collect();
    let items = items(&list);
    const SLOTS: u32 = 10;
    const PURCHASES: u64 = 10_000;
    let mut counts = [0u64; 7];
    for nonce in 1..=PURCHASES {
        let input = DrawInput { nonce, ..ROOKIE };
        for index in draw(&seed, &odds, &items, SLOTS, &input).unwrap() {
            assert_eq!(items[index].rarity, "common");
            counts[index / 2] += 1;
        }
    }
    let expected = [(PURCHASES * u64::from(SLOTS)) as f64 / 7.0; 7];
    // 7 items: 6 degrees of freedom, whose chi-square exceeds 22.458 with probability 0.001.
    let statistic = chi_square(&counts, &expected);
    assert!(statistic < 22.458, "chi-square {statistic} of {counts:?}");
}

#[test]
fn odds_are_walked_in_listed_order() {
    let listed = rookie_odds();
    let reversed: Vec<Odds> = listed.iter().rev().cloned().collect();
    let rarity = |odds: &[Odds], r: u64| odds[walk_odds(odds, r)].rarity.clone();
    // common 0..7000, rare 7000..9500, legendary 9500..10000.
    for (r, name) in [
        (0, "common"),
        (6999, "common"),
        (7000, "rare"),
        (9499, "rare"),
        (9500, "legendary"),
        (9999, "legendary"),
    ] {
        assert_eq!(rarity(&listed, r), name, "r = {r}");
    }
    // Reversed: legendary 0..500, rare 500..3000, common 3000..10000.
    for (r, name) in [
        (0, "legendary"),
        (499, "legendary"),
        (500, "rare"),
        (2999, "rare"),
        (3000, "common"),
        (9999, "common"),
    ] {
        assert_eq!(rarity(&reversed, r), name, "r = {r}");
    }
    // The same seed and inputs: vector 1's slot 1 has r = 8506, rare as listed, common
    // reversed.
    let seed = ServerSeed::from_bytes([0; SEED_LEN]);
    assert_eq!(uniform(&seed, "rarity", &ROOKIE, 1, 10_000), 8506);
    let of = |odds: &[Odds]| {
        odds[draw_rarity(&seed, odds, &ROOKIE, 1).unwrap()]
            .rarity
            .clone()
    };
    assert_eq!(of(&listed), "rare");
    assert_eq!(of(&reversed), "common");
}

#[test]
fn unusable_packs_are_errors() {
    let seed = ServerSeed::from_bytes([0; SEED_LEN]);
    let items = rookie_items();
    assert_eq!(draw(&seed, &[], &items, 1, &ROOKIE), Err(DrawError::NoOdds));
    assert_eq!(draw_rarity(&seed, &[], &ROOKIE, 0), Err(DrawError::NoOdds));
    let short = odds(&[("common", 7000), ("rare", 2999)]);
    assert_eq!(
        draw(&seed, &short, &items, 1, &ROOKIE),
        Err(DrawError::OddsTotal { total: 9999 })
    );
    assert_eq!(
        draw_rarity(&seed, &short, &ROOKIE, 0),
        Err(DrawError::OddsTotal { total: 9999 })
    );
    // Vector 1 draws rare at slot 1: without rare items, that slot has nothing to hold.
    let no_rares: Vec<PackItem> = items.into_iter().filter(|i| i.rarity != "rare").collect();
    let error = draw(&seed, &rookie_odds(), &no_rares, 3, &ROOKIE).unwrap_err();
    assert_eq!(
        error,
        DrawError::EmptyPool {
            slot: 1,
            rarity: "rare".into()
        }
    );
    assert_eq!(
        error.to_string(),
        "slot 1 drew rarity \"rare\", which has no items"
    );
    assert_eq!(
        draw(&seed, &rookie_odds(), &no_rares, 1, &ROOKIE),
        Ok(vec![0])
    );
    assert_eq!(
        draw(&seed, &rookie_odds(), &no_rares, 0, &ROOKIE),
        Ok(vec![])
    );
}

#[test]
fn server_seed_hex_commitment_and_debug() {
    let seed = ServerSeed::generate();
    assert_ne!(seed, ServerSeed::generate());
    let hex = seed.to_hex();
    assert_eq!(hex.len(), 64);
    assert!(
        hex.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    );
    assert_eq!(ServerSeed::from_hex(&hex), Some(seed.clone()));
    assert_eq!(
        ServerSeed::from_hex(&hex.to_uppercase()),
        Some(seed.clone())
    );
    assert_eq!(ServerSeed::from_slice(seed.as_bytes()), Some(seed.clone()));
    assert_eq!(format!("{seed:?}"), "ServerSeed(..)");
    assert!(!format!("{:?}", Some(&seed)).contains(&hex[..8]));

    let counting = ServerSeed::from_bytes(std::array::from_fn(|i| (i as u8).wrapping_mul(17)));
    assert_eq!(
        counting.to_hex(),
        "00112233445566778899aabbccddeeff102132435465768798a9bacbdcedfe0f"
    );
    assert_eq!(ServerSeed::from_hex(&counting.to_hex()), Some(counting));
    let zero = ServerSeed::from_bytes([0; SEED_LEN]);
    assert_eq!(
        zero.commitment(),
        "66687aadf862bd776c8fc18b8e9f8e20089714856ee233b3902a591d0d5f2925"
    );
    for bad in [
        "",
        &"0".repeat(63),
        &"0".repeat(65),
        &format!("{}g", "0".repeat(63)),
        &format!("+{}", "0".repeat(63)),
        &format!("{}é", "0".repeat(62)),
    ] {
        assert_eq!(ServerSeed::from_hex(bad), None, "{bad:?}");
    }
    assert_eq!(ServerSeed::from_slice(&[0; 31]), None);
    assert_eq!(ServerSeed::from_slice(&[0; 33]), None);
}

#[test]
fn draw_agrees_with_its_parts() {
    let seed = ServerSeed::from_bytes([3; SEED_LEN]);
    let odds = rookie_odds();
    let items = rookie_items();
    for nonce in 1..=50 {
        let input = DrawInput { nonce, ..ROOKIE };
        let drawn = draw(&seed, &odds, &items, 4, &input).unwrap();
        for (slot, &index) in (0..).zip(&drawn) {
            let rarity = &odds[draw_rarity(&seed, &odds, &input, slot).unwrap()].rarity;
            let pool: Vec<usize> = (0..items.len())
                .filter(|&n| items[n].rarity == *rarity)
                .collect();
            let i = uniform(&seed, "item", &input, slot, pool.len() as u64);
            assert_eq!(index, pool[i as usize], "nonce {nonce} slot {slot}");
        }
    }
}
