//! The document the code generates (`api::openapi::openapi_yaml`, which `scripts/gen` writes
//! into `openapi.yaml` and infra/gen's test keeps current) is sound.

/// The codes' texts are the variants' names in snake_case twice over: strum's (what the API
/// answers) and utoipa's (the `ErrorCode` schema); they must agree, in order.
#[test]
fn the_error_code_schema_lists_every_code_the_api_answers() {
    use api::http::error::ErrorCode;
    let document = serde_json::to_value(api::openapi::openapi()).unwrap();
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
    use api::http::error::ErrorCode;
    let document = serde_json::to_value(api::openapi::openapi()).unwrap();
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
                    let unprocessable = status == "422" && code.also_unprocessable();
                    assert!(
                        code.status().as_str() == status || unprocessable,
                        "{method} {path} {status} names {code}"
                    );
                }
            }
        }
    }
}

/// The document's introduction names the human check's actions as the door checks them
/// (`Door::action`): `join_<packId>`, never issue 30's `join:<packId>`, which Turnstile cannot
/// render.
#[test]
fn the_introduction_names_the_actions_the_door_checks() {
    use domain::humancheck::Door;
    use domain::ids::PackId;
    let document = serde_json::to_value(api::openapi::openapi()).unwrap();
    let introduction = document["info"]["description"].as_str().unwrap();
    let pack = PackId::parse("P").unwrap();
    for door in [Door::Join(pack.clone()), Door::Start(pack)] {
        let action = door.action();
        let prefix = action.strip_suffix('P').unwrap();
        let named = format!("`{prefix}<packId>`");
        assert!(introduction.contains(&named), "{named}: {introduction}");
        let colon = format!("{}<packId>", prefix.replace('_', ":"));
        assert!(!introduction.contains(&colon), "{colon}: {introduction}");
    }
}
