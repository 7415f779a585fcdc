//! The refusals several endpoints give, each written once so that every endpoint answers the
//! same sentence and documents it in its examples: a league, team, pack or purchase that is not
//! there (404), and a fan at the wallets' limit (409).

use crate::http::error::{ApiError, ErrorCode};
use domain::catalog::{League, Team};
use domain::ids::{LeagueId, TeamId};
use domain::wallets::MAX_WALLETS_PER_FAN;
use store::catalog::{GetLeague, GetTeam};

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
