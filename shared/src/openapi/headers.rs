//! The schemas of the response headers several operations send.

use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{ObjectBuilder, Schema, Type};
use utoipa::{PartialSchema, ToSchema};

/// A header's value: a string matching `pattern`, described (on the schema, as utoipa takes a
/// header's own description only as a literal).
fn matching(pattern: &str, description: &str) -> RefOr<Schema> {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .pattern(Some(pattern))
        .description(Some(description))
        .into()
}

/// A header schema, inlined where it is used.
macro_rules! header_schema {
    ($(#[$doc:meta])* $name:ident = $schema:expr) => {
        $(#[$doc])*
        pub struct $name;

        impl PartialSchema for $name {
            fn schema() -> RefOr<Schema> {
                $schema
            }
        }

        impl ToSchema for $name {}
    };
}

header_schema!(
    /// `Location` of a started purchase.
    PurchaseLocation = matching(
        "^/api/packs/[A-Za-z0-9_-]{1,64}/purchases/[A-Za-z0-9_-]{1,64}$",
        "The purchase's address, `/api/packs/{packId}/purchases/{purchaseId}` (GET it, PUT to \
         pay).",
    )
);
header_schema!(
    /// `Location` of a top-up asked for.
    TopUpLocation = matching(
        "^/api/me/cash/top-ups/[A-Za-z0-9_-]{1,64}$",
        "The top-up's address, `/api/me/cash/top-ups/{topUpId}`.",
    )
);
header_schema!(
    /// `Idempotent-Replayed`: only ever `true`.
    Replayed = ObjectBuilder::new()
        .schema_type(Type::String)
        .enum_values(Some(["true"]))
        .description(Some(
            "`true` when the answer repeats an earlier one (nothing changed); absent otherwise.",
        ))
        .into()
);
