//! Each function's routes: the handlers that its binary (under `functions/`) serves, over which
//! state and which store operations, each in the rate limits of its class. A handler's method
//! and path are written once, in its `#[utoipa::path(...)]`. A new function's constructor is
//! also named in [`each_function`].

use std::sync::Arc;

use super::{Build, EachFunction, RouteClass, Routes, api};
use crate::handlers::auth::{self, AuthState};
use crate::handlers::catalog::{self, CatalogState};
use crate::handlers::dashboard::{self, DashboardState};
use crate::handlers::delete_account::{self, DeletionState};
use crate::handlers::events::{self, EventsState};
use crate::handlers::export::{self, ExportReads};
use crate::handlers::get_pack::{self, GetPackState};
use crate::handlers::leaderboards::{self, LeaderboardsState};
use crate::handlers::list_packs::{self, ListPacksState};
use crate::handlers::locker_room::{self, LockerRoomsState};
use crate::handlers::misc::{self, MiscState};
use crate::handlers::my_wallets::{self, WalletsState};
use crate::handlers::orders::{self, OrdersState};
use crate::handlers::products::{self, ProductsState};
use crate::handlers::profile;
use crate::handlers::queue::{self, QueueFnState, proof};
use crate::handlers::stripe_webhook::{self, WebhookState};
use crate::handlers::top_ups::{self, TopUpState};
use crate::handlers::web3_link::{self, LinkState};
use crate::handlers::webhooks::endpoints::{self, EndpointsState};
use crate::handlers::webhooks::operations;
use crate::handlers::{
    complete_purchase, cosmetics, get_purchase, my_cash, my_purchases, open_pack, quests,
    start_purchase,
};
use crate::http::response::Freshness;
use crate::state::{MeState, ProfileState, PurchaseState};
use store::cash::{GetBalances, ListLedger};
use store::catalog::{GetLeague, GetTeam, ListLeagues, ListTeams};
use store::events::{GetEvent, ListEvents, ListSubjectEvents};
use store::leaderboards::{GetStanding, ReadBoard};
use store::links::UpsertLink;
use store::locker_room::{GetLockerRoom, PutLockerRoom};
use store::packs::{GetPack, GetRevealedSeed, ListActivePacks, ListUpcomingPacks};
use store::products::{
    FanCosmetics, GetOrders, GetProduct, ListProducts, PlaceOrder, SetOrderCheckout,
};
use store::profile::{GetProfile, PatchProfile};
use store::purchases::{
    CompletePurchase, GetPurchase, ListMyItems, ListMyPurchases, OpenPurchase, StartPurchase,
};
use store::quests::{ClaimQuest, GetClaims, GetQuest, ListClaims, ListQuests};
use store::queue::QueueStore;
use store::ratelimit::SpendToken;
use store::sessions::ReviseRevocations;
use store::topups::{CreateTopUp, GetTopUp, SetCheckout, SettleTopUp};
use store::wallets::{DeleteWallet, ListWallets};
use store::webhooks::{ManageEndpoints, WebhookStore};

/// Every function, by its routes' constructor: the order of the listing ([`super::routes`]) and
/// of the OpenAPI paths.
pub(super) fn each_function(f: &mut impl EachFunction) {
    f.function(list_packs_routes());
    f.function(get_pack_routes());
    f.function(web3_link_routes());
    f.function(start_purchase_routes());
    f.function(get_purchase_routes());
    f.function(complete_purchase_routes());
    f.function(open_pack_routes());
    f.function(me_purchases_routes());
    f.function(me_cash_routes());
    f.function(me_wallets_routes());
    f.function(cash_top_ups_routes());
    f.function(stripe_webhook_routes());
    f.function(me_profile_routes());
    f.function(locker_rooms_routes());
    f.function(catalog_routes());
    f.function(leaderboards_routes());
    f.function(dashboard_routes());
    f.function(quests_routes());
    f.function(quest_claims_routes());
    f.function(queue_routes());
    f.function(misc_routes());
    f.function(events_routes());
    f.function(auth_routes());
    f.function(account_deletion_routes());
    f.function(webhook_endpoints_routes());
    f.function(account_routes());
    f.function(products_routes());
    f.function(product_orders_routes());
}

/// `misc`: health, the server's time and the app's configuration, public; none waits on the
/// store (the configuration is the instance's copy, [`crate::http::app_config`]).
pub fn misc_routes<B: Build>() -> Routes<Arc<MiscState>, B> {
    Routes::new("misc")
        .route(RouteClass::Read, api!(misc::get_health))
        .route(RouteClass::Read, api!(misc::get_time))
        .public(Freshness::CONFIG, api!(misc::get_config))
}

/// `events`: the fan's own events (token) and every event for operators (IAM): `EVENTS#` reads
/// only.
pub fn events_routes<S, B>() -> Routes<Arc<EventsState<S>>, B>
where
    S: ListSubjectEvents + ListEvents + GetEvent + Send + Sync + 'static,
    B: Build,
{
    Routes::new("events")
        .route(RouteClass::Read, api!(events::my_events::<S>))
        .route(RouteClass::Read, api!(events::list_events::<S>))
        .route(RouteClass::Read, api!(events::get_event::<S>))
}

/// `webhook-endpoints`: the operators' webhook endpoints and deliveries (IAM): `WHEP#` and
/// `WHDLV#` items, the feed by time for a replay, and the deliveries queue.
pub fn webhook_endpoints_routes<S, B>() -> Routes<Arc<EndpointsState<S>>, B>
where
    S: WebhookStore + ManageEndpoints + ListEvents + GetEvent + Send + Sync + 'static,
    B: Build,
{
    Routes::new("webhook-endpoints")
        .route(RouteClass::Write, api!(endpoints::create_endpoint::<S>))
        .route(RouteClass::Read, api!(endpoints::list_endpoints::<S>))
        .route(RouteClass::Read, api!(endpoints::get_endpoint::<S>))
        .route(RouteClass::Write, api!(endpoints::update_endpoint::<S>))
        .route(RouteClass::Write, api!(endpoints::delete_endpoint::<S>))
        .route(RouteClass::Write, api!(endpoints::rotate_secret::<S>))
        .route(RouteClass::Write, api!(operations::test_endpoint::<S>))
        .route(RouteClass::Read, api!(operations::list_deliveries::<S>))
        .route(RouteClass::Write, api!(operations::retry_delivery::<S>))
        .route(RouteClass::Write, api!(operations::replay_events::<S>))
}

/// `account-deletion`: the caller's account deleted (`DELETE /api/me`); the erasure reaches
/// every item of the fan's (`DELETION#`, `SESSIONS#`, `USER#`, `FAN#`, `CASH#`, `NAME#`, ...).
pub fn account_deletion_routes<S, B>() -> Routes<Arc<DeletionState<S>>, B>
where
    S: store::account::AccountDeletion
        + store::cash::GetBalances
        + store::purchases::ListMyPurchases
        + Send
        + Sync
        + 'static,
    B: Build,
{
    Routes::new("account-deletion")
        .route(RouteClass::Write, api!(delete_account::delete_account::<S>))
}

/// `auth`: the caller's session, logout, an operator's revocation (IAM) and the identity
/// provider's events: `SESSIONS#` items only.
pub fn auth_routes<S, B>() -> Routes<Arc<AuthState<S>>, B>
where
    S: ReviseRevocations + Send + Sync + 'static,
    B: Build,
{
    Routes::new("auth")
        .route(RouteClass::Read, api!(auth::get_session::<S>))
        .route(RouteClass::Write, api!(auth::logout::<S>))
        .route(RouteClass::Write, api!(auth::revoke_sessions::<S>))
        .route(RouteClass::Exempt, api!(auth::provider_event::<S>))
}

/// `account`: the fan's own account as a whole: the export of every item the API holds about
/// them (reads of the fan's own items only: `USER#`, `FAN#`, `CASH#`, `EVENTS#`, `SESSIONS#`
/// and their partitions of GSI3).
pub fn account_routes<S, B>() -> Routes<Arc<MeState<S>>, B>
where
    S: ExportReads + Send + Sync + 'static,
    B: Build,
{
    Routes::new("account").route(RouteClass::Read, api!(export::export_me::<S>))
}

/// `list-packs`: the active packs; API Gateway's `$default` route.
pub fn list_packs_routes<S, B>() -> Routes<Arc<ListPacksState<S>>, B>
where
    S: ListActivePacks + GetLeague + GetTeam + Send + Sync + 'static,
    B: Build,
{
    Routes::new("list-packs").public(Freshness::PACKS, api!(list_packs::list_packs::<S>))
}

/// `get-pack`: one pack, public.
pub fn get_pack_routes<S, B>() -> Routes<Arc<GetPackState<S>>, B>
where
    S: GetPack + Send + Sync + 'static,
    B: Build,
{
    Routes::new("get-pack").public(Freshness::PACKS, api!(get_pack::get_pack::<S>))
}

/// `web3-link`: links a web3 identity to the fan.
pub fn web3_link_routes<S, B>() -> Routes<Arc<LinkState<S>>, B>
where
    S: UpsertLink + Send + Sync + 'static,
    B: Build,
{
    Routes::new("web3-link").route(RouteClass::Write, api!(web3_link::web3_link::<S>))
}

/// `start-purchase`: reserves a unit.
pub fn start_purchase_routes<S, B>() -> Routes<Arc<PurchaseState<S>>, B>
where
    S: StartPurchase + SpendToken + Send + Sync + 'static,
    B: Build,
{
    Routes::new("start-purchase")
        .route(RouteClass::Start, api!(start_purchase::start_purchase::<S>))
}

/// `get-purchase`: one of the fan's purchases.
pub fn get_purchase_routes<S, B>() -> Routes<Arc<PurchaseState<S>>, B>
where
    S: GetPurchase + GetRevealedSeed + Send + Sync + 'static,
    B: Build,
{
    Routes::new("get-purchase").route(RouteClass::Read, api!(get_purchase::get_purchase::<S>))
}

/// `complete-purchase`: pays from the fan's Cash.
pub fn complete_purchase_routes<S, B>() -> Routes<Arc<PurchaseState<S>>, B>
where
    S: CompletePurchase + Send + Sync + 'static,
    B: Build,
{
    Routes::new("complete-purchase").route(
        RouteClass::Write,
        api!(complete_purchase::complete_purchase::<S>),
    )
}

/// `open-pack`: reveals a paid pack's items.
pub fn open_pack_routes<S, B>() -> Routes<Arc<PurchaseState<S>>, B>
where
    S: OpenPurchase + Send + Sync + 'static,
    B: Build,
{
    Routes::new("open-pack").route(RouteClass::Write, api!(open_pack::open_pack::<S>))
}

/// `me-purchases`: the fan's purchases and items (reads `USER#` keys only).
pub fn me_purchases_routes<S, B>() -> Routes<Arc<MeState<S>>, B>
where
    S: ListMyPurchases + ListMyItems + GetRevealedSeed + Send + Sync + 'static,
    B: Build,
{
    Routes::new("me-purchases")
        .route(RouteClass::Read, api!(my_purchases::my_purchases::<S>))
        .route(RouteClass::Read, api!(my_purchases::my_items::<S>))
}

/// `me-cash`: the fan's balances and ledger (reads `CASH#` keys only).
pub fn me_cash_routes<S, B>() -> Routes<Arc<MeState<S>>, B>
where
    S: GetBalances + ListLedger + Send + Sync + 'static,
    B: Build,
{
    Routes::new("me-cash")
        .route(RouteClass::Read, api!(my_cash::my_cash::<S>))
        .route(RouteClass::Read, api!(my_cash::my_ledger::<S>))
}

/// `me-wallets`: the fan's wallets and their removal (`USER#` wallet items and count only).
pub fn me_wallets_routes<S, B>() -> Routes<Arc<WalletsState<S>>, B>
where
    S: ListWallets + DeleteWallet + Send + Sync + 'static,
    B: Build,
{
    Routes::new("me-wallets")
        .route(RouteClass::Read, api!(my_wallets::my_wallets::<S>))
        .route(RouteClass::Write, api!(my_wallets::delete_wallet::<S>))
}

/// `cash-top-ups`: asks for a Cash top-up, reads one.
pub fn cash_top_ups_routes<S, B>() -> Routes<Arc<TopUpState<S>>, B>
where
    S: CreateTopUp + SetCheckout + GetTopUp + Send + Sync + 'static,
    B: Build,
{
    Routes::new("cash-top-ups")
        .route(RouteClass::Write, api!(top_ups::create_top_up::<S>))
        .route(RouteClass::Read, api!(top_ups::get_top_up::<S>))
}

/// `stripe-webhook`: Stripe's signed events.
pub fn stripe_webhook_routes<S, B>() -> Routes<Arc<WebhookState<S>>, B>
where
    S: GetTopUp
        + SettleTopUp
        + store::products::GetOrders
        + store::products::CompleteOrder
        + store::products::CloseOrder
        + Send
        + Sync
        + 'static,
    B: Build,
{
    Routes::new("stripe-webhook").route(
        RouteClass::Exempt,
        api!(stripe_webhook::stripe_webhook::<S>),
    )
}

/// `me-profile`: the fan's profile (`USER#` profile, `NAME#`, `FAN#`; checks `TEAM#`).
pub fn me_profile_routes<S, B>() -> Routes<Arc<ProfileState<S>>, B>
where
    S: GetProfile + PatchProfile + PutLockerRoom + FanCosmetics + Send + Sync + 'static,
    B: Build,
{
    Routes::new("me-profile")
        .route(RouteClass::Read, api!(profile::get_me::<S>))
        .route(RouteClass::Write, api!(profile::patch_me::<S>))
        .route(RouteClass::Write, api!(locker_room::put_locker_room::<S>))
        .route(RouteClass::Write, api!(cosmetics::put_my_cosmetics::<S>))
}

/// `products`: the products beyond packs, public (reads the `PRODUCTS` partition).
pub fn products_routes<S, B>() -> Routes<Arc<ProductsState<S>>, B>
where
    S: ListProducts + GetProduct + Send + Sync + 'static,
    B: Build,
{
    Routes::new("products")
        .public(Freshness::CATALOG, api!(products::list_products::<S>))
        .public(Freshness::CATALOG, api!(products::get_product::<S>))
}

/// `product-orders`: a fan's orders: placing one (the `PRODUCTS` item read; `PRODUCT#` stock,
/// the fan's `USER#` order, count and cosmetics, `CASH#` balance and ledger, `EVENTS#` written
/// in one transaction) and reading them (`USER#`, GSI3 `ORDERS#`).
pub fn product_orders_routes<S, B>() -> Routes<Arc<OrdersState<S>>, B>
where
    S: GetProduct + PlaceOrder + GetOrders + SetOrderCheckout + Send + Sync + 'static,
    B: Build,
{
    Routes::new("product-orders")
        .route(RouteClass::Write, api!(orders::create_order::<S>))
        .route(RouteClass::Read, api!(orders::list_my_orders::<S>))
        .route(RouteClass::Read, api!(orders::get_my_order::<S>))
}

/// `locker-rooms`: a fan's public locker room (reads `NAME#` and `FAN#` keys only).
pub fn locker_rooms_routes<S, B>() -> Routes<Arc<LockerRoomsState<S>>, B>
where
    S: GetLockerRoom + Send + Sync + 'static,
    B: Build,
{
    Routes::new("locker-rooms").public(
        Freshness::LOCKER_ROOM,
        api!(locker_room::get_locker_room::<S>),
    )
}

/// `catalog`: the leagues and teams, public (reads `LEAGUE#`, `TEAM#` and their lists).
pub fn catalog_routes<S, B>() -> Routes<Arc<CatalogState<S>>, B>
where
    S: ListLeagues + GetLeague + ListTeams + GetTeam + Send + Sync + 'static,
    B: Build,
{
    Routes::new("catalog")
        .public(Freshness::CATALOG, api!(catalog::list_leagues::<S>))
        .public(Freshness::CATALOG, api!(catalog::get_league::<S>))
        .public(Freshness::CATALOG, api!(catalog::list_teams::<S>))
        .public(Freshness::CATALOG, api!(catalog::get_team::<S>))
}

/// `leaderboards`: a board's top (public) and the fan's standing (reads `FAN#` scores and
/// faces, the `BOARD#` partitions of GSI4; `LEAGUE#`, `TEAM#` for a 404).
pub fn leaderboards_routes<S, B>() -> Routes<Arc<LeaderboardsState<S>>, B>
where
    S: ReadBoard + GetStanding + GetLeague + GetTeam + Send + Sync + 'static,
    B: Build,
{
    Routes::new("leaderboards")
        .public(
            Freshness::LEADERBOARD,
            api!(leaderboards::get_leaderboard::<S>),
        )
        .route(RouteClass::Read, api!(leaderboards::get_my_standing::<S>))
}

/// `dashboard`: the fan's home screen (reads only: `CASH#`, `USER#` purchases, the listing,
/// `FAN#` score, `BOARD#`).
pub fn dashboard_routes<S, B>() -> Routes<Arc<DashboardState<S>>, B>
where
    S: GetBalances
        + ListMyPurchases
        + ListActivePacks
        + ListUpcomingPacks
        + GetStanding
        + Send
        + Sync
        + 'static,
    B: Build,
{
    Routes::new("dashboard").route(RouteClass::Read, api!(dashboard::get_dashboard::<S>))
}

/// `quests`: the active quests with the fan's progress, and their claimed rewards (reads
/// `QUESTS`, the fan's `USER#` claims and items, GSI3 `REWARDS#`).
pub fn quests_routes<S, B>() -> Routes<Arc<MeState<S>>, B>
where
    S: ListQuests + GetQuest + GetClaims + ListMyItems + ListClaims + Send + Sync + 'static,
    B: Build,
{
    Routes::new("quests")
        .route(RouteClass::Read, api!(quests::list_quests::<S>))
        .route(RouteClass::Read, api!(quests::get_quest::<S>))
        .route(RouteClass::Read, api!(quests::my_rewards::<S>))
}

/// `quest-claims`: claims a reward (the only new function writing `CASH#`, `CREDIT#quest:`).
pub fn quest_claims_routes<S, B>() -> Routes<Arc<MeState<S>>, B>
where
    S: GetQuest + GetClaims + ListMyItems + ClaimQuest + Send + Sync + 'static,
    B: Build,
{
    Routes::new("quest-claims").route(RouteClass::Write, api!(quests::claim_quest::<S>))
}

/// `queue`: a pack's waiting room, its join and its public record (`QUEUE#` keys and the
/// pack item only; never `QSEED#` nor `DRAW#`).
pub fn queue_routes<S, B>() -> Routes<Arc<QueueFnState<S>>, B>
where
    S: QueueStore + Send + Sync + 'static,
    B: Build,
{
    Routes::new("queue")
        .public(Freshness::QUEUE, api!(queue::get_queue::<S>))
        .route(RouteClass::Join, api!(queue::join_queue::<S>))
        .route(RouteClass::Read, api!(queue::my_queue_entry::<S>))
        .public(
            Freshness::QUEUE_RECORD,
            api!(queue::list_queue_entrants::<S>),
        )
        .route(RouteClass::Read, api!(proof::my_queue_proof::<S>))
        .public(Freshness::QUEUE_RECORD, api!(queue::queue_report::<S>))
}
