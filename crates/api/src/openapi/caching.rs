//! What a public read's declaration ([`crate::http::routes::Routes::public`]) adds to its
//! operation: the `If-None-Match` it reads, the `Cache-Control` and `ETag` of its answer, and
//! the 304. Added from the declaration, as the route's wrapper answers from it, so that no
//! handler's attribute repeats it.

use utoipa::openapi::header::HeaderBuilder;
use utoipa::openapi::path::{ParameterBuilder, ParameterIn};
use utoipa::openapi::schema::{ObjectBuilder, Type};
use utoipa::openapi::{RefOr, Required, ResponseBuilder};

use super::gate::operation;
use crate::http::routes::routes;

/// Adds the caching headers and the 304 to the operation of each public read.
pub(super) fn cached_publicly(document: &mut utoipa::openapi::OpenApi) {
    for route in routes() {
        let Some(freshness) = route.freshness else {
            continue;
        };
        let Some(operation) = operation(document, &route.path, route.method.as_str()) else {
            continue;
        };
        operation.parameters.get_or_insert_with(Vec::new).push(
            ParameterBuilder::new()
                .name("If-None-Match")
                .parameter_in(ParameterIn::Header)
                .required(Required::False)
                .description(Some(
                    "An `ETag` this operation answered: 304 with no body while it is still the \
                     answer's.",
                ))
                .schema(Some(ObjectBuilder::new().schema_type(Type::String)))
                .build(),
        );
        let answers = &mut operation.responses.responses;
        if let Some(RefOr::T(ok)) = answers.get_mut("200") {
            let string = || ObjectBuilder::new().schema_type(Type::String);
            ok.headers.insert(
                "Cache-Control".to_owned(),
                HeaderBuilder::new()
                    .schema(string())
                    .description(Some(format!(
                        "`{}` (docs/edge.md, \"Freshness per route\"); `private` instead of \
                         `public` when the request carried a session token.",
                        freshness.cache_control()
                    )))
                    .build(),
            );
            ok.headers.insert(
                "ETag".to_owned(),
                HeaderBuilder::new()
                    .schema(string())
                    .description(Some(
                        "Of this answer's body, the same on every instance: send it back in \
                         `If-None-Match`.",
                    ))
                    .build(),
            );
        }
        answers.insert(
            "304".to_owned(),
            RefOr::T(
                ResponseBuilder::new()
                    .description(
                        "Not modified: the `ETag` sent in `If-None-Match` is still this answer's \
                         (no body).",
                    )
                    .build(),
            ),
        );
    }
}
