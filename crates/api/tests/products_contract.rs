//! The products storage contract, run against both stores (DynamoStore on moto_server behind the
//! one-request-at-a-time proxy, and MemoryStore): a Cash order debits, takes a unit and the
//! fan's allowance, grants and writes its ledger entry and events in one write, once per key;
//! never beyond the stock nor the limit, however orders race; the ledger adds up to the balance
//! after every race; a re-seeded price never changes an order placed.

use std::sync::Arc;

use domain::cash::ledger::{EntryKind, LedgerQuery};
use domain::ids::ProductId;
use domain::products::cosmetics::Equipped;
use domain::products::order::{Order, OrderStatus, order_id};
use domain::products::{Grant, PayMethod, Product, ProductStatus, ProductType, Slot};
use domain::timestamp::Timestamp;
use store::Store;
use store::products::{CompleteOrderError, CompletedOrder, EquipError, OrderError, Placed};
use testkit::at_once;
use testkit::event_log::{of_fan, types};
use testkit::ids::user;

testkit::store_contract!(
    arc:
    products_list_by_id_in_pages_and_by_type,
    a_cash_order_debits_grants_and_names_itself_in_the_ledger_once_per_key,
    a_refused_order_writes_nothing,
    a_repriced_product_never_changes_an_order_placed,
    a_card_order_is_pending_with_its_unit_and_allowance_taken,
    a_fan_equips_only_what_they_own_one_per_slot,
    eight_orders_with_one_key_place_one,
    eight_fans_racing_for_three_units_get_three,
    eight_orders_of_one_fan_stop_at_the_limit,
    a_paid_card_order_grants_once_and_a_bonus_is_cash_naming_the_order,
    eight_deliveries_of_one_payment_grant_once,
);

fn product(id: &str, stock: Option<u64>, max_per_fan: Option<u32>) -> Product {
    Product {
        id: ProductId::parse(id).unwrap(),
        product_type: ProductType::Cosmetic,
        name: format!("Frame {id}"),
        description: String::new(),
        image_url: None,
        prices: vec![domain::cash::Money {
            amount: 300,
            currency: "USD".into(),
        }],
        grants: Grant::Cosmetic {
            slot: Slot::AvatarFrame,
        },
        pay: vec![PayMethod::Cash, PayMethod::Card],
        status: ProductStatus::Active,
        sale_starts_at: None,
        sale_ends_at: None,
        max_per_fan,
        stock,
    }
}

fn order(fan: &str, key: &str, product: &Product, pay: PayMethod) -> Order {
    let fan = user(fan);
    let price = product.prices[0].clone();
    Order::place(
        order_id(&fan, key),
        fan,
        product,
        price,
        pay,
        Timestamp::now(),
    )
}

async fn seeded(store: &impl Store, products: &[Product]) {
    store.seed_products(products).await.unwrap();
}

async fn fund(store: &impl Store, fan: &str, amount: u64) {
    testkit::purchases::credit(store, fan, amount, "USD", &format!("grant-{fan}")).await;
}

async fn balance(store: &impl Store, fan: &str) -> u64 {
    store.get_balance(&user(fan), "USD").await.unwrap()
}

/// The fan's ledger, credits less debits, checked to be their balance; the entries' order ids.
async fn ledger_adds_up(store: &impl Store, fan: &str) -> Vec<Option<String>> {
    let mut query = LedgerQuery {
        user_id: user(fan),
        currency: None,
        limit: 100,
        after: None,
    };
    let (mut sum, mut orders) = (0i128, Vec::new());
    loop {
        let page = store.list_ledger(&query).await.unwrap();
        for entry in &page.entries {
            let amount = i128::from(entry.amount.amount);
            sum += if entry.kind == EntryKind::Credit {
                amount
            } else {
                -amount
            };
            orders.push(entry.order_id.as_ref().map(ToString::to_string));
        }
        match page.next {
            Some(next) => query.after = Some(next),
            None => break,
        }
    }
    assert_eq!(sum, i128::from(balance(store, fan).await), "{fan}'s ledger");
    orders
}

async fn products_list_by_id_in_pages_and_by_type(store: Arc<impl Store>) {
    let store = &*store;
    let mut bundle = product("b", None, None);
    bundle.product_type = ProductType::CashBundle;
    bundle.grants = Grant::Cash {
        amount: 1000,
        bonus: 100,
        currency: "USD".into(),
    };
    bundle.pay = vec![PayMethod::Card];
    seeded(
        store,
        &[
            product("c", None, None),
            bundle,
            product("a", Some(1), None),
        ],
    )
    .await;
    let first = store.list_products(None, 2, None).await.unwrap();
    let ids = |page: &[Product]| page.iter().map(|p| p.id.to_string()).collect::<Vec<_>>();
    assert_eq!(ids(&first.entries), ["a", "b"]);
    let after = ProductId::parse(first.next.unwrap()).unwrap();
    let second = store.list_products(None, 2, Some(&after)).await.unwrap();
    assert_eq!(ids(&second.entries), ["c"]);
    let bundles = store
        .list_products(Some(ProductType::CashBundle), 10, None)
        .await
        .unwrap();
    assert_eq!(ids(&bundles.entries), ["b"]);
    let c = ProductId::parse("c").unwrap();
    assert_eq!(
        store.get_product(&c).await.unwrap(),
        Some(product("c", None, None))
    );
    let none = ProductId::parse("none").unwrap();
    assert_eq!(store.get_product(&none).await.unwrap(), None);
}

async fn a_cash_order_debits_grants_and_names_itself_in_the_ledger_once_per_key(
    store: Arc<impl Store>,
) {
    let store = &*store;
    let frame = product("frame", Some(5), Some(2));
    seeded(store, &[frame.clone(), product("other", None, None)]).await;
    fund(store, "fan", 1000).await;
    let placed = order("fan", "k1", &frame, PayMethod::Cash);
    assert_eq!(
        store.place_order(&placed, &frame).await,
        Ok(Placed::Created(placed.clone()))
    );
    assert_eq!(balance(store, "fan").await, 700);
    let orders = ledger_adds_up(store, "fan").await;
    assert_eq!(
        orders,
        [Some(placed.id.to_string()), None],
        "the debit names the order"
    );
    assert_eq!(
        store.owned_cosmetics(&user("fan")).await.unwrap(),
        [(frame.id.clone(), Slot::AvatarFrame)]
    );
    let events = of_fan(store, &user("fan")).await;
    assert_eq!(
        types(&events),
        [
            "cash.credited",
            "order.completed",
            "cash.debited",
            "cosmetic.granted"
        ]
    );
    assert_eq!(events[2]["data"]["orderId"], placed.id.as_str());

    // The same key again: that order, nothing more; for another product: refused.
    let mut again = placed.clone();
    again.created_at = Timestamp::now();
    assert_eq!(
        store.place_order(&again, &frame).await,
        Ok(Placed::Repeated(placed.clone()))
    );
    let other = product("other", None, None);
    assert_eq!(
        store
            .place_order(&order("fan", "k1", &other, PayMethod::Cash), &other)
            .await,
        Err(OrderError::KeyReused)
    );
    assert_eq!(balance(store, "fan").await, 700);
    assert_eq!(of_fan(store, &user("fan")).await.len(), 4, "no event more");
    let mine = store.list_orders(&user("fan"), 10, None).await.unwrap();
    assert_eq!(mine.entries, std::slice::from_ref(&placed));
    assert_eq!(
        store.get_order(&user("fan"), &placed.id).await.unwrap(),
        Some(placed)
    );
}

async fn a_refused_order_writes_nothing(store: Arc<impl Store>) {
    let store = &*store;
    let (one_left, once) = (
        product("one", Some(1), None),
        product("once", None, Some(1)),
    );
    seeded(store, &[one_left.clone(), once.clone()]).await;
    fund(store, "fan", 600).await;
    fund(store, "poor", 299).await;
    let broke = order("poor", "k", &once, PayMethod::Cash);
    assert_eq!(
        store.place_order(&broke, &once).await,
        Err(OrderError::InsufficientFunds)
    );
    assert_eq!(
        store.get_order(&user("poor"), &broke.id).await.unwrap(),
        None
    );
    for (key, item, refusal) in [
        ("a", &one_left, None),
        ("b", &one_left, Some(OrderError::SoldOut)),
        ("c", &once, None),
        ("d", &once, Some(OrderError::LimitReached)),
    ] {
        let placed = order("fan", key, item, PayMethod::Cash);
        let result = store.place_order(&placed, item).await;
        match refusal {
            None => assert!(
                matches!(result, Ok(Placed::Created(_))),
                "{key}: {result:?}"
            ),
            Some(refusal) => assert_eq!(result, Err(refusal), "{key}"),
        }
    }
    assert_eq!(balance(store, "fan").await, 0);
    assert_eq!(ledger_adds_up(store, "fan").await.len(), 3);
    assert_eq!(balance(store, "poor").await, 299);
    // No stock item: a product the store does not hold is one that changed.
    let unknown = product("unknown", None, None);
    assert_eq!(
        store
            .place_order(&order("fan", "e", &unknown, PayMethod::Cash), &unknown)
            .await,
        Err(OrderError::ProductChanged)
    );
}

async fn a_repriced_product_never_changes_an_order_placed(store: Arc<impl Store>) {
    let store = &*store;
    let frame = product("frame", Some(3), None);
    seeded(store, std::slice::from_ref(&frame)).await;
    fund(store, "fan", 1000).await;
    let placed = order("fan", "k1", &frame, PayMethod::Cash);
    store.place_order(&placed, &frame).await.unwrap();
    let mut repriced = frame.clone();
    repriced.prices[0].amount = 500;
    repriced.name = "Renamed".into();
    repriced.stock = Some(2);
    seeded(store, &[repriced.clone()]).await;
    let kept = store
        .get_order(&user("fan"), &placed.id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (kept.price.amount, kept.product_name.as_str()),
        (300, "Frame frame")
    );
    // An order priced on the old terms is refused as such (a unit is left); on the new terms
    // it pays the new price, and the stock lowered to 2 with 1 sold sells 1 more.
    let stale = order("fan", "k2", &frame, PayMethod::Cash);
    assert_eq!(
        store.place_order(&stale, &frame).await,
        Err(OrderError::ProductChanged)
    );
    let late = order("fan", "k3", &repriced, PayMethod::Cash);
    assert!(matches!(
        store.place_order(&late, &repriced).await,
        Ok(Placed::Created(_))
    ));
    let later = order("fan", "k4", &repriced, PayMethod::Cash);
    assert_eq!(
        store.place_order(&later, &repriced).await,
        Err(OrderError::SoldOut)
    );
    assert_eq!(balance(store, "fan").await, 200);
    ledger_adds_up(store, "fan").await;
}

async fn a_card_order_is_pending_with_its_unit_and_allowance_taken(store: Arc<impl Store>) {
    let store = &*store;
    let frame = product("frame", Some(1), Some(1));
    seeded(store, std::slice::from_ref(&frame)).await;
    let pending = order("fan", "k", &frame, PayMethod::Card);
    assert_eq!(pending.status, OrderStatus::Pending);
    assert_eq!(
        store.place_order(&pending, &frame).await,
        Ok(Placed::Created(pending.clone()))
    );
    assert!(
        store
            .owned_cosmetics(&user("fan"))
            .await
            .unwrap()
            .is_empty(),
        "granted when paid"
    );
    assert!(of_fan(store, &user("fan")).await.is_empty());
    let next = order("other", "k", &frame, PayMethod::Card);
    assert_eq!(
        store.place_order(&next, &frame).await,
        Err(OrderError::SoldOut)
    );
}

async fn a_fan_equips_only_what_they_own_one_per_slot(store: Arc<impl Store>) {
    let store = &*store;
    let frame = product("frame", None, None);
    let mut badge = product("badge", None, None);
    badge.grants = Grant::Cosmetic { slot: Slot::Badge };
    seeded(store, &[frame.clone(), badge.clone()]).await;
    fund(store, "fan", 300).await;
    store
        .place_order(&order("fan", "k", &frame, PayMethod::Cash), &frame)
        .await
        .unwrap();
    let mut wanted = Equipped::default();
    wanted.slots.insert(Slot::AvatarFrame, frame.id.clone());
    store.equip(&user("fan"), &wanted).await.unwrap();
    assert_eq!(store.equipped(&user("fan")).await.unwrap(), wanted);
    // Not owned, or owned for another slot: refused, nothing changed.
    for (slot, id) in [(Slot::Badge, &badge.id), (Slot::LockerTheme, &frame.id)] {
        let mut more = wanted.clone();
        more.slots.insert(slot, id.clone());
        assert_eq!(
            store.equip(&user("fan"), &more).await,
            Err(EquipError::NotOwned(slot))
        );
    }
    assert_eq!(store.equipped(&user("fan")).await.unwrap(), wanted);
    store
        .equip(&user("fan"), &Equipped::default())
        .await
        .unwrap();
    assert_eq!(
        store.equipped(&user("fan")).await.unwrap(),
        Equipped::default()
    );
}

/// 8 Cash orders of `frame` at once, the `k`-th by the fan and with the key `who(k)` names.
async fn race<S: Store + 'static>(
    store: &Arc<S>,
    frame: &Product,
    who: fn(usize) -> (String, String),
) -> Vec<Result<Placed, OrderError>> {
    at_once(8, |k| {
        let (store, frame) = (store.clone(), frame.clone());
        async move {
            let (fan, key) = who(k);
            let placed = order(&fan, &key, &frame, PayMethod::Cash);
            store.place_order(&placed, &frame).await
        }
    })
    .await
}

fn count<T>(results: &[T], matching: impl Fn(&T) -> bool) -> usize {
    results.iter().filter(|r| matching(r)).count()
}

async fn eight_orders_with_one_key_place_one<S: Store + 'static>(store: Arc<S>) {
    let frame = product("frame", Some(10), None);
    seeded(&*store, std::slice::from_ref(&frame)).await;
    fund(&*store, "fan", 3000).await;
    let results = race(&store, &frame, |_| ("fan".to_owned(), "one-key".to_owned())).await;
    let created = count(&results, |r| matches!(r, Ok(Placed::Created(_))));
    assert_eq!(created, 1, "{results:?}");
    assert!(results.iter().all(Result::is_ok), "{results:?}");
    assert_eq!(balance(&*store, "fan").await, 2700, "debited once");
    assert_eq!(ledger_adds_up(&*store, "fan").await.len(), 2);
    let events = of_fan(&*store, &user("fan")).await;
    assert_eq!(
        types(&events)
            .iter()
            .filter(|t| **t == "order.completed")
            .count(),
        1
    );
}

async fn eight_fans_racing_for_three_units_get_three<S: Store + 'static>(store: Arc<S>) {
    let frame = product("frame", Some(3), None);
    seeded(&*store, std::slice::from_ref(&frame)).await;
    for k in 0..8 {
        fund(&*store, &format!("fan{k}"), 300).await;
    }
    let results = race(&store, &frame, |k| (format!("fan{k}"), "k".to_owned())).await;
    let created = count(&results, |r| matches!(r, Ok(Placed::Created(_))));
    let sold_out = count(&results, |r| *r == Err(OrderError::SoldOut));
    assert_eq!((created, sold_out), (3, 5), "{results:?}");
    let mut paid = 0;
    for k in 0..8 {
        let fan = format!("fan{k}");
        ledger_adds_up(&*store, &fan).await;
        paid += 300 - balance(&*store, &fan).await;
    }
    assert_eq!(paid, 900, "three units paid for, no more");
}

async fn eight_orders_of_one_fan_stop_at_the_limit<S: Store + 'static>(store: Arc<S>) {
    let frame = product("frame", None, Some(2));
    seeded(&*store, std::slice::from_ref(&frame)).await;
    fund(&*store, "fan", 3000).await;
    let results = race(&store, &frame, |k| ("fan".to_owned(), format!("k{k}"))).await;
    let created = count(&results, |r| matches!(r, Ok(Placed::Created(_))));
    let limited = count(&results, |r| *r == Err(OrderError::LimitReached));
    assert_eq!((created, limited), (2, 6), "{results:?}");
    assert_eq!(balance(&*store, "fan").await, 2400);
    assert_eq!(ledger_adds_up(&*store, "fan").await.len(), 3);
    let owned = store.owned_cosmetics(&user("fan")).await.unwrap();
    assert_eq!(owned, [(frame.id.clone(), Slot::AvatarFrame)]);
}

fn bundle() -> Product {
    let mut bundle = product("bundle", Some(5), Some(1));
    bundle.product_type = ProductType::CashBundle;
    bundle.grants = Grant::Cash {
        amount: 1000,
        bonus: 100,
        currency: "USD".into(),
    };
    bundle.pay = vec![PayMethod::Card];
    bundle
}

async fn a_paid_card_order_grants_once_and_a_bonus_is_cash_naming_the_order(
    store: Arc<impl Store>,
) {
    let store = &*store;
    let (bundle, frame) = (bundle(), product("frame", None, None));
    seeded(store, &[bundle.clone(), frame.clone()]).await;
    let pending = order("fan", "k", &bundle, PayMethod::Card);
    store.place_order(&pending, &bundle).await.unwrap();
    let at = Timestamp::now();
    let done = pending.completed(at);
    assert_eq!(
        store.complete_order(&pending, at).await,
        Ok(CompletedOrder::Completed(done.clone()))
    );
    assert_eq!(
        store.complete_order(&pending, Timestamp::now()).await,
        Ok(CompletedOrder::AlreadyCompleted(done.clone())),
        "a redelivery"
    );
    assert_eq!(balance(store, "fan").await, 1100, "amount plus bonus, once");
    assert_eq!(
        ledger_adds_up(store, "fan").await,
        [Some(pending.id.to_string())]
    );
    let events = of_fan(store, &user("fan")).await;
    assert_eq!(types(&events), ["order.completed", "cash.credited"]);
    assert_eq!(
        events[1]["data"]["reference"],
        format!("order:{}", pending.id)
    );
    // A cosmetic paid by card is owned once paid; an order never placed completes nothing.
    let cosmetic = order("fan", "k2", &frame, PayMethod::Card);
    store.place_order(&cosmetic, &frame).await.unwrap();
    store.complete_order(&cosmetic, at).await.unwrap();
    assert_eq!(
        store.owned_cosmetics(&user("fan")).await.unwrap(),
        [(frame.id.clone(), Slot::AvatarFrame)]
    );
    let never = order("fan", "k3", &frame, PayMethod::Card);
    assert_eq!(
        store.complete_order(&never, at).await,
        Err(CompleteOrderError::NotFound)
    );
}

async fn eight_deliveries_of_one_payment_grant_once<S: Store + 'static>(store: Arc<S>) {
    let bundle = bundle();
    seeded(&*store, std::slice::from_ref(&bundle)).await;
    let pending = order("fan", "k", &bundle, PayMethod::Card);
    store.place_order(&pending, &bundle).await.unwrap();
    let results = at_once(8, |_| {
        let (store, pending) = (store.clone(), pending.clone());
        async move { store.complete_order(&pending, Timestamp::now()).await }
    })
    .await;
    let completed = count(&results, |r| matches!(r, Ok(CompletedOrder::Completed(_))));
    assert_eq!(completed, 1, "{results:?}");
    assert!(results.iter().all(Result::is_ok), "{results:?}");
    assert_eq!(balance(&*store, "fan").await, 1100);
    ledger_adds_up(&*store, "fan").await;
    let events = of_fan(&*store, &user("fan")).await;
    assert_eq!(types(&events), ["order.completed", "cash.credited"]);
}
