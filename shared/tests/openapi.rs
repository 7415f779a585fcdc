//! `openapi.yaml` is the document the code generates (`shared::openapi::openapi_yaml`): a
//! change to a handler's `#[utoipa::path]` or to a type it reads or writes shows here first.
//! `UPDATE_OPENAPI=1 cargo test -p shared --test openapi` writes the file anew (until `scripts/gen`
//! does).

use std::path::Path;

#[test]
fn the_committed_document_is_the_generated_one() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../openapi.yaml");
    let generated = shared::openapi::openapi_yaml();
    if std::env::var_os("UPDATE_OPENAPI").is_some() {
        std::fs::write(&path, &generated).expect("openapi.yaml is writable");
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "openapi.yaml is not what the code generates: run \
         `UPDATE_OPENAPI=1 cargo test -p shared --test openapi` and commit the file"
    );
}

/// The codes' texts are the variants' names in snake_case twice over: strum's (what the API
/// answers) and utoipa's (the `ErrorCode` schema); they must agree, in order.
#[test]
fn the_error_code_schema_lists_every_code_the_api_answers() {
    use shared::http::error::ErrorCode;
    let document = serde_json::to_value(shared::openapi::openapi()).unwrap();
    let listed: Vec<&str> = document["components"]["schemas"]["ErrorCode"]["enum"]
        .as_array()
        .expect("ErrorCode is an enum")
        .iter()
        .map(|code| code.as_str().unwrap())
        .collect();
    let answered: Vec<&str> = ErrorCode::all().map(ErrorCode::as_str).collect();
    assert_eq!(listed, answered);
}

/// Every error response of every operation names the codes it stands for (in its description,
/// as `` `code` ``, or in an example), each a code of that status: a client sees per operation
/// what it may be answered, not only the whole `ErrorCode` enum.
#[test]
fn every_error_response_names_codes_of_its_status() {
    use shared::http::error::ErrorCode;
    let document = serde_json::to_value(shared::openapi::openapi()).unwrap();
    let responses = &document["components"]["responses"];
    for (path, item) in document["paths"].as_object().unwrap() {
        for (method, operation) in item.as_object().unwrap() {
            for (status, response) in operation["responses"].as_object().unwrap() {
                if !status.starts_with('4') && !status.starts_with('5') {
                    continue;
                }
                let response = match response["$ref"].as_str() {
                    Some(reference) => &responses[reference.rsplit('/').next().unwrap()],
                    None => response,
                };
                let text = response.to_string();
                let named: Vec<ErrorCode> = ErrorCode::all()
                    .filter(|code| {
                        text.contains(&format!("`{code}`"))
                            || text.contains(&format!(r#""code":"{code}""#))
                    })
                    .collect();
                assert!(!named.is_empty(), "{method} {path} {status} names no code");
                for code in named {
                    assert_eq!(
                        code.status().as_str(),
                        status,
                        "{method} {path} {status} names {code}"
                    );
                }
            }
        }
    }
}
