//! The refusals several endpoints give, each written once so that every endpoint answers the
//! same sentence and documents it in its examples: a league, team, pack, purchase or product
//! that is not there (404), a fan at the wallets' limit (409), and Stripe failing (503, 502).

use crate::http::error::{ApiError, ErrorCode};
use domain::catalog::{League, Team};
use domain::ids::{LeagueId, ProductId, TeamId};
use domain::products::Product;
use domain::timestamp::Timestamp;
use domain::wallets::MAX_WALLETS_PER_FAN;
use store::catalog::{GetLeague, GetTeam};
use store::products::GetProduct;

pub const LEAGUE_NOT_FOUND: &str = "No league has this id.";
pub const TEAM_NOT_FOUND: &str = "No team has this id.";

/// The league `id`, else 404 `league_not_found`.
pub async fn find_league<S: GetLeague>(store: &S, id: &LeagueId) -> Result<League, ApiError> {
    store
        .get_league(id)
        .await?
        .ok_or_else(|| ApiError::refused(ErrorCode::LeagueNotFound, LEAGUE_NOT_FOUND))
}

/// The team `id`, else 404 `team_not_found`.
pub async fn find_team<S: GetTeam>(store: &S, id: &TeamId) -> Result<Team, ApiError> {
    store
        .get_team(id)
        .await?
        .ok_or_else(|| ApiError::refused(ErrorCode::TeamNotFound, TEAM_NOT_FOUND))
}

/// 404 `pack_not_found`: no pack has this id, or it is a draft.
pub fn pack_not_found() -> ApiError {
    ApiError::refused(ErrorCode::PackNotFound, "No pack has this id.")
}

/// 404 `purchase_not_found`: the fan has no purchase with this id for this pack.
pub fn purchase_not_found() -> ApiError {
    ApiError::refused(
        ErrorCode::PurchaseNotFound,
        "You have no purchase with this id for this pack.",
    )
}

/// 409 `wallet_limit_reached`: a new identity for a fan who holds the most wallets.
pub fn wallet_limit_reached() -> ApiError {
    ApiError::refused(
        ErrorCode::WalletLimitReached,
        format!(
            "You have linked {MAX_WALLETS_PER_FAN} wallets, the most a fan may hold; remove one \
             (DELETE /api/me/wallets/{{walletId}}) to link another."
        ),
    )
}

/// Stripe unreachable, slow, 5xx or 429: 503 (retry with the same key); any other refusal: 502
/// `payment_provider_error` with `message`. The detail (for the log) names `subject` (`top-up
/// <id>`, `order <id>`) and Stripe's status, type and code, never the key.
pub fn stripe_failure(
    error: clients::stripe::StripeError,
    subject: &str,
    message: &'static str,
) -> ApiError {
    match error {
        clients::stripe::StripeError::Unavailable(detail) => ApiError::Unavailable {
            what: "stripe",
            detail: format!("{subject}: {detail}"),
        },
        clients::stripe::StripeError::Refused(detail) => {
            tracing::error!(subject, detail = %detail, "Stripe refused a Checkout Session");
            ApiError::refused(ErrorCode::PaymentProviderError, message)
        }
    }
}

pub const PRODUCT_NOT_FOUND: &str = "No product on sale has this id.";

/// The product `id` while it is listed (active, its sale not ended), or 404
/// `product_not_found`: one read.
pub async fn find_product<S: GetProduct>(store: &S, id: &ProductId) -> Result<Product, ApiError> {
    store
        .get_product(id)
        .await?
        .filter(|product| product.listed_at(Timestamp::now()))
        .ok_or_else(|| ApiError::refused(ErrorCode::ProductNotFound, PRODUCT_NOT_FOUND))
}

/// The fan holds [`MAX_PENDING_TOP_UPS`](domain::topups::pending::MAX_PENDING_TOP_UPS) open
/// Checkout Sessions (top-ups and card orders share the slots): nothing written, nothing sent
/// to Stripe.
pub fn too_many_pending() -> ApiError {
    ApiError::refused(ErrorCode::TooManyPendingTopUps, TOO_MANY_PENDING)
}

/// (The API's description says 5 and an hour: see `pending`'s test of the two.)
pub const TOO_MANY_PENDING: &str = "You have as many unpaid checkout pages (top-ups and card \
orders) as a fan may: pay for one, or wait for its page to expire (an hour after it was opened).";
