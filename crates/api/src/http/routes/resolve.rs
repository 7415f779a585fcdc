//! Which route a request's method and path select, with its parameters checked against their
//! grammar, and what a function answers a request none of its routes takes (API Gateway's
//! `$default` answers: 404, 405 with `Allow`).

use std::sync::LazyLock;

use axum::http::{Method, Request, Uri};
use lambda_http::RequestExt;

use super::{Route, routes};
use crate::http::error::ApiError;
use domain::ids::is_valid_id;
use domain::profile::name::is_valid_display_name;

/// The handler of the requests no route of `function` takes.
pub(super) fn unrouted(
    function: &'static str,
) -> impl Fn(Method, Uri) -> std::future::Ready<ApiError> + Clone + Send + Sync + 'static {
    move |method, uri| std::future::ready(unrouted_answer(function, &method, uri.path()))
}

/// The listing's paths in axum's own matcher, each with its routes.
static PATHS: LazyLock<matchit::Router<Vec<&'static Route>>> = LazyLock::new(|| {
    let mut paths: Vec<(&str, Vec<&Route>)> = Vec::new();
    for route in routes() {
        match paths.iter_mut().find(|(path, _)| *path == route.path) {
            Some((_, routes)) => routes.push(route),
            None => paths.push((&route.path, vec![route])),
        }
    }
    let mut router = matchit::Router::new();
    for (path, routes) in paths {
        router
            .insert(path, routes)
            .expect("the listing's paths do not conflict");
    }
    router
});

/// The path parameters of a matched route, percent-decoded once, in template order.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PathParams(pub(super) Vec<(String, String)>);

impl PathParams {
    /// The value of `{name}`; every parameter of the matched template is present.
    pub fn get(&self, name: &str) -> &str {
        self.0
            .iter()
            .find(|(key, _)| key == name)
            .map_or("", |(_, value)| value.as_str())
    }
}

/// The grammar of each path parameter, by name: an id's (`[A-Za-z0-9_-]{1,64}`), but for the
/// parameters that are no ids: a display name (`.` is one of its characters) and a board
/// (`global`, `league:<id>`, `team:<id>`).
pub fn parameter_grammar(name: &str) -> fn(&str) -> bool {
    match name {
        "displayName" => is_valid_display_name,
        "board" => domain::leaderboards::is_valid_board,
        _ => is_valid_id,
    }
}

/// The route `method` on `path` (already trimmed) selects, with its parameters; else API
/// Gateway's `$default` answer: 404 for no route's path, or a parameter outside its grammar
/// ([`parameter_grammar`], percent-decoded once): no resource can have such a path; 405 for a
/// route's path with another method (every method of the path in `Allow`).
pub fn resolve(method: &Method, path: &str) -> Result<(&'static Route, PathParams), ApiError> {
    let Ok(matched) = PATHS.at(path) else {
        return Err(ApiError::not_found());
    };
    let mut params = PathParams::default();
    for (name, value) in matched.params.iter() {
        match percent_encoding::percent_decode_str(value).decode_utf8() {
            Ok(value) if parameter_grammar(name)(&value) => {
                params.0.push((name.to_owned(), value.into()));
            }
            _ => return Err(ApiError::not_found()),
        }
    }
    match matched.value.iter().find(|route| route.method == method) {
        Some(route) => Ok((route, params)),
        None => {
            let allow: Vec<&str> = matched
                .value
                .iter()
                .map(|route| route.method.as_str())
                .collect();
            Err(ApiError::MethodNotAllowed {
                allow: allow.join(", "),
            })
        }
    }
}

/// What `function` answers a request none of its routes takes: the `$default` answer, and for
/// another function's route a 404, logged as misrouted.
fn unrouted_answer(function: &str, method: &Method, path: &str) -> ApiError {
    match resolve(method, path) {
        Ok((route, _)) => {
            tracing::warn!(
                route = %route.path,
                function,
                "request for another function's route"
            );
            ApiError::not_found()
        }
        Err(error) => error,
    }
}

/// The request with the path the client called: lambda_http's raw path, before any stage
/// prefix, else the URI's. As sent, a trailing slash included: `/api/packs/` is no route's path,
/// so whichever function it reaches answers the `$default` 404, never another route's answer or
/// a 405 whose `Allow` would name a method that 404s there too.
pub(super) fn api_gateway_path<B>(mut request: Request<B>) -> Request<B> {
    let raw = request.raw_http_path();
    if raw.is_empty() || raw == request.uri().path() {
        return request;
    }
    let path_and_query = match request.uri().query() {
        Some(query) => format!("{raw}?{query}"),
        None => raw.to_owned(),
    };
    let mut parts = request.uri().clone().into_parts();
    if let Ok(path_and_query) = path_and_query.parse() {
        parts.path_and_query = Some(path_and_query);
        if let Ok(uri) = Uri::from_parts(parts) {
            *request.uri_mut() = uri;
        }
    }
    request
}
