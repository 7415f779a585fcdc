//! The builder of a function's routes ([`Routes`]): handler by handler, each with its rate-limit
//! class, into what `B` ([`Build`]) makes of them. One declaration is built three ways because a
//! function's binary links only what it runs: [`Serve`], the axum router of its own handlers over
//! its store; [`List`], every function's methods and paths (for its 405s and misrouted requests),
//! which never instantiates a handler; [`Document`], the OpenAPI operations, built only where the
//! document is written (scripts/gen, the tests).
//!
//! Why not utoipa-axum's `routes!`: it names a handler by its path alone and cannot take the
//! handlers' store parameter (`list_packs::<S>`); [`api!`] pairs the same `__path_x` it reads
//! with the handler.

use std::marker::PhantomData;

use axum::Router;
use axum::handler::Handler;
use axum::routing::{MethodFilter, on};
use tower::ServiceBuilder;
use utoipa::openapi::RefOr;
use utoipa::openapi::path::{HttpMethod, Paths};
use utoipa::openapi::schema::Schema;

use super::resolve::{api_gateway_path, unrouted};
use super::{Route, RouteClass, http_method};
use crate::http::limit::Limited;
use crate::http::response::Freshness;

/// A handler's `#[utoipa::path]`: its method and path, its operation and the tags and schemas it
/// names (utoipa's hidden traits, the ones its `#[openapi(paths(...))]` reads).
pub trait ApiPath:
    utoipa::Path + utoipa::__dev::Tags<'static> + utoipa::__dev::SchemaReferences
{
}
impl<P: utoipa::Path + utoipa::__dev::Tags<'static> + utoipa::__dev::SchemaReferences> ApiPath
    for P
{
}

/// Handler `H` with its `#[utoipa::path]` (`P`), as [`api!`] pairs them.
pub struct Api<P, H> {
    path: PhantomData<fn() -> P>,
    handler: H,
}

impl<P: ApiPath, H> Api<P, H> {
    pub fn new(handler: H) -> Self {
        Self {
            path: PhantomData,
            handler,
        }
    }
}

/// `api!(module::handler::<S>)` (or `api!(module::handler)`, a handler of no store): the handler
/// with the `__path_handler` type that its `#[utoipa::path]` declares beside it, so that a route
/// names its handler once.
macro_rules! api {
    ($module:ident :: $handler:ident) => {
        pastey::paste! {
            $crate::http::routes::Api::<$module::[<__path_ $handler>], _>::new($module::$handler)
        }
    };
    ($module:ident :: $handler:ident :: <$store:ident>) => {
        pastey::paste! {
            $crate::http::routes::Api::<$module::[<__path_ $handler>], _>::new(
                $module::$handler::<$store>,
            )
        }
    };
}
pub(super) use api;

/// What a function's routes are built into (see the module's documentation).
pub trait Build {
    /// What the routes of a function over state `St` make.
    type Of<St>;

    fn empty<St: Clone + Send + Sync + 'static>() -> Self::Of<St>;

    /// `built` with `handler` at the method and path of its `#[utoipa::path]` (`P`), served by
    /// `function` in the rate limits of `class`, its answers public and kept as `freshness` says
    /// when it is a public read.
    fn route<St, P, H, T>(
        built: Self::Of<St>,
        function: &'static str,
        class: RouteClass,
        freshness: Option<Freshness>,
        handler: H,
    ) -> Self::Of<St>
    where
        St: Clone + Send + Sync + 'static,
        P: ApiPath,
        H: Handler<T, St>,
        T: 'static;
}

/// The routes of one function, as they are declared ([`super::functions`]).
pub struct Routes<St, B: Build = Serve> {
    pub(super) function: &'static str,
    pub(super) built: B::Of<St>,
}

impl<St, B: Build<Of<St>: Clone>> Clone for Routes<St, B> {
    fn clone(&self) -> Self {
        Self {
            function: self.function,
            built: self.built.clone(),
        }
    }
}

impl<St: Clone + Send + Sync + 'static, B: Build> Routes<St, B> {
    /// No routes yet, of the function (binary) `function`.
    pub(super) fn new(function: &'static str) -> Self {
        Self {
            function,
            built: B::empty(),
        }
    }

    /// Adds `api`'s handler, in the rate limits of `class` ([`crate::http::limit`]); its answers
    /// are kept by no shared cache.
    pub(super) fn route<P: ApiPath, H: Handler<T, St>, T: 'static>(
        self,
        class: RouteClass,
        api: Api<P, H>,
    ) -> Self {
        self.add(class, None, api)
    }

    /// Adds `api`'s handler as a public read: its successful answers are marked as `freshness`
    /// says, with an `ETag`, and a matching `If-None-Match` is answered 304 (all documented
    /// from this declaration, and the edge's cache behaviours checked against it).
    pub(super) fn public<P: ApiPath, H: Handler<T, St>, T: 'static>(
        self,
        freshness: Freshness,
        api: Api<P, H>,
    ) -> Self {
        self.add(RouteClass::Read, Some(freshness), api)
    }

    fn add<P: ApiPath, H: Handler<T, St>, T: 'static>(
        self,
        class: RouteClass,
        freshness: Option<Freshness>,
        api: Api<P, H>,
    ) -> Self {
        Self {
            function: self.function,
            built: B::route::<St, P, H, T>(
                self.built,
                self.function,
                class,
                freshness,
                api.handler,
            ),
        }
    }
}

/// Routes to serve: an axum router.
pub enum Serve {}

impl Build for Serve {
    type Of<St> = Router<St>;

    fn empty<St: Clone + Send + Sync + 'static>() -> Router<St> {
        Router::new()
    }

    /// axum would answer a HEAD of a GET route with the GET handler: API Gateway has no such
    /// route, so it is the API's 405 too.
    fn route<St, P, H, T>(
        mut router: Router<St>,
        function: &'static str,
        class: RouteClass,
        freshness: Option<Freshness>,
        handler: H,
    ) -> Router<St>
    where
        St: Clone + Send + Sync + 'static,
        P: ApiPath,
        H: Handler<T, St>,
        T: 'static,
    {
        let path = P::path();
        for method in P::methods() {
            let filter = MethodFilter::try_from(http_method(&method))
                .expect("every method of an API route is routable");
            let limited = Limited::new(class, freshness, handler.clone());
            router = router.route(&path, on(filter, limited));
            if method == HttpMethod::Get {
                router = router.route(&path, on(MethodFilter::HEAD, unrouted(function)));
            }
        }
        router
    }
}

impl<St: Clone + Send + Sync + 'static> Routes<St, Serve> {
    /// These routes alone over `state`, for a server of several functions (local-api) to merge.
    pub fn into_router(self, state: St) -> Router {
        self.built.with_state(state)
    }

    /// The function's whole router over `state`, as it answers the requests API Gateway hands
    /// it: its routes, on the path as the client sent it (before any stage prefix; a trailing
    /// slash is no route, README's rule); and every other request the API's JSON 404 or 405
    /// (with every method of the path in `Allow`), a request for another function's route
    /// logged as misrouted.
    pub fn function_app(self, state: St) -> Router {
        let function = self.function;
        let router = self
            .built
            .fallback(unrouted(function))
            .method_not_allowed_fallback(unrouted(function))
            .with_state(state);
        Router::new().fallback_service(
            ServiceBuilder::new()
                .map_request(api_gateway_path::<axum::body::Body>)
                .service(router),
        )
    }
}

/// Routes listed: their functions, methods, paths and classes. Only the method and path of a
/// handler's attribute are read: `P::operation()` would build the operation's whole
/// documentation, which a function never needs.
pub enum List {}

impl Build for List {
    type Of<St> = Vec<Route>;

    fn empty<St>() -> Vec<Route> {
        Vec::new()
    }

    fn route<St, P: ApiPath, H, T>(
        mut listed: Vec<Route>,
        function: &'static str,
        class: RouteClass,
        freshness: Option<Freshness>,
        _handler: H,
    ) -> Vec<Route> {
        let path = P::path();
        listed.extend(P::methods().iter().map(|method| Route {
            function,
            method: http_method(method),
            path: path.clone(),
            class,
            freshness,
        }));
        listed
    }
}

/// Routes documented: their operations (with the tags of their attributes) and the schemas their
/// types name.
pub enum Document {}

/// Operations by path, and the schemas they name, in declaration order.
#[derive(Default)]
pub struct Operations {
    pub(super) paths: Paths,
    pub(super) schemas: Vec<(String, RefOr<Schema>)>,
}

impl Build for Document {
    type Of<St> = Operations;

    fn empty<St>() -> Operations {
        Operations::default()
    }

    fn route<St, P: ApiPath, H, T>(
        mut operations: Operations,
        _function: &'static str,
        _class: RouteClass,
        _freshness: Option<Freshness>,
        _handler: H,
    ) -> Operations {
        P::schemas(&mut operations.schemas);
        let mut operation = P::operation();
        operation
            .tags
            .get_or_insert_with(Vec::new)
            .extend(P::tags().into_iter().map(str::to_owned));
        operations
            .paths
            .add_path_operation(P::path(), P::methods(), operation);
        operations
    }
}
