//! The operators' routes (issue 46: the events feed, webhook endpoints): authorized by IAM.
//! Deployed, API Gateway's `AWS_IAM` authorizer checks the SigV4 signature and the caller's
//! `execute-api:Invoke` permission before the function runs, and puts the caller in the request
//! context; the function refuses a request without it (a route left without the authorizer).
//! local-api has no IAM: it accepts the operator key it prints at start.

use std::sync::Arc;

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use lambda_http::RequestExt;

use crate::http::error::{ApiError, ErrorCode};
use crate::http::request::bearer_token;
use domain::secret::Secret;

/// How a function knows its operators.
#[derive(Debug, Clone)]
pub enum OperatorAuth {
    /// By the IAM identity API Gateway's authorizer put in the request context.
    Iam,
    /// By a key sent as `Authorization: Bearer <key>` (local-api only).
    LocalKey(Secret),
}

/// A state whose routes include operators' routes.
pub trait Operates: Send + Sync + 'static {
    fn operators(&self) -> &OperatorAuth;
}

/// An operator's request: who signed it (their IAM ARN; `local` for local-api's key).
#[derive(Debug)]
pub struct Operator(pub String);

fn refused() -> ApiError {
    ApiError::refused(
        ErrorCode::OperatorRequired,
        "This route is for the API's operators, authorized by IAM.",
    )
}

impl<St: Operates> FromRequestParts<Arc<St>> for Operator {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &Arc<St>) -> Result<Self, ApiError> {
        match state.operators() {
            OperatorAuth::Iam => iam_caller(&parts.extensions)
                .map(Operator)
                .ok_or_else(refused),
            OperatorAuth::LocalKey(key) => {
                // No key at all is a 401, as a missing token is; a wrong one, a 403.
                let sent = bearer_token(&parts.headers)?;
                aws_lc_rs::constant_time::verify_slices_are_equal(
                    sent.as_bytes(),
                    key.expose().as_bytes(),
                )
                .map(|()| Operator("local".to_owned()))
                .map_err(|_| refused())
            }
        }
    }
}

/// The IAM caller API Gateway's `AWS_IAM` authorizer recorded (`requestContext.authorizer.iam`).
pub(crate) fn iam_caller(extensions: &axum::http::Extensions) -> Option<String> {
    let lambda_http::request::RequestContext::ApiGatewayV2(context) =
        extensions.request_context_ref()?
    else {
        return None;
    };
    let iam = context.authorizer.as_ref()?.iam.as_ref()?;
    iam.user_arn
        .clone()
        .or_else(|| iam.caller_id.clone())
        .filter(|caller| !caller.is_empty())
}
