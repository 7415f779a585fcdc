//! Products, orders and cosmetics on DynamoDB (the items: `store::products`). An order paid with
//! Cash is one transaction: the order, the stock, the fan's count, the balance, the debit entry
//! naming the order, the cosmetic owned and the events.

use aws_sdk_dynamodb::types::TransactWriteItem;

use super::fan_view::index_key;
use super::records::{
    ORDER_DEBIT_ENTITY, OrderDebitRecord, OrderRecord, PRODUCT_VERSION, ProductRecord,
    SCHEMA_VERSION, order_from_item, pending_from_item, read_record,
};
use super::transaction::{Transaction, check, put_new, update, update_always};
use super::{Attempts, DynamoStore, Item, classify, key, number, s};
use crate::StoreError;
use crate::products::{
    BOUGHT_COUNT, COSMETICS_SK, EquipError, FanCosmetics, GetOrders, GetProduct, ListProducts,
    OWNS_PREFIX, OWNS_SLOT, OrderError, PRODUCT_PREFIX, PRODUCTS_PK, PlaceOrder, Placed,
    STOCK_REMAINING, STOCK_SK, STOCK_SOLD, STOCK_TERMS, SeedProducts, bought_sk, conditions,
    order_debit_sk, order_sk, orders_pk, owns_sk, product_sk, stock_pk, stock_refused,
};
use crate::purchase_conditions::funds_cover;
use crate::schema::{CASH_SK, ENTITY, GSI3_PK, GSI3_SK, SK, cash_pk, fan_pk, user_pk};
use crate::topups::{SlotTaken, take_slot};
use domain::cash::ledger::order_debit_entry_id;
use domain::events::money::order_completed;
use domain::ids::{OrderId, ProductId, UserId};
use domain::products::cosmetics::Equipped;
use domain::products::order::Order;
use domain::products::{PayMethod, Product, ProductType, Slot};
use domain::purchases::mine::Page;
use domain::timestamp::time_key;

pub(super) fn order_key(user_id: &UserId, order_id: &OrderId) -> Item {
    key(user_pk(user_id), &order_sk(order_id))
}

fn internal<E: std::error::Error + Send + Sync + 'static>(
    what: &'static str,
) -> impl Fn(E) -> StoreError {
    move |e| StoreError::internal_from(what, e)
}

/// The actions of an order's transaction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum OrderAction {
    /// The order (its key, the idempotency key's, free).
    Order,
    /// A unit of the stock, under the terms read.
    Stock,
    /// The fan's count, under the limit.
    Limit,
    /// The balance, covering the price (Cash only).
    Balance,
    /// The debit entry naming the order (Cash only; its key free).
    Debit,
    /// The cosmetic owned (Cash only: a card order grants when paid).
    Grant,
    /// One of the fan's pending-session slots, as read (card only).
    Pending,
}

impl DynamoStore {
    fn order_transaction(
        &self,
        order: &Order,
        product: &Product,
        slot: Option<&SlotTaken>,
    ) -> Result<Transaction<OrderAction>, StoreError> {
        let table = &self.table;
        let user = user_pk(&order.user_id);
        let mut item = order_key(&order.user_id, &order.id);
        item.extend(
            serde_dynamo::to_item::<_, Item>(OrderRecord::from(order))
                .map_err(internal("order item"))?,
        );
        item.insert(ENTITY.into(), s("order"));
        item.insert(GSI3_PK.into(), s(orders_pk(&order.user_id)));
        item.insert(GSI3_SK.into(), s(order.list_key()));
        let stock_expression = match product.stock {
            Some(_) => "SET #remaining = #remaining - :one ADD #sold :one",
            None => "ADD #sold :one",
        };
        let mut names = vec![("#sold", STOCK_SOLD)];
        if product.stock.is_some() {
            names.push(("#remaining", STOCK_REMAINING));
        }
        let stock = update(
            table,
            key(stock_pk(&product.id), STOCK_SK),
            stock_expression,
            &conditions::stock_sells(product),
            &names,
            vec![(":one", number(1))],
        )?;
        let mut transaction = Transaction::new()
            .with(OrderAction::Order, put_new(table, item)?)
            .with(OrderAction::Stock, stock);
        if let Some(max) = product.max_per_fan {
            let counted = update(
                table,
                key(user.clone(), &bought_sk(&product.id)),
                "ADD #count :one SET #entity = :entity, #sv = :sv",
                &conditions::under_limit(max),
                &[
                    ("#count", BOUGHT_COUNT),
                    ("#entity", ENTITY),
                    ("#sv", SCHEMA_VERSION),
                ],
                vec![
                    (":one", number(1)),
                    (":entity", s("bought")),
                    (":sv", number(PRODUCT_VERSION)),
                ],
            )?;
            transaction.push(OrderAction::Limit, counted);
        }
        if let Some(slot) = slot {
            let taken = self.take_pending_slot_action(&order.user_id, slot)?;
            transaction.push(OrderAction::Pending, taken);
        }
        if order.pay == PayMethod::Cash {
            self.push_cash_payment(&mut transaction, order)?;
            transaction = transaction.emit(order_completed(order), order.created_at);
        }
        Ok(transaction)
    }

    /// A Cash order's payment and grant: the balance less the price, the debit entry naming
    /// the order and, for a cosmetic, the cosmetic owned.
    fn push_cash_payment(
        &self,
        transaction: &mut Transaction<OrderAction>,
        order: &Order,
    ) -> Result<(), StoreError> {
        let table = &self.table;
        let price = &order.price;
        let balance = update(
            table,
            key(cash_pk(&order.user_id), CASH_SK),
            "SET #balance = #balance - :price",
            &funds_cover(&price.currency, price.amount),
            &[("#balance", &price.currency)],
            vec![(":price", number(price.amount))],
        )?;
        let at = order.created_at;
        let mut debit = key(cash_pk(&order.user_id), &order_debit_sk(&order.id));
        debit.extend(
            serde_dynamo::to_item::<_, Item>(OrderDebitRecord::new(&order.id, price, at))
                .map_err(internal("order debit item"))?,
        );
        debit.extend([
            (ENTITY.to_owned(), s(ORDER_DEBIT_ENTITY)),
            (GSI3_PK.to_owned(), s(cash_pk(&order.user_id))),
            (
                GSI3_SK.to_owned(),
                s(time_key(at, &order_debit_entry_id(&order.id))),
            ),
        ]);
        transaction.push(OrderAction::Balance, balance);
        transaction.push(OrderAction::Debit, put_new(table, debit)?);
        if let Some(slot) = order.grants.slot() {
            transaction.push(OrderAction::Grant, self.own_action(order, slot)?);
        }
        Ok(())
    }

    /// The fan owns the order's cosmetic (one more of it).
    pub(super) fn own_action(
        &self,
        order: &Order,
        slot: Slot,
    ) -> Result<TransactWriteItem, StoreError> {
        update_always(
            &self.table,
            key(user_pk(&order.user_id), &owns_sk(&order.product_id)),
            "SET #slot = :slot, #entity = :entity, #sv = :sv ADD #count :one",
            &[
                ("#slot", OWNS_SLOT),
                ("#entity", ENTITY),
                ("#sv", SCHEMA_VERSION),
                ("#count", BOUGHT_COUNT),
            ],
            vec![
                (":slot", s(slot.as_str())),
                (":entity", s("owned")),
                (":sv", number(PRODUCT_VERSION)),
                (":one", number(1)),
            ],
        )
    }

    /// The order found under `order`'s key (returned by the cancellation, or read).
    async fn order_taken(&self, order: &Order, item: Option<Item>) -> Result<Placed, OrderError> {
        let existing = match item {
            Some(item) => order_from_item(item)?,
            None => self
                .get_order(&order.user_id, &order.id)
                .await?
                .ok_or_else(|| StoreError::internal("order: refused but not found"))?,
        };
        repeat_of(order, existing)
    }
}

/// The answer to `order` when its key placed `existing`.
fn repeat_of(order: &Order, existing: Order) -> Result<Placed, OrderError> {
    if existing.is_repeated_by(order) {
        Ok(Placed::Repeated(existing))
    } else {
        Err(OrderError::KeyReused)
    }
}

impl PlaceOrder for DynamoStore {
    async fn place_order(&self, order: &Order, product: &Product) -> Result<Placed, OrderError> {
        let card = order.pay == PayMethod::Card;
        let mut pending = match card {
            true => Some(self.fan_pending_top_ups(&order.user_id).await?),
            false => None,
        };
        let mut attempts = Attempts::new("order");
        loop {
            let slot = match &pending {
                Some(pending) => match take_slot(order.pending_slot(), order.created_at, pending) {
                    Ok(slot) => Some(slot),
                    // A repeat of an order's key answers it, whatever the fan's slots.
                    Err(full) => {
                        return match self.get_order(&order.user_id, &order.id).await? {
                            Some(existing) => repeat_of(order, existing),
                            None => Err(full.into()),
                        };
                    }
                },
                None => None,
            };
            let transaction = self.order_transaction(order, product, slot.as_ref())?;
            let Some(reasons) = self.run(transaction).await? else {
                return Ok(Placed::Created(order.clone()));
            };
            if reasons.failed(OrderAction::Order) {
                let item = reasons.of(OrderAction::Order).item.clone();
                return self.order_taken(order, item).await;
            }
            if reasons.failed(OrderAction::Stock) {
                let item = reasons.of(OrderAction::Stock).item.as_ref();
                let terms = item.and_then(|item| item.get(STOCK_TERMS)?.as_s().ok());
                return Err(stock_refused(product, terms.map(String::as_str)));
            }
            if reasons.failed(OrderAction::Limit) {
                return Err(OrderError::LimitReached);
            }
            if reasons.failed(OrderAction::Balance) {
                return Err(OrderError::InsufficientFunds);
            }
            if reasons.failed(OrderAction::Debit) {
                return Err(StoreError::internal("order: its debit exists without it").into());
            }
            if reasons.failed(OrderAction::Pending) {
                // Another session of this fan's came or went: decide on the slots as they are.
                let item = reasons.of(OrderAction::Pending).item.as_ref();
                pending = Some(pending_from_item(item)?);
            }
            attempts.after(reasons.all()).await?;
        }
    }
}

impl SeedProducts for DynamoStore {
    async fn seed_products(&self, products: &[Product]) -> Result<(), StoreError> {
        for product in products {
            let doc = serde_json::to_string(product).map_err(internal("product item"))?;
            let type_text: &'static str = product.product_type.into();
            // Every attribute of the item set: the product replaced whole.
            let item = update_always(
                &self.table,
                key(PRODUCTS_PK.into(), &product_sk(&product.id)),
                "SET #doc = :doc, #type = :type, #entity = :entity, #sv = :sv",
                &[
                    ("#doc", "doc"),
                    ("#type", "type"),
                    ("#entity", ENTITY),
                    ("#sv", SCHEMA_VERSION),
                ],
                vec![
                    (":doc", s(doc)),
                    (":type", s(type_text)),
                    (":entity", s("product")),
                    (":sv", number(PRODUCT_VERSION)),
                ],
            )?;
            let mut values = vec![
                (":terms", s(product.terms())),
                (":entity", s("stock")),
                (":sv", number(PRODUCT_VERSION)),
            ];
            let mut names = vec![
                ("#terms", STOCK_TERMS),
                ("#entity", ENTITY),
                ("#sv", SCHEMA_VERSION),
                ("#remaining", STOCK_REMAINING),
            ];
            // The units sold stay; a stock's units left are what it has beyond them.
            let expression = match product.stock {
                Some(stock) => {
                    values.extend([(":stock", number(stock)), (":zero", number(0))]);
                    names.push(("#sold", STOCK_SOLD));
                    "SET #terms = :terms, #entity = :entity, #sv = :sv, \
                     #remaining = :stock - if_not_exists(#sold, :zero)"
                }
                None => "SET #terms = :terms, #entity = :entity, #sv = :sv REMOVE #remaining",
            };
            let stock = update_always(
                &self.table,
                key(stock_pk(&product.id), STOCK_SK),
                expression,
                &names,
                values,
            )?;
            // Both or neither: an order is written only under the stock's terms, the product's.
            let mut attempts = Attempts::new("seed product");
            while let Some(reasons) = self.transact(vec![item.clone(), stock.clone()]).await? {
                attempts.after(&reasons).await?;
            }
        }
        Ok(())
    }
}

impl ListProducts for DynamoStore {
    async fn list_products(
        &self,
        product_type: Option<ProductType>,
        limit: usize,
        after: Option<&ProductId>,
    ) -> Result<Page<Product>, StoreError> {
        let mut request = self
            .client
            .query()
            .table_name(&self.table)
            .key_condition_expression("#pk = :pk AND begins_with(#sk, :prefix)")
            .expression_attribute_names("#pk", crate::schema::PK)
            .expression_attribute_names("#sk", SK)
            .expression_attribute_values(":pk", s(PRODUCTS_PK))
            .expression_attribute_values(":prefix", s(PRODUCT_PREFIX))
            .limit(i32::try_from(limit).unwrap_or(i32::MAX))
            .set_exclusive_start_key(
                after.map(|after| key(PRODUCTS_PK.into(), &product_sk(after))),
            );
        if let Some(product_type) = product_type {
            let text: &'static str = product_type.into();
            request = request
                .filter_expression("#type = :type")
                .expression_attribute_names("#type", "type")
                .expression_attribute_values(":type", s(text));
        }
        let output = request.send().await.map_err(|e| classify("Query", e))?;
        let next = output
            .last_evaluated_key
            .as_ref()
            .and_then(|last| index_key(last, SK))
            .and_then(|sk| sk.strip_prefix(PRODUCT_PREFIX).map(str::to_owned));
        let entries = output
            .items
            .unwrap_or_default()
            .into_iter()
            .map(|item| read_record::<ProductRecord, _>(item, "product"))
            .collect::<Result<_, _>>()?;
        Ok(Page { entries, next })
    }
}

impl GetProduct for DynamoStore {
    async fn get_product(&self, id: &ProductId) -> Result<Option<Product>, StoreError> {
        // Eventually consistent: every order reads this one partition (half the read units of a
        // strong read), and an order decided on a stale product is refused by its stock's terms
        // condition and read again.
        self.get_item(key(PRODUCTS_PK.into(), &product_sk(id)), false)
            .await?
            .map(|item| read_record::<ProductRecord, _>(item, "product"))
            .transpose()
    }
}

impl GetOrders for DynamoStore {
    async fn get_order(
        &self,
        user_id: &UserId,
        order_id: &OrderId,
    ) -> Result<Option<Order>, StoreError> {
        self.get_item(order_key(user_id, order_id), true)
            .await?
            .map(order_from_item)
            .transpose()
    }

    async fn list_orders(
        &self,
        user_id: &UserId,
        limit: usize,
        after: Option<&str>,
    ) -> Result<Page<Order>, StoreError> {
        self.fan_index_page(orders_pk(user_id), limit, after, order_from_item)
            .await
    }
}

/// The equipped cosmetics item: one attribute per slot (`avatar_frame`: its product id).
pub(super) fn equipped_from_item(item: Option<Item>) -> Result<Equipped, StoreError> {
    let mut equipped = Equipped::default();
    let Some(item) = item else {
        return Ok(equipped);
    };
    super::records::check_version(&item, "cosmetics", PRODUCT_VERSION)?;
    for (name, value) in item {
        if let (Ok(slot), Ok(id)) = (name.parse::<Slot>(), value.as_s()) {
            let id = ProductId::parse(id.as_str()).map_err(internal("cosmetics item"))?;
            equipped.slots.insert(slot, id);
        }
    }
    Ok(equipped)
}

impl FanCosmetics for DynamoStore {
    async fn owned_cosmetics(
        &self,
        user_id: &UserId,
    ) -> Result<Vec<(ProductId, Slot)>, StoreError> {
        self.query_prefix(user_pk(user_id), OWNS_PREFIX, true)
            .await?
            .into_iter()
            .map(|item| {
                let text = |name: &str| item.get(name).and_then(|v| v.as_s().ok()).cloned();
                let id = text(SK)
                    .and_then(|sk| sk.strip_prefix(OWNS_PREFIX).map(str::to_owned))
                    .and_then(|id| ProductId::parse(id).ok());
                let slot = text(OWNS_SLOT).and_then(|slot| slot.parse().ok());
                id.zip(slot)
                    .ok_or_else(|| StoreError::internal("owned cosmetic item: its id or slot"))
            })
            .collect()
    }

    async fn equipped(&self, user_id: &UserId) -> Result<Equipped, StoreError> {
        let item = self
            .get_item(key(fan_pk(user_id), COSMETICS_SK), true)
            .await?;
        equipped_from_item(item)
    }

    async fn equip(&self, user_id: &UserId, equipped: &Equipped) -> Result<(), EquipError> {
        if let Some(slot) = equipped.repeated_slot() {
            return Err(EquipError::NotOwned(slot));
        }
        let user = user_pk(user_id);
        let mut attempts = Attempts::new("equip");
        loop {
            let mut transaction =
                Transaction::new().with(None, self.equipped_put(user_id, equipped)?);
            for (slot, id) in &equipped.slots {
                let owns = key(user.clone(), &owns_sk(id));
                transaction.push(
                    Some(*slot),
                    check(&self.table, owns, &conditions::owns_for(*slot))?,
                );
            }
            let Some(reasons) = self.run(transaction).await? else {
                return Ok(());
            };
            if let Some(slot) = equipped
                .slots
                .keys()
                .find(|slot| reasons.failed(Some(**slot)))
            {
                return Err(EquipError::NotOwned(*slot));
            }
            attempts.after(reasons.all()).await?;
        }
    }
}

impl DynamoStore {
    /// The equipped item as `equipped` has it: each slot set or removed.
    fn equipped_put(
        &self,
        user_id: &UserId,
        equipped: &Equipped,
    ) -> Result<TransactWriteItem, StoreError> {
        let mut set = vec!["#entity = :entity".to_owned(), "#sv = :sv".to_owned()];
        let mut remove = Vec::new();
        let mut names = vec![("#entity", ENTITY), ("#sv", SCHEMA_VERSION)];
        let mut values = vec![
            (":entity", s("cosmetics")),
            (":sv", number(PRODUCT_VERSION)),
        ];
        for (k, slot) in Slot::ALL.iter().enumerate() {
            let (name, value) = (SLOT_NAMES[k], SLOT_VALUES[k]);
            names.push((name, slot.as_str()));
            match equipped.in_slot(*slot) {
                Some(id) => {
                    set.push(format!("{name} = {value}"));
                    values.push((value, s(id.as_str())));
                }
                None => remove.push(name),
            }
        }
        let mut expression = format!("SET {}", set.join(", "));
        if !remove.is_empty() {
            expression.push_str(&format!(" REMOVE {}", remove.join(", ")));
        }
        update_always(
            &self.table,
            key(fan_pk(user_id), COSMETICS_SK),
            &expression,
            &names,
            values,
        )
    }
}

/// The placeholders of the slots' attributes, in `Slot::ALL` order.
const SLOT_NAMES: [&str; 3] = ["#s0", "#s1", "#s2"];
const SLOT_VALUES: [&str; 3] = [":s0", ":s1", ":s2"];
