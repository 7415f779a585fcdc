//! What a route's SAM event and event fixture need besides its declaration ([`RouteExtra`]), by
//! function and operation id: the rest of each is derived (the event's name from the operation
//! id, the token from the operation's security, the path's values from its parameters'
//! examples). Kept here, where the events and fixtures are written, so that no function's binary
//! carries any of it.

use crate::routes::RouteSpec;

/// A route's deployment and example request, where the derived ones do not do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RouteExtra {
    /// The SAM event's name, when it is not the operation id in PascalCase. CloudFormation
    /// derives the route's logical ids from it, so renaming one replaces the deployed route (and
    /// fails on its route key, still taken): the routes deployed under other names keep them.
    pub event: Option<&'static str>,
    /// Route settings tighter than the API's: the template parameters `<throttle>RateLimit` and
    /// `<throttle>BurstLimit`.
    pub throttle: Option<&'static str>,
    /// `infra/events/<function>.<fixture>.json`; `None`: `<function>.json` for the function's
    /// first route, `<function>.<operation-id>.json` (kebab case) for its others (the names
    /// given here are older than that rule, and scripts and docs name them).
    pub fixture: Option<&'static str>,
    /// The raw query string, without `?`.
    pub query: &'static str,
    /// A JSON body (sent with `content-type: application/json`).
    pub body: Option<&'static str>,
    pub idempotency_key: Option<&'static str>,
    /// Headers that replace the usual one of their name, or come last.
    pub headers: &'static [(&'static str, &'static str)],
}

impl RouteExtra {
    /// A route that needs nothing more than its declaration.
    pub const NONE: Self = Self {
        event: None,
        throttle: None,
        fixture: None,
        query: "",
        body: None,
        idempotency_key: None,
        headers: &[],
    };
}

/// The stripe-webhook fixture's request: Stripe's own, with placeholders (`<SESSION>`, `<TOPUP>`,
/// `<SIGNATURE>`) that a test or an operator fills and signs.
const STRIPE_EVENT: &str = r#"{"id":"evt_fixture_1","object":"event","type":"checkout.session.completed","data":{"object":{"id":"<SESSION>","object":"checkout.session","client_reference_id":"<TOPUP>","amount_total":1000,"currency":"usd","payment_status":"paid"}}}"#;
/// Its headers: Stripe's user agent and content type, and the signature.
const STRIPE_HEADERS: &[(&str, &str)] = &[
    (
        "user-agent",
        "Stripe/1.0 (+https://stripe.com/docs/webhooks)",
    ),
    ("content-type", "application/json; charset=utf-8"),
    ("stripe-signature", "<SIGNATURE>"),
];

const NONE: RouteExtra = RouteExtra::NONE;

/// The routes that need more than their declaration, by function and operation id: the event's
/// name where the deployed one is not the operation id's, the fixture's name where it is not the
/// derived one, its query, body, idempotency key and headers, a tighter throttle.
#[rustfmt::skip] // a route a line, or a few: read as a table
const EXTRAS: &[(&str, &str, RouteExtra)] = &[
    ("list-packs", "listPacks", RouteExtra { query: "limit=2", ..NONE }),
    ("web3-link", "createWeb3Link", RouteExtra {
        event: Some("Web3Link"),
        body: Some(r#"{"payload": {"address": "0x52908400098527886E0F7030069857D2E4169EE7", "chainId": 1}}"#),
        ..NONE
    }),
    ("start-purchase", "startPurchase", RouteExtra {
        throttle: Some("StartPurchase"),
        body: Some(r#"{"clientSeed": "my lucky seed 42"}"#),
        idempotency_key: Some("3f2b9c1e-6d4a-4b8e-9f21-7c5a0d8e1b43"),
        ..NONE
    }),
    ("complete-purchase", "completePurchase", RouteExtra {
        body: Some(r#"{"payment": {"method": "cash"}}"#),
        ..NONE
    }),
    ("me-purchases", "listMyPurchases", RouteExtra {
        event: Some("MyPurchases"),
        query: "status=completed&limit=20",
        ..NONE
    }),
    ("me-purchases", "listMyItems", RouteExtra {
        event: Some("MyItems"),
        fixture: Some("items"),
        query: "limit=50",
        ..NONE
    }),
    ("me-cash", "getMyCash", RouteExtra { event: Some("MyCash"), ..NONE }),
    ("me-cash", "listMyCashTransactions", RouteExtra {
        event: Some("MyLedger"),
        fixture: Some("transactions"),
        query: "currency=USD&limit=20",
        ..NONE
    }),
    ("me-wallets", "listMyWallets", RouteExtra { event: Some("MyWallets"), ..NONE }),
    ("me-wallets", "deleteMyWallet", RouteExtra { fixture: Some("delete"), ..NONE }),
    ("cash-top-ups", "createTopUp", RouteExtra {
        throttle: Some("TopUp"),
        body: Some(r#"{"amount":1000,"currency":"USD"}"#),
        idempotency_key: Some("try-1"),
        ..NONE
    }),
    ("cash-top-ups", "getTopUp", RouteExtra { fixture: Some("get"), ..NONE }),
    ("stripe-webhook", "stripeWebhook", RouteExtra {
        body: Some(STRIPE_EVENT),
        headers: STRIPE_HEADERS,
        ..NONE
    }),
    ("me-profile", "updateMe", RouteExtra {
        fixture: Some("patch"),
        body: Some(r#"{"displayName": "Zoe.Hoops", "avatarUrl": null}"#),
        ..NONE
    }),
    ("me-profile", "putMyLockerRoom", RouteExtra {
        fixture: Some("locker-room"),
        body: Some(r#"{"title": "Rookie gold", "items": []}"#),
        ..NONE
    }),
    ("me-profile", "putMyCosmetics", RouteExtra {
        fixture: Some("cosmetics"),
        body: Some(r#"{"avatarFrame": null}"#),
        ..NONE
    }),
    ("catalog", "listLeagues", RouteExtra { fixture: Some("leagues"), ..NONE }),
    ("catalog", "getLeague", RouteExtra { fixture: Some("league"), ..NONE }),
    ("catalog", "listTeams", RouteExtra {
        fixture: Some("teams"),
        query: "leagueId=nba&limit=50",
        ..NONE
    }),
    ("catalog", "getTeam", RouteExtra { fixture: Some("team"), ..NONE }),
    ("leaderboards", "getLeaderboard", RouteExtra { query: "limit=10", ..NONE }),
    ("leaderboards", "getMyStanding", RouteExtra { fixture: Some("my-standing"), ..NONE }),
    ("quests", "getQuest", RouteExtra { fixture: Some("quest"), ..NONE }),
    ("quests", "listMyRewards", RouteExtra {
        event: Some("MyRewards"),
        fixture: Some("rewards"),
        query: "limit=20",
        ..NONE
    }),
    ("quest-claims", "claimQuest", RouteExtra {
        idempotency_key: Some("9d6f1c2a-4b3e-4f8a-8c7d-2e1b0a9f8e7d"),
        ..NONE
    }),
    ("product-orders", "createOrder", RouteExtra {
        body: Some(r#"{"pay": "cash", "currency": "USD"}"#),
        // The key of the document's example: its order is `examples::ORDER_ID`, which the
        // order's read fixture names.
        idempotency_key: Some("3f1e9c2a-5b7d-4e8f-9a0b-1c2d3e4f5a6b"),
        ..NONE
    }),
    ("queue", "getQueue", RouteExtra { fixture: Some("get"), ..NONE }),
    ("queue", "joinQueue", RouteExtra { fixture: Some("join"), ..NONE }),
    ("queue", "getMyQueueEntry", RouteExtra { fixture: Some("me"), ..NONE }),
    ("queue", "listQueueEntrants", RouteExtra { fixture: Some("entrants"), ..NONE }),
    ("queue", "getMyQueueProof", RouteExtra { fixture: Some("proof"), ..NONE }),
    ("queue", "getQueueReport", RouteExtra { fixture: Some("report"), ..NONE }),
];

/// The extras of `function`'s operation `operation_id`: its line above, else none.
pub fn extra(function: &str, operation_id: &str) -> RouteExtra {
    EXTRAS
        .iter()
        .find(|(f, id, _)| *f == function && *id == operation_id)
        .map_or(NONE, |(_, _, extra)| *extra)
}

/// Lines above that no route of `routes` matches: a renamed operation, or one moved to another
/// function, would otherwise lose its extras without a word.
pub fn problems(routes: &[RouteSpec]) -> Vec<String> {
    EXTRAS
        .iter()
        .filter(|(function, id, _)| {
            !routes
                .iter()
                .any(|route| route.function == *function && route.operation_id == *id)
        })
        .map(|(function, id, _)| format!("extras for {function} {id}: no such route"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_extra_names_a_route() {
        assert_eq!(problems(&crate::routes::routes()), Vec::<String>::new());
    }

    #[test]
    fn an_extra_of_no_route_is_named() {
        let mut routes = crate::routes::routes();
        let leagues = routes
            .iter_mut()
            .find(|route| route.operation_id == "listLeagues")
            .expect("the catalog lists its leagues");
        leagues.function = "leagues".into();
        assert_eq!(
            problems(&routes),
            ["extras for catalog listLeagues: no such route"]
        );
    }
}
