//! What the app configuration's gate adds to every operation ([`crate::http::app_config`]): the
//! `X-App-Version` header it reads, the 426 it may answer on every route but Stripe's webhook, and the 503 of maintenance on every write. Added from the routes' classes, as the
//! gate decides from them, so that no operation's attribute repeats it.

use utoipa::ToResponse;
use utoipa::openapi::path::{Operation, ParameterBuilder, ParameterIn};
use utoipa::openapi::schema::{ObjectBuilder, Type};
use utoipa::openapi::{Ref, RefOr, Required};

use super::responses::{AppVersionUnsupported, Unavailable};
use crate::http::routes::{RouteClass, routes};

/// Adds the gate's header and answers to the operation of each gated route.
pub(super) fn gated_everywhere(document: &mut utoipa::openapi::OpenApi) {
    for route in routes() {
        if route.class == RouteClass::Exempt {
            continue;
        }
        let Some(operation) = operation(document, &route.path, route.method.as_str()) else {
            continue;
        };
        operation
            .parameters
            .get_or_insert_with(Vec::new)
            .push(version_header());
        let answers = &mut operation.responses.responses;
        let mut add = |status: &str, name: &str| {
            answers
                .entry(status.to_owned())
                .or_insert_with(|| RefOr::Ref(Ref::from_response_name(name)));
        };
        add("426", AppVersionUnsupported::response().0);
        if matches!(
            route.class,
            RouteClass::Start | RouteClass::Join | RouteClass::Write
        ) {
            add("503", Unavailable::response().0);
        }
    }
}

pub(super) fn operation<'a>(
    document: &'a mut utoipa::openapi::OpenApi,
    path: &str,
    method: &str,
) -> Option<&'a mut Operation> {
    let item = document.paths.paths.get_mut(path)?;
    match method {
        "GET" => item.get.as_mut(),
        "POST" => item.post.as_mut(),
        "PUT" => item.put.as_mut(),
        "PATCH" => item.patch.as_mut(),
        "DELETE" => item.delete.as_mut(),
        _ => None,
    }
}

fn version_header() -> utoipa::openapi::path::Parameter {
    ParameterBuilder::new()
        .name("X-App-Version")
        .parameter_in(ParameterIn::Header)
        .required(Required::False)
        .description(Some(
            "The app's platform and version (`ios/2.3.1`): 426 below the platform's forced \
             minimum (`GET /api/config`).",
        ))
        // No pattern: a header not of the form is served as none (the gate's rule).
        .schema(Some(ObjectBuilder::new().schema_type(Type::String)))
        .build()
}
