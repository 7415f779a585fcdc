//! Schemas of the domain's values the API writes as plain JSON strings with a rule of their own
//! (ids, currencies, hashes, times). They live with the domain, beside the types whose derived
//! schemas name them, so that the domain depends on no API module; the OpenAPI document
//! (`api::openapi`) re-exports them.

use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{KnownFormat, ObjectBuilder, Schema, SchemaFormat, Type};
use utoipa::{PartialSchema, ToSchema};

use crate::timestamp::Timestamp;

fn string() -> ObjectBuilder {
    ObjectBuilder::new().schema_type(Type::String)
}

/// A type that stands for a schema built by hand (a named component where it is referenced, or
/// inlined with `inline(...)`).
#[macro_export]
macro_rules! schema_type {
    ($(#[$doc:meta])* $name:ident = $schema:expr) => {
        $(#[$doc])*
        pub struct $name;

        impl utoipa::PartialSchema for $name {
            fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
                $schema.into()
            }
        }

        impl utoipa::ToSchema for $name {}
    };
}

schema_type!(
    /// The grammar of every id (packs, purchases, items, top-ups, teams, leagues, entries).
    Id = string()
        .pattern(Some("^[A-Za-z0-9_-]{1,64}$"))
        .description(Some("1-64 characters of `A-Z`, `a-z`, `0-9`, `_` and `-`."))
);
schema_type!(
    /// An ISO 4217 currency code.
    Currency = string()
        .pattern(Some("^[A-Z]{3}$"))
        .description(Some("ISO 4217 code."))
);
schema_type!(
    /// 32 bytes (a seed, or the SHA-256 of one) as lowercase hex.
    Hex32 = string().pattern(Some("^[0-9a-f]{64}$"))
);

impl PartialSchema for Timestamp {
    fn schema() -> RefOr<Schema> {
        string()
            .format(Some(SchemaFormat::KnownFormat(KnownFormat::DateTime)))
            .description(Some("RFC 3339, UTC."))
            .into()
    }
}

impl ToSchema for Timestamp {}
