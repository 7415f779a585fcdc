//! Display names: how a fan is shown and found (`GET /api/locker-rooms/{displayName}`).
//!
//! 3-24 characters of ASCII letters, digits, `_`, `.` and `-`. ASCII only: uniqueness over
//! Unicode would need normalisation (NFC and NFD `é` look alike), full case folding and the
//! whole confusables table (Cyrillic `а` and Latin `a`) to mean what a fan sees; and every ASCII
//! name is a path segment as it stands (no `/`, no percent-encoding, and at 3 characters at least
//! never `.` or `..`).
//!
//! Unique by how a name looks, not how it is spelt: a name's key ([`DisplayName::key`]) is its
//! confusable skeleton ([`skeleton`]), so `Hollow`, `HoIlow`, `H0llow` and `Hollow_` are one
//! name, held by one fan, and each finds that fan's locker room. The name keeps the spelling its
//! fan chose. A name a fan may take ([`DisplayName::is_claimable`]) also has a letter or a digit
//! and does not read as a staff or system name ([`RESERVED`]).

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize};

use crate::ids::{InvalidId, id_type};

pub const MIN_NAME_CHARS: usize = 3;
pub const MAX_NAME_CHARS: usize = 24;

/// Whether `name` is 3-24 characters of `[A-Za-z0-9_.-]`.
pub fn is_valid_display_name(name: &str) -> bool {
    (MIN_NAME_CHARS..=MAX_NAME_CHARS).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
}

id_type!(
    /// A fan's display name, as they spelt it. Two names that look alike are one name
    /// ([`DisplayName::key`]).
    DisplayName,
    "a display name",
    "3-24 characters of A-Z, a-z, 0-9, _, . and -",
    is_valid_display_name
);

/// The skeleton of `name`: what names that look alike share (Unicode TR39's confusable skeleton,
/// after the foldings it leaves to us for this alphabet). In order:
///
/// 1. ASCII lowercase: names are unique without regard to case.
/// 2. `.`, `_` and `-` dropped: at a glance `Hollow_1`, `Hollow-1` and `Hollow.1` are one name
///    (so are `Hol.low` and `Hollow`), and a name of separators only has an empty skeleton.
/// 3. `i` to `l`: TR39 folds a capital `I` to `l`, and step 1 has made it `i` (lowercasing
///    after TR39 instead would miss its `m`, which it folds only in lowercase).
/// 4. `w` to `vv`: in a narrow font as alike as `m` and `rn`, which TR39 folds; it has no entry
///    for `w`. Folded this way round, as TR39 folds `m` to `rn`, so that `vw`, `wv` and `vvv`
///    meet.
/// 5. TR39's skeleton (`unicode-security`): of what is left here, `0` to `O`, `1` to `l` and `m`
///    to `rn`; and then ASCII lowercase again, for its `O`.
///
/// No other folding: `5`/`S`, `2`/`Z`, `8`/`B` and the like are told apart in the fonts names are
/// shown in, and a stricter skeleton refuses more honest names.
pub fn skeleton(name: &str) -> String {
    let mut folded = String::with_capacity(name.len());
    for c in name.chars().map(|c| c.to_ascii_lowercase()) {
        match c {
            '.' | '_' | '-' => {}
            'i' => folded.push('l'),
            'w' => folded.push_str("vv"),
            c => folded.push(c),
        }
    }
    unicode_security::skeleton(&folded)
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

/// Where a reserved word may not stand in a name's skeleton.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// The whole name.
    Whole,
    /// Its start (`root_1`, `System.Notice`).
    Start,
    /// Its start or its end (`admin_1`, `NBA_Official`).
    Edge,
}

/// Names no fan may take, compared skeleton to skeleton (so `Adm1n`, `ADMlN` and `adrnin` are
/// `admin`): words that pass for the operator (`admin`, `support`, `fan-api`, ...) at either end
/// of a name; `root`, `system` and `sysop` at its start only (at the end they make `Groot` and
/// `Ecosystem`); and words a client may show as a missing name (`null`, `undefined`, ...) as the
/// whole name. A word inside a name is left alone (`Badminton`).
pub const RESERVED: [(&str, Place); 30] = [
    ("admin", Place::Edge),
    ("moderator", Place::Edge),
    ("official", Place::Edge),
    ("support", Place::Edge),
    ("staff", Place::Edge),
    ("fan-api", Place::Edge),
    ("helpdesk", Place::Edge),
    ("operator", Place::Edge),
    ("root", Place::Start),
    ("system", Place::Start),
    ("sysop", Place::Start),
    ("null", Place::Whole),
    ("nil", Place::Whole),
    ("none", Place::Whole),
    ("undefined", Place::Whole),
    ("nan", Place::Whole),
    ("true", Place::Whole),
    ("false", Place::Whole),
    ("anonymous", Place::Whole),
    ("anon", Place::Whole),
    ("unknown", Place::Whole),
    ("deleted", Place::Whole),
    ("removed", Place::Whole),
    ("nobody", Place::Whole),
    ("everyone", Place::Whole),
    ("guest", Place::Whole),
    ("user", Place::Whole),
    ("api", Place::Whole),
    ("www", Place::Whole),
    ("help", Place::Whole),
];

/// What makes a display name unique, and how it is found: its [`skeleton`]. The store keeps one
/// item per key (`NAME#<key>`), so two fans racing for `Hollow` and `HoIlow` race for one item.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NameKey(String);

impl NameKey {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for NameKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl DisplayName {
    pub fn key(&self) -> NameKey {
        NameKey(skeleton(self.as_str()))
    }

    /// Whether a fan may take this name (checked when it is claimed; a stored name is read as
    /// it is): it has a letter or a digit, and it is not [`RESERVED`].
    pub fn is_claimable(&self) -> bool {
        let key = skeleton(self.as_str());
        !key.is_empty()
            && !RESERVED.iter().any(|(word, place)| {
                let word = skeleton(word);
                match place {
                    Place::Whole => key == word,
                    Place::Start => key.starts_with(&word),
                    Place::Edge => key.starts_with(&word) || key.ends_with(&word),
                }
            })
    }
}

/// What a change of name writes, beside the profile, in the same transaction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NameChange {
    /// The name stays (the patch does not name it, or names it as it is).
    Unchanged,
    /// The fan takes `claim` (on condition that nobody else holds it; holding it already is a
    /// change to a look-alike of their own name, `Hollow` to `HOLLOW` or `Hollow_`) and frees
    /// `release`, their old name, if they had one.
    Claim {
        claim: NameKey,
        release: Option<NameKey>,
    },
    /// The fan clears their name: `0` is freed.
    Release(NameKey),
}

/// The change from `current` to `wanted` (`None`: the patch does not name it; `Some(None)`:
/// it clears the name).
pub fn name_change(
    current: Option<&DisplayName>,
    wanted: Option<Option<&DisplayName>>,
) -> NameChange {
    match (current, wanted) {
        (_, None) | (None, Some(None)) => NameChange::Unchanged,
        (Some(old), Some(None)) => NameChange::Release(old.key()),
        (Some(old), Some(Some(new))) if old == new => NameChange::Unchanged,
        (old, Some(Some(new))) => {
            let claim = new.key();
            NameChange::Claim {
                release: old.map(DisplayName::key).filter(|old| *old != claim),
                claim,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(text: &str) -> DisplayName {
        DisplayName::parse(text).unwrap()
    }

    #[test]
    fn names_are_3_to_24_of_letters_digits_underscore_dot_dash() {
        for good in ["abc", "A.B", "...", "x_y-z.9", "Zoe"] {
            assert!(DisplayName::parse(good).is_ok(), "{good}");
        }
        assert!(DisplayName::parse("a".repeat(24)).is_ok());
        for bad in [
            "", "ab", "a b", "a/b", "a%2F", "Zoë", "a+b", "ab\u{0}", "a@b",
        ] {
            assert!(DisplayName::parse(bad).is_err(), "{bad:?}");
        }
        assert!(DisplayName::parse("a".repeat(25)).is_err());
        let error = serde_json::from_str::<DisplayName>(r#""no""#).unwrap_err();
        assert!(
            error.to_string().contains("a display name must be"),
            "{error}"
        );
    }

    #[test]
    fn the_key_ignores_case_and_the_name_keeps_it() {
        assert_eq!(name("Alice.B").key(), name("alice.b").key());
        assert_ne!(name("Alice.B"), name("alice.b"));
        assert_eq!(name("Alice.B").as_str(), "Alice.B");
    }

    #[test]
    fn names_that_look_alike_share_one_key() {
        let groups: [&[&str]; 7] = [
            &[
                "Hollow.96917",
                "HoIlow.96917",
                "H0llow.96917",
                "Hollow_96917",
                "Hollow-96917",
                "hollow96917",
                "HOLL0W_96917",
                "hoiiow.96917",
            ],
            &[
                "Hollow", "HoIlow", "H0llow", "hol.low", "HOLLOW", "Ho1low", "hoLIow",
            ],
            &["Mary", "rnary", "RNARY", "r.nary"],
            &["Wally", "VVally", "vvaIIy"],
            &["vw_fan", "wv_fan", "vvv-fan"],
            &["Zoe", "Z0E", "z.o.e"],
            &["admin", "Adm1n", "ADMIN", "adrnin", "ADMlN", "a_d_m_i_n"],
        ];
        for group in groups {
            let key = name(group[0]).key();
            for other in group {
                assert_eq!(name(other).key(), key, "{other} ~ {}", group[0]);
            }
        }
        // Told apart: not alike in the fonts names are shown in.
        for (one, other) in [
            ("Hollow", "Hallow"),
            ("S5S", "SSS"),
            ("Zed2", "ZedZ"),
            ("Bob8", "BobB"),
            ("Mary", "Nary"),
            ("Clark", "Dark"),
        ] {
            assert_ne!(name(one).key(), name(other).key(), "{one} / {other}");
        }
        assert_eq!(name("Hollow.96917").key().as_str(), "hollovv969l7");
        assert_eq!(name("Adm1n").key().as_str(), "adrnln");
    }

    #[test]
    fn staff_and_system_names_and_names_without_a_letter_are_not_claimable() {
        for refused in [
            "admin",
            "Adm1n",
            "ADMIN_96917",
            "adrnin.x",
            "TheRealAdmin",
            "SysAdmin",
            "Support",
            "support_96917",
            "FanSupport",
            "official.nba",
            "NBA_Official",
            "moderator7",
            "fan-api",
            "FanAPI_bot",
            "fan.api",
            "staff.x",
            "root",
            "R00T_96917",
            "system",
            "System.Notice",
            "null",
            "NULL",
            "Nul1",
            "undefined",
            "...",
            "_-_",
            "Anonymous",
            "guest",
        ] {
            assert!(!name(refused).is_claimable(), "{refused}");
        }
        for claimable in [
            "Hollow.96917",
            "Zoe.Hoops",
            "Badminton",
            "Groot",
            "Ecosystem",
            "Nullify",
            "Guests",
            "dunk_master",
            "a..",
            "007",
            "Modric",
        ] {
            assert!(name(claimable).is_claimable(), "{claimable}");
        }
    }

    #[test]
    fn a_change_claims_the_new_key_and_frees_the_old_one() {
        let (alice, bob) = (name("Alice"), name("bob"));
        assert_eq!(name_change(Some(&alice), None), NameChange::Unchanged);
        assert_eq!(name_change(None, Some(None)), NameChange::Unchanged);
        assert_eq!(
            name_change(Some(&alice), Some(Some(&alice))),
            NameChange::Unchanged
        );
        assert_eq!(
            name_change(Some(&alice), Some(None)),
            NameChange::Release(alice.key())
        );
        assert_eq!(
            name_change(None, Some(Some(&bob))),
            NameChange::Claim {
                claim: bob.key(),
                release: None
            }
        );
        assert_eq!(
            name_change(Some(&alice), Some(Some(&bob))),
            NameChange::Claim {
                claim: bob.key(),
                release: Some(alice.key())
            }
        );
        // A change of case keeps the key: claimed again (it is the fan's), nothing freed.
        // So does any change to a look-alike of the fan's own name.
        for alike in ["ALICE", "Al1ce", "A.l.i.c.e"] {
            assert_eq!(
                name_change(Some(&alice), Some(Some(&name(alike)))),
                NameChange::Claim {
                    claim: alice.key(),
                    release: None
                },
                "{alike}"
            );
        }
    }
}
