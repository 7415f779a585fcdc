//! The ids of the aggregates, as types: parsed once where they enter (a path, a seed file, a
//! token's `sub`, a stored item), so that a function taking a [`PackId`] and a [`PurchaseId`]
//! cannot be handed them swapped, and nothing past the edge checks a grammar again.
//!
//! None converts to text implicitly (no `Deref<Target = str>`, no comparison with a `str`): keys,
//! logs and JSON ask for the text with `as_str()` (or `Display`), so an id cannot be passed where
//! another text is expected. Each serialises as its text; reading one from JSON or a stored item
//! checks the grammar again, so a malformed id in a seed file or an item is an error where it is
//! read, not later.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize};

/// Why a text is not an id.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{kind} must be {rule}")]
pub struct InvalidId {
    pub kind: &'static str,
    pub rule: &'static str,
}

/// The grammar of pack and purchase ids (and of path parameters): `[A-Za-z0-9_-]{1,64}`.
pub fn is_valid_id(id: &str) -> bool {
    (1..=64).contains(&id.len())
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// The longest user id (a token's `sub`) accepted: it becomes part of keys (`USER#<sub>`,
/// `CASH#<sub>`), which DynamoDB caps at 2,048 bytes; an identity provider's subjects are far
/// shorter (255 is the common limit), and one store must not accept what the other refuses.
pub const MAX_USER_ID_BYTES: usize = 255;

fn is_valid_user_id(id: &str) -> bool {
    (1..=MAX_USER_ID_BYTES).contains(&id.len())
}

macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident, $kind:literal, $rule:literal, $valid:path) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
        #[serde(transparent)]
        pub struct $name(String);

        impl $name {
            pub fn parse(text: impl Into<String>) -> Result<Self, InvalidId> {
                let text = text.into();
                if $valid(&text) {
                    Ok(Self(text))
                } else {
                    Err(InvalidId {
                        kind: $kind,
                        rule: $rule,
                    })
                }
            }

            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                Self::parse(String::deserialize(deserializer)?).map_err(serde::de::Error::custom)
            }
        }
    };
}

/// The macro, for id types whose grammar belongs to a domain module (a display name).
pub(crate) use id_type;

id_type!(
    /// A pack's id.
    PackId,
    "a pack id",
    "1-64 characters of A-Z, a-z, 0-9, _ and -",
    is_valid_id
);
id_type!(
    /// A purchase's id (a UUID the start mints; the grammar of every id).
    PurchaseId,
    "a purchase id",
    "1-64 characters of A-Z, a-z, 0-9, _ and -",
    is_valid_id
);
id_type!(
    /// A fan: the `sub` of their session token.
    UserId,
    "a user id",
    "1-255 bytes",
    is_valid_user_id
);
id_type!(
    /// A Cash top-up's id (derived from its user and `Idempotency-Key`; the grammar of every id).
    TopUpId,
    "a top-up id",
    "1-64 characters of A-Z, a-z, 0-9, _ and -",
    is_valid_id
);
id_type!(
    /// A league of the catalogue (`nba`).
    LeagueId,
    "a league id",
    "1-64 characters of A-Z, a-z, 0-9, _ and -",
    is_valid_id
);
id_type!(
    /// A team of the catalogue (`nba-lal`: its league's id, `-`, its abbreviation; see
    /// [`crate::catalog`]).
    TeamId,
    "a team id",
    "1-64 characters of A-Z, a-z, 0-9, _ and -",
    is_valid_id
);
id_type!(
    /// One of a fan's linked wallets (derived from its payload: [`crate::wallets::wallet_id`]).
    WalletId,
    "a wallet id",
    "1-64 characters of A-Z, a-z, 0-9, _ and -",
    is_valid_id
);

id_type!(
    /// A quest the operator seeded (`first-pack`).
    QuestId,
    "a quest id",
    "1-64 characters of A-Z, a-z, 0-9, _ and -",
    is_valid_id
);

id_type!(
    /// A fan's entry in a pack's waiting room: 128 random bits as 32 lowercase hex digits, the
    /// fan's public name in the line (the entrants list shows it, never the user id).
    EntryId,
    "an entry id",
    "1-64 characters of A-Z, a-z, 0-9, _ and -",
    is_valid_id
);

id_type!(
    /// A product of the store (a Cash bundle or a cosmetic) the operator seeded.
    ProductId,
    "a product id",
    "1-64 characters of A-Z, a-z, 0-9, _ and -",
    is_valid_id
);

id_type!(
    /// An order of a product (derived from its user and `Idempotency-Key`:
    /// [`crate::products::order::order_id`]).
    OrderId,
    "an order id",
    "1-64 characters of A-Z, a-z, 0-9, _ and -",
    is_valid_id
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_parse_their_grammar_and_nothing_else() {
        assert!(PackId::parse("pack_1-A").is_ok());
        for bad in ["", "a b", "a/b", "é", &"a".repeat(65)] {
            assert!(PackId::parse(bad).is_err(), "{bad:?}");
            assert!(PurchaseId::parse(bad).is_err(), "{bad:?}");
            assert!(LeagueId::parse(bad).is_err(), "{bad:?}");
            assert!(TeamId::parse(bad).is_err(), "{bad:?}");
            assert!(WalletId::parse(bad).is_err(), "{bad:?}");
        }
        assert!(UserId::parse("auth0|user@example.com").is_ok());
        assert!(UserId::parse("x".repeat(255)).is_ok());
        assert!(UserId::parse("x".repeat(256)).is_err());
        assert!(UserId::parse("").is_err());
    }

    #[test]
    fn ids_read_from_json_are_checked_and_written_as_text() {
        let id: PackId = serde_json::from_str(r#""genesis""#).unwrap();
        assert_eq!(serde_json::to_string(&id).unwrap(), r#""genesis""#);
        let error = serde_json::from_str::<PackId>(r#""no spaces""#).unwrap_err();
        assert!(error.to_string().contains("a pack id must be"), "{error}");
    }
}
