//! The actions of a transaction (a purchase's, a link's), each under a name: a cancelled
//! transaction's reasons are read by the name of the action they concern, not by its position.

use aws_sdk_dynamodb::types::builders::UpdateBuilder;
use aws_sdk_dynamodb::types::{
    AttributeValue, Delete, Put, ReturnValuesOnConditionCheckFailure, TransactWriteItem, Update,
};

use super::condition::render;
use super::{Cancellation, DynamoStore, Item, number};
use crate::store::StoreError;
use crate::store::condition::Condition;

/// A transaction's actions, each named by `N` (an enum of the transaction's actions).
#[derive(Clone)]
pub(crate) struct Transaction<N> {
    names: Vec<N>,
    actions: Vec<TransactWriteItem>,
}

impl<N: Copy + PartialEq> Transaction<N> {
    pub(crate) fn new() -> Self {
        Self {
            names: Vec::new(),
            actions: Vec::new(),
        }
    }

    /// Adds `action` under `name`.
    pub(crate) fn push(&mut self, name: N, action: TransactWriteItem) {
        self.names.push(name);
        self.actions.push(action);
    }

    /// `self` with `action` added under `name`.
    pub(crate) fn with(mut self, name: N, action: TransactWriteItem) -> Self {
        self.push(name, action);
        self
    }
}

/// What an action not in the transaction, or not reported on, says: nothing failed.
static NO_REASON: Cancellation = Cancellation {
    code: None,
    item: None,
};

/// How each named action of a cancelled transaction fared.
pub(crate) struct Reasons<N> {
    names: Vec<N>,
    reasons: Vec<Cancellation>,
}

impl<N: Copy + PartialEq> Reasons<N> {
    /// What the cancellation says of the action named `name`.
    pub(crate) fn of(&self, name: N) -> &Cancellation {
        self.names
            .iter()
            .position(|named| *named == name)
            .and_then(|at| self.reasons.get(at))
            .unwrap_or(&NO_REASON)
    }

    /// Whether the condition of the action named `name` failed.
    pub(crate) fn failed(&self, name: N) -> bool {
        self.of(name).condition_failed()
    }

    /// Every action's reason, in the transaction's order.
    pub(crate) fn all(&self) -> &[Cancellation] {
        &self.reasons
    }

    /// Whether another transaction held one of the items at once.
    pub(crate) fn conflicted(&self) -> bool {
        self.reasons.iter().any(Cancellation::conflicted)
    }
}

impl DynamoStore {
    /// Runs `transaction`: `Ok(None)` when applied, its named reasons when cancelled by
    /// conditions or conflicts (see [`DynamoStore::transact`]).
    pub(crate) async fn run<N>(
        &self,
        transaction: Transaction<N>,
    ) -> Result<Option<Reasons<N>>, StoreError> {
        let Transaction { names, actions } = transaction;
        Ok(self
            .transact(actions)
            .await?
            .map(|reasons| Reasons { names, reasons }))
    }
}

pub(crate) fn build<T, E: std::error::Error + Send + Sync + 'static>(
    built: Result<T, E>,
) -> Result<T, StoreError> {
    built.map_err(|e| StoreError::internal_from("transaction action", e))
}

/// An update of `key`: `expression` (with its `#name`s and `:value`s) on the declared
/// `condition`.
pub(crate) fn update(
    table: &str,
    key: Item,
    expression: &str,
    condition: &Condition,
    names: &[(&str, &str)],
    values: Vec<(&str, AttributeValue)>,
) -> Result<TransactWriteItem, StoreError> {
    let condition = render(condition);
    let builder = Update::builder()
        .condition_expression(condition.expression)
        .set_expression_attribute_names(Some(condition.names.into_iter().collect()))
        .set_expression_attribute_values(Some(condition.values.into_iter().collect()))
        .return_values_on_condition_check_failure(ReturnValuesOnConditionCheckFailure::AllOld);
    update_with(builder, table, key, expression, names, values)
}

/// An update of `key`: `expression` (with its `#name`s and `:value`s), whatever the item holds.
pub(crate) fn update_always(
    table: &str,
    key: Item,
    expression: &str,
    names: &[(&str, &str)],
    values: Vec<(&str, AttributeValue)>,
) -> Result<TransactWriteItem, StoreError> {
    update_with(Update::builder(), table, key, expression, names, values)
}

fn update_with(
    mut builder: UpdateBuilder,
    table: &str,
    key: Item,
    expression: &str,
    names: &[(&str, &str)],
    values: Vec<(&str, AttributeValue)>,
) -> Result<TransactWriteItem, StoreError> {
    builder = builder
        .table_name(table)
        .set_key(Some(key))
        .update_expression(expression);
    for (name, attribute) in names {
        builder = builder.expression_attribute_names(*name, *attribute);
    }
    for (name, value) in values {
        builder = builder.expression_attribute_values(name, value);
    }
    Ok(TransactWriteItem::builder()
        .update(build(builder.build())?)
        .build())
}

/// A delete of `key` on the declared `condition`.
pub(crate) fn delete(
    table: &str,
    key: Item,
    condition: &Condition,
) -> Result<TransactWriteItem, StoreError> {
    let condition = render(condition);
    let delete = Delete::builder()
        .table_name(table)
        .set_key(Some(key))
        .condition_expression(condition.expression)
        .set_expression_attribute_names(Some(condition.names.into_iter().collect()))
        .set_expression_attribute_values(
            (!condition.values.is_empty()).then(|| condition.values.into_iter().collect()),
        )
        .build();
    Ok(TransactWriteItem::builder().delete(build(delete)?).build())
}

/// A put of a new item (its key must be free).
pub(crate) fn put_new(table: &str, item: Item) -> Result<TransactWriteItem, StoreError> {
    let condition = render(&Condition::new_item());
    let put = Put::builder()
        .table_name(table)
        .set_item(Some(item))
        .condition_expression(condition.expression)
        .set_expression_attribute_names(Some(condition.names.into_iter().collect()))
        .return_values_on_condition_check_failure(ReturnValuesOnConditionCheckFailure::AllOld)
        .build();
    Ok(TransactWriteItem::builder().put(build(put)?).build())
}

/// `ADD change` to the number `attribute` of the item at `key`, unconditionally.
pub(crate) fn counter(
    table: &str,
    key: Item,
    attribute: &str,
    change: i64,
) -> Result<TransactWriteItem, StoreError> {
    let update = Update::builder()
        .table_name(table)
        .set_key(Some(key))
        .update_expression("ADD #counter :change")
        .expression_attribute_names("#counter", attribute)
        .expression_attribute_values(":change", number(change))
        .build();
    Ok(TransactWriteItem::builder().update(build(update)?).build())
}
