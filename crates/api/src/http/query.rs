//! The query helpers every listing shares: a page's `limit`, an id parameter. One place, so that
//! no handler borrows them from another endpoint's.

use crate::http::error::{ApiError, ErrorCode};
use crate::http::extract::QueryParams;
use domain::ids::InvalidId;
use domain::packs::listing::{DEFAULT_LIMIT, MAX_LIMIT};

/// `limit`: a whole number from 1 to [`MAX_LIMIT`]; absent means [`DEFAULT_LIMIT`].
pub fn parse_limit(value: Option<&str>) -> Result<usize, ApiError> {
    parse_limit_or(value, DEFAULT_LIMIT)
}

/// `limit`: a whole number from 1 to [`MAX_LIMIT`]; absent means `default`.
pub fn parse_limit_or(value: Option<&str>, default: usize) -> Result<usize, ApiError> {
    let Some(text) = value else {
        return Ok(default);
    };
    let limit = (text.len() <= 3 && text.bytes().all(|b| b.is_ascii_digit()))
        .then(|| text.parse::<usize>().ok())
        .flatten();
    match limit {
        Some(limit) if (1..=MAX_LIMIT).contains(&limit) => Ok(limit),
        _ => Err(ApiError::refused(
            ErrorCode::InvalidLimit,
            format!("The limit must be a whole number from 1 to {MAX_LIMIT}."),
        )),
    }
}

/// The query parameter `name`, an id of the id grammar, when given (else a 400 naming it).
pub fn id_param<T>(
    query: &QueryParams,
    name: &str,
    parse: impl FnOnce(String) -> Result<T, InvalidId>,
) -> Result<Option<T>, ApiError> {
    query
        .single(name)?
        .map(|text| {
            parse(text).map_err(|_| {
                ApiError::refused(
                    ErrorCode::InvalidQuery,
                    format!("The '{name}' parameter must be an id (1-64 of A-Za-z0-9_-)."),
                )
            })
        })
        .transpose()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limit_is_1_to_100_defaulting_to_50() {
        assert_eq!(parse_limit(None), Ok(50));
        for (text, limit) in [("1", 1), ("100", 100), ("007", 7)] {
            assert_eq!(parse_limit(Some(text)), Ok(limit));
        }
        for bad in [
            "0",
            "101",
            "-1",
            "+5",
            "1.0",
            "",
            " 5",
            "abc",
            "99999999999999999999",
            "1e2",
        ] {
            assert!(parse_limit(Some(bad)).is_err(), "{bad}");
        }
    }
}
