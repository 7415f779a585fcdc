//! The example answers of the document: a pack, a page of packs, a purchase as it goes from
//! reserved to paid to opened.

use serde_json::{Value, json};

/// The fields of the example pack as listed.
fn listed_pack() -> Value {
    json!({
        "id": "nba-rookie-2026",
        "name": "NBA Rookie Class 2026",
        "description": "Five cards from this season's rookie class, with a shot at a signed legendary.",
        "imageUrl": "https://cdn.fan-api.example/packs/nba-rookie-2026.png",
        "price": {"amount": 499, "currency": "USD"},
        "status": "active",
        "saleStartsAt": "2026-10-21T16:00:00Z",
        "saleEndsAt": null,
        "totalSupply": 50000,
        "remaining": 31244,
        "itemsPerPack": 5,
        "maxPerUser": null,
        "odds": [
            {"rarity": "common", "chanceBps": 7000},
            {"rarity": "rare", "chanceBps": 2300},
            {"rarity": "epic", "chanceBps": 600},
            {"rarity": "legendary", "chanceBps": 100}
        ],
        "teamId": null,
        "leagueId": "nba",
        "saleStartsInMs": 0,
        "saleEndsInMs": null
    })
}

/// A page of `GET /api/packs`.
pub fn pack_page() -> Value {
    json!({
        "packs": [listed_pack()],
        "nextCursor": "MTo3NDI3MjMzMjg2Mzk5OTk5OTk5OSNuYmEtcm9va2llLTIwMjY"
    })
}

/// `GET /api/packs/{packId}`.
pub fn pack_detail() -> Value {
    let mut pack = listed_pack();
    pack["items"] = json!([
        {"id": "rookie-guard-01", "name": "Rookie Guard", "rarity": "common",
         "imageUrl": "https://cdn.fan-api.example/items/rookie-guard-01.png"},
        {"id": "rookie-center-07", "name": "Rookie Center", "rarity": "rare", "imageUrl": null},
        {"id": "rookie-dunk-12", "name": "Rookie Dunk", "rarity": "epic", "imageUrl": null},
        {"id": "signed-rookie-01", "name": "Signed Rookie Card", "rarity": "legendary", "imageUrl": null}
    ]);
    pack["fairness"] = json!({
        "serverSeedHash": "5f1c9a2e8d7b4c3a6e0f9b8d7c6a5e4f3d2c1b0a9e8d7c6b5a4f3e2d1c0b9a8f",
        "serverSeed": null
    });
    json!({ "pack": pack })
}

/// A purchase just started.
fn reserved() -> Value {
    json!({
        "id": "aziCO-GO8fL4JY8pIvr5KQ",
        "packId": "nba-rookie-2026",
        "status": "reserved",
        "price": {"amount": 499, "currency": "USD"},
        "clientSeed": "my lucky seed 42",
        "nonce": 1,
        "reservedAt": "2026-11-21T12:00:00.123456789Z",
        "expiresAt": "2026-11-21T12:10:00.123456789Z",
        "expiresInMs": 600000,
        "completedAt": null,
        "openedAt": null,
        "items": null
    })
}

/// The answer of a start (and of a read while the hold runs).
pub fn reserved_purchase() -> Value {
    json!({ "purchase": reserved() })
}

/// The answer of paying for it.
pub fn paid_purchase() -> Value {
    let mut purchase = reserved();
    purchase["status"] = json!("completed");
    purchase["expiresInMs"] = json!(509_623);
    purchase["completedAt"] = json!("2026-11-21T12:01:30.5Z");
    json!({ "purchase": purchase, "cash": {"balance": {"amount": 501, "currency": "USD"}} })
}

/// The answer of opening it.
pub fn opened_purchase() -> Value {
    json!({
        "purchase": {
            "id": "aziCO-GO8fL4JY8pIvr5KQ",
            "packId": "nba-rookie-2026",
            "status": "opened",
            "price": {"amount": 499, "currency": "USD"},
            "clientSeed": "my lucky seed",
            "nonce": 1,
            "reservedAt": "2026-11-21T12:00:00Z",
            "expiresAt": "2026-11-21T12:10:00Z",
            "expiresInMs": 480000,
            "completedAt": "2026-11-21T12:01:00Z",
            "openedAt": "2026-11-21T12:02:00Z",
            "items": [{
                "slot": 0,
                "itemId": "nba-rookie-2026-comm-1",
                "name": "Opening Tip-Off",
                "rarity": "common",
                "imageUrl": "https://cdn.fan-api.example/items/nba-rookie-2026/opening-tip-off.png"
            }],
            "fairness": {
                "algorithm": "hmac-sha256-v1",
                "serverSeedHash": "66687aadf862bd776c8fc18b8e9f8e20089714856ee233b3902a591d0d5f2925",
                "serverSeed": null,
                "clientSeed": "my lucky seed",
                "nonce": 1
            }
        }
    })
}

/// A top-up just asked for.
pub fn pending_top_up() -> Value {
    json!({
        "topUp": {
            "id": "pzYaje68pW7-F8F8bVH_NA",
            "amount": 1000,
            "currency": "USD",
            "status": "pending",
            "checkoutUrl": "https://checkout.stripe.com/c/pay/cs_test_a1B2c3",
            "createdAt": "2026-11-25T09:00:00Z",
            "completedAt": null
        }
    })
}

/// A league of the catalogue.
pub fn league() -> Value {
    json!({
        "id": "nba",
        "name": "NBA",
        "sport": "basketball",
        "logoUrl": "https://cdn.fan-api.example/leagues/nba.png"
    })
}

/// A page of `GET /api/leagues`.
pub fn league_page() -> Value {
    json!({ "leagues": [league()], "nextCursor": null })
}

/// A team of the catalogue.
pub fn team() -> Value {
    json!({
        "id": "nba-lal",
        "leagueId": "nba",
        "name": "Lakers",
        "city": "Los Angeles",
        "abbreviation": "LAL",
        "logoUrl": "https://cdn.fan-api.example/teams/nba-lal.png",
        "primaryColor": "#552583"
    })
}

/// A page of `GET /api/teams?leagueId=nba`.
pub fn team_page() -> Value {
    json!({
        "teams": [team()],
        "nextCursor": "MjpuYmEjNmM2MTZiNjU3MjczI25iYS1sYWw.c2lnbmVkLWJ5LXRoZS1hcGk"
    })
}

/// A product: a cosmetic of the shipped seed (infra/seed/products.json).
pub fn product() -> Value {
    json!({
        "id": "frame-gold",
        "type": "cosmetic",
        "name": "Gold Avatar Frame",
        "description": "A gold frame around your avatar, on your profile and in your locker room.",
        "imageUrl": "https://cdn.fan-api.example/products/frame-gold.png",
        "prices": [{"amount": 299, "currency": "USD"}],
        "grants": {"kind": "cosmetic", "slot": "avatar_frame"},
        "pay": ["cash", "card"],
        "saleStartsAt": "2026-10-01T00:00:00Z",
        "saleEndsAt": null,
        "maxPerFan": 1,
        "stock": null
    })
}

/// A page of `GET /api/products`.
pub fn product_page() -> Value {
    json!({ "products": [product()], "nextCursor": null })
}

/// An order of [`product`] paid with Cash: completed when placed.
pub fn completed_order() -> Value {
    json!({
        "order": {
            "id": ORDER_ID,
            "productId": "frame-gold",
            "productType": "cosmetic",
            "productName": "Gold Avatar Frame",
            "price": {"amount": 299, "currency": "USD"},
            "grants": {"kind": "cosmetic", "slot": "avatar_frame"},
            "pay": "cash",
            "status": "completed",
            "checkoutUrl": null,
            "createdAt": "2026-11-25T09:00:00Z",
            "completedAt": "2026-11-25T09:00:00Z"
        }
    })
}

/// The order the create's example key places for the user `me` (infra/gen's fixtures run the
/// create before the reads).
pub const ORDER_ID: &str = "xhXpvr5Wy10dYYf2st0Uow";
