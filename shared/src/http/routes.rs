//! The route table: the one declaration of every route of the API, the function (binary) that
//! serves it, and the router that matches a request against it.
//!
//! Everything else that routes is derived from [`ROUTES`] or checked against it by tests:
//! `template.yaml`'s HttpApi events, the `cargo lambda watch` router in `Cargo.toml`,
//! `openapi.yaml`'s paths, and local-api's dispatch and banner.
//!
//! A path template's `{name}` segment matches one path segment, percent-decoded once, that is an
//! id (`[A-Za-z0-9_-]{1,64}`): anything else cannot name a resource, so the path is a 404.

use lambda_http::Request;
use lambda_http::http::Method;

use std::marker::PhantomData;

use utoipa::IntoParams;

use crate::http::error::ApiError;
use crate::http::request::request_path;
use crate::ids::{InvalidId, PackId, PurchaseId, TopUpId, is_valid_id};

/// One route: a method on a path template, served by one function.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Route {
    pub method: Method,
    /// `/api/packs/{packId}`: literal segments and `{name}` parameters.
    pub path: &'static str,
    /// The Lambda function (binary under `functions/`) that serves it.
    pub function: &'static str,
}

/// A route with the type of its path parameters: what a handler declares and extracts. The
/// parameter names of `P` are checked against the template when the static is evaluated, so a
/// misspelt or missing parameter does not compile.
#[derive(Debug)]
pub struct Endpoint<P> {
    pub route: Route,
    params: PhantomData<fn() -> P>,
}

impl<P: FromPath> Endpoint<P> {
    const fn new(method: Method, path: &'static str, function: &'static str) -> Self {
        assert!(
            names_match(path, P::NAMES),
            "the path parameters of the type differ from the template's"
        );
        Self {
            route: Route {
                method,
                path,
                function,
            },
            params: PhantomData,
        }
    }

    /// The typed path parameters when `request` is for this route; else the error the router
    /// gives (404, 405). A request for another function's route (`/api/packs/` reaching
    /// get-pack: API Gateway and the router trim the slash differently) is a 404 too, logged as
    /// misrouted.
    pub fn params(&self, request: &Request) -> Result<P, ApiError> {
        let (matched, params) = resolve(request.method(), request_path(request))?;
        if !std::ptr::eq(matched, &self.route) {
            tracing::warn!(
                route = matched.path,
                function = self.route.function,
                "request for another function's route"
            );
            return Err(ApiError::not_found());
        }
        // The router let only ids through, so this cannot fail for the ids' own grammar.
        P::from_values(params.0.into_iter().map(|(_, value)| value))
            .map_err(|_| ApiError::not_found())
    }
}

impl<P> Endpoint<P> {
    /// Whether `request` is for this route: how a function that serves several routes picks
    /// the handler (which then takes its parameters with [`Endpoint::params`]).
    pub fn is_for(&self, request: &Request) -> bool {
        resolve(request.method(), request_path(request))
            .is_ok_and(|(matched, _)| std::ptr::eq(matched, &self.route))
    }
}

impl<P> std::ops::Deref for Endpoint<P> {
    type Target = Route;
    fn deref(&self) -> &Route {
        &self.route
    }
}

/// Path parameters as a type: the template's `{name}`s, in order, and how the values become it.
pub trait FromPath: Sized {
    const NAMES: &'static [&'static str];
    fn from_values(values: impl Iterator<Item = String>) -> Result<Self, InvalidId>;
}

/// A route without parameters.
#[derive(Debug)]
pub struct NoParams;

impl FromPath for NoParams {
    const NAMES: &'static [&'static str] = &[];
    fn from_values(_: impl Iterator<Item = String>) -> Result<Self, InvalidId> {
        Ok(Self)
    }
}

/// `/api/packs/{packId}...`
#[derive(Debug, IntoParams)]
#[into_params(rename_all = "camelCase", parameter_in = Path)]
pub struct PackPath {
    /// The pack's `id`. A path segment that is not an id once percent-decoded (1-64 characters
    /// of `A-Z`, `a-z`, `0-9`, `_` and `-`) names no resource: 404 `not_found`.
    #[param(value_type = String, pattern = "^[A-Za-z0-9_-]{1,64}$", example = "nba-rookie-2026")]
    pub pack_id: PackId,
}

impl FromPath for PackPath {
    const NAMES: &'static [&'static str] = &["packId"];
    fn from_values(mut values: impl Iterator<Item = String>) -> Result<Self, InvalidId> {
        Ok(Self {
            pack_id: PackId::parse(values.next().unwrap_or_default())?,
        })
    }
}

/// `/api/packs/{packId}/purchases/{purchaseId}...`
#[derive(Debug, IntoParams)]
#[into_params(rename_all = "camelCase", parameter_in = Path)]
pub struct PurchasePath {
    /// The pack's `id`. A path segment that is not an id once percent-decoded (1-64 characters
    /// of `A-Z`, `a-z`, `0-9`, `_` and `-`) names no resource: 404 `not_found`.
    #[param(value_type = String, pattern = "^[A-Za-z0-9_-]{1,64}$", example = "nba-rookie-2026")]
    pub pack_id: PackId,
    /// The purchase's `id` (from the start's `Location` or body). A path segment that is not an
    /// id once percent-decoded names no resource: 404 `not_found`.
    #[param(
        value_type = String,
        pattern = "^[A-Za-z0-9_-]{1,64}$",
        example = "aziCO-GO8fL4JY8pIvr5KQ"
    )]
    pub purchase_id: PurchaseId,
}

impl FromPath for PurchasePath {
    const NAMES: &'static [&'static str] = &["packId", "purchaseId"];
    fn from_values(mut values: impl Iterator<Item = String>) -> Result<Self, InvalidId> {
        Ok(Self {
            pack_id: PackId::parse(values.next().unwrap_or_default())?,
            purchase_id: PurchaseId::parse(values.next().unwrap_or_default())?,
        })
    }
}

/// `/api/me/cash/top-ups/{topUpId}`
#[derive(Debug, IntoParams)]
#[into_params(rename_all = "camelCase", parameter_in = Path)]
pub struct TopUpPath {
    /// The top-up's `id` (from the create's `Location` or body).
    #[param(
        value_type = String,
        pattern = "^[A-Za-z0-9_-]{1,64}$",
        example = "Qm9dX2c3LWp0eFk5a1pUbA"
    )]
    pub top_up_id: TopUpId,
}

impl FromPath for TopUpPath {
    const NAMES: &'static [&'static str] = &["topUpId"];
    fn from_values(mut values: impl Iterator<Item = String>) -> Result<Self, InvalidId> {
        Ok(Self {
            top_up_id: TopUpId::parse(values.next().unwrap_or_default())?,
        })
    }
}

/// Whether the `{name}` segments of `path` are exactly `names`, in order (a `const fn`, so that
/// [`Endpoint::new`] checks it at compile time).
const fn names_match(path: &str, names: &[&str]) -> bool {
    let path = path.as_bytes();
    let (mut at, mut next) = (0, 0);
    while at < path.len() {
        if path[at] != b'{' {
            at += 1;
            continue;
        }
        if next == names.len() {
            return false;
        }
        let name = names[next].as_bytes();
        let mut i = 0;
        while i < name.len() {
            if at + 1 + i >= path.len() || path[at + 1 + i] != name[i] {
                return false;
            }
            i += 1;
        }
        if at + 1 + i >= path.len() || path[at + 1 + i] != b'}' {
            return false;
        }
        next += 1;
        at += i + 2;
    }
    next == names.len()
}

pub static LIST_PACKS: Endpoint<NoParams> = Endpoint::new(Method::GET, "/api/packs", "list-packs");
pub static GET_PACK: Endpoint<PackPath> =
    Endpoint::new(Method::GET, "/api/packs/{packId}", "get-pack");
pub static WEB3_LINK: Endpoint<NoParams> =
    Endpoint::new(Method::POST, "/api/web3-link", "web3-link");
pub static START_PURCHASE: Endpoint<PackPath> = Endpoint::new(
    Method::POST,
    "/api/packs/{packId}/purchases",
    "start-purchase",
);
pub static GET_PURCHASE: Endpoint<PurchasePath> = Endpoint::new(
    Method::GET,
    "/api/packs/{packId}/purchases/{purchaseId}",
    "get-purchase",
);
pub static COMPLETE_PURCHASE: Endpoint<PurchasePath> = Endpoint::new(
    Method::PUT,
    "/api/packs/{packId}/purchases/{purchaseId}",
    "complete-purchase",
);
pub static OPEN_PACK: Endpoint<PurchasePath> = Endpoint::new(
    Method::POST,
    "/api/packs/{packId}/purchases/{purchaseId}/open",
    "open-pack",
);
pub static CREATE_TOP_UP: Endpoint<NoParams> =
    Endpoint::new(Method::POST, "/api/me/cash/top-ups", "cash-top-ups");
pub static GET_TOP_UP: Endpoint<TopUpPath> = Endpoint::new(
    Method::GET,
    "/api/me/cash/top-ups/{topUpId}",
    "cash-top-ups",
);
pub static STRIPE_WEBHOOK: Endpoint<NoParams> =
    Endpoint::new(Method::POST, "/api/webhooks/stripe", "stripe-webhook");

// The fan's own view: one function per group of reads that need the same key prefixes
// (me-purchases: `USER#`; me-cash: `CASH#`, read only), so that IAM stays least-privilege.
pub static MY_PURCHASES: Endpoint<NoParams> =
    Endpoint::new(Method::GET, "/api/me/purchases", "me-purchases");
pub static MY_ITEMS: Endpoint<NoParams> =
    Endpoint::new(Method::GET, "/api/me/items", "me-purchases");
pub static MY_CASH: Endpoint<NoParams> = Endpoint::new(Method::GET, "/api/me/cash", "me-cash");
pub static MY_LEDGER: Endpoint<NoParams> =
    Endpoint::new(Method::GET, "/api/me/cash/transactions", "me-cash");

/// Every route of the API.
pub static ROUTES: [&Route; 14] = [
    &LIST_PACKS.route,
    &GET_PACK.route,
    &WEB3_LINK.route,
    &START_PURCHASE.route,
    &GET_PURCHASE.route,
    &COMPLETE_PURCHASE.route,
    &OPEN_PACK.route,
    &MY_PURCHASES.route,
    &MY_ITEMS.route,
    &MY_CASH.route,
    &MY_LEDGER.route,
    &CREATE_TOP_UP.route,
    &GET_TOP_UP.route,
    &STRIPE_WEBHOOK.route,
];

/// The function that also answers every request no route matches (API Gateway's `$default`
/// route): it answers the API's JSON 404 or 405.
pub fn default_function() -> &'static str {
    LIST_PACKS.function
}

/// The path parameters of a matched route, in template order.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PathParams(Vec<(&'static str, String)>);

impl PathParams {
    /// The value of `{name}`; every parameter of the matched template is present.
    pub fn get(&self, name: &str) -> &str {
        self.0
            .iter()
            .find(|(key, _)| *key == name)
            .map_or("", |(_, value)| value.as_str())
    }
}

/// How a path compares with a template.
enum PathMatch {
    No,
    /// The shape matches but a parameter is not an id: no resource can have this path.
    BadId,
    Yes(PathParams),
}

fn match_path(template: &'static str, path: &str) -> PathMatch {
    let mut segments = path.split('/');
    let mut params = PathParams::default();
    let mut bad_id = false;
    for expected in template.split('/') {
        let Some(segment) = segments.next() else {
            return PathMatch::No;
        };
        match expected
            .strip_prefix('{')
            .and_then(|name| name.strip_suffix('}'))
        {
            Some(name) => match percent_decode(segment) {
                Some(value) if is_valid_id(&value) => params.0.push((name, value)),
                _ => bad_id = true,
            },
            None if segment == expected => {}
            None => return PathMatch::No,
        }
    }
    match (segments.next(), bad_id) {
        (Some(_), _) => PathMatch::No,
        (None, true) => PathMatch::BadId,
        (None, false) => PathMatch::Yes(params),
    }
}

/// `%XX` escapes decoded once; `None` for a malformed escape or bytes that are not UTF-8.
fn percent_decode(segment: &str) -> Option<String> {
    if !segment.contains('%') {
        return Some(segment.to_owned());
    }
    let bytes = segment.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// The route a method and path select, with its parameters; else the API's 404 or 405 (with
/// every method of the path in `Allow`).
pub fn resolve(method: &Method, path: &str) -> Result<(&'static Route, PathParams), ApiError> {
    let mut allowed: Vec<&str> = Vec::new();
    let mut bad_id = false;
    for &candidate in &ROUTES {
        match match_path(candidate.path, path) {
            PathMatch::Yes(params) if candidate.method == method => {
                return Ok((candidate, params));
            }
            PathMatch::Yes(_) => allowed.push(candidate.method.as_str()),
            PathMatch::BadId => bad_id = true,
            PathMatch::No => {}
        }
    }
    if allowed.is_empty() || bad_id {
        return Err(ApiError::not_found());
    }
    Err(ApiError::MethodNotAllowed {
        allow: allowed.join(", "),
    })
}

impl Route {
    /// The template's parameter names, in order.
    pub fn param_names(&self) -> impl Iterator<Item = &'static str> {
        self.path
            .split('/')
            .filter_map(|segment| segment.strip_prefix('{')?.strip_suffix('}'))
    }

    /// The path with `values` in place of the parameters, in order.
    pub fn fill(&self, values: &[&str]) -> String {
        let mut values = values.iter();
        self.path
            .split('/')
            .map(|segment| {
                if segment.starts_with('{') {
                    values.next().copied().unwrap_or_default()
                } else {
                    segment
                }
            })
            .collect::<Vec<_>>()
            .join("/")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::error::ErrorCode;

    fn code(method: Method, path: &str) -> Result<(&'static str, Vec<String>), ErrorCode> {
        resolve(&method, path)
            .map(|(route, params)| {
                (
                    route.function,
                    params.0.into_iter().map(|(_, v)| v).collect(),
                )
            })
            .map_err(|e| e.code())
    }

    #[test]
    fn every_route_resolves_to_itself_with_its_parameters() {
        for route in ROUTES {
            let names: Vec<&str> = route.param_names().collect();
            let values: Vec<String> = (0..names.len()).map(|i| format!("id-{i}")).collect();
            let refs: Vec<&str> = values.iter().map(String::as_str).collect();
            let path = route.fill(&refs);
            let (matched, params) = resolve(&route.method, &path).unwrap();
            assert_eq!(matched, route, "{path}");
            for (name, value) in names.iter().zip(&values) {
                assert_eq!(params.get(name), value);
            }
        }
    }

    #[test]
    fn parameters_are_percent_decoded_once() {
        assert_eq!(
            code(Method::GET, "/api/packs/a%2Db"),
            Ok(("get-pack", vec!["a-b".into()]))
        );
        // `%252D` decodes once to `%2D`, which is not an id.
        assert_eq!(
            code(Method::GET, "/api/packs/a%252Db"),
            Err(ErrorCode::NotFound)
        );
    }

    #[test]
    fn ids_outside_the_grammar_are_404_whatever_the_method() {
        let long = "a".repeat(65);
        for id in [
            "a%2Fb", "a.b", "..", "%2E%2E", "", "é", "%C3%A9", "a%20b", "%", "%zz", "%FF", &long,
        ] {
            for method in [Method::GET, Method::DELETE] {
                assert_eq!(
                    code(method.clone(), &format!("/api/packs/{id}")),
                    Err(ErrorCode::NotFound),
                    "{method} {id:?}"
                );
            }
        }
        assert_eq!(
            code(Method::GET, &format!("/api/packs/{}", "a".repeat(64))).map(|r| r.0),
            Ok("get-pack")
        );
    }

    #[test]
    fn a_known_path_with_another_method_is_405_listing_every_method() {
        let allow = |method: Method, path: &str| match resolve(&method, path) {
            Err(ApiError::MethodNotAllowed { allow }) => allow,
            other => panic!("{method} {path}: {other:?}"),
        };
        assert_eq!(allow(Method::GET, "/api/web3-link"), "POST");
        assert_eq!(allow(Method::POST, "/api/packs"), "GET");
        assert_eq!(allow(Method::DELETE, "/api/packs/p"), "GET");
        assert_eq!(
            allow(Method::DELETE, "/api/packs/p/purchases/x"),
            "GET, PUT"
        );
        assert_eq!(allow(Method::GET, "/api/packs/p/purchases"), "POST");
    }

    #[test]
    fn unknown_paths_are_404() {
        for path in [
            "/",
            "/api",
            "/api/packs/p/extra/x",
            "/api/packs/p/purchases/x/open/more",
            "/API/packs",
            "/api//packs",
        ] {
            assert_eq!(code(Method::GET, path), Err(ErrorCode::NotFound), "{path}");
        }
    }

    #[test]
    fn parameter_names_are_matched_against_the_template() {
        assert!(names_match(
            "/api/packs/{packId}/purchases/{purchaseId}",
            PurchasePath::NAMES
        ));
        assert!(names_match("/api/packs", NoParams::NAMES));
        for (path, names) in [
            ("/api/packs/{packId}", &["packID"][..]),
            ("/api/packs/{packId}", &["pack"]),
            ("/api/packs/{packId}", &["packIdx"]),
            ("/api/packs/{packId}", &[]),
            ("/api/packs", &["packId"]),
            (
                "/api/packs/{packId}/purchases/{purchaseId}",
                &["purchaseId", "packId"],
            ),
            ("/api/packs/{packId", &["packId"]),
        ] {
            assert!(!names_match(path, names), "{path} {names:?}");
        }
    }

    #[test]
    fn fill_puts_values_in_order() {
        assert_eq!(
            GET_PURCHASE.fill(&["p1", "u2"]),
            "/api/packs/p1/purchases/u2"
        );
    }
}
