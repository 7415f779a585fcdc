//! A fan's linked wallet (`GET /api/me/wallets`, the export).

use serde::Serialize;
use serde_json::value::RawValue;
use utoipa::ToSchema;

use crate::http::error::ApiError;
use crate::openapi::schemas::{Id, truthy};
use domain::timestamp::Timestamp;
use domain::wallets::Wallet;

/// A linked wallet as the API shows it.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schema(as = Wallet)]
pub struct WalletJson<'a> {
    /// Derived from the payload's canonical JSON (RFC 8785): the same identity linked again,
    /// however spelled, is this wallet.
    #[schema(value_type = Id)]
    id: &'a str,
    /// The payload as last linked, exactly as sent.
    #[schema(schema_with = truthy)]
    payload: Box<RawValue>,
    /// When the caller first linked it.
    linked_at: Timestamp,
    /// When the caller last linked it.
    last_linked_at: Timestamp,
}

impl<'a> WalletJson<'a> {
    pub fn of(wallet: &'a Wallet) -> Result<Self, ApiError> {
        let payload =
            RawValue::from_string(wallet.payload.clone()).map_err(|e| ApiError::Internal {
                detail: format!("wallet {}: stored payload is not JSON: {e}", wallet.id),
            })?;
        Ok(Self {
            id: wallet.id.as_str(),
            payload,
            linked_at: wallet.linked_at,
            last_linked_at: wallet.last_linked_at,
        })
    }
}
