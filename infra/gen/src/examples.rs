//! What the route declaration does not say about a route, one entry per route: the name of its
//! SAM event, its stage throttling if tighter than the API's, and the example request its event
//! fixture makes. A new route gets one entry here (the generator names a route without one).

use crate::routes::RouteSpec;

pub struct RouteExtra {
    /// The route's key, `GET /api/packs`.
    pub route: &'static str,
    /// The SAM event's name: CloudFormation derives the route's logical ids from it, so
    /// renaming one replaces the deployed route (and fails on its route key, still taken).
    pub event: &'static str,
    /// Route settings tighter than the API's: the template parameters of (rate, burst).
    pub throttle: Option<(&'static str, &'static str)>,
    /// `infra/events/<function>.<fixture>.json`; `None`: `<function>.json` (each function's
    /// fixture names differ).
    pub fixture: Option<&'static str>,
    /// The fixture carries `Authorization: Bearer <TOKEN>` (the placeholder that README's invoke
    /// loop, scripts/smoke-lambda-watch and testkit replace with a session token).
    pub signed_in: bool,
    /// The raw query string, without `?`.
    pub query: &'static str,
    /// A JSON body (sent with `content-type: application/json`).
    pub body: Option<&'static str>,
    pub idempotency_key: Option<&'static str>,
    /// Headers that replace the usual one of their name, or come last.
    pub headers: &'static [(&'static str, &'static str)],
}

const PLAIN: RouteExtra = RouteExtra {
    route: "",
    event: "",
    throttle: None,
    fixture: None,
    signed_in: false,
    query: "",
    body: None,
    idempotency_key: None,
    headers: &[],
};

/// The fixtures' path parameters, by name. The purchase is the one the start fixture's key makes
/// for the user `me` (ids derive from the user and the key), and so is the top-up of the top-up
/// fixture's key: with a token for `me`, the fixtures run in order (README, "cargo lambda watch").
/// The wallet is the one the web3-link fixture's payload links (its id from the payload).
pub const PATH_PARAMETERS: [(&str, &str); 7] = [
    ("packId", "nba-rookie-2026"),
    ("purchaseId", "aziCO-GO8fL4JY8pIvr5KQ"),
    ("topUpId", "pzYaje68pW7-F8F8bVH_NA"),
    ("leagueId", "nba"),
    ("teamId", "nba-lal"),
    ("walletId", "KyI2NcQl3LoMmeYne_3s2w"),
    // The name the PATCH fixture gives `me`.
    ("displayName", "Zoe.Hoops"),
];

pub const EXTRAS: [RouteExtra; 30] = [
    RouteExtra {
        route: "GET /api/packs",
        event: "ListPacks",
        query: "limit=2",
        ..PLAIN
    },
    RouteExtra {
        route: "GET /api/packs/{packId}",
        event: "GetPack",
        ..PLAIN
    },
    RouteExtra {
        route: "POST /api/web3-link",
        event: "Web3Link",
        signed_in: true,
        body: Some(
            r#"{"payload": {"address": "0x52908400098527886E0F7030069857D2E4169EE7", "chainId": 1}}"#,
        ),
        ..PLAIN
    },
    RouteExtra {
        route: "POST /api/packs/{packId}/purchases",
        event: "StartPurchase",
        throttle: Some(("StartPurchaseRateLimit", "StartPurchaseBurstLimit")),
        signed_in: true,
        body: Some(r#"{"clientSeed": "my lucky seed 42"}"#),
        idempotency_key: Some("3f2b9c1e-6d4a-4b8e-9f21-7c5a0d8e1b43"),
        ..PLAIN
    },
    RouteExtra {
        route: "GET /api/packs/{packId}/purchases/{purchaseId}",
        event: "GetPurchase",
        signed_in: true,
        ..PLAIN
    },
    RouteExtra {
        route: "PUT /api/packs/{packId}/purchases/{purchaseId}",
        event: "CompletePurchase",
        signed_in: true,
        body: Some(r#"{"payment": {"method": "cash"}}"#),
        ..PLAIN
    },
    RouteExtra {
        route: "POST /api/packs/{packId}/purchases/{purchaseId}/open",
        event: "OpenPack",
        signed_in: true,
        ..PLAIN
    },
    RouteExtra {
        route: "GET /api/me/purchases",
        event: "MyPurchases",
        signed_in: true,
        query: "status=completed&limit=20",
        ..PLAIN
    },
    RouteExtra {
        route: "GET /api/me/items",
        event: "MyItems",
        fixture: Some("items"),
        signed_in: true,
        query: "limit=50",
        ..PLAIN
    },
    RouteExtra {
        route: "GET /api/me/cash",
        event: "MyCash",
        signed_in: true,
        ..PLAIN
    },
    RouteExtra {
        route: "GET /api/me/cash/transactions",
        event: "MyLedger",
        fixture: Some("transactions"),
        signed_in: true,
        query: "currency=USD&limit=20",
        ..PLAIN
    },
    RouteExtra {
        route: "GET /api/me/wallets",
        event: "MyWallets",
        signed_in: true,
        ..PLAIN
    },
    RouteExtra {
        route: "DELETE /api/me/wallets/{walletId}",
        event: "DeleteMyWallet",
        fixture: Some("delete"),
        signed_in: true,
        ..PLAIN
    },
    RouteExtra {
        route: "POST /api/me/cash/top-ups",
        event: "CreateTopUp",
        throttle: Some(("TopUpRateLimit", "TopUpBurstLimit")),
        signed_in: true,
        body: Some(r#"{"amount":1000,"currency":"USD"}"#),
        idempotency_key: Some("try-1"),
        ..PLAIN
    },
    RouteExtra {
        route: "GET /api/me/cash/top-ups/{topUpId}",
        event: "GetTopUp",
        fixture: Some("get"),
        signed_in: true,
        ..PLAIN
    },
    RouteExtra {
        route: "GET /api/me",
        event: "GetMe",
        signed_in: true,
        ..PLAIN
    },
    RouteExtra {
        route: "PATCH /api/me",
        event: "UpdateMe",
        fixture: Some("patch"),
        signed_in: true,
        body: Some(r#"{"displayName": "Zoe.Hoops", "avatarUrl": null}"#),
        ..PLAIN
    },
    RouteExtra {
        route: "PUT /api/me/locker-room",
        event: "PutMyLockerRoom",
        fixture: Some("locker-room"),
        signed_in: true,
        body: Some(r#"{"title": "Rookie gold", "items": []}"#),
        ..PLAIN
    },
    RouteExtra {
        route: "GET /api/locker-rooms/{displayName}",
        event: "GetLockerRoom",
        ..PLAIN
    },
    // Stripe's own request: its signature over the body, and placeholders (`<SESSION>`,
    // `<TOPUP>`, `<SIGNATURE>`) that a test or an operator fills and signs.
    RouteExtra {
        route: "POST /api/webhooks/stripe",
        event: "StripeWebhook",
        body: Some(
            r#"{"id":"evt_fixture_1","object":"event","type":"checkout.session.completed","data":{"object":{"id":"<SESSION>","object":"checkout.session","client_reference_id":"<TOPUP>","amount_total":1000,"currency":"usd","payment_status":"paid"}}}"#,
        ),
        headers: &[
            (
                "user-agent",
                "Stripe/1.0 (+https://stripe.com/docs/webhooks)",
            ),
            ("content-type", "application/json; charset=utf-8"),
            ("stripe-signature", "<SIGNATURE>"),
        ],
        ..PLAIN
    },
    RouteExtra {
        route: "GET /api/leagues",
        event: "ListLeagues",
        fixture: Some("leagues"),
        ..PLAIN
    },
    RouteExtra {
        route: "GET /api/leagues/{leagueId}",
        event: "GetLeague",
        fixture: Some("league"),
        ..PLAIN
    },
    RouteExtra {
        route: "GET /api/teams",
        event: "ListTeams",
        fixture: Some("teams"),
        query: "leagueId=nba&limit=50",
        ..PLAIN
    },
    RouteExtra {
        route: "GET /api/teams/{teamId}",
        event: "GetTeam",
        fixture: Some("team"),
        ..PLAIN
    },
    RouteExtra {
        route: "GET /api/packs/{packId}/queue",
        event: "GetQueue",
        fixture: Some("get"),
        ..PLAIN
    },
    RouteExtra {
        route: "POST /api/packs/{packId}/queue",
        event: "JoinQueue",
        fixture: Some("join"),
        signed_in: true,
        ..PLAIN
    },
    RouteExtra {
        route: "GET /api/packs/{packId}/queue/me",
        event: "GetMyQueueEntry",
        fixture: Some("me"),
        signed_in: true,
        ..PLAIN
    },
    RouteExtra {
        route: "GET /api/packs/{packId}/queue/entrants",
        event: "ListQueueEntrants",
        fixture: Some("entrants"),
        ..PLAIN
    },
    RouteExtra {
        route: "GET /api/packs/{packId}/queue/me/proof",
        event: "GetMyQueueProof",
        fixture: Some("proof"),
        signed_in: true,
        ..PLAIN
    },
    RouteExtra {
        route: "GET /api/packs/{packId}/queue/report",
        event: "GetQueueReport",
        fixture: Some("report"),
        ..PLAIN
    },
];

/// The entry of `route`.
pub fn extra(route: &RouteSpec) -> Result<&'static RouteExtra, String> {
    let key = route.key();
    EXTRAS
        .iter()
        .find(|extra| extra.route == key)
        .ok_or_else(|| {
            format!(
                "{key} ({}) has no entry in infra/gen/src/examples.rs",
                route.function
            )
        })
}

/// The example value of the path parameter `name`.
pub fn path_parameter(name: &str) -> Result<&'static str, String> {
    PATH_PARAMETERS
        .iter()
        .find(|(known, _)| *known == name)
        .map(|(_, value)| *value)
        .ok_or_else(|| {
            format!("the path parameter {{{name}}} has no example in infra/gen/src/examples.rs")
        })
}

/// Entries of no route, and event names given twice (SAM derives logical ids from them).
pub fn problems(routes: &[RouteSpec]) -> Vec<String> {
    let mut problems = Vec::new();
    for (i, extra) in EXTRAS.iter().enumerate() {
        if !routes.iter().any(|route| route.key() == extra.route) {
            problems.push(format!(
                "infra/gen/src/examples.rs has an entry for {}, which is no route",
                extra.route
            ));
        }
        if EXTRAS[..i]
            .iter()
            .any(|earlier| earlier.event == extra.event)
        {
            problems.push(format!("two routes' events are named {}", extra.event));
        }
    }
    problems
}
