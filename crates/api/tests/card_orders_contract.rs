//! The card order's storage contract after its placing, run against both stores (as
//! products_contract): one Checkout Session stored per order; an order closed unpaid gives back
//! the unit and the count it took, once, even after a re-seed; a completion and closes racing
//! leave exactly one winner; a fan's open Checkout Sessions (top-ups and card orders alike) are
//! capped, and a completion or a close frees its place.

use std::sync::Arc;

use domain::cash::Money;
use domain::products::order::{Order, OrderStatus, order_id};
use domain::products::{Product, Slot};
use domain::timestamp::Timestamp;
use domain::topups::pending::{MAX_PENDING_TOP_UPS, TooManyPending};
use domain::topups::{Checkout, TopUp, top_up_id};
use store::Store;
use store::products::{CompleteOrderError, CompletedOrder, OrderError, Placed};
use store::topups::CreateTopUpError;
use testkit::at_once;
use testkit::ids::user;
use testkit::products::{self, by_card, card_order};

testkit::store_contract!(
    arc:
    a_card_order_keeps_the_first_checkout_session_stored,
    an_order_closed_unpaid_gives_back_its_unit_and_count_once,
    a_reseeded_product_gets_back_what_a_closed_order_sold,
    a_completion_and_closes_racing_leave_one_winner,
    a_fan_holds_at_most_five_open_sessions_of_either_kind,
);

/// An avatar frame of 300 USD cents by card.
fn frame(id: &str, stock: Option<u64>, max_per_fan: Option<u32>) -> Product {
    by_card(id, (300, products::frame()), stock, max_per_fan)
}

fn checkout(session: &str) -> Checkout {
    Checkout {
        session_id: session.into(),
        url: format!("https://checkout.stripe.com/c/pay/{session}"),
    }
}

/// A card order placed and given the session `session`: as stored.
async fn placed_with_session(
    store: &impl Store,
    fan: &str,
    key: &str,
    product: &Product,
    session: &str,
) -> Order {
    let order = card_order(fan, key, product);
    let placed = store.place_order(&order, product).await;
    assert_eq!(placed, Ok(Placed::Created(order.clone())), "{fan}/{key}");
    store
        .set_order_checkout(&order.user_id, &order.id, &checkout(session))
        .await
        .unwrap()
}

/// Whether a card order by `fan` with key `key` of `product` is placed (and which refusal not).
async fn places(
    store: &impl Store,
    fan: &str,
    key: &str,
    product: &Product,
) -> Result<(), OrderError> {
    store
        .place_order(&card_order(fan, key, product), product)
        .await
        .map(drop)
}

async fn a_card_order_keeps_the_first_checkout_session_stored(store: Arc<impl Store>) {
    let store = &*store;
    let product = frame("frame", None, None);
    store
        .seed_products(std::slice::from_ref(&product))
        .await
        .unwrap();
    let stored = placed_with_session(store, "fan", "k", &product, "cs_1").await;
    assert_eq!(stored.checkout, Some(checkout("cs_1")));
    let (fan, id) = (user("fan"), stored.id.clone());
    for again in ["cs_2", "cs_1"] {
        let answered = store
            .set_order_checkout(&fan, &id, &checkout(again))
            .await
            .unwrap();
        assert_eq!(
            answered.checkout,
            Some(checkout("cs_1")),
            "{again}: the first stands"
        );
    }
    assert_eq!(store.get_order(&fan, &id).await.unwrap(), Some(stored));
    let never = order_id(&fan, "never");
    assert!(
        store
            .set_order_checkout(&fan, &never, &checkout("cs_3"))
            .await
            .is_err()
    );
}

async fn an_order_closed_unpaid_gives_back_its_unit_and_count_once(store: Arc<impl Store>) {
    let store = &*store;
    let product = frame("frame", Some(1), Some(1));
    store
        .seed_products(std::slice::from_ref(&product))
        .await
        .unwrap();
    let pending = placed_with_session(store, "fan", "k1", &product, "cs_1").await;
    assert_eq!(
        places(store, "other", "k", &product).await,
        Err(OrderError::SoldOut)
    );
    assert_eq!(
        store
            .close_order(&pending, "cs_2", OrderStatus::Expired)
            .await,
        Ok(None),
        "another session's event changes nothing"
    );
    let closed = store
        .close_order(&pending, "cs_1", OrderStatus::Expired)
        .await
        .unwrap()
        .expect("closed now");
    assert_eq!(closed.status, OrderStatus::Expired);
    assert_eq!(
        store
            .close_order(&pending, "cs_1", OrderStatus::Failed)
            .await,
        Ok(None),
        "closed once"
    );
    assert_eq!(
        store.complete_order(&pending, Timestamp::now()).await,
        Err(CompleteOrderError::Closed(OrderStatus::Expired)),
        "a closed order is not granted"
    );
    assert_eq!(
        store.get_order(&user("fan"), &pending.id).await.unwrap(),
        Some(closed)
    );
    // The unit and the fan's count came back once: the fan buys it again, then no one can.
    let again = placed_with_session(store, "fan", "k2", &product, "cs_2").await;
    assert_eq!(
        places(store, "other", "k", &product).await,
        Err(OrderError::SoldOut)
    );
    // A completed order is final: no close gives anything back.
    let at = Timestamp::now();
    assert!(matches!(
        store.complete_order(&again, at).await,
        Ok(CompletedOrder::Completed(_))
    ));
    assert_eq!(
        store
            .close_order(&again, "cs_2", OrderStatus::Expired)
            .await,
        Ok(None)
    );
    assert_eq!(
        places(store, "other", "k", &product).await,
        Err(OrderError::SoldOut)
    );
    assert_eq!(
        places(store, "fan", "k3", &product).await,
        Err(OrderError::SoldOut)
    );
    assert_eq!(
        store.owned_cosmetics(&user("fan")).await.unwrap(),
        [(product.id.clone(), Slot::AvatarFrame)]
    );
}

async fn a_reseeded_product_gets_back_what_a_closed_order_sold(store: Arc<impl Store>) {
    let store = &*store;
    // Taken from a stock of 1, then the stock removed: the close gives back the sale only.
    let stocked = frame("stocked", Some(1), None);
    store
        .seed_products(std::slice::from_ref(&stocked))
        .await
        .unwrap();
    let took_unit = placed_with_session(store, "fan", "k1", &stocked, "cs_1").await;
    let unlimited = frame("stocked", None, None);
    store
        .seed_products(std::slice::from_ref(&unlimited))
        .await
        .unwrap();
    let closed = store
        .close_order(&took_unit, "cs_1", OrderStatus::Expired)
        .await
        .unwrap();
    assert_eq!(closed.map(|o| o.status), Some(OrderStatus::Expired));
    // Stocked again with 2: nothing is sold, so 2 sell and no more.
    let restocked = frame("stocked", Some(2), None);
    store
        .seed_products(std::slice::from_ref(&restocked))
        .await
        .unwrap();
    for key in ["a", "b"] {
        assert_eq!(
            places(store, "buyer", key, &restocked).await,
            Ok(()),
            "{key}"
        );
    }
    assert_eq!(
        places(store, "buyer", "c", &restocked).await,
        Err(OrderError::SoldOut)
    );

    // Taken without a stock, then a stock of 1 set (its one unit this order's): the close gives
    // that unit back, and one more fan gets it.
    let open = frame("open", None, Some(1));
    store
        .seed_products(std::slice::from_ref(&open))
        .await
        .unwrap();
    let took_none = placed_with_session(store, "fan", "k2", &open, "cs_2").await;
    let one = frame("open", Some(1), Some(1));
    store
        .seed_products(std::slice::from_ref(&one))
        .await
        .unwrap();
    assert_eq!(
        places(store, "other", "k", &one).await,
        Err(OrderError::SoldOut)
    );
    assert!(
        store
            .close_order(&took_none, "cs_2", OrderStatus::Failed)
            .await
            .unwrap()
            .is_some()
    );
    // Its count toward the limit came back too: the fan may buy it.
    assert_eq!(places(store, "fan", "k3", &one).await, Ok(()));
    assert_eq!(
        places(store, "other", "k", &one).await,
        Err(OrderError::SoldOut)
    );
}

async fn a_completion_and_closes_racing_leave_one_winner<S: Store + 'static>(store: Arc<S>) {
    let product = frame("frame", Some(1), Some(1));
    store
        .seed_products(std::slice::from_ref(&product))
        .await
        .unwrap();
    let pending = placed_with_session(&*store, "fan", "k", &product, "cs_1").await;
    // Even tasks complete (a paid session's redeliveries), odd ones close (its expiry's).
    let results = at_once(8, |k| {
        let (store, pending) = (store.clone(), pending.clone());
        async move {
            if k % 2 == 0 {
                let completed = store.complete_order(&pending, Timestamp::now()).await;
                let won = matches!(completed, Ok(CompletedOrder::Completed(_)));
                (OrderStatus::Completed, won)
            } else {
                let closed = store
                    .close_order(&pending, "cs_1", OrderStatus::Expired)
                    .await;
                (OrderStatus::Expired, closed.unwrap().is_some())
            }
        }
    })
    .await;
    let winners: Vec<OrderStatus> = results
        .iter()
        .filter(|(_, won)| *won)
        .map(|(kind, _)| *kind)
        .collect();
    assert_eq!(winners.len(), 1, "{results:?}");
    let stored = store
        .get_order(&user("fan"), &pending.id)
        .await
        .unwrap()
        .unwrap();
    let owned = store.owned_cosmetics(&user("fan")).await.unwrap();
    let after = places(&*store, "other", "k", &product).await;
    assert_eq!(stored.status, winners[0]);
    if winners[0] == OrderStatus::Completed {
        assert_eq!(owned.len(), 1, "granted once");
        assert_eq!(after, Err(OrderError::SoldOut), "its unit stays sold");
    } else {
        assert!(owned.is_empty(), "never granted");
        assert_eq!(after, Ok(()), "its unit came back once");
    }
}

async fn a_fan_holds_at_most_five_open_sessions_of_either_kind(store: Arc<impl Store>) {
    let store = &*store;
    assert_eq!(MAX_PENDING_TOP_UPS, 5);
    let product = frame("frame", None, None);
    store
        .seed_products(std::slice::from_ref(&product))
        .await
        .unwrap();
    let fan = user("fan");
    let top_up = |key: &str| {
        let amount = Money {
            amount: 500,
            currency: "USD".into(),
        };
        TopUp::pending(top_up_id(&fan, key), fan.clone(), amount, Timestamp::now())
    };
    for key in ["t1", "t2", "t3"] {
        store.create_top_up(&top_up(key)).await.unwrap();
    }
    let first = placed_with_session(store, "fan", "o1", &product, "cs_1").await;
    let second = placed_with_session(store, "fan", "o2", &product, "cs_2").await;
    // The sixth open session, of either kind, is refused; a repeat of a key still answers.
    assert_eq!(
        places(store, "fan", "o3", &product).await,
        Err(OrderError::TooManyPending(TooManyPending))
    );
    assert_eq!(
        store.create_top_up(&top_up("t4")).await,
        Err(CreateTopUpError::TooManyPending(TooManyPending))
    );
    assert!(matches!(
        store
            .place_order(&card_order("fan", "o1", &product), &product)
            .await,
        Ok(Placed::Repeated(_))
    ));
    assert_eq!(
        places(store, "another", "o3", &product).await,
        Ok(()),
        "per fan"
    );
    // A close frees its place, and so does a completion.
    store
        .close_order(&first, "cs_1", OrderStatus::Expired)
        .await
        .unwrap();
    assert_eq!(places(store, "fan", "o3", &product).await, Ok(()));
    assert_eq!(
        places(store, "fan", "o4", &product).await,
        Err(OrderError::TooManyPending(TooManyPending))
    );
    store
        .complete_order(&second, Timestamp::now())
        .await
        .unwrap();
    store.create_top_up(&top_up("t4")).await.unwrap();
    assert_eq!(
        places(store, "fan", "o4", &product).await,
        Err(OrderError::TooManyPending(TooManyPending))
    );
}
