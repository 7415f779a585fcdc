//! The OpenAPI document of the API, generated from the handlers' `#[utoipa::path]` attributes
//! and the types they read and write. `openapi.yaml` is this document as committed; a test
//! (`shared/tests/openapi.rs`) keeps the two equal.

pub mod examples;
pub mod headers;
pub mod responses;
pub mod schemas;

use utoipa::OpenApi;
use utoipa::openapi::extensions::Extensions;
use utoipa::openapi::schema::{Schema, SchemaType, Type};
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::openapi::{RefOr, Required};

use crate::handlers;
use responses::{
    BadRequest, InternalError, MethodNotAllowed, PayloadTooLarge, PurchaseNotFound, RateLimited,
    Unauthorized, Unavailable, UnsupportedMediaType,
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
    paths(
        handlers::list_packs::list_packs,
        handlers::get_pack::get_pack,
        handlers::web3_link::web3_link,
        handlers::start_purchase::start_purchase,
        handlers::get_purchase::get_purchase,
        handlers::complete_purchase::complete_purchase,
        handlers::open_pack::open_pack,
        handlers::my_purchases::my_purchases,
        handlers::my_purchases::my_items,
        handlers::my_cash::my_cash,
        handlers::my_cash::my_ledger,
        handlers::my_wallets::my_wallets,
        handlers::my_wallets::delete_wallet,
        handlers::top_ups::create_top_up,
        handlers::top_ups::get_top_up,
        handlers::stripe_webhook::stripe_webhook,
        handlers::profile::get_me,
        handlers::profile::patch_me,
        handlers::locker_room::put_locker_room,
        handlers::locker_room::get_locker_room,
        handlers::catalog::list_leagues,
        handlers::catalog::get_league,
        handlers::catalog::list_teams,
        handlers::catalog::get_team,
    ),
    components(responses(
        BadRequest,
        Unauthorized,
        PurchaseNotFound,
        PayloadTooLarge,
        UnsupportedMediaType,
        MethodNotAllowed,
        InternalError,
        Unavailable,
        RateLimited,
    )),
    modifiers(&SessionToken),
    tags(
        (name = "Packs"),
        (name = "Purchases"),
        (name = "Auth"),
        (name = "Me", description = "The signed-in fan's profile, own purchases, items, Cash balances and ledger, and linked wallets."),
        (name = "Cash"),
        (name = "Webhooks"),
        (name = "Locker rooms", description = "A fan's public showcase of their pulls, by display name."),
        (name = "Catalogue", description = "The leagues and teams fans browse and packs name (public)."),
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
    }
}

/// The API's OpenAPI document.
pub fn openapi() -> utoipa::openapi::OpenApi {
    let mut document = Document::openapi();
    document.info.license = None;
    document.info.contact = None;
    // OpenAPI 3.1's `info.summary`, which utoipa's `Info` has no field for.
    document.info.extensions = Some(Extensions::from_iter([(
        "summary",
        "Packs, purchases and web3 links of a sports fan application.",
    )]));
    absent_not_null(&mut document);
    document
}

/// An optional body (`request_body(content = Option<T>)`) is one that may be left out, not one
/// that may be `null` (which the API refuses): its schema is `T`'s alone.
fn absent_not_null(document: &mut utoipa::openapi::OpenApi) {
    let operations = document.paths.paths.values_mut().flat_map(|item| {
        [
            &mut item.get,
            &mut item.put,
            &mut item.post,
            &mut item.delete,
            &mut item.patch,
        ]
        .into_iter()
        .flatten()
    });
    for operation in operations {
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
