//! The rate-limit counters and spent human-check tokens, on both stores (DynamoStore on moto
//! through a one-request-at-a-time proxy, and MemoryStore): a window admits exactly its quota
//! however requests race, a full window writes nothing, a count given back is taken again, and
//! a token is spent once.

use std::sync::Arc;

use domain::ratelimit::{Counter, RouteClass, Scope, Taken, Window, counter_key};
use store::ratelimit::AbuseStore;

testkit::store_contract!(
    arc:
    a_window_counts_up_to_its_quota_then_refuses,
    concurrent_takes_admit_exactly_the_quota,
    windows_classes_and_keys_count_apart,
    a_count_given_back_is_taken_again,
    a_token_is_spent_once,
);

fn counter(class: RouteClass, scope: Scope, who: &str, start: i64) -> Counter {
    Counter {
        class,
        scope,
        key: counter_key(scope, who),
        // Far in the future: the TTL of the memory store never drops it during the test.
        window: Window {
            start,
            end: start + 10,
        },
    }
}

const FUTURE: i64 = 4_000_000_000;

async fn a_window_counts_up_to_its_quota_then_refuses(store: Arc<impl AbuseStore>) {
    let c = counter(RouteClass::Start, Scope::Fan, "fan-1", FUTURE);
    for n in 1..=3 {
        assert_eq!(store.take(&c, 3).await, Ok(Taken::Counted(n)));
    }
    assert_eq!(store.take(&c, 3).await, Ok(Taken::Full));
    assert_eq!(store.take(&c, 3).await, Ok(Taken::Full));
    // The refusals wrote nothing: a larger quota finds the count at 3.
    assert_eq!(store.take(&c, 5).await, Ok(Taken::Counted(4)));
}

async fn concurrent_takes_admit_exactly_the_quota(store: Arc<impl AbuseStore + 'static>) {
    let c = counter(RouteClass::Join, Scope::Address, "203.0.113.9", FUTURE);
    let results = testkit::at_once(24, |_| {
        let (store, c) = (store.clone(), c.clone());
        async move { store.take(&c, 7).await.unwrap() }
    })
    .await;
    let counted = results
        .iter()
        .filter(|taken| matches!(taken, Taken::Counted(_)))
        .count();
    assert_eq!(counted, 7, "{results:?}");
}

async fn windows_classes_and_keys_count_apart(store: Arc<impl AbuseStore>) {
    let base = counter(RouteClass::Read, Scope::Fan, "fan-2", FUTURE);
    assert_eq!(store.take(&base, 1).await, Ok(Taken::Counted(1)));
    assert_eq!(store.take(&base, 1).await, Ok(Taken::Full));
    for other in [
        counter(RouteClass::Read, Scope::Fan, "fan-2", FUTURE + 10),
        counter(RouteClass::Write, Scope::Fan, "fan-2", FUTURE),
        counter(RouteClass::Read, Scope::Address, "fan-2", FUTURE),
        counter(RouteClass::Read, Scope::Fan, "fan-3", FUTURE),
    ] {
        assert_eq!(
            store.take(&other, 1).await,
            Ok(Taken::Counted(1)),
            "{other:?}"
        );
    }
}

async fn a_count_given_back_is_taken_again(store: Arc<impl AbuseStore>) {
    let c = counter(RouteClass::Start, Scope::Address, "198.51.100.1", FUTURE);
    assert_eq!(store.take(&c, 2).await, Ok(Taken::Counted(1)));
    assert_eq!(store.take(&c, 2).await, Ok(Taken::Counted(2)));
    store.give_back(&c).await.unwrap();
    assert_eq!(store.take(&c, 2).await, Ok(Taken::Counted(2)));
    assert_eq!(store.take(&c, 2).await, Ok(Taken::Full));
    // A counter never taken is not made by a give-back.
    let never = counter(RouteClass::Start, Scope::Address, "198.51.100.2", FUTURE);
    store.give_back(&never).await.unwrap();
    assert_eq!(store.take(&never, 1).await, Ok(Taken::Counted(1)));
}

async fn a_token_is_spent_once(store: Arc<impl AbuseStore + 'static>) {
    assert_eq!(store.spend("aa11", FUTURE).await, Ok(true));
    assert_eq!(store.spend("aa11", FUTURE).await, Ok(false));
    assert_eq!(store.spend("bb22", FUTURE).await, Ok(true));
    let spent = testkit::at_once(8, |_| {
        let store = store.clone();
        async move { store.spend("cc33", FUTURE).await.unwrap() }
    })
    .await;
    assert_eq!(spent.iter().filter(|spent| **spent).count(), 1);
}
