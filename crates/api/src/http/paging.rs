//! A page of the API's signed lists: its `limit`, the `cursor` bound to the list, the caller and
//! the filters, the `nextCursor` it passes on, and the page's JSON. One place, beside the
//! query helpers ([`crate::http::query`]), so that no handler borrows them from another
//! endpoint's.

use std::borrow::Cow;

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use serde::Serialize;
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{ObjectBuilder, Schema, SchemaType, Type};
use utoipa::{IntoParams, PartialSchema, ToSchema};

use crate::http::error::{ApiError, ErrorCode};
use crate::http::extract::QueryParams;
use crate::http::query::{id_param, parse_limit, parse_limit_or};
use crate::openapi::schemas::with_properties;
use domain::ids::PackId;
use domain::packs::listing::{CursorSigner, DEFAULT_LIMIT, cursor_scope};
use domain::purchases::mine::is_list_key;

pub fn invalid_query(message: &'static str) -> ApiError {
    ApiError::refused(ErrorCode::InvalidQuery, message)
}

/// `limit`: 1-100, `default` when absent.
pub fn limit(query: &QueryParams, default: usize) -> Result<usize, ApiError> {
    parse_limit_or(query.single("limit")?.as_deref(), default)
}

/// `packId`, an id of the id grammar, when given.
pub fn pack_id(query: &QueryParams) -> Result<Option<PackId>, ApiError> {
    id_param(query, "packId", PackId::parse)
}

/// The `cursor` of the fan's lists (read by [`cursor`]), after their filters and `limit`.
#[derive(IntoParams)]
#[into_params(parameter_in = Query)]
pub struct MeCursor {
    /// The `nextCursor` of the previous page, as given, with the same filters and token (any
    /// other value is a 400 `invalid_cursor`).
    #[param(min_length = 1, max_length = 256)]
    pub cursor: Option<String>,
}

/// The position a `cursor` holds, when one is given: it must be this API's, issued for this
/// list, this caller and these filters (`scope`), and hold a position `valid` accepts.
pub fn cursor<T>(
    cursors: &CursorSigner,
    cursor: Option<&str>,
    scope: &[&str],
    valid: impl FnOnce(&str) -> Option<T>,
) -> Result<Option<T>, ApiError> {
    let Some(cursor) = cursor else {
        return Ok(None);
    };
    cursors
        .decode_scoped(&cursor_scope(scope), cursor)
        .ok()
        .and_then(|position| valid(&position))
        .map(Some)
        .ok_or_else(|| {
            ApiError::refused(
                ErrorCode::InvalidCursor,
                "The cursor is not one this API issued for this list, caller and filters; \
                 start again without it.",
            )
        })
}

/// The list key a fan's list resumes after (their purchases, ledger, rewards, orders): the
/// position of a `cursor` issued for `scope`, when one is given.
pub fn list_key_after(
    cursors: &CursorSigner,
    sent: Option<&str>,
    scope: &[&str],
) -> Result<Option<String>, ApiError> {
    cursor(cursors, sent, scope, |position| {
        is_list_key(position).then(|| position.to_owned())
    })
}

/// The `nextCursor` of a page whose next position is `next`, for `scope`.
pub fn next_cursor(cursors: &CursorSigner, scope: &[&str], next: Option<&str>) -> Option<String> {
    next.map(|position| cursors.encode_scoped(&cursor_scope(scope), position))
}

/// `{"<entries>": [...], "nextCursor": ...}`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PageJson<T> {
    #[serde(flatten)]
    pub entries: T,
    pub next_cursor: Option<String>,
}

/// The page's schema is its entries' object (named as it is) with `nextCursor`.
impl<T: ToSchema> PartialSchema for PageJson<T> {
    fn schema() -> RefOr<Schema> {
        with_properties(T::schema(), [("nextCursor", next_cursor_schema())])
    }
}

impl<T: ToSchema> ToSchema for PageJson<T> {
    fn name() -> Cow<'static, str> {
        T::name()
    }

    fn schemas(schemas: &mut Vec<(String, RefOr<Schema>)>) {
        T::schemas(schemas);
    }
}

/// `nextCursor`: what a page passes on to the next.
pub fn next_cursor_schema() -> RefOr<Schema> {
    ObjectBuilder::new()
        .schema_type(SchemaType::from_iter([Type::String, Type::Null]))
        .description(Some(
            "Pass as `cursor` for the next page; null on the last page.",
        ))
        .into()
}

#[cfg(test)]
mod tests {
    use axum::http::Request;

    use super::*;

    fn query(text: &str) -> axum::http::request::Parts {
        Request::get(format!("/api/me/items?{text}"))
            .body(())
            .unwrap()
            .into_parts()
            .0
    }

    #[test]
    fn pack_id_is_an_id_when_given() {
        assert_eq!(pack_id(&QueryParams::of(&query("limit=5"))), Ok(None));
        assert_eq!(
            pack_id(&QueryParams::of(&query("packId=nba-2026"))),
            Ok(Some(PackId::parse("nba-2026").unwrap()))
        );
        let refused = pack_id(&QueryParams::of(&query("packId=a%20b"))).unwrap_err();
        assert_eq!(refused.code(), ErrorCode::InvalidQuery);
        assert_eq!(
            refused.public_message(),
            "The 'packId' parameter must be an id (1-64 of A-Za-z0-9_-)."
        );
    }
}

/// `?limit=&cursor=` of a public list (the catalogue's, the products') or a fan's orders: the
/// limit checked (default [`DEFAULT_LIMIT`]), the cursor as sent (it is bound to the list and
/// its filter).
#[derive(Debug)]
pub struct ListQuery {
    pub limit: usize,
    pub cursor: Option<String>,
}

impl<St: Send + Sync> FromRequestParts<St> for ListQuery {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &St) -> Result<Self, ApiError> {
        let query = QueryParams::of(parts);
        Ok(Self {
            limit: parse_limit(query.single("limit")?.as_deref())?,
            cursor: query.single("cursor")?,
        })
    }
}

/// The `limit` of the lists (read by [`ListQuery`]).
#[derive(IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ListLimit {
    /// Entries per page.
    #[param(minimum = 1, maximum = 100, default = json!(DEFAULT_LIMIT))]
    pub limit: Option<u32>,
}

/// The `cursor` of the public lists (read by [`ListQuery`]).
#[derive(IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ListCursor {
    /// The `nextCursor` of the previous page, as given, with the same filter (opaque and signed;
    /// any other value is a 400 `invalid_cursor`).
    #[param(min_length = 1, max_length = 256)]
    pub cursor: Option<String>,
}
