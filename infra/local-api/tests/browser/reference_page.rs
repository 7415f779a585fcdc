//! `/docs`: the API reference a person reads, Swagger UI over the document local-api serves
//! (whose local server is local-api's own address), its assets from the repository. In
//! Chromium it lists every operation of the document; its screenshot is kept among the CI
//! artefacts (`api-reference.png`).

use crate::common;

use common::LocalApi;

use super::{artifacts_dir, dump_dom, screenshot};

#[tokio::test]
async fn the_reference_page_lists_every_operation_of_the_served_document() {
    let api = LocalApi::start().await;
    assert_eq!(
        api.openapi["servers"][0]["url"], api.base,
        "the served document names another server first"
    );
    let client = reqwest::Client::new();
    for (asset, content_type) in [
        ("swagger-ui-bundle.js", "text/javascript; charset=utf-8"),
        ("swagger-ui.css", "text/css; charset=utf-8"),
    ] {
        let answer = client
            .get(format!("{}/docs/{asset}", api.base))
            .send()
            .await
            .unwrap();
        assert_eq!(answer.status(), 200, "{asset}");
        assert_eq!(answer.headers()["content-type"], content_type);
    }
    let unlisted = client
        .get(format!("{}/docs/package.json", api.base))
        .send()
        .await
        .unwrap();
    assert_eq!(
        unlisted.status(),
        404,
        "only the viewer's two files are served"
    );

    let url = format!("{}/docs", api.base);
    let dom = dump_dom(&url, &api.state_dir.join("chromium-docs")).await;
    assert!(
        dom.contains(r#"data-rendered="true""#),
        "the viewer did not finish:\n{dom}"
    );
    let mut missing = Vec::new();
    let mut operations = 0;
    for (path, item) in api.openapi["paths"].as_object().unwrap() {
        for (method, operation) in item.as_object().unwrap() {
            operations += 1;
            let id = operation["operationId"].as_str().unwrap();
            let listed =
                dom.contains(&format!(">{id}<")) && dom.contains(&format!(r#"data-path="{path}""#));
            if !listed {
                missing.push(format!("{method} {path} ({id})"));
            }
        }
    }
    assert!(operations > 30, "{operations} operations");
    assert!(missing.is_empty(), "not on the page: {missing:?}");

    screenshot(
        &url,
        &artifacts_dir().join("api-reference.png"),
        &api.state_dir.join("chromium-screenshot"),
    )
    .await;
}
