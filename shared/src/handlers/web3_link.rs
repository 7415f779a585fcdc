//! `POST /api/web3-link`: links a web3 identity (the body's `payload`) to the signed-in user.

use lambda_http::http::StatusCode;
use lambda_http::{Body, Request, Response};

use crate::auth::TokenVerifier;
use crate::handlers::respond;
use crate::links::{LinkResponse, LinkResponseData, LinkUpsert, WEB3_PROVIDER, parse_link_body};
use crate::request::{WEB3_LINK, bearer_token, body_bytes, require_json_content_type};
use crate::response::json_response;
use crate::store::UpsertLink;
use crate::timestamp::Timestamp;

/// What the link handler needs.
pub struct LinkState<S> {
    pub store: S,
    pub verifier: TokenVerifier,
    pub max_body_bytes: usize,
}

/// Checks, in order: route (404/405), session token (401, or 503 when no signing key can be
/// had), content type (415), body size (413), body and payload (400); then upserts the link.
pub async fn web3_link<S: UpsertLink>(state: &LinkState<S>, request: Request) -> Response<Body> {
    respond(&request, async {
        WEB3_LINK.check(&request)?;
        let identity = state.verifier.verify(bearer_token(&request)?).await?;
        require_json_content_type(&request)?;
        let payload = parse_link_body(body_bytes(&request, state.max_body_bytes)?)?;
        let link = LinkUpsert {
            user_id: &identity.user_id,
            email: identity.email.as_deref(),
            provider: WEB3_PROVIDER,
            payload,
            at: Timestamp::now(),
        };
        state.store.upsert_link(&link).await?;
        tracing::info!(payload_bytes = payload.get().len(), "web3 link saved");
        Ok(json_response(
            StatusCode::OK,
            &LinkResponse {
                success: true,
                data: LinkResponseData {
                    user_id: &identity.user_id,
                    email: identity.email.as_deref(),
                },
            },
        ))
    })
    .await
}
