//! The events of the purchase and Cash operations, decided once for both stores: each store
//! writes what these return in the change's own write, and nothing on a repeat or a refusal.

use super::{
    CashCredited, CashDebited, CosmeticGranted, NewEvent, OrderCompleted, PackOpened, PackSoldOut,
    PurchaseCompleted, PurchaseExpired, PurchaseReserved, QuestRewardClaimed, TopUpCompleted,
    TopUpFailed,
};
use crate::cash::Credit;
use crate::ids::PackId;
use crate::products::PayMethod;
use crate::products::order::Order;
use crate::purchases::Purchase;
use crate::quests::{Claim, Grant};
use crate::topups::{TopUp, TopUpStatus};

/// A new start's: `purchase.reserved`.
pub fn purchase_reserved(purchase: &Purchase) -> Vec<NewEvent> {
    vec![NewEvent::fan(
        &purchase.user_id,
        PurchaseReserved {
            purchase_id: purchase.id.clone(),
            pack_id: purchase.pack_id.clone(),
            price: purchase.price.clone(),
            expires_at: purchase.expires_at,
        },
    )]
}

/// A payment's: `purchase.completed` and its `cash.debited`.
pub fn purchase_completed(purchase: &Purchase) -> Vec<NewEvent> {
    vec![
        NewEvent::fan(
            &purchase.user_id,
            PurchaseCompleted {
                purchase_id: purchase.id.clone(),
                pack_id: purchase.pack_id.clone(),
                price: purchase.price.clone(),
            },
        ),
        NewEvent::fan(
            &purchase.user_id,
            CashDebited {
                amount: purchase.price.clone(),
                purchase_id: Some(purchase.id.clone()),
                order_id: None,
            },
        ),
    ]
}

/// A hold's release: `purchase.expired`.
pub fn purchase_expired(purchase: &Purchase) -> Vec<NewEvent> {
    vec![NewEvent::fan(
        &purchase.user_id,
        PurchaseExpired {
            purchase_id: purchase.id.clone(),
            pack_id: purchase.pack_id.clone(),
        },
    )]
}

/// An opening's (`opened` as drawn): `pack.opened`.
pub fn pack_opened(opened: &Purchase) -> Vec<NewEvent> {
    let items = opened.items.as_ref().map_or(0, Vec::len);
    vec![NewEvent::fan(
        &opened.user_id,
        PackOpened {
            purchase_id: opened.id.clone(),
            pack_id: opened.pack_id.clone(),
            items: u32::try_from(items).unwrap_or(u32::MAX),
        },
    )]
}

/// A pack's `remaining` going from some to none: `pack.sold_out`, the pack's.
pub fn pack_sold_out(pack_id: &PackId) -> Vec<NewEvent> {
    vec![NewEvent::pack(
        pack_id,
        PackSoldOut {
            pack_id: pack_id.clone(),
        },
    )]
}

/// A credit's (once per reference): `cash.credited`.
pub fn cash_credited(credit: &Credit) -> Vec<NewEvent> {
    vec![NewEvent::fan(
        &credit.user_id,
        CashCredited {
            amount: credit.amount.clone(),
            reference: credit.reference.clone(),
        },
    )]
}

/// A top-up's completion: `topup.completed` and its `cash.credited`.
pub fn top_up_completed(top_up: &TopUp) -> Vec<NewEvent> {
    let mut events = vec![NewEvent::fan(
        &top_up.user_id,
        TopUpCompleted {
            top_up_id: top_up.id.clone(),
            amount: top_up.amount.clone(),
        },
    )];
    events.extend(cash_credited(&top_up.credit()));
    events
}

/// A top-up closed unpaid as `status` (failed or expired): `topup.failed`.
pub fn top_up_failed(top_up: &TopUp, status: TopUpStatus) -> Vec<NewEvent> {
    vec![NewEvent::fan(
        &top_up.user_id,
        TopUpFailed {
            top_up_id: top_up.id.clone(),
            amount: top_up.amount.clone(),
            status,
        },
    )]
}

/// A claim's: `quest.reward_claimed`, and for Cash its `cash.credited`. A pack reward is a
/// purchase paid at 0 when claimed: the claim's event names it, and nothing else is emitted
/// (nothing was held, paid or debited).
pub fn quest_reward_claimed(claim: &Claim, grant: &Grant) -> Vec<NewEvent> {
    let mut events = vec![NewEvent::fan(
        &claim.user_id,
        QuestRewardClaimed {
            quest_id: claim.quest_id.clone(),
            reward: claim.reward.clone(),
            purchase_id: claim.purchase_id.clone(),
        },
    )];
    if let Grant::Cash(credit) = grant {
        events.extend(cash_credited(credit));
    }
    events
}

/// An order's completion (paid with Cash, or its card payment confirmed): `order.completed`,
/// then what it moved: a Cash payment's `cash.debited`, a cosmetic's `cosmetic.granted`, a
/// bundle's `cash.credited`.
pub fn order_completed(order: &Order) -> Vec<NewEvent> {
    let mut events = vec![NewEvent::fan(
        &order.user_id,
        OrderCompleted {
            order_id: order.id.clone(),
            product_id: order.product_id.clone(),
            price: order.price.clone(),
            pay: order.pay,
        },
    )];
    if order.pay == PayMethod::Cash {
        events.push(NewEvent::fan(
            &order.user_id,
            CashDebited {
                amount: order.price.clone(),
                purchase_id: None,
                order_id: Some(order.id.clone()),
            },
        ));
    }
    if let Some(slot) = order.grants.slot() {
        events.push(NewEvent::fan(
            &order.user_id,
            CosmeticGranted {
                order_id: order.id.clone(),
                product_id: order.product_id.clone(),
                slot,
            },
        ));
    }
    if let Some(credit) = order.credit() {
        events.extend(cash_credited(&credit));
    }
    events
}
