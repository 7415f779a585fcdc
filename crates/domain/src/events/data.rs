//! Each event type and its `data`: thin where the data is private (ids and amounts; never an
//! e-mail, a display name or a balance), so a consumer reads the rest from the API.

use serde::{Deserialize, Serialize};

use crate::cash::Money;
use crate::ids::{EntryId, OrderId, PackId, ProductId, PurchaseId, QuestId, TopUpId, WalletId};
use crate::products::{PayMethod, Slot};
use crate::timestamp::Timestamp;
use crate::topups::TopUpStatus;

/// The types, each with its `data`'s struct: `(variant, "type", Data, subject, doc)`.
macro_rules! event_types {
    ($(($variant:ident, $name:literal, $data:ident, $subject:ident, $doc:literal)),+ $(,)?) => {
        /// An event's `type`.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[derive(Serialize, Deserialize, strum::VariantArray)]
        #[derive(strum::IntoStaticStr, strum::EnumString)]
        pub enum EventType {
            $(#[doc = $doc] #[serde(rename = $name)] #[strum(serialize = $name)] $variant,)+
        }

        /// An event's `data`, by its type.
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
        #[serde(untagged)]
        pub enum EventData {
            $($variant($data),)+
        }

        impl EventData {
            pub fn event_type(&self) -> EventType {
                match self {
                    $(Self::$variant(_) => EventType::$variant,)+
                }
            }
        }

        $(impl From<$data> for EventData {
            fn from(data: $data) -> Self {
                Self::$variant(data)
            }
        })+

        impl EventType {
            /// The kind of subject events of this type have.
            pub fn subject_kind(self) -> super::SubjectKind {
                match self {
                    $(Self::$variant => super::SubjectKind::$subject,)+
                }
            }

            /// Each type with its `data`'s schema and its description: the OpenAPI document's
            /// `webhooks` section.
            pub fn catalogue() -> Vec<(EventType, &'static str, utoipa::openapi::RefOr<utoipa::openapi::schema::Schema>)> {
                use utoipa::PartialSchema as _;
                vec![$((EventType::$variant, $doc, <$data>::schema()),)+]
            }
        }
    };
}

event_types! {
    (PurchaseReserved, "purchase.reserved", PurchaseReserved, Fan,
        "A fan started a purchase: a unit of the pack is held for them until `expiresAt`."),
    (PurchaseCompleted, "purchase.completed", PurchaseCompleted, Fan,
        "A fan paid for a purchase with Cash (with its `cash.debited`, in the same write)."),
    (PurchaseExpired, "purchase.expired", PurchaseExpired, Fan,
        "A purchase's hold ran out unpaid: its unit went back to the pack."),
    (PackOpened, "pack.opened", PackOpened, Fan,
        "A fan opened a paid pack: its items were drawn."),
    (PackSoldOut, "pack.sold_out", PackSoldOut, Pack,
        "A pack's last unit was taken (held or sold): once per sell-out (docs/events.md)."),
    (CashCredited, "cash.credited", CashCredited, Fan,
        "Cash was credited to a fan (a top-up, a reward, an operator's grant): once per reference."),
    (CashDebited, "cash.debited", CashDebited, Fan,
        "Cash was debited from a fan to pay for a purchase or an order."),
    (TopUpCompleted, "topup.completed", TopUpCompleted, Fan,
        "A card top-up was paid (with its `cash.credited`, in the same write)."),
    (TopUpFailed, "topup.failed", TopUpFailed, Fan,
        "A card top-up ended unpaid: its payment failed or its checkout expired."),
    (QueueJoined, "queue.joined", QueueJoined, Fan,
        "A fan joined a pack's waiting room."),
    (QueueDrawn, "queue.drawn", QueueDrawn, Pack,
        "A pack's waiting room closed and its order was drawn."),
    (QueueAdmitted, "queue.admitted", QueueAdmitted, Fan,
        "A fan's turn in a pack's line came: they may start a purchase until `until`."),
    (OrderCompleted, "order.completed", OrderCompleted, Fan,
        "A fan's order of a product was paid and granted (with its `cash.debited`, \
         `cosmetic.granted` or `cash.credited`, in the same write): once per order."),
    (CosmeticGranted, "cosmetic.granted", CosmeticGranted, Fan,
        "A fan was granted a cosmetic by an order."),
    (QuestRewardClaimed, "quest.reward_claimed", QuestRewardClaimed, Fan,
        "A fan claimed a quest's reward (with its `cash.credited`, in the same write)."),
    (ProfileUpdated, "profile.updated", ProfileUpdated, Fan,
        "A fan changed their profile: the fields named changed."),
    (LockerRoomUpdated, "locker_room.updated", LockerRoomUpdated, Fan,
        "A fan changed what their locker room shows."),
    (WalletLinked, "wallet.linked", WalletLinked, Fan,
        "A fan linked a wallet, or linked it again."),
    (WalletRemoved, "wallet.removed", WalletRemoved, Fan,
        "A fan removed a wallet."),
    (AccountDeleted, "account.deleted", AccountDeleted, Fan,
        "A fan deleted their account: every token of theirs is refused from now on, and the API \
erases what it holds of them (docs/account-deletion.md). Erase what you hold of the fan \
(`subject.id`). Their last event."),
}

impl EventType {
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// The schema of a type: its names (utoipa's derive reads no `serde(rename)` made by a macro).
impl utoipa::PartialSchema for EventType {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        use strum::VariantArray as _;
        utoipa::openapi::ObjectBuilder::new()
            .schema_type(utoipa::openapi::schema::Type::String)
            .enum_values(Some(Self::VARIANTS.iter().map(|t| t.as_str())))
            .into()
    }
}
impl utoipa::ToSchema for EventType {}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PurchaseReserved {
    #[schema(value_type = String)]
    pub purchase_id: PurchaseId,
    #[schema(value_type = String)]
    pub pack_id: PackId,
    pub price: Money,
    #[schema(value_type = String, format = DateTime)]
    pub expires_at: Timestamp,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PurchaseCompleted {
    #[schema(value_type = String)]
    pub purchase_id: PurchaseId,
    #[schema(value_type = String)]
    pub pack_id: PackId,
    pub price: Money,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PurchaseExpired {
    #[schema(value_type = String)]
    pub purchase_id: PurchaseId,
    #[schema(value_type = String)]
    pub pack_id: PackId,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PackOpened {
    #[schema(value_type = String)]
    pub purchase_id: PurchaseId,
    #[schema(value_type = String)]
    pub pack_id: PackId,
    /// How many items the opening drew.
    pub items: u32,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PackSoldOut {
    #[schema(value_type = String)]
    pub pack_id: PackId,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CashCredited {
    pub amount: Money,
    /// The credit's reference: the same reference is credited once.
    pub reference: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CashDebited {
    pub amount: Money,
    /// The purchase the debit paid for; absent for an order's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>)]
    pub purchase_id: Option<PurchaseId>,
    /// The order the debit paid for; absent for a purchase's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>)]
    pub order_id: Option<OrderId>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct OrderCompleted {
    #[schema(value_type = String)]
    pub order_id: OrderId,
    #[schema(value_type = String)]
    pub product_id: ProductId,
    /// What the order paid, as it was when placed.
    pub price: Money,
    #[schema(inline)]
    pub pay: PayMethod,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CosmeticGranted {
    #[schema(value_type = String)]
    pub order_id: OrderId,
    /// The cosmetic (its product).
    #[schema(value_type = String)]
    pub product_id: ProductId,
    #[schema(inline)]
    pub slot: Slot,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TopUpCompleted {
    #[schema(value_type = String)]
    pub top_up_id: TopUpId,
    pub amount: Money,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TopUpFailed {
    #[schema(value_type = String)]
    pub top_up_id: TopUpId,
    pub amount: Money,
    /// `failed` (the payment failed) or `expired` (the checkout expired unpaid).
    pub status: TopUpStatus,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct QueueJoined {
    #[schema(value_type = String)]
    pub pack_id: PackId,
    #[schema(value_type = String)]
    pub entry_id: EntryId,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct QueueDrawn {
    #[schema(value_type = String)]
    pub pack_id: PackId,
    /// How many fans the order holds.
    pub entrants: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct QueueAdmitted {
    #[schema(value_type = String)]
    pub pack_id: PackId,
    /// The fan's place in the drawn order, from 1.
    pub position: u64,
    /// When the fan's pass to start a purchase ends.
    #[schema(value_type = String, format = DateTime)]
    pub until: Timestamp,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct QuestRewardClaimed {
    #[schema(value_type = String)]
    pub quest_id: QuestId,
    /// What the quest gave: Cash (credited in the same write, with its `cash.credited`) or a
    /// pack.
    pub reward: crate::quests::Reward,
    /// A pack reward's purchase, paid at 0 when claimed (no `purchase.reserved`,
    /// `purchase.completed` or `cash.debited`: nothing was held or debited); its opening is a
    /// `pack.opened` of this id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>)]
    pub purchase_id: Option<PurchaseId>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ProfileUpdated {
    /// The profile's fields the update changed (their names as the API writes them).
    pub fields: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LockerRoomUpdated {
    /// How many items the locker room shows now.
    pub shown: u32,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WalletLinked {
    #[schema(value_type = String)]
    pub wallet_id: WalletId,
    /// The link's provider.
    pub provider: String,
    /// Whether the wallet was new to the fan (false: linked again).
    pub added: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WalletRemoved {
    #[schema(value_type = String)]
    pub wallet_id: WalletId,
}

/// `account.deleted`: what the fan was told they give up (the money stays with the books).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AccountDeleted {
    /// Whether the fan confirmed losing Cash, holds, top-ups or unopened packs.
    pub confirmed_losses: bool,
}
