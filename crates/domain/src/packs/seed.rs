//! Seed files: a JSON array of packs, in the API's shape. Every pack is checked before anything
//! is written; a bad one is named by its position, its id and the field.
//!
//! Re-seeding must not undo what buyers did: [`plan_reseed`] decides what a file may change of a
//! pack already stored. Once a sale has started, what buyers pay for and draw from is frozen
//! (price, odds, items, itemsPerPack, totalSupply, saleStartsAt, supplyShards, humanCheck) and `remaining` belongs to the
//! purchases; once it has ended, its seed may be public, so its end cannot move. A pack's `queue`
//! freezes before its line opens (`TERMS_FREEZE_SECONDS` ahead of `opensAt`), whatever its sale.

use crate::packs::Pack;
use crate::queue::terms::QueueTerms;
use crate::timestamp::Timestamp;

/// How a pack of a seed file is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SeedWrite {
    /// No such pack yet: written whole, with a new server seed.
    Create,
    /// Its sale has not started: rewritten whole, `remaining` included (no purchase can exist).
    Replace,
    /// Its sale has started: the frozen fields are unchanged and `remaining` is kept.
    Update,
}

/// A pack's terms freeze this long before its sale starts: `seed-packs` runs on an operator's
/// machine, whose clock may be behind the functions' ones, and a pack replaced whole once its
/// sale has started (by the functions' clock) would get back units already sold.
pub const TERMS_FREEZE_SECONDS: i64 = 300;

/// Whether `stored` may still be replaced whole at `now` (the operator's clock): its sale starts
/// more than [`TERMS_FREEZE_SECONDS`] later.
pub fn replaceable(stored: &Pack, now: Timestamp) -> bool {
    !stored.sale_started_at(freeze_bound(now))
}

/// `now` moved [`TERMS_FREEZE_SECONDS`] ahead: a sale starting by then counts as started.
pub fn freeze_bound(now: Timestamp) -> Timestamp {
    now.plus_seconds(TERMS_FREEZE_SECONDS).unwrap_or(now)
}

/// Why a pack of a seed file cannot be written over the stored one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReseedRefusal {
    #[error("its sale has started or starts within 5 minutes, so {0} can no longer change")]
    Frozen(&'static str),
    #[error("saleEndsAt cannot be set to a time already past (end a sale at a time from now on)")]
    EndInThePast,
    #[error(
        "its sale has ended (its server seed may be public), so saleEndsAt can no longer change"
    )]
    Ended,
    #[error(
        "its queue opens within 5 minutes or has opened (its seed's hash and beacon round are \
         public, fans may have joined), so queue can no longer change"
    )]
    QueueFrozen,
}

/// What writing `new` over `stored` (the pack as stored, `None` when new) at `now` may do.
pub fn plan_reseed(
    stored: Option<&Pack>,
    new: &Pack,
    now: Timestamp,
) -> Result<SeedWrite, ReseedRefusal> {
    let Some(stored) = stored else {
        return Ok(SeedWrite::Create);
    };
    if stored.sale_ends_at != new.sale_ends_at {
        if stored.sale_ended_at(now) {
            return Err(ReseedRefusal::Ended);
        }
        if new.sale_ends_at.is_some_and(|ends| ends < now) {
            return Err(ReseedRefusal::EndInThePast);
        }
    }
    // A queue's terms freeze before its line opens, which is before its sale: its commitment
    // (seed hash, beacon round) is public from then, and entries were taken under it.
    let queue_frozen = |queue: &Option<QueueTerms>| queue.is_some_and(|q| q.frozen_at(now));
    if stored.queue != new.queue && (queue_frozen(&stored.queue) || queue_frozen(&new.queue)) {
        return Err(ReseedRefusal::QueueFrozen);
    }
    if replaceable(stored, now) {
        return Ok(SeedWrite::Replace);
    }
    let frozen: [(&'static str, bool); 8] = [
        ("price", stored.price == new.price),
        ("odds", stored.odds == new.odds),
        ("items", stored.items == new.items),
        ("itemsPerPack", stored.items_per_pack == new.items_per_pack),
        ("totalSupply", stored.total_supply == new.total_supply),
        ("saleStartsAt", stored.sale_starts_at == new.sale_starts_at),
        ("supplyShards", stored.shard_count() == new.shard_count()),
        // Buyers started under it: a check added mid-sale would treat them unlike the rest.
        ("humanCheck", stored.human_check == new.human_check),
    ];
    match frozen.into_iter().find(|(_, same)| !same) {
        Some((field, _)) => Err(ReseedRefusal::Frozen(field)),
        None => Ok(SeedWrite::Update),
    }
}

/// What a seeding write does to a pack's queue (its state and secret seed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueueWrite {
    /// Written as these terms say: a new queue gets a new secret seed; one seeded before keeps
    /// its seed (and so its hash) and takes the terms' close and beacon round.
    Put(QueueTerms),
    /// A queue taken off before it froze: its state and seed go.
    Remove,
    /// Nothing: no queue, or a frozen one (which [`plan_reseed`] kept unchanged), whose state
    /// belongs to the keeper from then on.
    Keep,
}

/// What writing `pack` as `write` at `now` does to its queue.
pub fn queue_write(pack: &Pack, write: SeedWrite, now: Timestamp) -> QueueWrite {
    match (pack.queue, write) {
        (Some(terms), SeedWrite::Create) => QueueWrite::Put(terms),
        (Some(terms), _) if !terms.frozen_at(now) => QueueWrite::Put(terms),
        (None, SeedWrite::Replace) => QueueWrite::Remove,
        _ => QueueWrite::Keep,
    }
}

/// Why a seed file (of packs, or another catalogue's entries: `noun`) was refused whole.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SeedError {
    #[error("{path}: {problem}")]
    Syntax { path: String, problem: String },
    #[error("{noun} [{index}] ({id}): {field}: {problem}")]
    Invalid {
        noun: &'static str,
        index: usize,
        id: String,
        field: String,
        problem: String,
    },
    #[error("{noun} [{index}] ({id}): id repeats {noun} [{first}]")]
    DuplicateId {
        noun: &'static str,
        index: usize,
        first: usize,
        id: String,
    },
}

/// Parses and validates a whole seed file.
pub fn parse_seed(json: &[u8]) -> Result<Vec<Pack>, SeedError> {
    parse_file(json, "pack", Pack::validate, |pack| pack.id.clone())
}

/// Parses a seed file of `noun`s (a JSON array) and checks each with `validate` and its `id`
/// against the earlier ones: the first problem names the entry by position, id and field.
pub(crate) fn parse_file<T: serde::de::DeserializeOwned>(
    json: &[u8],
    noun: &'static str,
    validate: impl Fn(&T) -> Result<(), crate::packs::FieldError>,
    id: impl Fn(&T) -> String,
) -> Result<Vec<T>, SeedError> {
    let deserializer = &mut serde_json::Deserializer::from_slice(json);
    let entries: Vec<T> =
        serde_path_to_error::deserialize(deserializer).map_err(|error| SeedError::Syntax {
            path: match error.path().to_string().as_str() {
                "." => "file".into(),
                path => format!("{noun} {path}"),
            },
            problem: error.into_inner().to_string(),
        })?;
    let ids: Vec<String> = entries.iter().map(id).collect();
    for (index, entry) in entries.iter().enumerate() {
        validate(entry).map_err(|error| SeedError::Invalid {
            noun,
            index,
            id: ids[index].clone(),
            field: error.field,
            problem: error.problem,
        })?;
        if let Some(first) = ids[..index]
            .iter()
            .position(|earlier| *earlier == ids[index])
        {
            return Err(SeedError::DuplicateId {
                noun,
                index,
                first,
                id: ids[index].clone(),
            });
        }
    }
    Ok(entries)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packs::fixtures::sample_pack;
    use crate::packs::{Odds, Price};

    fn ts(text: &str) -> Timestamp {
        Timestamp::parse(text).unwrap()
    }

    #[test]
    fn a_pack_on_sale_keeps_what_buyers_pay_for() {
        let now = ts("2026-06-01T12:00:00Z");
        let stored = sample_pack("p"); // on sale since 2026-01-01
        assert_eq!(
            plan_reseed(None, &stored, now),
            Ok(SeedWrite::Create),
            "a new pack"
        );
        let mut cosmetic = stored.clone();
        cosmetic.name = "Renamed".into();
        cosmetic.description = "New words".into();
        cosmetic.image_url = None;
        cosmetic.status = crate::packs::PackStatus::Archived;
        cosmetic.max_per_user = Some(9);
        cosmetic.remaining = 0;
        cosmetic.sale_ends_at = Some(ts("2026-06-01T12:00:00Z"));
        assert_eq!(
            plan_reseed(Some(&stored), &cosmetic, now),
            Ok(SeedWrite::Update)
        );
        type Change = fn(&mut Pack);
        let frozen: [(&str, Change); 7] = [
            ("price", |p| {
                p.price = Price {
                    amount: 1,
                    currency: "USD".into(),
                }
            }),
            ("odds", |p| {
                p.odds.reverse();
            }),
            ("items", |p| p.items[0].name = "Other".into()),
            ("itemsPerPack", |p| p.items_per_pack += 1),
            ("totalSupply", |p| p.total_supply += 1),
            ("saleStartsAt", |p| {
                p.sale_starts_at = Some(ts("2026-07-01T00:00:00Z"))
            }),
            ("supplyShards", |p| p.supply_shards = Some(3)),
        ];
        for (field, change) in frozen {
            let mut new = stored.clone();
            change(&mut new);
            assert_eq!(
                plan_reseed(Some(&stored), &new, now),
                Err(ReseedRefusal::Frozen(field))
            );
        }
    }

    #[test]
    fn a_pack_freezes_five_minutes_before_its_sale() {
        let stored = sample_pack("p"); // starts 2026-01-01
        let mut new = stored.clone();
        new.price.amount = 1;
        for (now, plan) in [
            ("2025-12-31T23:54:59.999999999Z", Ok(SeedWrite::Replace)),
            ("2025-12-31T23:55:00Z", Err(ReseedRefusal::Frozen("price"))),
        ] {
            assert_eq!(plan_reseed(Some(&stored), &new, ts(now)), plan, "{now}");
        }
    }

    #[test]
    fn before_its_sale_a_pack_can_change_whole() {
        let now = ts("2025-06-01T12:00:00Z");
        let stored = sample_pack("p"); // starts 2026-01-01
        let mut new = stored.clone();
        new.price.amount = 1;
        new.odds = vec![Odds {
            rarity: "common".into(),
            chance_bps: 10_000,
        }];
        new.remaining = 1;
        assert_eq!(
            plan_reseed(Some(&stored), &new, now),
            Ok(SeedWrite::Replace)
        );
    }

    #[test]
    fn a_sale_end_cannot_go_into_the_past_nor_move_once_reached() {
        let now = ts("2026-06-01T12:00:00Z");
        let stored = sample_pack("p");
        let mut past = stored.clone();
        past.sale_ends_at = Some(ts("2026-06-01T11:59:59Z"));
        assert_eq!(
            plan_reseed(Some(&stored), &past, now),
            Err(ReseedRefusal::EndInThePast)
        );
        let mut ended = stored.clone();
        ended.sale_ends_at = Some(ts("2026-05-01T00:00:00Z"));
        for moved in [None, Some(ts("2027-01-01T00:00:00Z"))] {
            let mut new = ended.clone();
            new.sale_ends_at = moved;
            assert_eq!(
                plan_reseed(Some(&ended), &new, now),
                Err(ReseedRefusal::Ended)
            );
        }
        let mut reactivated = ended.clone();
        reactivated.name = "Back".into();
        assert_eq!(
            plan_reseed(Some(&ended), &reactivated, now),
            Ok(SeedWrite::Update),
            "an ended pack may still be renamed"
        );
    }

    #[test]
    fn a_queue_freezes_five_minutes_before_its_line_opens() {
        let mut stored = sample_pack("p"); // starts 2026-01-01
        stored.queue = Some(QueueTerms {
            opens_at: ts("2025-12-31T20:00:00Z"),
            closes_at: ts("2025-12-31T23:00:00Z"),
            pass_seconds: 600,
        });
        let mut new = stored.clone();
        new.queue = new.queue.map(|q| QueueTerms {
            pass_seconds: 900,
            ..q
        });
        assert_eq!(
            plan_reseed(Some(&stored), &new, ts("2025-12-31T19:54:59Z")),
            Ok(SeedWrite::Replace)
        );
        for (now, changed) in [
            ("2025-12-31T19:55:00Z", new.clone()),
            ("2025-12-31T21:00:00Z", new.clone()),
            (
                "2025-12-31T21:00:00Z",
                Pack {
                    queue: None,
                    ..stored.clone()
                },
            ),
        ] {
            assert_eq!(
                plan_reseed(Some(&stored), &changed, ts(now)),
                Err(ReseedRefusal::QueueFrozen),
                "{now}"
            );
        }
        let unqueued = Pack {
            queue: None,
            ..stored.clone()
        };
        assert_eq!(
            plan_reseed(Some(&unqueued), &stored, ts("2025-12-31T21:00:00Z")),
            Err(ReseedRefusal::QueueFrozen),
            "a queue cannot be added to a line that would already be open"
        );
        let mut renamed = stored.clone();
        renamed.name = "Renamed".into();
        assert_eq!(
            plan_reseed(Some(&stored), &renamed, ts("2025-12-31T21:00:00Z")),
            Ok(SeedWrite::Replace),
            "the rest of the pack stays replaceable until its sale"
        );
    }

    fn file(packs: serde_json::Value) -> Vec<u8> {
        packs.to_string().into_bytes()
    }

    #[test]
    fn the_shipped_seed_file_is_valid() {
        let packs = parse_seed(include_bytes!("../../../../infra/seed/packs.json")).unwrap();
        assert!(packs.len() >= 8, "a realistic set");
        assert!(
            packs.iter().any(|pack| pack.queue.is_some()),
            "a drop with a waiting room, for scripts/local"
        );
    }

    #[test]
    fn errors_name_the_pack_and_field() {
        let mut bad = serde_json::to_value(sample_pack("b")).unwrap();
        bad["price"]["amount"] = "4.99".into();
        let error = parse_seed(&file(serde_json::json!([sample_pack("a"), bad]))).unwrap_err();
        assert!(error.to_string().contains("[1].price.amount"), "{error}");

        let mut bad = sample_pack("c");
        bad.odds[0].chance_bps = 1;
        let error = parse_seed(&file(serde_json::json!([sample_pack("a"), bad]))).unwrap_err();
        assert_eq!(
            error.to_string(),
            "pack [1] (c): odds: chanceBps must add up to 10000, not 1001"
        );

        let error = parse_seed(&file(serde_json::json!([
            sample_pack("a"),
            sample_pack("a")
        ])))
        .unwrap_err();
        assert_eq!(
            error,
            SeedError::DuplicateId {
                noun: "pack",
                index: 1,
                first: 0,
                id: "a".into()
            }
        );

        assert!(
            parse_seed(b"{}")
                .unwrap_err()
                .to_string()
                .starts_with("file:")
        );
    }
}
