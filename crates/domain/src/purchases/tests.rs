use super::*;
use crate::packs::fixtures::sample_pack;

fn ts(text: &str) -> Timestamp {
    Timestamp::parse(text).unwrap()
}

fn pack_id(text: &str) -> PackId {
    PackId::parse(text).unwrap()
}

/// serde's text of every variant of `T` is strum's, and strum parses it back.
fn texts_agree<T>()
where
    T: VariantArray + Serialize + std::str::FromStr + Into<&'static str> + Copy + PartialEq,
    T: std::fmt::Debug,
{
    for &variant in T::VARIANTS {
        let text: &'static str = variant.into();
        assert_eq!(serde_json::to_value(variant).unwrap(), text);
        assert_eq!(text.parse::<T>().ok(), Some(variant));
    }
}

#[test]
fn every_status_has_one_text() {
    texts_agree::<PurchaseStatus>();
    texts_agree::<crate::packs::PackStatus>();
    texts_agree::<crate::topups::TopUpStatus>();
}

#[test]
fn purchase_ids_are_stable_per_user_and_key_and_url_safe() {
    let (u1, u2) = (UserId::parse("u1").unwrap(), UserId::parse("u2").unwrap());
    let id = purchase_id(&u1, "key-1");
    assert_eq!(id, purchase_id(&u1, "key-1"));
    assert_ne!(id, purchase_id(&u2, "key-1"));
    assert_ne!(id, purchase_id(&u1, "key-2"));
    assert_eq!(id.as_str().len(), 22);
}

#[test]
fn client_seeds_are_1_to_64_printable_ascii() {
    assert!(is_valid_client_seed(" lucky ~ seed "));
    assert!(is_valid_client_seed(&"x".repeat(64)));
    for bad in ["", &"x".repeat(65), "tab\there", "é", "nul\0"] {
        assert!(!is_valid_client_seed(bad), "{bad:?}");
    }
    assert!(is_valid_client_seed(&random_client_seed()));
}

#[test]
fn a_start_is_checked_in_the_order_clients_see() {
    let now = ts("2026-06-01T12:00:00Z");
    let pack = sample_pack("p"); // on sale, 10 left, max 3 per user
    let under = Buys { seq: 7, held: 2 };
    assert_eq!(check_start(Some(&pack), under, now), Ok(()));
    assert_eq!(
        check_start(None, under, now),
        Err(StartRefusal::PackNotFound)
    );
    let mut draft = pack.clone();
    draft.status = PackStatus::Draft;
    assert_eq!(
        check_start(Some(&draft), under, now),
        Err(StartRefusal::PackNotFound)
    );
    let mut archived = pack.clone();
    archived.status = PackStatus::Archived;
    archived.remaining = 0;
    assert_eq!(
        check_start(Some(&archived), under, now),
        Err(StartRefusal::NotOnSale)
    );
    let mut ended = pack.clone();
    ended.sale_ends_at = Some(now);
    assert_eq!(
        check_start(Some(&ended), under, now),
        Err(StartRefusal::NotOnSale)
    );
    let at_limit = Buys { seq: 3, held: 3 };
    assert_eq!(
        check_start(Some(&pack), at_limit, now),
        Err(StartRefusal::LimitReached)
    );
    let mut unlimited = pack.clone();
    unlimited.max_per_user = None;
    assert_eq!(
        check_start(Some(&unlimited), Buys { seq: 99, held: 99 }, now),
        Ok(())
    );
}

fn purchase(status: PurchaseStatus) -> Purchase {
    let request = StartRequest {
        user_id: UserId::parse("u").unwrap(),
        pack_id: PackId::parse("p").unwrap(),
        purchase_id: PurchaseId::parse("id").unwrap(),
        requested_seed: None,
        client_seed: "s".into(),
        now: ts("2026-06-01T12:00:00Z"),
        expires_at: ts("2026-06-01T12:10:00Z"),
        policy: HoldPolicy::default(),
        human_checked: false,
    };
    let mut purchase = request.purchase(
        Buys { seq: 4, held: 1 },
        &Money {
            amount: 499,
            currency: "USD".into(),
        },
        0,
        0,
    );
    assert_eq!(purchase.nonce, 5);
    purchase.status = status;
    purchase
}

#[test]
fn a_fans_unpaid_holds_are_capped_and_may_need_funds() {
    let now = ts("2026-06-01T12:00:00Z");
    let usd = |amount| Money {
        amount,
        currency: "USD".into(),
    };
    let slot = |id: &str, expires: &str, price| {
        Some(HoldSlot {
            purchase_id: PurchaseId::parse(id).unwrap(),
            expires_at: ts(expires),
            price,
        })
    };
    let policy = HoldPolicy {
        max_unpaid: 2,
        requires_funds: false,
    };
    let none = UnpaidHolds::default();
    assert_eq!(take_hold_slot(&none, policy, &usd(499), 0, now), Ok((0, 0)));
    let one = UnpaidHolds {
        slots: vec![slot("a", "2026-06-01T12:05:00Z", usd(499))],
        version: 1,
    };
    assert_eq!(take_hold_slot(&one, policy, &usd(499), 0, now), Ok((1, 0)));
    let two = UnpaidHolds {
        slots: vec![
            slot("a", "2026-06-01T12:05:00Z", usd(499)),
            slot("b", "2026-06-01T12:05:00Z", usd(100)),
        ],
        version: 2,
    };
    assert_eq!(
        take_hold_slot(&two, policy, &usd(499), 0, now),
        Err(StartRefusal::UnpaidHoldsLimit)
    );
    // A hold that ran out is not live, released or not: its slot is free again.
    let ran_out = UnpaidHolds {
        slots: vec![
            slot("a", "2026-06-01T12:00:00Z", usd(499)),
            slot("b", "2026-06-01T12:05:00Z", usd(100)),
        ],
        version: 2,
    };
    assert_eq!(
        take_hold_slot(&ran_out, policy, &usd(499), 0, now),
        Ok((0, 0))
    );
    let funded = HoldPolicy {
        requires_funds: true,
        ..policy
    };
    assert_eq!(
        take_hold_slot(&one, funded, &usd(499), 997, now),
        Err(StartRefusal::InsufficientFunds)
    );
    assert_eq!(
        take_hold_slot(&one, funded, &usd(499), 998, now),
        Ok((1, 998))
    );
    let mut other_currency = one.clone();
    other_currency.slots[0].as_mut().unwrap().price.currency = "EUR".into();
    assert_eq!(
        take_hold_slot(&other_currency, funded, &usd(499), 499, now),
        Ok((1, 499))
    );
}

#[test]
fn completion_pays_replays_releases_or_refuses() {
    let before = ts("2026-06-01T12:09:59Z");
    let at_expiry = ts("2026-06-01T12:10:00Z");
    let reserved = purchase(PurchaseStatus::Reserved);
    assert_eq!(
        check_complete(Some(&reserved), &pack_id("p"), None, 499, before),
        Ok(Completion::Pay)
    );
    assert_eq!(
        check_complete(Some(&reserved), &pack_id("p"), None, 498, before),
        Err(CompleteRefusal::InsufficientFunds)
    );
    assert_eq!(
        check_complete(Some(&reserved), &pack_id("p"), None, 10_000, at_expiry),
        Ok(Completion::Release)
    );
    assert_eq!(
        check_complete(
            Some(&reserved),
            &pack_id("other-pack"),
            None,
            10_000,
            before
        ),
        Err(CompleteRefusal::NotFound)
    );
    assert_eq!(
        check_complete(None, &pack_id("p"), None, 10_000, before),
        Err(CompleteRefusal::NotFound)
    );
    for paid in [PurchaseStatus::Completed, PurchaseStatus::Opened] {
        assert_eq!(
            check_complete(Some(&purchase(paid)), &pack_id("p"), None, 0, at_expiry),
            Ok(Completion::Replay)
        );
    }
    assert_eq!(
        check_complete(
            Some(&purchase(PurchaseStatus::Expired)),
            &pack_id("p"),
            None,
            10_000,
            before
        ),
        Err(CompleteRefusal::Expired)
    );
    assert_eq!(reserved.status_at(before), PurchaseStatus::Reserved);
    assert_eq!(reserved.status_at(at_expiry), PurchaseStatus::Expired);
}

/// A hold that would outlive its pack's reveal (the sale ended early while it was being
/// made) cannot be paid from 5 s before the reveal; replays still answer.
#[test]
fn payments_close_before_the_seed_is_revealed() {
    let reserved = purchase(PurchaseStatus::Reserved);
    let ended = ts("2026-06-01T11:09:50Z");
    // Revealed at 12:09:50; payments close at 12:09:45.
    let pay_at = |now| check_complete(Some(&reserved), &pack_id("p"), Some(ended), 10_000, ts(now));
    assert_eq!(
        pay_at("2026-06-01T12:09:44.999999999Z"),
        Ok(Completion::Pay)
    );
    assert_eq!(
        pay_at("2026-06-01T12:09:45Z"),
        Err(CompleteRefusal::SaleClosed)
    );
    assert_eq!(
        pay_at("2026-06-01T12:09:59Z"),
        Err(CompleteRefusal::SaleClosed)
    );
    assert_eq!(pay_at("2026-06-01T12:10:00Z"), Ok(Completion::Release));
    assert_eq!(
        check_complete(
            Some(&purchase(PurchaseStatus::Completed)),
            &pack_id("p"),
            Some(ended),
            0,
            ts("2026-06-01T12:09:59Z")
        ),
        Ok(Completion::Replay)
    );
    assert!(payments_open(None, ts("2099-01-01T00:00:00Z")));
}
