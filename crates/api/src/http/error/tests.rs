//! Each error's status, code, body and headers.

use super::*;

fn body_json(error: &ApiError) -> serde_json::Value {
    serde_json::from_str(&error.body()).expect("error body is JSON")
}

#[test]
fn every_variant_maps_to_its_status_code_and_json_body() {
    let cases = [
        (
            ApiError::refused(ErrorCode::InvalidJson, "bad"),
            400,
            "invalid_json",
        ),
        (ApiError::MissingToken, 401, "missing_token"),
        (
            ApiError::Unprocessable {
                code: ErrorCode::TeamNotFound,
                message: "no such team".into(),
            },
            422,
            "team_not_found",
        ),
        (
            ApiError::InvalidToken {
                message: "m",
                reason: "r".into(),
            },
            401,
            "invalid_token",
        ),
        (ApiError::not_found(), 404, "not_found"),
        (
            ApiError::refused(ErrorCode::SoldOut, "gone"),
            409,
            "sold_out",
        ),
        (
            ApiError::MethodNotAllowed {
                allow: "GET".into(),
            },
            405,
            "method_not_allowed",
        ),
        (
            ApiError::PayloadTooLarge { limit: 10 },
            413,
            "payload_too_large",
        ),
        (
            ApiError::unsupported_media_type(),
            415,
            "unsupported_media_type",
        ),
        (
            ApiError::Unavailable {
                what: "dynamodb",
                detail: "x".into(),
            },
            503,
            "service_unavailable",
        ),
        (
            ApiError::Internal { detail: "x".into() },
            500,
            "internal_error",
        ),
        (
            ApiError::AppVersionUnsupported {
                store_url: "https://apps.example/x".into(),
            },
            426,
            "app_version_unsupported",
        ),
        (
            ApiError::Maintenance { retry_after: 60 },
            503,
            "maintenance",
        ),
    ];
    for (error, status, code) in cases {
        let body = body_json(&error);
        let response = error.into_response();
        assert_eq!(response.status().as_u16(), status, "{code}");
        assert_eq!(response.headers()[header::CONTENT_TYPE], "application/json");
        assert_eq!(body["success"], false);
        assert_eq!(body["error"]["code"], code);
        assert!(
            body["error"]["message"]
                .as_str()
                .is_some_and(|m| !m.is_empty())
        );
        assert_eq!(
            body.as_object().unwrap().len(),
            2,
            "no other top-level members"
        );
    }
}

#[test]
fn codes_are_unique_snake_case_with_a_client_or_server_status() {
    let mut seen = std::collections::HashSet::new();
    for code in ErrorCode::all() {
        let text = code.as_str();
        assert!(seen.insert(text), "{text} twice");
        assert!(text.bytes().all(|b| b.is_ascii_lowercase() || b == b'_'));
        assert!(code.status().is_client_error() || code.status().is_server_error());
    }
}

/// A client learns the codes from openapi.yaml: a code added here must be documented there.
#[test]
fn every_code_is_documented_in_openapi() {
    let openapi = include_str!("../../../../../openapi.yaml");
    let missing: Vec<&str> = ErrorCode::all()
        .map(ErrorCode::as_str)
        .filter(|code| {
            !openapi.contains(&format!("`{code}`")) && !openapi.contains(&format!("code: {code}\n"))
        })
        .collect();
    assert!(missing.is_empty(), "not in openapi.yaml: {missing:?}");
}

/// The guide's table of statuses and codes (docs/api.md) is where a reader looks a code up:
/// every code is on the row of its status.
#[test]
fn every_code_is_on_its_status_row_of_the_guide() {
    let guide = include_str!("../../../../../docs/api.md");
    let table = &guide[guide.find("## Statuses and codes").expect("the table")..];
    let row_of = |status: u16| {
        table
            .lines()
            .find(|line| line.starts_with(&format!("| {status} |")))
            .unwrap_or("")
    };
    let misplaced: Vec<String> = ErrorCode::all()
        .filter(|code| !row_of(code.status().as_u16()).contains(&format!("`{code}`")))
        .map(|code| format!("{} {code}", code.status().as_u16()))
        .collect();
    assert!(
        misplaced.is_empty(),
        "not on its row of docs/api.md: {misplaced:?}"
    );
}

#[test]
fn a_store_error_maps_to_its_status_with_its_cause_in_the_log_detail_only() {
    use store::StoreError;
    let cause = std::io::Error::other("attribute `price` is not a number");
    let internal = ApiError::from(StoreError::internal_from("purchase item", cause));
    assert_eq!(internal.code(), ErrorCode::InternalError);
    let ApiError::Internal { detail } = &internal else {
        panic!("{internal:?}");
    };
    assert!(
        detail.contains("purchase item") && detail.contains("`price`"),
        "{detail}"
    );
    let body = body_json(&internal);
    assert!(!body.to_string().contains("price"), "{body}");

    let unavailable = ApiError::from(StoreError::unavailable("BatchGetItem: throttled"));
    assert_eq!(unavailable.code(), ErrorCode::ServiceUnavailable);
}

#[test]
fn internal_detail_never_reaches_the_body() {
    let secret = "DispatchFailure(ConnectorError { kind: Io, source: hyper::Error })";
    for error in [
        ApiError::Internal {
            detail: secret.into(),
        },
        ApiError::Unavailable {
            what: "dynamodb",
            detail: secret.into(),
        },
        ApiError::InvalidToken {
            message: "The session token is invalid.",
            reason: secret.into(),
        },
    ] {
        let text = error.body();
        assert!(!text.contains("Dispatch"), "{text}");
        assert!(!text.contains("hyper"), "{text}");
    }
}

#[test]
fn status_specific_headers_are_set() {
    let r = ApiError::MissingToken.into_response();
    assert_eq!(
        r.headers()[header::WWW_AUTHENTICATE],
        r#"Bearer realm="fan-api""#
    );
    let r = ApiError::InvalidToken {
        message: "m",
        reason: "r".into(),
    }
    .into_response();
    assert!(
        r.headers()[header::WWW_AUTHENTICATE]
            .to_str()
            .unwrap()
            .contains(r#"error="invalid_token""#)
    );
    let r = ApiError::Unavailable {
        what: "dynamodb",
        detail: String::new(),
    }
    .into_response();
    assert_eq!(r.headers()[header::RETRY_AFTER], "1");
    let r = ApiError::MethodNotAllowed {
        allow: "POST".into(),
    }
    .into_response();
    assert_eq!(r.headers()[header::ALLOW], "POST");
}
