//! `seed-packs --products` against moto_server: the shipped products load (again and again, the
//! same), and a bad product is named with nothing written, the catalogue given with it included.

use store::products::{GetProduct, ListProducts};

const BINARY: &str = env!("CARGO_BIN_EXE_seed-packs");
const PRODUCTS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../seed/products.json");
const CATALOG: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../seed/catalog.json");

async fn seed(table: &str, args: &[&str]) -> std::process::Output {
    super::tool(BINARY, testkit::moto::shared_endpoint(), Some(table), args).await
}

#[tokio::test]
async fn the_shipped_products_load_idempotently() {
    let store = testkit::moto::shared_table().await;
    for _ in 0..2 {
        let output = seed(store.table(), &["--products", PRODUCTS]).await;
        assert!(output.status.success(), "{output:?}");
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(stdout.contains("6 products written"), "{stdout}");
    }
    let page = store.list_products(None, 100, None).await.unwrap();
    let ids: Vec<&str> = page.entries.iter().map(|p| p.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "badge-founder",
            "cash-fan-pack",
            "cash-launch-week",
            "cash-starter",
            "frame-gold",
            "theme-hardwood"
        ]
    );
    let frame = store
        .get_product(&domain::ids::ProductId::parse("frame-gold").unwrap())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(frame.prices[0].amount, 299);
}

#[tokio::test]
async fn a_bad_product_is_named_and_nothing_is_written() {
    let store = testkit::moto::shared_table().await;
    let mut products: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(PRODUCTS).unwrap()).unwrap();
    products[1]["pay"] = serde_json::json!(["card", "cash"]);
    let file = std::env::temp_dir().join(format!("bad-products-{}.json", std::process::id()));
    std::fs::write(&file, products.to_string()).unwrap();
    let output = seed(
        store.table(),
        &["--catalog", CATALOG, "--products", file.to_str().unwrap()],
    )
    .await;
    std::fs::remove_file(&file).unwrap();
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("product [1] (cash-fan-pack): pay: a cash_bundle can only be paid by card")
            && stderr.contains("nothing was written"),
        "{stderr}"
    );
    let page = store.list_products(None, 100, None).await.unwrap();
    assert!(page.entries.is_empty());
    use store::catalog::GetLeague;
    let nba = domain::ids::LeagueId::parse("nba").unwrap();
    assert_eq!(
        store.get_league(&nba).await.unwrap(),
        None,
        "nor the catalogue"
    );
}
