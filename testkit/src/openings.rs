//! A whole opening through the store's own operations (credit, start, pay, open), for the tests
//! of what an opening writes beside the purchase (the leaderboards).

use domain::cash::parse_credit;
use domain::purchases::{Purchase, StartRequest, purchase_id};
use domain::timestamp::Timestamp;
use store::Store;
use store::purchases::Started;

use crate::ids;

/// `user` buys and opens one unit of `pack` (idempotency key `key`) at `now`; returns the
/// opened purchase.
pub async fn open_one(
    store: &impl Store,
    user: &str,
    pack: &str,
    key: &str,
    now: Timestamp,
) -> Purchase {
    let purchase = pay_one(store, user, pack, key, now).await;
    store
        .open_purchase(&purchase.user_id, &purchase.pack_id, &purchase.id, now)
        .await
        .unwrap()
        .purchase
}

/// `user` buys one unit of `pack` (idempotency key `key`) at `now` and pays for it from Cash
/// credited first (under a reference of the user and key); returns the purchase as started.
pub async fn pay_one(
    store: &impl Store,
    user: &str,
    pack: &str,
    key: &str,
    now: Timestamp,
) -> Purchase {
    let credit = parse_credit(user, "499", "USD", &format!("test-{user}-{key}")).unwrap();
    store.credit_cash(&credit, now).await.unwrap();
    let user_id = ids::user(user);
    let started = store
        .start_purchase(&StartRequest {
            user_id: user_id.clone(),
            pack_id: ids::pack(pack),
            purchase_id: purchase_id(&user_id, key),
            requested_seed: None,
            client_seed: "c".into(),
            now,
            expires_at: now.plus_seconds(600).unwrap(),
            policy: crate::purchases::ROOMY,
            human_checked: false,
        })
        .await
        .unwrap();
    let (Started::Created(purchase) | Started::Repeated(purchase)) = started;
    store
        .complete_purchase(&user_id, &purchase.pack_id, &purchase.id, now)
        .await
        .unwrap();
    purchase
}
