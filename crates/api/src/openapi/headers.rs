//! The schemas of the response headers several operations send.

use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{ObjectBuilder, Schema, Type};

use domain::schema_type;

/// A header's value: a string matching `pattern`, described (on the schema, as utoipa takes a
/// header's own description only as a literal).
fn matching(pattern: &str, description: &str) -> RefOr<Schema> {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .pattern(Some(pattern))
        .description(Some(description))
        .into()
}

schema_type!(
    /// `Location` of a started purchase.
    PurchaseLocation = matching(
        "^/api/packs/[A-Za-z0-9_-]{1,64}/purchases/[A-Za-z0-9_-]{1,64}$",
        "The purchase's address, `/api/packs/{packId}/purchases/{purchaseId}` (GET it, PUT to \
         pay).",
    )
);
schema_type!(
    /// `Location` of a top-up asked for.
    TopUpLocation = matching(
        "^/api/me/cash/top-ups/[A-Za-z0-9_-]{1,64}$",
        "The top-up's address, `/api/me/cash/top-ups/{topUpId}`.",
    )
);
schema_type!(
    /// `Location` of an order placed.
    OrderLocation = matching(
        "^/api/me/orders/[A-Za-z0-9_-]{1,64}$",
        "The order's address, `/api/me/orders/{orderId}`.",
    )
);
schema_type!(
    /// `Idempotent-Replayed`: only ever `true`.
    Replayed = ObjectBuilder::new()
        .schema_type(Type::String)
        .enum_values(Some(["true"]))
        .description(Some(
            "`true` when the answer repeats an earlier one (nothing changed); absent otherwise.",
        ))
);

/// `Human-Check`, the request header a drop's door reads (`crate::http::human_check`).
#[derive(utoipa::IntoParams)]
#[into_params(parameter_in = Header)]
pub struct HumanCheckHeader {
    /// A Cloudflare Turnstile token (the widget's callback argument, at most 2,048 characters;
    /// the API reads up to 4,096) from a widget rendered with the door's `action`:
    /// `join_<packId>` for a queue's join, `start_<packId>` for a start on a pack whose operator
    /// asks for the check (a pack id too long for Turnstile's 32 characters gives
    /// `joinh_`/`starth_` and a hash: docs/human-check.md). Used once; at most 300 s old. Read
    /// only at a door that asks for it (anything there but a token siteverify passes is 403
    /// `human_check_failed`); elsewhere ignored, whatever it holds, so no grammar is declared.
    #[param(rename = "Human-Check", value_type = String, required = false)]
    pub human_check: Option<String>,
}
