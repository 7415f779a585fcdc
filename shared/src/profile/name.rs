//! Display names: how a fan is shown and found (`GET /api/locker-rooms/{displayName}`).
//!
//! 3-24 characters of ASCII letters, digits, `_`, `.` and `-`, unique without regard to case.
//! ASCII only: uniqueness over Unicode would need normalisation (NFC and NFD `é` look alike),
//! full case folding and a confusables table (Cyrillic `а` and Latin `a`) to mean what a fan
//! sees; and every ASCII name is a path segment as it stands (no `/`, no percent-encoding, and
//! at 3 characters at least never `.` or `..`).

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
    /// A fan's display name, as they chose its case. Two names that differ only in case are
    /// one name ([`DisplayName::key`]).
    DisplayName,
    "a display name",
    "3-24 characters of A-Z, a-z, 0-9, _, . and -",
    is_valid_display_name
);

/// What makes a display name unique: the name in lowercase. The store keeps one item per key
/// (`NAME#<key>`), so two fans racing for `Alice` and `alice` race for one item.
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
        NameKey(self.as_str().to_ascii_lowercase())
    }
}

/// What a change of name writes, beside the profile, in the same transaction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NameChange {
    /// The name stays (the patch does not name it, or names it as it is).
    Unchanged,
    /// The fan takes `claim` (on condition that nobody else holds it; holding it already is a
    /// change of case only) and frees `release`, their old name, if they had one.
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
        assert_eq!(name("Alice.B").key().as_str(), "alice.b");
        assert_ne!(name("Alice.B"), name("alice.b"));
        assert_eq!(name("Alice.B").as_str(), "Alice.B");
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
        assert_eq!(
            name_change(Some(&alice), Some(Some(&name("ALICE")))),
            NameChange::Claim {
                claim: alice.key(),
                release: None
            }
        );
    }
}
