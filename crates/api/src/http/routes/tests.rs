use super::*;
use crate::http::error::{ApiError, ErrorCode};

fn code(method: Method, path: &str) -> Result<(&'static str, Vec<String>), ErrorCode> {
    resolve(&method, path)
        .map(|(route, params)| {
            (
                route.function,
                params.0.into_iter().map(|(_, v)| v).collect(),
            )
        })
        .map_err(|e| e.code())
}

#[test]
fn every_route_resolves_to_itself_with_its_parameters() {
    for route in routes() {
        let names: Vec<&str> = route.param_names().collect();
        // A value of each parameter's grammar (a board is an id behind its kind).
        let values: Vec<String> = names
            .iter()
            .enumerate()
            .map(|(i, name)| match *name {
                "board" => format!("league:id-{i}"),
                _ => format!("id-{i}"),
            })
            .collect();
        let refs: Vec<&str> = values.iter().map(String::as_str).collect();
        let path = route.fill(&refs);
        let (matched, params) = resolve(&route.method, &path).unwrap();
        assert_eq!(matched, route, "{path}");
        for (name, value) in names.iter().zip(&values) {
            assert_eq!(params.get(name), value);
        }
    }
}

#[test]
fn parameters_are_percent_decoded_once() {
    assert_eq!(
        code(Method::GET, "/api/packs/a%2Db"),
        Ok(("get-pack", vec!["a-b".into()]))
    );
    // `%252D` decodes once to `%2D`, which is not an id.
    assert_eq!(
        code(Method::GET, "/api/packs/a%252Db"),
        Err(ErrorCode::NotFound)
    );
}

#[test]
fn ids_outside_the_grammar_are_404_whatever_the_method() {
    let long = "a".repeat(65);
    for id in [
        "a%2Fb", "a.b", "..", "%2E%2E", "é", "%C3%A9", "a%20b", "%", "%zz", "%FF", &long,
    ] {
        for method in [Method::GET, Method::DELETE] {
            assert_eq!(
                code(method.clone(), &format!("/api/packs/{id}")),
                Err(ErrorCode::NotFound),
                "{method} {id:?}"
            );
        }
    }
    assert_eq!(
        code(Method::GET, &format!("/api/packs/{}", "a".repeat(64))).map(|r| r.0),
        Ok("get-pack")
    );
}

#[test]
fn a_display_name_is_a_path_segment_of_its_own_grammar() {
    assert_eq!(
        code(Method::GET, "/api/locker-rooms/Zoe.Hoops"),
        Ok(("locker-rooms", vec!["Zoe.Hoops".into()]))
    );
    assert_eq!(
        code(Method::GET, "/api/locker-rooms/..."),
        Ok(("locker-rooms", vec!["...".into()]))
    );
    for name in ["ab", "a%2Fb.c", "Zo%C3%AB", &"a".repeat(25), "a%20bc"] {
        assert_eq!(
            code(Method::GET, &format!("/api/locker-rooms/{name}")),
            Err(ErrorCode::NotFound),
            "{name}"
        );
    }
    // Ids keep theirs: a `.` is no id.
    assert_eq!(
        code(Method::GET, "/api/packs/a.b"),
        Err(ErrorCode::NotFound)
    );
}

#[test]
fn a_known_path_with_another_method_is_405_listing_every_method() {
    let allow = |method: Method, path: &str| match resolve(&method, path) {
        Err(ApiError::MethodNotAllowed { allow }) => allow,
        other => panic!("{method} {path}: {other:?}"),
    };
    assert_eq!(allow(Method::GET, "/api/web3-link"), "POST");
    assert_eq!(allow(Method::POST, "/api/packs"), "GET");
    assert_eq!(allow(Method::DELETE, "/api/packs/p"), "GET");
    assert_eq!(
        allow(Method::DELETE, "/api/packs/p/purchases/x"),
        "GET, PUT"
    );
    assert_eq!(allow(Method::GET, "/api/packs/p/purchases"), "POST");
    assert_eq!(allow(Method::DELETE, "/api/packs/p/queue"), "GET, POST");
    assert_eq!(allow(Method::POST, "/api/packs/p/queue/me"), "GET");
}

#[test]
fn unknown_paths_are_404() {
    for path in [
        "/",
        "/api",
        "/api/packs/p/extra/x",
        "/api/packs/p/purchases/x/open/more",
        "/API/packs",
        "/api//packs",
        "/api/packs/",
        "/api/packs/p/queue/",
        "/api/packs/p/queue/me/",
    ] {
        assert_eq!(code(Method::GET, path), Err(ErrorCode::NotFound), "{path}");
    }
}

#[test]
fn the_listing_reads_each_handlers_attribute() {
    let listed: Vec<String> = routes()
        .iter()
        .map(|r| format!("{} {} {} {}", r.function, r.method, r.path, r.class))
        .collect();
    assert_eq!(
        listed,
        [
            "list-packs GET /api/packs read",
            "get-pack GET /api/packs/{packId} read",
            "web3-link POST /api/web3-link write",
            "start-purchase POST /api/packs/{packId}/purchases start",
            "get-purchase GET /api/packs/{packId}/purchases/{purchaseId} read",
            "complete-purchase PUT /api/packs/{packId}/purchases/{purchaseId} write",
            "open-pack POST /api/packs/{packId}/purchases/{purchaseId}/open write",
            "me-purchases GET /api/me/purchases read",
            "me-purchases GET /api/me/items read",
            "me-cash GET /api/me/cash read",
            "me-cash GET /api/me/cash/transactions read",
            "me-wallets GET /api/me/wallets read",
            "me-wallets DELETE /api/me/wallets/{walletId} write",
            "cash-top-ups POST /api/me/cash/top-ups write",
            "cash-top-ups GET /api/me/cash/top-ups/{topUpId} read",
            "stripe-webhook POST /api/webhooks/stripe exempt",
            "me-profile GET /api/me read",
            "me-profile PATCH /api/me write",
            "me-profile PUT /api/me/locker-room write",
            "me-profile PUT /api/me/cosmetics write",
            "locker-rooms GET /api/locker-rooms/{displayName} read",
            "catalog GET /api/leagues read",
            "catalog GET /api/leagues/{leagueId} read",
            "catalog GET /api/teams read",
            "catalog GET /api/teams/{teamId} read",
            "leaderboards GET /api/leaderboards/{board} read",
            "leaderboards GET /api/leaderboards/{board}/me read",
            "dashboard GET /api/dashboard read",
            "quests GET /api/quests read",
            "quests GET /api/quests/{questId} read",
            "quests GET /api/me/rewards read",
            "quest-claims POST /api/quests/{questId}/claim write",
            "queue GET /api/packs/{packId}/queue read",
            "queue POST /api/packs/{packId}/queue join",
            "queue GET /api/packs/{packId}/queue/me read",
            "queue GET /api/packs/{packId}/queue/entrants read",
            "queue GET /api/packs/{packId}/queue/me/proof read",
            "queue GET /api/packs/{packId}/queue/report read",
            "misc GET /api/health read",
            "misc GET /api/time read",
            "misc GET /api/config read",
            "events GET /api/me/events read",
            "events GET /api/events read",
            "events GET /api/events/{eventId} read",
            "auth GET /api/auth/session read",
            "auth POST /api/auth/logout write",
            "auth POST /api/auth/revocations write",
            "auth POST /api/auth/provider-events exempt",
            "account-deletion DELETE /api/me write",
            "webhook-endpoints POST /api/webhooks/endpoints write",
            "webhook-endpoints GET /api/webhooks/endpoints read",
            "webhook-endpoints GET /api/webhooks/endpoints/{endpointId} read",
            "webhook-endpoints PATCH /api/webhooks/endpoints/{endpointId} write",
            "webhook-endpoints DELETE /api/webhooks/endpoints/{endpointId} write",
            "webhook-endpoints POST /api/webhooks/endpoints/{endpointId}/rotate write",
            "webhook-endpoints POST /api/webhooks/endpoints/{endpointId}/test write",
            "webhook-endpoints GET /api/webhooks/endpoints/{endpointId}/deliveries read",
            "webhook-endpoints POST /api/webhooks/deliveries/{deliveryId}/retry write",
            "webhook-endpoints POST /api/webhooks/endpoints/{endpointId}/replay write",
            "account GET /api/me/export read",
            "products GET /api/products read",
            "products GET /api/products/{productId} read",
            "product-orders POST /api/products/{productId}/orders write",
            "product-orders GET /api/me/orders read",
            "product-orders GET /api/me/orders/{orderId} read",
        ]
    );
    assert!(routes().iter().any(|r| r.function == DEFAULT_FUNCTION));
}

#[test]
fn fill_puts_values_in_order() {
    assert_eq!(
        fill("/api/packs/{packId}/purchases/{purchaseId}", &["p1", "u2"]),
        "/api/packs/p1/purchases/u2"
    );
}
