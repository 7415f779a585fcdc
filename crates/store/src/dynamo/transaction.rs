//! The actions of a transaction (a purchase's, a profile's, a link's), each under a name: a
//! cancelled transaction's reasons are read by the name of the action they concern, not by its
//! position in the list.

use aws_sdk_dynamodb::types::builders::UpdateBuilder;
use aws_sdk_dynamodb::types::{
    AttributeValue, ConditionCheck, Delete, Put, ReturnValuesOnConditionCheckFailure,
    TransactWriteItem, Update,
};

use super::condition::render;
use super::{Attempts, Cancellation, DynamoStore, Item, MAX_SEQUENCE_ATTEMPTS, number};
use crate::StoreError;
use crate::condition::Condition;
use domain::events::{NewEvent, Subject, stamp_all};
use domain::timestamp::Timestamp;

/// A transaction's actions, each named by `N` (an enum of the transaction's actions), and the
/// events of the change it makes (written by [`DynamoStore::run`] in the same transaction).
#[derive(Clone)]
pub(crate) struct Transaction<N> {
    names: Vec<N>,
    actions: Vec<TransactWriteItem>,
    events: Vec<NewEvent>,
    at: Option<Timestamp>,
}

impl<N: Copy + PartialEq> Transaction<N> {
    pub(crate) fn new() -> Self {
        Self {
            names: Vec::new(),
            actions: Vec::new(),
            events: Vec::new(),
            at: None,
        }
    }

    /// `self` writing `events`, of a change made at `at`, with its actions.
    pub(crate) fn emit(mut self, events: Vec<NewEvent>, at: Timestamp) -> Self {
        self.events.extend(events);
        self.at = Some(at);
        self
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
    /// conditions or conflicts (see [`DynamoStore::transact`]). Its events are written in it,
    /// each its subject's next: when only their counters' conditions fail (another change of a
    /// subject took the sequence read), the sequences are read again and the same actions run
    /// again; their own conditions still decide the change.
    pub(crate) async fn run<N>(
        &self,
        transaction: Transaction<N>,
    ) -> Result<Option<Reasons<N>>, StoreError> {
        let Transaction {
            names,
            actions,
            events,
            at,
        } = transaction;
        let (Some(at), false) = (at, events.is_empty()) else {
            return Ok(self
                .transact(actions)
                .await?
                .map(|reasons| Reasons { names, reasons }));
        };
        let mut subjects: Vec<Subject> = events.iter().map(|event| event.subject.clone()).collect();
        subjects.sort();
        subjects.dedup();
        let mut attempts = Attempts::up_to("events", MAX_SEQUENCE_ATTEMPTS);
        loop {
            let last = self.last_sequences(&subjects).await?;
            let stamped = stamp_all(events.clone(), at, |subject| {
                last.get(subject).copied().unwrap_or(0)
            });
            let mut all = actions.clone();
            all.extend(self.event_actions(&stamped, &last)?);
            let Some(reasons) = self.transact(all).await? else {
                return Ok(None);
            };
            let (own, written) = reasons.split_at(names.len().min(reasons.len()));
            let own_decided = own.iter().any(|r| r.condition_failed() || r.conflicted());
            if own_decided || !written.iter().any(Cancellation::condition_failed) {
                return Ok(Some(Reasons { names, reasons }));
            }
            // A sequence taken by another change of the subject: after a jittered pause, so
            // that a fan's racing changes spread out instead of colliding again at once.
            attempts.after_conflict().await?;
        }
    }
}

impl DynamoStore {
    /// One conditional write (`action`) made a transaction with the `events` of its change at
    /// `at` (docs/events.md): `false` when its own condition failed, and nothing was written.
    /// Another transaction holding an item meanwhile: tried again shortly.
    pub(crate) async fn write_emitting(
        &self,
        operation: &'static str,
        action: TransactWriteItem,
        events: Vec<NewEvent>,
        at: Timestamp,
    ) -> Result<bool, StoreError> {
        let mut attempts = Attempts::new(operation);
        loop {
            let transaction = Transaction::new()
                .with((), action.clone())
                .emit(events.clone(), at);
            match self.run(transaction).await? {
                None => return Ok(true),
                Some(reasons) if reasons.failed(()) => return Ok(false),
                Some(reasons) => attempts.after(reasons.all()).await?,
            }
        }
    }
}

pub(crate) fn build<T, E: std::error::Error + Send + Sync + 'static>(
    built: Result<T, E>,
) -> Result<T, StoreError> {
    built.map_err(|e| StoreError::internal_from("transaction action", e))
}

/// A put of a new item (its key must be free).
pub(crate) fn put_new(table: &str, item: Item) -> Result<TransactWriteItem, StoreError> {
    put(table, item, &Condition::new_item())
}

/// The names and values of a rendered condition, `None` when it has none (DynamoDB refuses an
/// empty map).
type Placeholders<T> = Option<std::collections::HashMap<String, T>>;

fn placeholders(
    condition: &Condition,
) -> (String, Placeholders<String>, Placeholders<AttributeValue>) {
    fn non_empty<T>(pairs: Vec<(String, T)>) -> Placeholders<T> {
        (!pairs.is_empty()).then(|| pairs.into_iter().collect())
    }
    let rendered = render(condition);
    (
        rendered.expression,
        non_empty(rendered.names),
        non_empty(rendered.values),
    )
}

/// `builder` (of a `Put`, `Delete` or `ConditionCheck`: each has these setters, no common trait)
/// on `table`, with the declared `condition`.
macro_rules! conditioned {
    ($builder:expr, $table:expr, $condition:expr) => {{
        let (expression, names, values) = placeholders($condition);
        $builder
            .table_name($table)
            .condition_expression(expression)
            .set_expression_attribute_names(names)
            .set_expression_attribute_values(values)
    }};
}

/// A put of `item` (replacing the item of its key) on the declared `condition`.
pub(crate) fn put(
    table: &str,
    item: Item,
    condition: &Condition,
) -> Result<TransactWriteItem, StoreError> {
    let put = conditioned!(Put::builder().set_item(Some(item)), table, condition)
        .return_values_on_condition_check_failure(ReturnValuesOnConditionCheckFailure::AllOld)
        .build();
    Ok(TransactWriteItem::builder().put(build(put)?).build())
}

/// A delete of the item at `key` on the declared `condition`.
pub(crate) fn delete(
    table: &str,
    key: Item,
    condition: &Condition,
) -> Result<TransactWriteItem, StoreError> {
    let delete = conditioned!(Delete::builder().set_key(Some(key)), table, condition).build();
    Ok(TransactWriteItem::builder().delete(build(delete)?).build())
}

/// The declared `condition` on the item at `key`, which the transaction does not change.
pub(crate) fn check(
    table: &str,
    key: Item,
    condition: &Condition,
) -> Result<TransactWriteItem, StoreError> {
    let check = conditioned!(
        ConditionCheck::builder().set_key(Some(key)),
        table,
        condition
    )
    .build();
    Ok(TransactWriteItem::builder()
        .condition_check(build(check)?)
        .build())
}

/// `ADD change` to the number `attribute` of the item at `key`, unconditionally.
pub(crate) fn counter(
    table: &str,
    key: Item,
    attribute: &str,
    change: i64,
) -> Result<TransactWriteItem, StoreError> {
    update_always(
        table,
        key,
        "ADD #counter :change",
        &[("#counter", attribute)],
        vec![(":change", number(change))],
    )
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
    let builder = conditioned!(Update::builder(), table, condition)
        .return_values_on_condition_check_failure(ReturnValuesOnConditionCheckFailure::AllOld);
    update_with(builder, key, expression, names, values)
}

/// An update of `key`: `expression` (with its `#name`s and `:value`s), on no condition (an item
/// every such write may create or change, as a counter).
pub(crate) fn update_always(
    table: &str,
    key: Item,
    expression: &str,
    names: &[(&str, &str)],
    values: Vec<(&str, AttributeValue)>,
) -> Result<TransactWriteItem, StoreError> {
    update_with(
        Update::builder().table_name(table),
        key,
        expression,
        names,
        values,
    )
}

/// `builder` (an update's table, and its condition if any) with its key, expression and the
/// expression's own names and values (added to the condition's).
fn update_with(
    mut builder: UpdateBuilder,
    key: Item,
    expression: &str,
    names: &[(&str, &str)],
    values: Vec<(&str, AttributeValue)>,
) -> Result<TransactWriteItem, StoreError> {
    builder = builder.set_key(Some(key)).update_expression(expression);
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
