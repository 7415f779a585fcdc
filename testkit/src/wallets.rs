//! Links as the web3-link handler writes them: the payload's text and its wallet id.

use domain::ids::UserId;
use domain::links::{LinkUpsert, WEB3_PROVIDER};
use domain::timestamp::Timestamp;
use domain::wallets::{WalletWrite, wallet_id};
use serde_json::value::RawValue;
use store::links::{LinkError, UpsertLink};

/// Links `payload` (JSON text) for `user` at `at`, with `email`.
pub async fn link(
    store: &impl UpsertLink,
    user: &UserId,
    payload: &str,
    at: Timestamp,
    email: Option<&str>,
) -> Result<WalletWrite, LinkError> {
    let payload = RawValue::from_string(payload.to_owned()).expect("a JSON payload");
    store
        .upsert_link(&LinkUpsert {
            user_id: user,
            email,
            provider: WEB3_PROVIDER,
            payload: &payload,
            wallet_id: wallet_id(payload.get()).expect("a payload with a canonical form"),
            at,
        })
        .await
}
