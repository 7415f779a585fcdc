//! Capacity units per partition key, computed from recorded DynamoDB requests and answers the
//! way DynamoDB bills them (its developer guide, "Read/write capacity mode" and "Item sizes"):
//!
//! - a write is ceil(KB) of the larger of the item before and after, twice inside a transaction;
//!   a conditional write whose condition fails, and the actions of a cancelled transaction, are
//!   billed too (DynamoDB charges for the attempt);
//! - a write that changes an item in an index (every index here is projected whole) writes the
//!   index partition too: ceil(KB) where the entry is put or updated, and where it is removed;
//!   a write that leaves the item as it was writes no index;
//! - a read is ceil(size / 4 KB), at least 1, strongly consistent; half that eventually
//!   consistent; a `ConditionCheck` inside a transaction is a transactional read (twice);
//! - a `Query` reads its partition (index or table): the items it returns, summed, ceil / 4 KB.
//!
//! Item sizes come from a shadow of the table: its items when recording began (from a recorded
//! `Scan`), then every recorded write applied in order. Updates are applied as far as sizes and
//! index keys need: `SET a = :v` sets, arithmetic keeps an existing value (a number's size moves
//! by a byte at most), `ADD` sets an absent attribute, `REMOVE` removes.

use std::collections::{BTreeMap, HashMap};

use serde_json::{Map, Value};

use testkit::fault_proxy::Exchange;

/// A partition key of the table (`PK`) or of an index (`GSI1PK`, `GSI2PK`, `GSI3PK`).
const PARTITION_ATTRIBUTES: [(&str, &str); 4] = [
    ("table", "PK"),
    ("GSI1", "GSI1PK"),
    ("GSI2", "GSI2PK"),
    ("GSI3", "GSI3PK"),
];

type Item = Map<String, Value>;

/// Read and write units landed on one partition key.
#[derive(Debug, Default, Clone, Copy)]
pub struct Units {
    pub read: f64,
    pub write: f64,
}

/// Units per partition key (`table PACK#x#3`, `GSI2 HOLDS#x#3`), and what was sent.
#[derive(Debug, Default)]
pub struct Ledger {
    pub keys: BTreeMap<String, Units>,
    /// Requests per operation (round trips).
    pub requests: BTreeMap<String, usize>,
    /// The table as the shadow has it.
    shadow: HashMap<(String, String), Item>,
}

/// The size DynamoDB counts for a number: 1 byte per two significant digits, plus 1.
fn number_size(text: &str) -> usize {
    let digits: String = text.chars().filter(char::is_ascii_digit).collect();
    let significant = digits.trim_start_matches('0').trim_end_matches('0');
    significant.len().max(1).div_ceil(2) + 1
}

/// The size of a value in DynamoDB's JSON (`{"S": ...}`, `{"M": {...}}`, ...).
fn value_size(value: &Value) -> usize {
    let Some((kind, inner)) = value.as_object().and_then(|o| o.iter().next()) else {
        return 0;
    };
    let text_len = |v: &Value| v.as_str().map_or(0, str::len);
    match kind.as_str() {
        "S" => text_len(inner),
        "N" => number_size(inner.as_str().unwrap_or("0")),
        "B" => text_len(inner) * 3 / 4,
        "BOOL" | "NULL" => 1,
        "SS" => inner.as_array().map_or(0, |a| a.iter().map(text_len).sum()),
        "NS" => inner.as_array().map_or(0, |a| {
            a.iter()
                .map(|n| number_size(n.as_str().unwrap_or("0")))
                .sum()
        }),
        "L" => inner.as_array().map_or(3, |a| {
            3 + a.iter().map(|v| 1 + value_size(v)).sum::<usize>()
        }),
        "M" => inner.as_object().map_or(3, |m| {
            3 + m
                .iter()
                .map(|(k, v)| 1 + k.len() + value_size(v))
                .sum::<usize>()
        }),
        _ => 0,
    }
}

pub fn item_size(item: &Item) -> usize {
    item.iter().map(|(k, v)| k.len() + value_size(v)).sum()
}

fn text<'a>(item: &'a Item, name: &str) -> Option<&'a str> {
    item.get(name)?.get("S")?.as_str()
}

fn item_key(item: &Item) -> (String, String) {
    (
        text(item, "PK").unwrap_or_default().to_owned(),
        text(item, "SK").unwrap_or_default().to_owned(),
    )
}

fn kb(size: usize, unit: usize) -> f64 {
    size.div_ceil(unit).max(1) as f64
}

/// `#name`s and `:value`s of a request, resolved.
struct Expression<'a> {
    names: Option<&'a Map<String, Value>>,
    values: Option<&'a Map<String, Value>>,
}

impl Expression<'_> {
    fn of(request: &Value) -> Expression<'_> {
        Expression {
            names: request["ExpressionAttributeNames"].as_object(),
            values: request["ExpressionAttributeValues"].as_object(),
        }
    }

    fn name(&self, token: &str) -> String {
        self.names
            .and_then(|n| n.get(token))
            .and_then(Value::as_str)
            .unwrap_or(token)
            .to_owned()
    }

    fn value(&self, token: &str) -> Option<Value> {
        self.values.and_then(|v| v.get(token)).cloned()
    }
}

/// Splits `text` at top-level commas (not inside parentheses).
fn top_level(text: &str) -> Vec<&str> {
    let (mut parts, mut depth, mut from) = (Vec::new(), 0, 0);
    for (at, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(text[from..at].trim());
                from = at + 1;
            }
            _ => {}
        }
    }
    parts.push(text[from..].trim());
    parts
}

/// `item` after `update` (an UpdateExpression), as far as sizes and index keys need.
fn apply_update(item: &mut Item, update: &str, expression: &Expression) {
    let mut clauses: Vec<(&str, String)> = Vec::new();
    for word in update.split_whitespace() {
        match word {
            "SET" | "REMOVE" | "ADD" | "DELETE" => clauses.push((word, String::new())),
            _ => {
                if let Some((_, body)) = clauses.last_mut() {
                    body.push(' ');
                    body.push_str(word);
                }
            }
        }
    }
    for (clause, body) in clauses {
        for part in top_level(&body) {
            match clause {
                "SET" => {
                    let Some((target, value)) = part.split_once('=') else {
                        continue;
                    };
                    let name = expression.name(target.trim());
                    let value = value.trim();
                    if let Some(plain) = expression.value(value) {
                        item.insert(name, plain);
                    } else if !item.contains_key(&name) {
                        // Arithmetic on an absent attribute (`if_not_exists(#a, :zero) + :one`):
                        // its first value stands in for the result.
                        let first = value
                            .split(|c: char| !(c.is_alphanumeric() || c == ':' || c == '_'))
                            .find(|token| token.starts_with(':'))
                            .and_then(|token| expression.value(token));
                        if let Some(first) = first {
                            item.insert(name, first);
                        }
                    }
                }
                "REMOVE" => {
                    item.remove(&expression.name(part));
                }
                "ADD" => {
                    let mut tokens = part.split_whitespace();
                    if let (Some(target), Some(value)) = (tokens.next(), tokens.next()) {
                        let name = expression.name(target);
                        if let (false, Some(value)) =
                            (item.contains_key(&name), expression.value(value))
                        {
                            item.insert(name, value);
                        }
                    }
                }
                _ => {}
            }
        }
    }
}

impl Ledger {
    fn add(&mut self, key: String, read: f64, write: f64) {
        let units = self.keys.entry(key).or_default();
        units.read += read;
        units.write += write;
    }

    /// A write of the item at `key` that becomes `after` (`None`: deleted), `applied` or not,
    /// `factor` 2 inside a transaction.
    fn write(&mut self, key: (String, String), after: Option<Item>, applied: bool, factor: f64) {
        let before = self.shadow.get(&key).cloned();
        let size = |item: &Option<Item>| item.as_ref().map_or(0, item_size);
        let units = kb(size(&before).max(size(&after)), 1024) * factor;
        self.add(format!("table {}", key.0), 0.0, units);
        // An update that changes nothing leaves the indexes alone.
        if !applied || before == after {
            return;
        }
        for (index, attribute) in &PARTITION_ATTRIBUTES[1..] {
            let old = before.as_ref().and_then(|i| text(i, attribute));
            let new = after.as_ref().and_then(|i| text(i, attribute));
            if let Some(old) = old
                && old != new.unwrap_or_default()
            {
                self.add(format!("{index} {old}"), 0.0, kb(size(&before), 1024));
            }
            if let Some(new) = new {
                self.add(format!("{index} {new}"), 0.0, kb(size(&after), 1024));
            }
        }
        match after {
            Some(item) => self.shadow.insert(key, item),
            None => self.shadow.remove(&key),
        };
    }

    fn read(&mut self, key: &Map<String, Value>, consistent: bool, factor: f64) {
        let key = item_key(key);
        let size = self.shadow.get(&key).map_or(0, item_size);
        let units = kb(size, 4096) * if consistent { 1.0 } else { 0.5 } * factor;
        self.add(format!("table {}", key.0), units, 0.0);
    }

    /// One write action (`Put`, `Update`, `Delete`) of a request or a transaction.
    fn write_action(&mut self, kind: &str, action: &Value, applied: bool, factor: f64) {
        let expression = Expression::of(action);
        match kind {
            "Put" => {
                let item = action["Item"].as_object().cloned().unwrap_or_default();
                self.write(item_key(&item), Some(item), applied, factor);
            }
            "Update" => {
                let key = action["Key"].as_object().cloned().unwrap_or_default();
                let mut item = self
                    .shadow
                    .get(&item_key(&key))
                    .cloned()
                    .unwrap_or_else(|| key.clone());
                apply_update(
                    &mut item,
                    action["UpdateExpression"].as_str().unwrap_or_default(),
                    &expression,
                );
                self.write(item_key(&key), Some(item), applied, factor);
            }
            "Delete" => {
                let key = action["Key"].as_object().cloned().unwrap_or_default();
                self.write(item_key(&key), None, applied, factor);
            }
            "ConditionCheck" => {
                let key = action["Key"].as_object().cloned().unwrap_or_default();
                self.read(&key, true, factor);
            }
            _ => {}
        }
    }

    /// Counts one exchange and applies its writes to the shadow.
    pub fn count(&mut self, exchange: &Exchange) {
        let request: Value = serde_json::from_slice(&exchange.request).unwrap_or(Value::Null);
        let response: Value = serde_json::from_slice(&exchange.response).unwrap_or(Value::Null);
        let ok = exchange.status == 200;
        let operation = exchange.operation.as_str();
        if operation == "Scan" {
            // The shadow's starting point, not part of what is measured.
            for item in response["Items"].as_array().into_iter().flatten() {
                if let Some(item) = item.as_object() {
                    self.shadow.insert(item_key(item), item.clone());
                }
            }
            return;
        }
        *self.requests.entry(operation.to_owned()).or_default() += 1;
        match operation {
            "GetItem" => {
                let key = request["Key"].as_object().cloned().unwrap_or_default();
                self.read(&key, request["ConsistentRead"] == true, 1.0);
            }
            "BatchGetItem" => {
                for table in request["RequestItems"].as_object().into_iter().flatten() {
                    let consistent = table.1["ConsistentRead"] == true;
                    for key in table.1["Keys"].as_array().into_iter().flatten() {
                        if let Some(key) = key.as_object() {
                            self.read(key, consistent, 1.0);
                        }
                    }
                }
            }
            "Query" => self.query(&request, &response),
            "PutItem" => self.write_action("Put", &request, ok, 1.0),
            "UpdateItem" => self.write_action("Update", &request, ok, 1.0),
            "DeleteItem" => self.write_action("Delete", &request, ok, 1.0),
            "TransactWriteItems" => {
                for action in request["TransactItems"].as_array().into_iter().flatten() {
                    if let Some((kind, body)) = action.as_object().and_then(|a| a.iter().next()) {
                        self.write_action(kind, body, ok, 2.0);
                    }
                }
            }
            _ => {}
        }
    }

    fn query(&mut self, request: &Value, response: &Value) {
        let expression = Expression::of(request);
        let index = request["IndexName"].as_str().unwrap_or("table");
        let attribute = PARTITION_ATTRIBUTES
            .iter()
            .find(|(name, _)| *name == index)
            .map_or("PK", |(_, attribute)| attribute);
        // `#pk = :value` names the partition.
        let condition = request["KeyConditionExpression"]
            .as_str()
            .unwrap_or_default();
        let partition = condition
            .split("AND")
            .filter_map(|part| part.split_once('='))
            .find(|(name, _)| expression.name(name.trim()) == attribute)
            .and_then(|(_, value)| expression.value(value.trim()))
            .and_then(|value| value["S"].as_str().map(str::to_owned))
            .unwrap_or_default();
        let size: usize = response["Items"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_object)
            .map(item_size)
            .sum();
        let consistent = request["ConsistentRead"] == true;
        let units = kb(size, 4096) * if consistent { 1.0 } else { 0.5 };
        self.add(format!("{index} {partition}"), units, 0.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn exchange(operation: &str, request: Value, status: u16, response: Value) -> Exchange {
        Exchange {
            operation: operation.into(),
            request: request.to_string().into(),
            status,
            response: response.to_string().into(),
        }
    }

    #[test]
    fn a_transaction_bills_twice_and_an_index_entry_moves_with_its_key() {
        let mut ledger = Ledger::default();
        ledger.count(&exchange(
            "TransactWriteItems",
            json!({"TransactItems": [
                {"Put": {"Item": {"PK": {"S": "USER#u"}, "SK": {"S": "PURCHASE#1"},
                                  "GSI2PK": {"S": "HOLDS#p#3"}, "GSI2SK": {"S": "t#1"},
                                  "GSI3PK": {"S": "USER#u"}, "GSI3SK": {"S": "t#1"}}}},
                {"Update": {"Key": {"PK": {"S": "PACK#p#3"}, "SK": {"S": "SUPPLY"}},
                            "UpdateExpression": "SET #r = #r - :one",
                            "ExpressionAttributeNames": {"#r": "remaining"},
                            "ExpressionAttributeValues": {":one": {"N": "1"}}}}
            ]}),
            200,
            json!({}),
        ));
        assert_eq!(ledger.keys["table USER#u"].write, 2.0);
        assert_eq!(ledger.keys["table PACK#p#3"].write, 2.0);
        assert_eq!(ledger.keys["GSI2 HOLDS#p#3"].write, 1.0);
        assert_eq!(ledger.keys["GSI3 USER#u"].write, 1.0);
        // Written again as it is: the table bills the write, the index takes none.
        let same = json!({"Key": {"PK": {"S": "USER#u"}, "SK": {"S": "PURCHASE#1"}},
               "UpdateExpression": "SET #g = :same",
               "ExpressionAttributeNames": {"#g": "GSI2PK"},
               "ExpressionAttributeValues": {":same": {"S": "HOLDS#p#3"}}});
        ledger.count(&exchange("UpdateItem", same, 200, json!({})));
        assert_eq!(ledger.keys["table USER#u"].write, 3.0);
        assert_eq!(ledger.keys["GSI2 HOLDS#p#3"].write, 1.0);
        // Paid: the index key is removed, one more unit on the index partition.
        ledger.count(&exchange(
            "UpdateItem",
            json!({"Key": {"PK": {"S": "USER#u"}, "SK": {"S": "PURCHASE#1"}},
                   "UpdateExpression": "SET #s = :paid REMOVE #g, #h",
                   "ExpressionAttributeNames": {"#s": "status", "#g": "GSI2PK", "#h": "GSI2SK"},
                   "ExpressionAttributeValues": {":paid": {"S": "completed"}}}),
            200,
            json!({}),
        ));
        assert_eq!(ledger.keys["GSI2 HOLDS#p#3"].write, 2.0);
        assert_eq!(ledger.keys["table USER#u"].write, 4.0);
    }

    #[test]
    fn reads_bill_by_4_kb_halved_when_eventually_consistent() {
        let mut ledger = Ledger::default();
        ledger.count(&exchange(
            "BatchGetItem",
            json!({"RequestItems": {"t": {"ConsistentRead": true, "Keys": [
                {"PK": {"S": "USER#u"}, "SK": {"S": "BUYS#p"}},
                {"PK": {"S": "PACK#p"}, "SK": {"S": "PACK"}}
            ]}}}),
            200,
            json!({}),
        ));
        let big = "x".repeat(5000);
        ledger.count(&exchange(
            "Query",
            json!({"IndexName": "GSI1", "KeyConditionExpression": "#pk = :listed AND #sk >= :b",
                   "ExpressionAttributeNames": {"#pk": "GSI1PK", "#sk": "GSI1SK"},
                   "ExpressionAttributeValues": {":listed": {"S": "PACKS#LISTED"}, ":b": {"S": "0"}}}),
            200,
            json!({"Items": [{"doc": {"S": big}}]}),
        ));
        assert_eq!(ledger.keys["table USER#u"].read, 1.0);
        assert_eq!(ledger.keys["table PACK#p"].read, 1.0);
        assert_eq!(ledger.keys["GSI1 PACKS#LISTED"].read, 1.0);
        assert_eq!(ledger.requests["BatchGetItem"], 1);
    }
}
