//! `GET /api/me/wallets` and `DELETE /api/me/wallets/{walletId}`: the identities the caller
//! linked (`POST /api/web3-link`), and their removal. One function (`me-wallets`) serves both:
//! it reads and removes `USER#<caller>` wallet items and their count, nothing else.

use std::sync::Arc;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use crate::auth::TokenVerifier;
use crate::http::error::{ApiError, ErrorBody, ErrorCode};
use crate::http::extract::{Fan, Path, handler_state};
use crate::http::response::json_response;
use crate::http::routes::{LocalProcess, LocalState};
use crate::openapi::responses as doc;
use crate::views::wallets::WalletJson;
use domain::ids::WalletId;
use domain::timestamp::Timestamp;
use store::wallets::{DeleteWallet, ListWallets, Removal};

/// What the wallet handlers need.
pub struct WalletsState<S> {
    pub store: S,
    pub verifier: TokenVerifier,
}

handler_state!(WalletsState: verifier);

impl<S: Send + Sync + Clone + 'static> LocalState<S> for WalletsState<S> {
    fn local(store: &S, process: &LocalProcess) -> Self {
        Self {
            store: store.clone(),
            verifier: process.verifier(),
        }
    }
}

/// The caller's wallets.
#[derive(Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = MyWallets)]
struct Wallets<'a> {
    /// Newest first (by first link), at most 20.
    #[schema(max_items = 20)]
    wallets: Vec<WalletJson<'a>>,
}

/// `GET /api/me/wallets`: every wallet the caller holds, newest first. One read.
#[utoipa::path(
    get,
    path = "/api/me/wallets",
    operation_id = "listMyWallets",
    tag = "Me",
    summary = "The signed-in user's linked wallets",
    description = "Every identity the caller linked with `POST /api/web3-link` and has not \
removed, newest first by first link (at most 20). The same payload linked again, however \
spelled, is one wallet: its `lastLinkedAt` moves and its `payload` is the last one sent.",
    security(("sessionToken" = [])),
    responses(
        (status = 200, description = "The caller's wallets.", body = Wallets,
            example = json!({"wallets": [{
                "id": "KyI2NcQl3LoMmeYne_3s2w",
                "payload": {"address": "0x52908400098527886E0F7030069857D2E4169EE7", "chainId": 1},
                "linkedAt": "2026-11-01T12:00:00Z",
                "lastLinkedAt": "2026-11-20T08:30:00Z"
            }]})),
        doc::SignedIn,
    ),
)]
pub async fn my_wallets<S: ListWallets>(
    State(state): State<Arc<WalletsState<S>>>,
    Fan(identity): Fan,
) -> Result<Response, ApiError> {
    let wallets = state.store.list_wallets(&identity.user_id).await?;
    let wallets = wallets
        .iter()
        .map(WalletJson::of)
        .collect::<Result<_, _>>()?;
    Ok(json_response(StatusCode::OK, &Wallets { wallets }))
}

/// The wallet named by the path.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(rename_all = "camelCase", parameter_in = Path)]
pub struct WalletPath {
    /// The wallet's `id`. A path segment that is not an id once percent-decoded (1-64
    /// characters of `A-Z`, `a-z`, `0-9`, `_` and `-`) names no resource: 404 `not_found`.
    #[param(
        value_type = String,
        pattern = "^[A-Za-z0-9_-]{1,64}$",
        example = "KyI2NcQl3LoMmeYne_3s2w"
    )]
    pub wallet_id: WalletId,
}

/// `DELETE /api/me/wallets/{walletId}`: removes one of the caller's wallets, freeing its slot
/// of the cap in the same transaction.
#[utoipa::path(
    delete,
    path = "/api/me/wallets/{walletId}",
    operation_id = "deleteMyWallet",
    tag = "Me",
    summary = "Remove one of the signed-in user's wallets",
    description = "Removes the wallet and frees its place among the caller's at most 20: linking \
a new identity is possible again. The web3 link itself (the last payload linked) is kept. \
Another user's wallet, or none at all, are the same 404 `wallet_not_found`.",
    security(("sessionToken" = [])),
    params(WalletPath),
    responses(
        (status = 204, description = "Removed."),
        (status = 404, description = "The caller has no wallet with this id \
(`wallet_not_found`), or the id is not an id (`not_found`).",
            body = ErrorBody,
            examples(
                ("unknown" = (value = json!(doc::example(wallet_not_found())))),
                ("notAnId" = (value = json!(doc::not_an_id()))),
            )),
        doc::SignedIn,
    ),
)]
pub async fn delete_wallet<S: DeleteWallet>(
    State(state): State<Arc<WalletsState<S>>>,
    Path(WalletPath { wallet_id }): Path<WalletPath>,
    Fan(identity): Fan,
) -> Result<Response, ApiError> {
    match state
        .store
        .delete_wallet(&identity.user_id, &wallet_id, Timestamp::now())
        .await?
    {
        Removal::Removed => {
            tracing::info!("wallet removed");
            Ok(StatusCode::NO_CONTENT.into_response())
        }
        Removal::NotHeld => Err(wallet_not_found()),
    }
}

/// 404 `wallet_not_found`: the caller holds no wallet of that id.
pub fn wallet_not_found() -> ApiError {
    ApiError::refused(
        ErrorCode::WalletNotFound,
        "You have no wallet with this id.",
    )
}
