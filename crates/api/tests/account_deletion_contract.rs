//! An account's deletion, on both stores (DynamoStore on moto, MemoryStore): a scripted fan
//! with one of everything (an order and a shown cosmetic too) is erased whole (no public trace, every token refused) while the
//! books keep their money under the pseudonym and still balance; a reserved unit goes back on
//! sale; a pending top-up holds the erasure until it settles; an erasure interrupted after any
//! step is listed and resumed to the end; a second begin answers the first.

use std::sync::Arc;

use domain::account::{Deletion, Losses, PseudonymKey, Step};
use domain::ids::UserId;
use domain::leaderboards::Board;
use domain::locker_room::LockerRoomBody;
use domain::products::cosmetics::Equipped;
use domain::products::order::{Order, order_id};
use domain::products::seed::parse_products;
use domain::products::{PayMethod, Product, Slot};
use domain::queue::entry::QueueEntry;
use domain::timestamp::Timestamp;
use domain::topups::{TopUp, top_up_id};
use store::Store;
use store::account::AccountDeletion;
use testkit::ids::user;
use testkit::packs::{active, remaining, save};
use testkit::purchases::{credit, start_request};
use testkit::waiting_room::signer;
use testkit::wallets::link;

testkit::store_contract!(
    arc:
    a_deleted_fan_leaves_no_trace_and_the_books_keep_their_money,
    a_pending_top_up_holds_the_erasure_until_it_settles,
    an_erasure_interrupted_after_any_step_is_resumed_to_the_end,
    a_hold_made_while_the_erasure_runs_goes_back_on_sale,
);

fn key() -> PseudonymKey {
    PseudonymKey::new("an operator's pseudonym key of 32+ bytes").unwrap()
}

/// `fan` with a profile and name, a locker room, a wallet, Cash, a paid pack, a reserved hold
/// of pack `p` (saved before), a queue entry and a cosmetic bought with Cash and shown.
async fn scripted_fan(store: &impl Store, fan: &str) {
    let id = user(fan);
    testkit::profiles::name(store, fan, &format!("Name{fan}"), None).await;
    let body: LockerRoomBody =
        serde_json::from_value(serde_json::json!({"items": []})).expect("a locker room body");
    store
        .put_locker_room(&id, &body.check().unwrap(), Timestamp::now())
        .await
        .unwrap();
    link(store, &id, r#"{"address":"0xabc"}"#, Timestamp::now(), None)
        .await
        .unwrap();
    credit(store, fan, 5_000, "USD", &format!("grant-{fan}")).await;
    let paid = start_request(fan, "p", "paid", Timestamp::now(), 600);
    store.start_purchase(&paid).await.unwrap();
    store
        .complete_purchase(&id, &paid.pack_id, &paid.purchase_id, Timestamp::now())
        .await
        .unwrap();
    store
        .start_purchase(&start_request(fan, "p", "held", Timestamp::now(), 600))
        .await
        .unwrap();
    testkit::openings::open_one(store, fan, "p", "opened", Timestamp::now()).await;
    let entry = QueueEntry::new(
        testkit::ids::pack("line"),
        id.clone(),
        Timestamp::now(),
        &signer(),
    );
    store.join_queue(&entry).await.unwrap();
    let frame = frame();
    store
        .seed_products(std::slice::from_ref(&frame))
        .await
        .unwrap();
    let order = Order::place(
        order_id(&id, "frame"),
        id.clone(),
        &frame,
        frame.prices[0].clone(),
        PayMethod::Cash,
        Timestamp::now(),
    );
    store.place_order(&order, &frame).await.unwrap();
    let mut shown = Equipped::default();
    shown.slots.insert(Slot::AvatarFrame, frame.id.clone());
    store.equip(&id, &shown).await.unwrap();
}

/// The shipped seed's gold frame, a cosmetic paid with Cash.
fn frame() -> Product {
    parse_products(include_bytes!("../../../infra/seed/products.json"))
        .unwrap()
        .into_iter()
        .find(|product| product.id.as_str() == "frame-gold")
        .unwrap()
}

/// Runs `deletion` step by step at `now` until done or waiting; the deletion as it stands.
async fn erase(store: &impl AccountDeletion, deletion: Deletion, now: Timestamp) -> Deletion {
    let pseudonym = key().pseudonym(&deletion.user_id);
    let mut deletion = deletion;
    for _ in 0..200 {
        let before = deletion.clone();
        deletion = store.erase_step(&deletion, &pseudonym, now).await.unwrap();
        if deletion.is_done() || deletion == before && deletion.step == Step::SettleTopUps {
            break;
        }
    }
    deletion
}

async fn begin(store: &impl AccountDeletion, fan: &str) -> Deletion {
    let deletion = Deletion::new(user(fan), "k-1".into(), Losses::default(), Timestamp::now());
    store.begin_deletion(&deletion).await.unwrap()
}

async fn a_deleted_fan_leaves_no_trace_and_the_books_keep_their_money(store: Arc<impl Store>) {
    save(&*store, &active("p", 60)).await;
    scripted_fan(&*store, "gone").await;
    scripted_fan(&*store, "stays").await;
    let left_before = remaining(&*store, "p").await;
    let (gone, stays) = (user("gone"), user("stays"));
    let balance = store.get_balance(&gone, "USD").await.unwrap();
    assert!(balance > 0 && balance < 5_499, "paid two packs: {balance}");

    let on_board = |fan: UserId| {
        let store = store.clone();
        async move {
            let top = store.read_board(&Board::Global, 100).await.unwrap();
            let standing = store.get_standing(&Board::Global, &fan).await.unwrap();
            let name = format!("Name{fan}");
            let listed = top.iter().any(|entry| entry.display_name.as_str() == name);
            (listed, standing.is_some())
        }
    };
    assert_eq!(
        on_board(gone.clone()).await,
        (true, true),
        "an opening scored"
    );
    let deletion = begin(&*store, "gone").await;
    assert!(
        store.revocations(&gone).await.unwrap().deleted,
        "tokens refused at once"
    );
    let done = erase(&*store, deletion.clone(), Timestamp::now()).await;
    assert!(done.is_done() && done.completed_at.is_some(), "{done:?}");

    // Nothing of the fan is left to show.
    assert_eq!(
        store
            .get_locker_room(&display_name("Namegone"))
            .await
            .unwrap(),
        None
    );
    assert!(store.list_wallets(&gone).await.unwrap().is_empty());
    assert_eq!(store.equipped(&gone).await.unwrap(), Equipped::default());
    assert!(store.owned_cosmetics(&gone).await.unwrap().is_empty());
    assert!(
        store
            .list_orders(&gone, 10, None)
            .await
            .unwrap()
            .entries
            .is_empty(),
        "orders erased"
    );
    assert_eq!(
        store.equipped(&stays).await.unwrap().slots.len(),
        1,
        "the other fan still shows theirs"
    );
    let mine = testkit::mine::all_pages(10, |after| {
        let query = domain::purchases::mine::MyPurchasesQuery {
            user_id: gone.clone(),
            status: None,
            pack_id: None,
            limit: 10,
            after,
            now: Timestamp::now(),
        };
        let store = store.clone();
        async move { store.list_my_purchases(&query).await.unwrap() }
    })
    .await;
    assert!(mine.is_empty(), "purchases erased: {mine:?}");
    assert_eq!(store.get_balance(&gone, "USD").await.unwrap(), 0);
    assert!(
        store
            .queue_entry(&testkit::ids::pack("line"), &gone)
            .await
            .unwrap()
            .is_none(),
        "the queue entry is erased"
    );
    assert_eq!(
        on_board(gone.clone()).await,
        (false, false),
        "off every board"
    );
    assert_eq!(on_board(stays.clone()).await, (true, true));
    // The name is free for another fan; the profile, read again, is a new one.
    testkit::profiles::name(&*store, "newcomer", "Namegone", None).await;
    let fresh = store
        .get_profile(&gone, None, Timestamp::now())
        .await
        .unwrap();
    assert_eq!(fresh.display_name, None);
    // The reserved unit is back on sale; the paid one stays sold.
    assert_eq!(remaining(&*store, "p").await, left_before + 1);

    // The books keep the money under the pseudonym, and still add up.
    let pseudonym = key().pseudonym(&gone);
    assert_eq!(store.get_balance(&pseudonym, "USD").await.unwrap(), balance);
    assert_eq!(
        testkit::mine::ledger_sum(&*store, pseudonym.as_str(), "USD").await,
        i128::from(balance)
    );
    assert_eq!(
        testkit::mine::ledger_sum(&*store, "gone", "USD").await,
        0,
        "no entry left under the fan's id"
    );

    // The other fan is untouched.
    assert!(
        store
            .get_locker_room(&display_name("Namestays"))
            .await
            .unwrap()
            .is_some()
    );
    assert!(!store.revocations(&stays).await.unwrap().deleted);
    assert_eq!(
        testkit::mine::ledger_sum(&*store, "stays", "USD").await,
        i128::from(store.get_balance(&stays, "USD").await.unwrap())
    );
    // A second begin answers the first deletion.
    let again = Deletion::new(gone, "k-2".into(), Losses::default(), Timestamp::now());
    let answered = store.begin_deletion(&again).await.unwrap();
    assert_eq!((answered.key.as_str(), answered.is_done()), ("k-1", true));
    let events = testkit::event_log::of_fan(&*store, &user("gone")).await;
    let deleted = testkit::event_log::types(&events)
        .iter()
        .filter(|t| **t == "account.deleted")
        .count();
    assert_eq!(deleted, 1, "a repeat writes no second event");
}

async fn a_pending_top_up_holds_the_erasure_until_it_settles(store: Arc<impl Store>) {
    let fan = user("payer");
    let top_up = TopUp::pending(
        top_up_id(&fan, "t-1"),
        fan.clone(),
        domain::cash::Money {
            amount: 700,
            currency: "USD".into(),
        },
        Timestamp::now(),
    );
    store.create_top_up(&top_up).await.unwrap();
    assert_eq!(
        store.pending_top_ups(&fan, Timestamp::now()).await.unwrap(),
        1
    );
    let deletion = begin(&*store, "payer").await;
    let waiting = erase(&*store, deletion, Timestamp::now()).await;
    assert_eq!(waiting.step, Step::SettleTopUps, "waits for Stripe's word");
    assert_eq!(
        store.unfinished_deletions(10).await.unwrap(),
        std::slice::from_ref(&waiting)
    );

    // Paid meanwhile: credited to the fan, then kept with the books under the pseudonym.
    let checkout = domain::topups::Checkout {
        session_id: "cs_test_1".into(),
        url: "https://checkout.stripe.com/c/pay/cs_test_1".into(),
    };
    let read = store.set_checkout(&top_up.id, &checkout).await.unwrap();
    store
        .complete_top_up(&read, Timestamp::now())
        .await
        .unwrap();
    let later = Timestamp::now().plus_seconds(2 * 3600).unwrap();
    let done = erase(&*store, waiting, later).await;
    assert!(done.is_done(), "{done:?}");
    assert!(store.unfinished_deletions(10).await.unwrap().is_empty());
    let pseudonym = key().pseudonym(&fan);
    assert_eq!(store.get_balance(&pseudonym, "USD").await.unwrap(), 700);
    let kept = store.get_top_up(&top_up.id).await.unwrap().unwrap();
    assert_eq!(
        kept.user_id, pseudonym,
        "the top-up is kept under the pseudonym"
    );
}

async fn an_erasure_interrupted_after_any_step_is_resumed_to_the_end(store: Arc<impl Store>) {
    save(&*store, &active("p", 60)).await;
    scripted_fan(&*store, "crash").await;
    let fan = user("crash");
    let balance = store.get_balance(&fan, "USD").await.unwrap();
    let pseudonym = key().pseudonym(&fan);
    // One piece, then the worker "crashes": only what is stored carries on.
    let first = begin(&*store, "crash").await;
    store
        .erase_step(&first, &pseudonym, Timestamp::now())
        .await
        .unwrap();
    let listed = store.unfinished_deletions(10).await.unwrap();
    let resumed = match listed.as_slice() {
        [stored] => stored.clone(),
        // The memory store does a deletion's steps whole: it is done at once.
        [] => store.deletion(&fan).await.unwrap().unwrap(),
        more => panic!("{more:?}"),
    };
    // A stale copy of the first piece run again changes nothing it should not.
    let stale: UserId = pseudonym.clone();
    let _ = store.erase_step(&first, &stale, Timestamp::now()).await;
    let done = erase(
        &*store,
        store.deletion(&fan).await.unwrap().unwrap(),
        Timestamp::now(),
    )
    .await;
    assert!(done.is_done(), "{done:?} (resumed from {:?})", resumed.step);
    assert_eq!(store.get_balance(&pseudonym, "USD").await.unwrap(), balance);
    assert_eq!(
        testkit::mine::ledger_sum(&*store, pseudonym.as_str(), "USD").await,
        i128::from(balance)
    );
    assert_eq!(
        store
            .get_locker_room(&display_name("Namecrash"))
            .await
            .unwrap(),
        None
    );
}

fn display_name(text: &str) -> domain::profile::name::DisplayName {
    domain::profile::name::DisplayName::parse(text).unwrap()
}

async fn a_hold_made_while_the_erasure_runs_goes_back_on_sale(store: Arc<impl Store>) {
    save(&*store, &active("p", 60)).await;
    let left = remaining(&*store, "p").await;
    let fan = user("late");
    let pseudonym = key().pseudonym(&fan);
    let begun = begin(&*store, "late").await;
    // The holds' step is done (on DynamoDB: a fan with no purchase is one empty page) ...
    let past_holds = store
        .erase_step(&begun, &pseudonym, Timestamp::now())
        .await
        .unwrap();
    assert_ne!(past_holds.step, Step::ReleaseHolds);
    if past_holds.is_done() {
        // The in-memory store erases whole under its lock: nothing comes between its steps.
        return;
    }
    // ... when a start that was in flight at the deletion writes its hold.
    let late = start_request("late", "p", "in-flight", Timestamp::now(), 600);
    store.start_purchase(&late).await.unwrap();
    assert_eq!(remaining(&*store, "p").await, left - 1);
    let done = erase(&*store, past_holds, Timestamp::now()).await;
    assert!(done.is_done(), "{done:?}");
    assert_eq!(
        remaining(&*store, "p").await,
        left,
        "the unit is back on sale"
    );
}
