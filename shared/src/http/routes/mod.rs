//! The route declaration: which function (binary under `functions/`) serves which handlers.
//! A handler's method and path are written once, in its `#[utoipa::path(...)]` attribute, and
//! read here through [`utoipa::Path`]; this table adds the function. From it come
//! - each function's router ([`Routes::function_app`]: its routes, and API Gateway's answers to
//!   every other request, for the `$default` function's sake);
//! - local-api's router of every route ([`local_routes`]: each function's
//!   [`Routes::into_router`], merged, over states built once per type by [`LocalState`]);
//! - [`routes`], the listing `(function, method, path)` from which the template's
//!   events, the `cargo lambda watch` router, the event fixtures and the OpenAPI paths are made,
//!   with what scripts/gen needs besides ([`route_extras`], [`RouteExtra`]).
//!
//! Why not utoipa-axum's `routes!`: it names a handler by its path alone and cannot take the
//! handlers' store parameter (`list_packs::<S>`); [`Routes::route`] reads the same
//! `<__path_x as utoipa::Path>` it reads.

use std::sync::{Arc, LazyLock};

use axum::Router;
use axum::handler::Handler;
use axum::http::Method;
use axum::routing::{MethodFilter, on};
use tower::ServiceBuilder;
use utoipa::openapi::path::HttpMethod;

use crate::handlers::catalog::CatalogState;
use crate::handlers::dashboard::DashboardState;
use crate::handlers::get_pack::GetPackState;
use crate::handlers::leaderboards::LeaderboardsState;
use crate::handlers::list_packs::ListPacksState;
use crate::handlers::locker_room::LockerRoomsState;
use crate::handlers::me::MeState;
use crate::handlers::my_wallets::WalletsState;
use crate::handlers::profile::ProfileState;
use crate::handlers::purchase_json::PurchaseState;
use crate::handlers::queue::QueueFnState;
use crate::handlers::stripe_webhook::WebhookState;
use crate::handlers::top_ups::TopUpState;
use crate::handlers::web3_link::LinkState;
use crate::http::limit::Limited;
pub use crate::ratelimit::RouteClass;
use crate::store::cash::{GetBalances, ListLedger};
use crate::store::catalog::{GetLeague, GetTeam, ListLeagues, ListTeams};
use crate::store::leaderboards::{GetStanding, ReadBoard};
use crate::store::links::UpsertLink;
use crate::store::locker_room::{GetLockerRoom, PutLockerRoom};
use crate::store::packs::{GetPack, GetRevealedSeed, ListActivePacks, ListUpcomingPacks};
use crate::store::profile::{GetProfile, PatchProfile};
use crate::store::purchases::{
    CompletePurchase, GetPurchase, ListMyItems, ListMyPurchases, OpenPurchase, StartPurchase,
};
use crate::store::quests::{ClaimQuest, GetClaims, GetQuest, ListClaims, ListQuests};
use crate::store::queue::QueueStore;
use crate::store::ratelimit::SpendToken;
use crate::store::topups::{CreateTopUp, GetTopUp, SetCheckout, SettleTopUp};
use crate::store::wallets::{DeleteWallet, ListWallets};

mod extra;
mod local;
mod resolve;

pub use extra::RouteExtra;
pub use local::{LocalProcess, LocalRoutes, LocalState};
pub use resolve::{PathParams, parameter_grammar, resolve};
use resolve::{api_gateway_path, unrouted};

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
}

impl Route {
    /// The routes of handler `P` (one per method of its attribute), served by `function`. Only
    /// the method and path are read: `P::operation()` would build the operation's whole
    /// documentation, which a function never needs (the OpenAPI document is written by
    /// scripts/gen).
    fn of<P: utoipa::Path>(function: &'static str, class: RouteClass) -> Vec<Self> {
        let path = P::path();
        P::methods()
            .iter()
            .map(|method| Self {
                function,
                method: http_method(method),
                path: path.clone(),
                class,
            })
            .collect()
    }

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

/// The routes of one function, as they are declared: an axum router over its state.
pub struct Routes<St> {
    function: &'static str,
    router: Router<St>,
}

impl<St: Clone + Send + Sync + 'static> Routes<St> {
    fn new(function: &'static str) -> Self {
        Self {
            function,
            router: Router::new(),
        }
    }

    /// Adds `handler` at the method and path of its `#[utoipa::path]` (`P`), in the rate limits
    /// of `class` ([`crate::http::limit`]). axum would answer a HEAD of a GET route with the GET
    /// handler: API Gateway has no such route, so it is the API's 405 too.
    fn route<P: utoipa::Path, H: Handler<T, St>, T: 'static>(
        mut self,
        class: RouteClass,
        handler: H,
    ) -> Self {
        let path = P::path();
        for method in P::methods() {
            let filter = MethodFilter::try_from(http_method(&method))
                .expect("every method of an API route is routable");
            let limited = Limited::new(class, handler.clone());
            self.router = self.router.route(&path, on(filter, limited));
            if method == HttpMethod::Get {
                self.router = self
                    .router
                    .route(&path, on(MethodFilter::HEAD, unrouted(self.function)));
            }
        }
        self
    }

    /// These routes alone over `state`, for a server of several functions (local-api) to merge.
    pub fn into_router(self, state: St) -> Router {
        self.router.with_state(state)
    }

    /// The function's whole router over `state`, as it answers the requests API Gateway hands
    /// it: its routes, on the path as the client sent it (before any stage prefix; a trailing
    /// slash is no route, README's rule); and every other request the API's JSON 404 or 405
    /// (with every method of the path in `Allow`), a request for another function's route
    /// logged as misrouted.
    pub fn function_app(self, state: St) -> Router {
        let function = self.function;
        let router = self
            .router
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

/// Handler `P`'s operation (with the tags of its attribute) added to `paths`, and the schemas
/// its types name to `schemas`.
fn add_operation<P>(
    paths: utoipa::openapi::path::PathsBuilder,
    schemas: &mut Vec<(
        String,
        utoipa::openapi::RefOr<utoipa::openapi::schema::Schema>,
    )>,
) -> utoipa::openapi::path::PathsBuilder
where
    P: utoipa::Path + utoipa::__dev::Tags<'static> + utoipa::__dev::SchemaReferences,
{
    P::schemas(schemas);
    let mut operation = P::operation();
    operation
        .tags
        .get_or_insert_with(Vec::new)
        .extend(P::tags().into_iter().map(str::to_owned));
    let item = P::methods()
        .into_iter()
        .fold(
            utoipa::openapi::path::PathItemBuilder::new(),
            |item, method| item.operation(method, operation.clone()),
        )
        .build();
    paths.path(P::path(), item)
}

macro_rules! functions {
    (
        default $default:literal;
        $(
            $(#[doc = $doc:literal])*
            $name:literal => $router:ident($state:ident where S: $($bound:tt)+) {
                $(
                    $module:ident::$handler:ident: $class:ident
                    $({ $($field:ident: $value:expr),+ $(,)? })?
                ),+ $(,)?
            }
        )+
    ) => {
        pastey::paste! {
            /// The function that also answers every request no route matches (API Gateway's
            /// `$default` route): the API's JSON 404 or 405.
            pub const DEFAULT_FUNCTION: &str = $default;

            /// Every route of the API, in declaration order.
            pub fn routes() -> &'static [Route] {
                static ROUTES: LazyLock<Vec<Route>> = LazyLock::new(|| {
                    let mut routes = Vec::new();
                    $($(
                        routes.extend(Route::of::<crate::handlers::$module::[<__path_ $handler>]>(
                            $name,
                            RouteClass::$class,
                        ));
                    )+)+
                    routes
                });
                &ROUTES
            }

            /// Every handler's operation, in declaration order, and the schemas its types name,
            /// added to `document`: the OpenAPI document's paths come from this table, as the
            /// routers do. (utoipa's `#[openapi(paths(...))]` collects them the same way, through
            /// the same traits its `#[utoipa::path]` implements.)
            pub(crate) fn add_operations(document: &mut utoipa::openapi::OpenApi) {
                let mut paths = utoipa::openapi::path::PathsBuilder::new();
                let mut schemas = Vec::new();
                $($(
                    paths = add_operation::<crate::handlers::$module::[<__path_ $handler>]>(paths, &mut schemas);
                )+)+
                document.paths.paths.extend(paths.build().paths);
                document
                    .components
                    .get_or_insert_with(Default::default)
                    .schemas
                    .extend(schemas);
            }

            /// Every route with what scripts/gen needs of it besides its handler's declaration:
            /// the `{ ... }` after its class, in the table below.
            pub fn route_extras() -> Vec<(Route, RouteExtra)> {
                let mut extras = Vec::new();
                $($(
                    let extra = RouteExtra { $($($field: $value.into(),)+)? ..RouteExtra::NONE };
                    extras.extend(
                        Route::of::<crate::handlers::$module::[<__path_ $handler>]>(
                            $name,
                            RouteClass::$class,
                        )
                        .into_iter()
                        .map(|route| (route, extra)),
                    );
                )+)+
                extras
            }

            /// Every function's routes over `store`, as one process serves them (local-api):
            /// each state type built once, by its [`LocalState`] constructor, and shared by every
            /// function whose line names it.
            pub fn local_routes<S>(store: &S, process: &LocalProcess) -> LocalRoutes
            where
                S: crate::store::Store + Clone + Send + Sync + 'static,
            {
                let mut states = local::LocalStates::default();
                let mut every = Router::new();
                let mut default = None;
                $(
                    let state = states.get_or_make(|| <$state<S> as LocalState<S>>::local(store, process));
                    if $name == DEFAULT_FUNCTION {
                        default = Some($router::<S>().function_app(state.clone()));
                    }
                    every = every.merge($router::<S>().into_router(state));
                )+
                LocalRoutes {
                    every,
                    default: default.expect("the default function is in the table"),
                }
            }

            $(
                $(#[doc = $doc])*
                pub fn $router<S>() -> Routes<Arc<$state<S>>>
                where
                    S: $($bound)+ + Send + Sync + 'static,
                {
                    Routes::new($name)
                        $(.route::<crate::handlers::$module::[<__path_ $handler>], _, _>(
                            RouteClass::$class,
                            crate::handlers::$module::$handler::<S>,
                        ))+
                }
            )+
        }
    };
}

// The declaration: each function with its state, the store operations it may use, and its
// handlers (their `#[utoipa::path]` gives each one's method and path), each in the rate limits of
// its class and with what scripts/gen needs besides ([`RouteExtra`]'s fields, in braces): the
// event's name where the deployed one is not the operation id's, the fixture's name for every
// route of a function but one, its query, body, idempotency key and headers.
functions! {
    default "list-packs";

    /// `list-packs`: the active packs; API Gateway's `$default` route.
    "list-packs" => list_packs_routes(ListPacksState where S: ListActivePacks + GetLeague + GetTeam) {
        list_packs::list_packs: Read { query: "limit=2" },
    }
    /// `get-pack`: one pack, public.
    "get-pack" => get_pack_routes(GetPackState where S: GetPack) {
        get_pack::get_pack: Read,
    }
    /// `web3-link`: links a web3 identity to the fan.
    "web3-link" => web3_link_routes(LinkState where S: UpsertLink) {
        web3_link::web3_link: Write {
            event: "Web3Link",
            body: r#"{"payload": {"address": "0x52908400098527886E0F7030069857D2E4169EE7", "chainId": 1}}"#,
        },
    }
    /// `start-purchase`: reserves a unit.
    "start-purchase" => start_purchase_routes(PurchaseState where S: StartPurchase + SpendToken) {
        start_purchase::start_purchase: Start {
            throttle: "StartPurchase",
            body: r#"{"clientSeed": "my lucky seed 42"}"#,
            idempotency_key: "3f2b9c1e-6d4a-4b8e-9f21-7c5a0d8e1b43",
        },
    }
    /// `get-purchase`: one of the fan's purchases.
    "get-purchase" => get_purchase_routes(PurchaseState where S: GetPurchase + GetRevealedSeed) {
        get_purchase::get_purchase: Read,
    }
    /// `complete-purchase`: pays from the fan's Cash.
    "complete-purchase" => complete_purchase_routes(PurchaseState where S: CompletePurchase) {
        complete_purchase::complete_purchase: Write { body: r#"{"payment": {"method": "cash"}}"# },
    }
    /// `open-pack`: reveals a paid pack's items.
    "open-pack" => open_pack_routes(PurchaseState where S: OpenPurchase) {
        open_pack::open_pack: Write,
    }
    /// `me-purchases`: the fan's purchases and items (reads `USER#` keys only).
    "me-purchases" => me_purchases_routes(MeState where S: ListMyPurchases + ListMyItems + GetRevealedSeed) {
        my_purchases::my_purchases: Read { event: "MyPurchases", query: "status=completed&limit=20" },
        my_purchases::my_items: Read { event: "MyItems", fixture: "items", query: "limit=50" },
    }
    /// `me-cash`: the fan's balances and ledger (reads `CASH#` keys only).
    "me-cash" => me_cash_routes(MeState where S: GetBalances + ListLedger) {
        my_cash::my_cash: Read { event: "MyCash" },
        my_cash::my_ledger: Read {
            event: "MyLedger",
            fixture: "transactions",
            query: "currency=USD&limit=20",
        },
    }
    /// `me-wallets`: the fan's wallets and their removal (`USER#` wallet items and count only).
    "me-wallets" => me_wallets_routes(WalletsState where S: ListWallets + DeleteWallet) {
        my_wallets::my_wallets: Read { event: "MyWallets" },
        my_wallets::delete_wallet: Write { fixture: "delete" },
    }
    /// `cash-top-ups`: asks for a Cash top-up, reads one.
    "cash-top-ups" => cash_top_ups_routes(TopUpState where S: CreateTopUp + SetCheckout + GetTopUp) {
        top_ups::create_top_up: Write {
            throttle: "TopUp",
            body: r#"{"amount":1000,"currency":"USD"}"#,
            idempotency_key: "try-1",
        },
        top_ups::get_top_up: Read { fixture: "get" },
    }
    /// `stripe-webhook`: Stripe's signed events.
    "stripe-webhook" => stripe_webhook_routes(WebhookState where S: GetTopUp + SettleTopUp) {
        stripe_webhook::stripe_webhook: Exempt {
            body: crate::handlers::stripe_webhook::EXAMPLE_EVENT,
            headers: crate::handlers::stripe_webhook::EXAMPLE_HEADERS,
        },
    }
    /// `me-profile`: the fan's profile (`USER#` profile, `NAME#`, `FAN#`; checks `TEAM#`).
    "me-profile" => me_profile_routes(ProfileState where S: GetProfile + PatchProfile + PutLockerRoom) {
        profile::get_me: Read,
        profile::patch_me: Write {
            fixture: "patch",
            body: r#"{"displayName": "Zoe.Hoops", "avatarUrl": null}"#,
        },
        locker_room::put_locker_room: Write {
            fixture: "locker-room",
            body: r#"{"title": "Rookie gold", "items": []}"#,
        },
    }
    /// `locker-rooms`: a fan's public locker room (reads `NAME#` and `FAN#` keys only).
    "locker-rooms" => locker_rooms_routes(LockerRoomsState where S: GetLockerRoom) {
        locker_room::get_locker_room: Read,
    }
    /// `catalog`: the leagues and teams, public (reads `LEAGUE#`, `TEAM#` and their lists).
    "catalog" => catalog_routes(CatalogState where S: ListLeagues + GetLeague + ListTeams + GetTeam) {
        catalog::list_leagues: Read { fixture: "leagues" },
        catalog::get_league: Read { fixture: "league" },
        catalog::list_teams: Read { fixture: "teams", query: "leagueId=nba&limit=50" },
        catalog::get_team: Read { fixture: "team" },
    }
    /// `leaderboards`: a board's top (public) and the fan's standing (reads `FAN#` scores and
    /// faces, the `BOARD#` partitions of GSI4; `LEAGUE#`, `TEAM#` for a 404).
    "leaderboards" => leaderboards_routes(LeaderboardsState where S: ReadBoard + GetStanding + GetLeague + GetTeam) {
        leaderboards::get_leaderboard: Read { query: "limit=10" },
        leaderboards::get_my_standing: Read { fixture: "my-standing" },
    }
    /// `dashboard`: the fan's home screen (reads only: `CASH#`, `USER#` purchases, the listing,
    /// `FAN#` score, `BOARD#`).
    "dashboard" => dashboard_routes(DashboardState where S: GetBalances + ListMyPurchases + ListActivePacks + ListUpcomingPacks + GetStanding) {
        dashboard::get_dashboard: Read,
    }
    /// `quests`: the active quests with the fan's progress, and their claimed rewards (reads
    /// `QUESTS`, the fan's `USER#` claims and items, GSI3 `REWARDS#`).
    "quests" => quests_routes(MeState where S: ListQuests + GetQuest + GetClaims + ListMyItems + ListClaims) {
        quests::list_quests: Read,
        quests::get_quest: Read { fixture: "quest" },
        quests::my_rewards: Read { event: "MyRewards", fixture: "rewards", query: "limit=20" },
    }
    /// `quest-claims`: claims a reward (the only new function writing `CASH#`, `CREDIT#quest:`).
    "quest-claims" => quest_claims_routes(MeState where S: GetQuest + GetClaims + ListMyItems + ClaimQuest) {
        quests::claim_quest: Write { idempotency_key: "9d6f1c2a-4b3e-4f8a-8c7d-2e1b0a9f8e7d" },
    }
    /// `queue`: a pack's waiting room, its join and its public record (`QUEUE#` keys and the
    /// pack item only; never `QSEED#` nor `DRAW#`).
    "queue" => queue_routes(QueueFnState where S: QueueStore) {
        queue::get_queue: Read { fixture: "get" },
        queue::join_queue: Join { fixture: "join" },
        queue::my_queue_entry: Read { fixture: "me" },
        queue::list_queue_entrants: Read { fixture: "entrants" },
        queue_proof::my_queue_proof: Read { fixture: "proof" },
        queue::queue_report: Read { fixture: "report" },
    }
}

/// Every route of `function`, in declaration order.
pub fn routes_of(function: &str) -> impl Iterator<Item = &'static Route> {
    routes()
        .iter()
        .filter(move |route| route.function == function)
}

#[cfg(test)]
mod tests;
