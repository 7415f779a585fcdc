//! Schemas of values the API writes as plain JSON strings or booleans but with a rule of their
//! own (ids, currencies, hashes: the domain's [`domain::json_schema`], re-exported here), and the
//! few JSON Schema keywords utoipa has no attribute for (`const`, `not`).

use utoipa::openapi::extensions::Extensions;
use utoipa::openapi::schema::{ObjectBuilder, Schema, SchemaType};
use utoipa::openapi::{Object, RefOr};

pub use domain::json_schema::{Currency, Hex32, Id};

/// Any value bound by one JSON Schema keyword utoipa's builders lack, written as it is.
fn keyword(name: &str, value: serde_json::Value) -> ObjectBuilder {
    ObjectBuilder::new()
        .schema_type(SchemaType::AnyValue)
        .extensions(Some(Extensions::from_iter([(name, value)])))
}

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
