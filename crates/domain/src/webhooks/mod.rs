//! Webhooks (issue 46; docs/events.md, "Delivery"): the Standard Webhooks signatures
//! ([`signature`]), the endpoints events are delivered to ([`endpoint`]), a delivery and its
//! attempts ([`delivery`]), the retry schedule and what each answer decides ([`retry`]), and
//! which addresses a delivery may never reach ([`address`]).

/// `Display` and a checked `Deserialize` for an id held as its text and parsed by `parse`.
macro_rules! id_text {
    ($id:ident) => {
        impl std::fmt::Display for $id {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl<'de> serde::Deserialize<'de> for $id {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                Self::parse(String::deserialize(deserializer)?).map_err(serde::de::Error::custom)
            }
        }
    };
}

pub mod address;
pub mod delivery;
pub mod endpoint;
pub mod retry;
mod signature;

pub use signature::*;
