//! The OpenAPI document of the API, generated from the handlers' `#[utoipa::path]` attributes
//! and the types they read and write. `openapi.yaml` is this document as committed; a test
//! (`crates/api/tests/openapi.rs`) keeps the two equal.

mod caching;
pub mod examples;
mod gate;
mod webhooks;

pub use webhooks::OPERATOR_IAM;
pub mod headers;
pub mod responses;
pub mod schemas;

use utoipa::OpenApi;
use utoipa::openapi::extensions::Extensions;
use utoipa::openapi::schema::{Schema, SchemaType, Type};
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::openapi::{RefOr, Required};

use responses::{
    AppVersionUnsupported, BadRequest, DeliveryNotFound, EndpointChanged, EndpointDisabled,
    EndpointNotFound, EventNotFound, HumanCheckFailed, InternalError, MethodNotAllowed,
    OperatorRequired, PayloadTooLarge, PurchaseNotFound, QuestNotFound, RateLimited, Unauthorized,
    Unavailable, UnsupportedMediaType,
};

/// The name of the session token's security scheme, as operations require it.
pub const SESSION_TOKEN: &str = "sessionToken";

#[derive(OpenApi)]
#[openapi(
    info(
        title = "fan-api",
        description = include_str!("description.md"),
    ),
    servers(
        (
            url = "{base_url}",
            description = "Deployed API (the `ApiBaseUrl` output of the SAM stack).",
            variables(("base_url" = (default = "https://api.example.com"))),
        ),
        (url = "http://127.0.0.1:3000", description = "Local API (`scripts/local`)."),
    ),
    components(responses(
        AppVersionUnsupported,
        BadRequest,
        Unauthorized,
        PurchaseNotFound,
        QuestNotFound,
        PayloadTooLarge,
        UnsupportedMediaType,
        MethodNotAllowed,
        InternalError,
        Unavailable,
        RateLimited,
        HumanCheckFailed,
        OperatorRequired,
        EventNotFound,
        EndpointNotFound,
        DeliveryNotFound,
        EndpointChanged,
        EndpointDisabled,
    )),
    modifiers(&SessionToken),
    tags(
        (name = "Packs"),
        (name = "Purchases"),
        (name = "Auth"),
        (name = "Me", description = "The signed-in fan's profile, own purchases, items, Cash balances and ledger, and linked wallets."),
        (name = "Cash"),
        (name = "Webhooks", description = "Events: every change the API makes, delivered to operators' endpoints as signed webhooks (Standard Webhooks; the document's `webhooks` section) and readable from feeds for 30 days (docs/events.md)."),
        (name = "Locker rooms", description = "A fan's public showcase of their pulls, by display name."),
        (name = "Products", description = "What a fan buys besides packs: Cash bundles (paid by card, with a bonus that is Cash like any other) and cosmetics shown on their profile and locker room (paid with Cash or a card), each order granted exactly once (docs/products.md)."),
        (name = "Catalogue", description = "The leagues and teams fans browse and packs name (public)."),
        (name = "Leaderboards", description = "Collector scores: the top of each board (public) and the fan's place."),
        (name = "Quests", description = "Goals the operator sets (open packs, collect items), the fan's progress on them, and their rewards, claimed once."),
        (name = "Misc", description = "What every app asks of its backend beside its features: is it up, what time is it, which app versions may call, is it in maintenance."),
        (name = "Waiting room", description = "A drop's line: fans join before the sale, their order is drawn after the close from a committed seed and a public beacon, and they are admitted in that order (docs/fairness.md)."),
    ),
)]
struct Document;

/// The bearer scheme of the session token.
struct SessionToken;

impl utoipa::Modify for SessionToken {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let scheme = HttpBuilder::new()
            .scheme(HttpAuthScheme::Bearer)
            .bearer_format("JWT")
            .description(Some(
                "A session token (JWT) from the identity provider, signed with a key of its JWKS \
                 (RS256, ES256 or EdDSA, as the key says), with `exp`, `sub` and the configured \
                 `iss` (and `aud` when configured).",
            ))
            .build();
        openapi
            .components
            .get_or_insert_with(Default::default)
            .add_security_scheme(SESSION_TOKEN, SecurityScheme::Http(scheme));
        webhooks::add_operator_scheme(openapi);
    }
}

/// The API's OpenAPI document.
pub fn openapi() -> utoipa::openapi::OpenApi {
    let mut document = Document::openapi();
    crate::http::routes::add_operations(&mut document);
    document.info.license = None;
    document.info.contact = None;
    // OpenAPI 3.1's `info.summary`, which utoipa's `Info` has no field for.
    document.info.extensions = Some(Extensions::from_iter([(
        "summary",
        "Packs, purchases and web3 links of a sports fan application.",
    )]));
    absent_not_null(&mut document);
    throttled_anywhere(&mut document);
    gate::gated_everywhere(&mut document);
    caching::cached_publicly(&mut document);
    webhooks::add_webhooks(&mut document);
    webhooks::operators_may_answer_401(&mut document);
    document
}

/// Every operation of the document, for the modifiers that change each.
fn operations_mut(
    document: &mut utoipa::openapi::OpenApi,
) -> impl Iterator<Item = &mut utoipa::openapi::path::Operation> {
    document.paths.paths.values_mut().flat_map(|item| {
        [
            &mut item.get,
            &mut item.put,
            &mut item.post,
            &mut item.delete,
            &mut item.patch,
        ]
        .into_iter()
        .flatten()
    })
}

/// Every operation may answer 429: its function's rate limits where it has them, and API
/// Gateway's throttle on any route (the shared `RateLimited` response describes both).
fn throttled_anywhere(document: &mut utoipa::openapi::OpenApi) {
    use utoipa::ToResponse;
    let name = responses::RateLimited::response().0;
    for operation in operations_mut(document) {
        operation
            .responses
            .responses
            .entry("429".to_owned())
            .or_insert_with(|| RefOr::Ref(utoipa::openapi::Ref::from_response_name(name)));
    }
}

/// An optional body (`request_body(content = Option<T>)`) is one that may be left out, not one
/// that may be `null` (which the API refuses): its schema is `T`'s alone.
fn absent_not_null(document: &mut utoipa::openapi::OpenApi) {
    for operation in operations_mut(document) {
        let Some(body) = operation.request_body.as_mut() else {
            continue;
        };
        if body.required == Some(Required::True) {
            continue;
        }
        for content in body.content.values_mut() {
            if let Some(RefOr::T(Schema::OneOf(one_of))) = &content.schema {
                let not_null = one_of.items.iter().find(|schema| {
                    !matches!(schema, RefOr::T(Schema::Object(object))
                        if object.schema_type == SchemaType::Type(Type::Null))
                });
                content.schema = not_null.cloned();
            }
        }
    }
}

/// The document as `openapi.yaml` holds it.
pub fn openapi_yaml() -> String {
    openapi().to_yaml().expect("the document serialises")
}
