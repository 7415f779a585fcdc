//! Products, orders and cosmetics in memory: the items DynamoDB keeps, in a table of their own,
//! each order checked against the conditions DynamoDB's transaction puts on the same writes,
//! under the store's one lock. A card order takes one of its fan's pending-session slots (the
//! top-ups' table) in the same lock.

use std::collections::{BTreeMap, HashMap};

use super::items::CashItem;
use super::{MemoryStore, Tables};
use crate::StoreError;
use crate::cash::CreditOutcome;
use crate::condition::{Attributes, Value};
use crate::products::{
    BOUGHT_COUNT, CloseOrder, CompleteOrder, CompleteOrderError, CompletedOrder, EquipError,
    FanCosmetics, GetOrders, GetProduct, ListProducts, ORDER_SESSION_ID, ORDER_STATUS, OWNS_SLOT,
    OrderError, PlaceOrder, Placed, STOCK_REMAINING, STOCK_SOLD, STOCK_TERMS, SeedProducts,
    SetOrderCheckout, conditions, not_pending, stock_refused,
};
use crate::purchase_conditions::funds_cover;
use crate::topups::take_slot;
use domain::cash::ledger::LedgerEntry;
use domain::events::money::order_completed;
use domain::ids::{OrderId, ProductId, UserId};
use domain::products::cosmetics::Equipped;
use domain::products::order::{Order, OrderStatus};
use domain::products::{PayMethod, Product, ProductType, Slot};
use domain::purchases::mine::Page;
use domain::timestamp::Timestamp;
use domain::topups::Checkout;
use domain::topups::pending::SlotHolder;

/// A product's stock item.
struct Stock {
    terms: String,
    /// Its units left, when it has a stock (below 0 when re-seeded under what was sold).
    remaining: Option<i128>,
    sold: u64,
}

impl Attributes for Stock {
    fn attribute(&self, path: &[&str]) -> Option<Value> {
        match path {
            [STOCK_TERMS] => Some(self.terms.as_str().into()),
            [STOCK_REMAINING] => self.remaining.map(Into::into),
            [STOCK_SOLD] => Some(self.sold.into()),
            _ => None,
        }
    }
}

/// A fan's count of a product.
struct Count(u32);

impl Attributes for Count {
    fn attribute(&self, path: &[&str]) -> Option<Value> {
        (path == [BOUGHT_COUNT]).then(|| self.0.into())
    }
}

/// An owned cosmetic: its slot.
struct Owned(Slot);

impl Attributes for Owned {
    fn attribute(&self, path: &[&str]) -> Option<Value> {
        (path == [OWNS_SLOT]).then(|| self.0.as_str().into())
    }
}

#[derive(Default)]
struct Products {
    products: BTreeMap<ProductId, Product>,
    stock: HashMap<ProductId, Stock>,
    bought: HashMap<(UserId, ProductId), u32>,
    orders: HashMap<(UserId, OrderId), Order>,
    /// Each fan's owned cosmetics, with how many orders granted each.
    owned: BTreeMap<(UserId, ProductId), (Slot, u64)>,
    equipped: HashMap<UserId, Equipped>,
}

impl Products {
    /// The fan owns `order`'s cosmetic (one more of it), when it grants one.
    fn own(&mut self, order: &Order) {
        if let Some(slot) = order.grants.slot() {
            let at = (order.user_id.clone(), order.product_id.clone());
            self.owned.entry(at).or_insert((slot, 0)).1 += 1;
        }
    }
}

impl SeedProducts for MemoryStore {
    async fn seed_products(&self, products: &[Product]) -> Result<(), StoreError> {
        let mut tables = self.write();
        let table = tables.table_mut::<Products>();
        for product in products {
            table.products.insert(product.id.clone(), product.clone());
            let stock = table.stock.entry(product.id.clone()).or_insert(Stock {
                terms: String::new(),
                remaining: None,
                sold: 0,
            });
            stock.terms = product.terms();
            stock.remaining = product
                .stock
                .map(|units| i128::from(units) - i128::from(stock.sold));
        }
        Ok(())
    }
}

impl ListProducts for MemoryStore {
    async fn list_products(
        &self,
        product_type: Option<ProductType>,
        limit: usize,
        after: Option<&ProductId>,
    ) -> Result<Page<Product>, StoreError> {
        let tables = self.read();
        let Some(table) = tables.table::<Products>() else {
            return Ok(Page {
                entries: Vec::new(),
                next: None,
            });
        };
        // As DynamoDB's Query: `limit` evaluated, the filter applied to them.
        let evaluated: Vec<&Product> = table
            .products
            .values()
            .filter(|product| after.is_none_or(|after| product.id > *after))
            .take(limit)
            .collect();
        let next = (evaluated.len() == limit)
            .then(|| evaluated.last().map(|p| p.id.to_string()))
            .flatten();
        let entries = evaluated
            .into_iter()
            .filter(|product| product_type.is_none_or(|kind| product.product_type == kind))
            .cloned()
            .collect();
        Ok(Page { entries, next })
    }
}

impl GetProduct for MemoryStore {
    async fn get_product(&self, id: &ProductId) -> Result<Option<Product>, StoreError> {
        Ok(self
            .read()
            .table::<Products>()
            .and_then(|table| table.products.get(id).cloned()))
    }
}

impl Tables {
    /// Whether `order` of `product` may be written, checked in the order DynamoDB's
    /// cancellation is read: the order's key, the stock, the fan's count, the balance.
    fn check_order(&self, order: &Order, product: &Product) -> Result<Option<Placed>, OrderError> {
        let table = self.table::<Products>();
        let at = (order.user_id.clone(), order.id.clone());
        if let Some(existing) = table.and_then(|t| t.orders.get(&at)) {
            return match existing.is_repeated_by(order) {
                true => Ok(Some(Placed::Repeated(existing.clone()))),
                false => Err(OrderError::KeyReused),
            };
        }
        if order.pay == PayMethod::Card {
            let pending = self.pending_top_ups.get(&order.user_id);
            take_slot(
                order.pending_slot(),
                order.created_at,
                &pending.cloned().unwrap_or_default(),
            )?;
        }
        let stock = table.and_then(|t| t.stock.get(&product.id));
        if !conditions::stock_sells(product).holds(stock.map(|s| s as &dyn Attributes)) {
            return Err(stock_refused(product, stock.map(|s| s.terms.as_str())));
        }
        if let Some(max) = product.max_per_fan {
            let bought = (order.user_id.clone(), product.id.clone());
            let count = table.and_then(|t| t.bought.get(&bought)).map(|&n| Count(n));
            if !conditions::under_limit(max).holds(count.as_ref().map(|c| c as &dyn Attributes)) {
                return Err(OrderError::LimitReached);
            }
        }
        if order.pay == PayMethod::Cash {
            let cash = CashItem {
                tables: self,
                user_id: &order.user_id,
            };
            if !funds_cover(&order.price.currency, order.price.amount).holds(Some(&cash)) {
                return Err(OrderError::InsufficientFunds);
            }
        }
        Ok(None)
    }

    /// `order`'s writes, its checks passed.
    fn write_order(&mut self, order: &Order, product: &Product) -> Result<(), OrderError> {
        if order.pay == PayMethod::Card {
            self.take_pending_slot::<OrderError>(
                &order.user_id,
                order.pending_slot(),
                order.created_at,
            )?;
        }
        let table = self.table_mut::<Products>();
        let stock = table.stock.get_mut(&product.id).expect("checked present");
        stock.sold += 1;
        if let Some(remaining) = &mut stock.remaining {
            *remaining -= 1;
        }
        if product.max_per_fan.is_some() {
            *table
                .bought
                .entry((order.user_id.clone(), product.id.clone()))
                .or_default() += 1;
        }
        table
            .orders
            .insert((order.user_id.clone(), order.id.clone()), order.clone());
        if order.pay != PayMethod::Cash {
            return Ok(());
        }
        table.own(order);
        let balance = self
            .balances
            .get_mut(&(order.user_id.clone(), order.price.currency.clone()))
            .expect("checked covering");
        *balance -= order.price.amount;
        self.add_to_ledger(
            &order.user_id,
            LedgerEntry::order_debit(order.id.clone(), order.price.clone(), order.created_at),
        );
        self.emit(order_completed(order), order.created_at);
        Ok(())
    }
}

impl PlaceOrder for MemoryStore {
    async fn place_order(&self, order: &Order, product: &Product) -> Result<Placed, OrderError> {
        let mut tables = self.write();
        if let Some(repeated) = tables.check_order(order, product)? {
            return Ok(repeated);
        }
        tables.write_order(order, product)?;
        Ok(Placed::Created(order.clone()))
    }
}

impl Attributes for Order {
    fn attribute(&self, path: &[&str]) -> Option<Value> {
        match path {
            [ORDER_STATUS] => Some(self.status.as_str().into()),
            [ORDER_SESSION_ID] => self.checkout.as_ref().map(|c| c.session_id.as_str().into()),
            _ => None,
        }
    }
}

impl CompleteOrder for MemoryStore {
    async fn complete_order(
        &self,
        order: &Order,
        at: Timestamp,
    ) -> Result<CompletedOrder, CompleteOrderError> {
        let mut tables = self.write();
        let key = (order.user_id.clone(), order.id.clone());
        let existing = tables
            .table::<Products>()
            .and_then(|table| table.orders.get(&key))
            .cloned();
        if !conditions::pending().holds(existing.as_ref().map(|o| o as &dyn Attributes)) {
            return not_pending(existing);
        }
        let completed = order.completed(at);
        if let Some(credit) = order.credit() {
            match tables.credit(&credit, at) {
                Ok(CreditOutcome::Credited { .. }) => {}
                Ok(CreditOutcome::AlreadyCredited) | Err(_) => {
                    return Err(StoreError::internal("order: its credit was refused").into());
                }
            }
        }
        let table = tables.table_mut::<Products>();
        table.own(order);
        table.orders.insert(key, completed.clone());
        tables.emit(order_completed(&completed), at);
        tables.free_pending_slot(&order.user_id, &SlotHolder::Order(order.id.clone()));
        Ok(CompletedOrder::Completed(completed))
    }
}

impl CloseOrder for MemoryStore {
    async fn close_order(
        &self,
        order: &Order,
        session_id: &str,
        status: OrderStatus,
    ) -> Result<Option<Order>, StoreError> {
        let mut tables = self.write();
        let table = tables.table_mut::<Products>();
        let key = (order.user_id.clone(), order.id.clone());
        let Some(stored) = table.orders.get(&key) else {
            return Ok(None);
        };
        if !conditions::closable(session_id).holds(Some(stored)) {
            return Ok(None);
        }
        let closed = stored.closed(status);
        let stock = table
            .stock
            .get_mut(&order.product_id)
            .ok_or_else(|| StoreError::internal("order: closing it found no stock item"))?;
        // Its sale undone; a stock's units left are what it has beyond the units sold.
        stock.sold -= 1;
        if let Some(remaining) = &mut stock.remaining {
            *remaining += 1;
        }
        if closed.took.count
            && let Some(count) = table
                .bought
                .get_mut(&(order.user_id.clone(), order.product_id.clone()))
        {
            *count -= 1;
        }
        table.orders.insert(key, closed.clone());
        tables.free_pending_slot(&order.user_id, &SlotHolder::Order(order.id.clone()));
        Ok(Some(closed))
    }
}

impl SetOrderCheckout for MemoryStore {
    async fn set_order_checkout(
        &self,
        user_id: &UserId,
        order_id: &OrderId,
        checkout: &Checkout,
    ) -> Result<Order, StoreError> {
        let mut tables = self.write();
        let order = tables
            .table_mut::<Products>()
            .orders
            .get_mut(&(user_id.clone(), order_id.clone()))
            .ok_or_else(|| StoreError::internal("order: storing its checkout found no order"))?;
        if order.checkout.is_none() {
            order.checkout = Some(checkout.clone());
        }
        Ok(order.clone())
    }
}

impl GetOrders for MemoryStore {
    async fn get_order(
        &self,
        user_id: &UserId,
        order_id: &OrderId,
    ) -> Result<Option<Order>, StoreError> {
        Ok(self.read().table::<Products>().and_then(|table| {
            table
                .orders
                .get(&(user_id.clone(), order_id.clone()))
                .cloned()
        }))
    }

    async fn list_orders(
        &self,
        user_id: &UserId,
        limit: usize,
        after: Option<&str>,
    ) -> Result<Page<Order>, StoreError> {
        let tables = self.read();
        let mut orders: Vec<&Order> = tables
            .table::<Products>()
            .map(|table| table.orders.values().collect())
            .unwrap_or_default();
        orders.retain(|order| {
            order.user_id == *user_id && after.is_none_or(|after| order.list_key().as_str() < after)
        });
        orders.sort_by_key(|order| std::cmp::Reverse(order.list_key()));
        let more = orders.len() > limit;
        orders.truncate(limit);
        Ok(Page {
            next: more
                .then(|| orders.last().map(|order| order.list_key()))
                .flatten(),
            entries: orders.into_iter().cloned().collect(),
        })
    }
}

impl FanCosmetics for MemoryStore {
    async fn owned_cosmetics(
        &self,
        user_id: &UserId,
    ) -> Result<Vec<(ProductId, Slot)>, StoreError> {
        let tables = self.read();
        Ok(tables
            .table::<Products>()
            .map(|table| {
                table
                    .owned
                    .iter()
                    .filter(|((user, _), _)| user == user_id)
                    .map(|((_, id), (slot, _))| (id.clone(), *slot))
                    .collect()
            })
            .unwrap_or_default())
    }

    async fn equipped(&self, user_id: &UserId) -> Result<Equipped, StoreError> {
        Ok(equipped(&self.read(), user_id))
    }

    async fn equip(&self, user_id: &UserId, equipped: &Equipped) -> Result<(), EquipError> {
        if let Some(slot) = equipped.repeated_slot() {
            return Err(EquipError::NotOwned(slot));
        }
        let mut tables = self.write();
        let table = tables.table_mut::<Products>();
        for (slot, id) in &equipped.slots {
            let owned = table.owned.get(&(user_id.clone(), id.clone()));
            let item = owned.map(|(slot, _)| Owned(*slot));
            if !conditions::owns_for(*slot).holds(item.as_ref().map(|o| o as &dyn Attributes)) {
                return Err(EquipError::NotOwned(*slot));
            }
        }
        table.equipped.insert(user_id.clone(), equipped.clone());
        Ok(())
    }
}

/// What `user_id` shows (their locker room and profile read it).
pub(super) fn equipped(tables: &Tables, user_id: &UserId) -> Equipped {
    tables
        .table::<Products>()
        .and_then(|table| table.equipped.get(user_id).cloned())
        .unwrap_or_default()
}

/// A deleted fan's products, at their erasure's steps (as DynamoDB's erase the `FAN#` and
/// `USER#` items): what they show goes with their public face; their orders, counts and owned
/// cosmetics with their own items. Their Cash movements are the ledger's, kept under a pseudonym.
pub(super) fn erase_shown(tables: &mut Tables, user_id: &UserId) {
    tables.table_mut::<Products>().equipped.remove(user_id);
}

pub(super) fn erase_owned(tables: &mut Tables, user_id: &UserId) {
    let table = tables.table_mut::<Products>();
    table.orders.retain(|(fan, _), _| fan != user_id);
    table.bought.retain(|(fan, _), _| fan != user_id);
    table.owned.retain(|(fan, _), _| fan != user_id);
}
