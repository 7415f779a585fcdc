//! The route declaration: which function (binary under `functions/`) serves which handlers.
//! A handler's method and path are written once, in its `#[utoipa::path(...)]` attribute, and
//! read through [`utoipa::Path`]; each function's constructor (in `functions.rs`:
//! `list_packs_routes`, ...) adds its handlers, each with its rate-limit class, to a [`Routes`]
//! builder, and `each_function`, beside them, lists the functions. From them come
//! - each function's router ([`Routes::function_app`]: its routes, and API Gateway's answers to
//!   every other request, for the `$default` function's sake);
//! - local-api's router of every route ([`local_routes`]: each function's
//!   [`Routes::into_router`], merged, over states built once per type by [`LocalState`]);
//! - [`routes`], the listing `(function, method, path, class)` from which scripts/gen makes the
//!   template's events, the `cargo lambda watch` router and the event fixtures;
//! - the OpenAPI document's paths ([`add_operations`]).

use std::sync::{Arc, LazyLock};

use axum::http::Method;
use utoipa::openapi::path::HttpMethod;

pub use domain::ratelimit::RouteClass;
use store::{MemoryStore, Store};

mod builder;
mod functions;
mod local;
mod resolve;

pub use builder::{Api, ApiPath, Build, Routes, Serve};
use builder::{Document, List, Operations, api};
use functions::each_function;
pub use functions::*;
pub use local::{LocalProcess, LocalRoutes, LocalState};
pub use resolve::{PathParams, parameter_grammar, resolve};

/// One route of the listing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Route {
    /// The Lambda function (binary) that serves it.
    pub function: &'static str,
    pub method: Method,
    /// `/api/packs/{packId}`: literal segments and `{name}` parameters.
    pub path: String,
    /// Its class of rate limits, stated once in the declaration.
    pub class: RouteClass,
    /// How long its answers may be kept, for a public read ([`Routes::public`]); `None`: kept by
    /// no shared cache.
    pub freshness: Option<crate::http::response::Freshness>,
}

impl Route {
    /// The template's parameter names, in order.
    pub fn param_names(&self) -> impl Iterator<Item = &str> {
        self.path
            .split('/')
            .filter_map(|segment| segment.strip_prefix('{')?.strip_suffix('}'))
    }

    /// The path with `values` in place of the parameters, in order.
    pub fn fill(&self, values: &[&str]) -> String {
        fill(&self.path, values)
    }
}

/// Path template `template` with `values` in place of its parameters, in order.
pub fn fill(template: &str, values: &[&str]) -> String {
    let mut values = values.iter();
    template
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

fn http_method(method: &HttpMethod) -> Method {
    match method {
        HttpMethod::Get => Method::GET,
        HttpMethod::Put => Method::PUT,
        HttpMethod::Post => Method::POST,
        HttpMethod::Delete => Method::DELETE,
        HttpMethod::Options => Method::OPTIONS,
        HttpMethod::Head => Method::HEAD,
        HttpMethod::Patch => Method::PATCH,
        HttpMethod::Trace => Method::TRACE,
    }
}

/// The function that also answers every request no route matches (API Gateway's `$default`
/// route): the API's JSON 404 or 405.
pub const DEFAULT_FUNCTION: &str = "list-packs";

/// What is done with each function's routes ([`each_function`]), built by `Build` over `Store`.
trait EachFunction {
    type Store: Store + Clone + Send + Sync + 'static;
    type Build: Build;
    fn function<St: LocalState<Self::Store>>(&mut self, routes: Routes<Arc<St>, Self::Build>);
}

/// The listing, over a store that has every operation: none of its code is built ([`List`]).
struct Listing(Vec<Route>);

impl EachFunction for Listing {
    type Store = MemoryStore;
    type Build = List;
    fn function<St>(&mut self, routes: Routes<Arc<St>, List>) {
        self.0.extend(routes.built);
    }
}

/// Every route of the API, in declaration order.
pub fn routes() -> &'static [Route] {
    static ROUTES: LazyLock<Vec<Route>> = LazyLock::new(|| {
        let mut listing = Listing(Vec::new());
        each_function(&mut listing);
        listing.0
    });
    &ROUTES
}

impl EachFunction for Operations {
    type Store = MemoryStore;
    type Build = Document;
    fn function<St>(&mut self, routes: Routes<Arc<St>, Document>) {
        self.paths.merge(routes.built.paths);
        self.schemas.extend(routes.built.schemas);
    }
}

/// Every handler's operation, in declaration order, and the schemas its types name, added to
/// `document`: the OpenAPI document's paths come from the constructors, as the routers do.
/// (utoipa's `#[openapi(paths(...))]` collects them the same way, through the same traits its
/// `#[utoipa::path]` implements.)
pub(crate) fn add_operations(document: &mut utoipa::openapi::OpenApi) {
    let mut operations = Operations::default();
    each_function(&mut operations);
    document.paths.paths.extend(operations.paths.paths);
    document
        .components
        .get_or_insert_with(Default::default)
        .schemas
        .extend(operations.schemas);
}

/// Every function's routes over `store`, as one process serves them (local-api): each state type
/// built once, by its [`LocalState`] constructor, and shared by every function over that type.
pub fn local_routes<S>(store: &S, process: &LocalProcess) -> LocalRoutes
where
    S: Store + Clone + Send + Sync + 'static,
{
    let mut local = local::Local::new(store, process);
    each_function(&mut local);
    local.finish()
}

/// Every route of `function`, in declaration order.
pub fn routes_of(function: &str) -> impl Iterator<Item = &'static Route> {
    routes()
        .iter()
        .filter(move |route| route.function == function)
}

#[cfg(test)]
mod tests;
