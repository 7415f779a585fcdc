//! Schemas of values the API writes as plain JSON strings or booleans but with a rule of their
//! own (ids, currencies, hashes, times), and the few JSON Schema keywords utoipa has no attribute
//! for (`const`, `not`).

use utoipa::openapi::extensions::Extensions;
use utoipa::openapi::schema::{KnownFormat, ObjectBuilder, Schema, SchemaFormat, SchemaType, Type};
use utoipa::openapi::{Object, RefOr};
use utoipa::{PartialSchema, ToSchema};

use crate::timestamp::Timestamp;

fn string() -> ObjectBuilder {
    ObjectBuilder::new().schema_type(Type::String)
}

/// Any value bound by one JSON Schema keyword utoipa's builders lack, written as it is.
fn keyword(name: &str, value: serde_json::Value) -> ObjectBuilder {
    ObjectBuilder::new()
        .schema_type(SchemaType::AnyValue)
        .extensions(Some(Extensions::from_iter([(name, value)])))
}

/// A string schema with a rule, as a named component.
macro_rules! string_schema {
    ($(#[$doc:meta])* $name:ident = $schema:expr) => {
        $(#[$doc])*
        pub struct $name;

        impl PartialSchema for $name {
            fn schema() -> RefOr<Schema> {
                $schema.into()
            }
        }

        impl ToSchema for $name {}
    };
}

string_schema!(
    /// The grammar of every id (packs, purchases, items, top-ups, teams, leagues, entries).
    Id = string()
        .pattern(Some("^[A-Za-z0-9_-]{1,64}$"))
        .description(Some("1-64 characters of `A-Z`, `a-z`, `0-9`, `_` and `-`."))
);
string_schema!(
    /// An ISO 4217 currency code.
    Currency = string()
        .pattern(Some("^[A-Z]{3}$"))
        .description(Some("ISO 4217 code."))
);
string_schema!(
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

/// `const: false`: the `success` of an error body.
pub fn always_false() -> Object {
    keyword("const", false.into()).build()
}

/// `const: true`: the `success` of a link's answer, the `received` of a webhook's.
pub fn always_true() -> Object {
    keyword("const", true.into()).build()
}

/// Any JSON value that is truthy by JavaScript's rule: not `false`, `0`, `""` or `null`.
pub fn truthy() -> Object {
    keyword("not", serde_json::json!({"enum": [false, 0, "", null]}))
        .description(Some(
            "Any JSON value that is truthy (not false, 0, \"\" or null). Stored exactly as sent.",
        ))
        .build()
}

/// `base`'s object schema with `more` properties, all required, as one object. What serde's
/// `flatten` writes as one object stays one object here: utoipa's `allOf` for it would make an
/// object of `additionalProperties: false` refuse the added properties.
pub fn with_properties(
    base: RefOr<Schema>,
    more: impl IntoIterator<Item = (&'static str, RefOr<Schema>)>,
) -> RefOr<Schema> {
    let RefOr::T(Schema::Object(mut object)) = base else {
        unreachable!("only objects are extended");
    };
    for (name, schema) in more {
        object.properties.insert(name.to_owned(), schema);
        object.required.push(name.to_owned());
    }
    RefOr::T(Schema::Object(object))
}
