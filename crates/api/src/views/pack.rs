//! A pack as the API answers it (a page of packs, a pack's detail, the dashboard's drops): the
//! text [`PackDocument::write_json`](domain::packs::document::PackDocument::write_json) writes.
//! Its schema is the domain's `Pack` with the countdowns that the answer adds, and the one every
//! answer's countdown to an instant follows ([`countdown`]).

use std::borrow::Cow;

use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{KnownFormat, ObjectBuilder, Schema, SchemaFormat, SchemaType, Type};
use utoipa::{PartialSchema, ToSchema};

use crate::openapi::schemas::with_properties;
use domain::packs::Pack;
use domain::packs::document::{CLOSES_IN_MS, OPENS_IN_MS, SALE_ENDS_IN_MS, SALE_STARTS_IN_MS};
use domain::queue::terms::QueueTerms;

/// What a countdown field says beyond its instant's name: the same on every answer.
pub const COUNTDOWN_RULE: &str = "Count down from this, not from the device's clock (GET \
/api/time gives the server's). A shared cache may answer with a copy: subtract its `Age` header \
(seconds × 1000) when the answer has one.";

/// A countdown to `instant` (a field of the same object): whole milliseconds from the answer
/// until it, 0 once it has passed; with `nullable`, null when the instant is.
pub fn countdown(instant: &str, nullable: bool) -> RefOr<Schema> {
    let types = if nullable {
        SchemaType::from_iter([Type::Integer, Type::Null])
    } else {
        SchemaType::Type(Type::Integer)
    };
    let null = if nullable {
        "; null when it is null"
    } else {
        ""
    };
    ObjectBuilder::new()
        .schema_type(types)
        .format(Some(SchemaFormat::KnownFormat(KnownFormat::Int64)))
        .minimum(Some(0))
        .description(Some(format!(
            "Milliseconds from this answer until `{instant}` (0 once it has passed{null}). \
             {COUNTDOWN_RULE}"
        )))
        .examples([60_000])
        .into()
}

/// The schema of a pack as answered (named `Pack`): its fields as seeded, and the countdowns.
pub struct PackJson;

impl PartialSchema for PackJson {
    fn schema() -> RefOr<Schema> {
        with_properties(
            Pack::schema(),
            [
                (SALE_STARTS_IN_MS, countdown("saleStartsAt", true)),
                (SALE_ENDS_IN_MS, countdown("saleEndsAt", true)),
            ],
        )
    }
}

impl ToSchema for PackJson {
    fn name() -> Cow<'static, str> {
        Pack::name()
    }

    fn schemas(schemas: &mut Vec<(String, RefOr<Schema>)>) {
        Pack::schemas(schemas);
        // The queue's terms as answered, with their countdowns: pushed after the domain's
        // (which a seed file holds) under the same name, so that the document keeps this one.
        let terms = with_properties(
            QueueTerms::schema(),
            [
                (OPENS_IN_MS, countdown("opensAt", false)),
                (CLOSES_IN_MS, countdown("closesAt", false)),
            ],
        );
        schemas.push((QueueTerms::name().into_owned(), terms));
    }
}
