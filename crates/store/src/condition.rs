//! The conditions of conditional writes, as data: each rule's condition is declared once (for
//! purchases, in [`crate::purchase_conditions`], each naming the rule it enforces) and both
//! stores execute that one declaration. DynamoDB gets it rendered as a `ConditionExpression`
//! (`store::dynamo::condition`); the in-memory store evaluates it against the item it is about
//! to change, with DynamoDB's semantics (a comparison with a missing attribute, or between a
//! number and a string, is false), and refuses a write whose condition does not hold.

use std::borrow::Cow;

/// A stored value a condition compares with.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Value {
    N(i128),
    S(String),
}

impl From<u64> for Value {
    fn from(value: u64) -> Self {
        Self::N(value.into())
    }
}

impl From<u32> for Value {
    fn from(value: u32) -> Self {
        Self::N(value.into())
    }
}

impl From<i128> for Value {
    fn from(value: i128) -> Self {
        Self::N(value)
    }
}

impl From<&str> for Value {
    fn from(value: &str) -> Self {
        Self::S(value.to_owned())
    }
}

/// How an attribute is compared with a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compare {
    Eq,
    Lt,
    Le,
    Gt,
    Ge,
}

impl Compare {
    pub(crate) fn symbol(self) -> &'static str {
        match self {
            Compare::Eq => "=",
            Compare::Lt => "<",
            Compare::Le => "<=",
            Compare::Gt => ">",
            Compare::Ge => ">=",
        }
    }
}

/// A condition on one item: its attributes (a path of names, for a member of a map) compared
/// with values, combined with AND and OR.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Condition {
    /// The item has the attribute.
    Exists(AttributePath),
    /// The item has no such attribute (an absent item has none).
    Absent(AttributePath),
    Is(AttributePath, Compare, Value),
    All(Vec<Condition>),
    Any(Vec<Condition>),
}

/// An attribute's path: its names joined with `.` (a member of a map), as written. A schema's
/// constant is held as it is, with no copy: the rate limits build a condition on every request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttributePath(Cow<'static, str>);

impl AttributePath {
    /// The path's names, outermost first.
    pub fn names(&self) -> std::str::Split<'_, char> {
        self.0.split('.')
    }
}

impl From<&'static str> for AttributePath {
    fn from(path: &'static str) -> Self {
        Self(Cow::Borrowed(path))
    }
}

impl From<String> for AttributePath {
    fn from(path: String) -> Self {
        Self(Cow::Owned(path))
    }
}

impl Condition {
    /// `attribute` (a `.`-separated path) compared with `value`.
    pub fn is(
        attribute: impl Into<AttributePath>,
        compare: Compare,
        value: impl Into<Value>,
    ) -> Self {
        Self::Is(attribute.into(), compare, value.into())
    }

    pub fn eq(attribute: impl Into<AttributePath>, value: impl Into<Value>) -> Self {
        Self::is(attribute, Compare::Eq, value)
    }

    pub fn exists(attribute: impl Into<AttributePath>) -> Self {
        Self::Exists(attribute.into())
    }

    pub fn absent(attribute: impl Into<AttributePath>) -> Self {
        Self::Absent(attribute.into())
    }

    /// `attribute` equals `value`, or is absent when there is no value.
    pub fn eq_or_absent(
        attribute: impl Into<AttributePath>,
        value: Option<impl Into<Value>>,
    ) -> Self {
        match value {
            Some(value) => Self::eq(attribute, value),
            None => Self::absent(attribute),
        }
    }

    /// The version `attribute` of an item is `version`, as a write read it (0: absent, as on an
    /// item not written yet), so that the write applies only to what it decided on.
    pub fn version_as_read(attribute: impl Into<AttributePath>, version: u64) -> Self {
        match version {
            0 => Self::absent(attribute),
            version => Self::eq(attribute, version),
        }
    }

    /// The item is new: it has no partition key.
    pub fn new_item() -> Self {
        Self::absent(crate::schema::PK)
    }

    pub fn and(self, other: Condition) -> Self {
        match self {
            Self::All(mut all) => {
                all.push(other);
                Self::All(all)
            }
            one => Self::All(vec![one, other]),
        }
    }

    pub fn or(self, other: Condition) -> Self {
        Self::Any(vec![self, other])
    }

    /// Whether the condition holds for `item` (`None`: there is no item), as DynamoDB decides it.
    pub fn holds(&self, item: Option<&dyn Attributes>) -> bool {
        let get = |path: &AttributePath| -> Option<Value> {
            let item = item?;
            // Most paths are one name, read as it is (every rate-limited request of local-api
            // evaluates a condition); the others are a name or two, on the stack, not in a Vec.
            if !path.0.contains('.') {
                return item.attribute(&[&path.0]);
            }
            let mut names = [""; 4];
            let mut len = 0;
            for name in path.names() {
                let Some(slot) = names.get_mut(len) else {
                    return item.attribute(&path.names().collect::<Vec<_>>());
                };
                *slot = name;
                len += 1;
            }
            item.attribute(&names[..len])
        };
        match self {
            Self::Exists(path) => get(path).is_some(),
            Self::Absent(path) => get(path).is_none(),
            Self::Is(path, compare, value) => match (get(path), value) {
                (Some(found @ Value::N(_)), Value::N(_))
                | (Some(found @ Value::S(_)), Value::S(_)) => match compare {
                    Compare::Eq => &found == value,
                    Compare::Lt => &found < value,
                    Compare::Le => &found <= value,
                    Compare::Gt => &found > value,
                    Compare::Ge => &found >= value,
                },
                _ => false,
            },
            Self::All(all) => all.iter().all(|condition| condition.holds(item)),
            Self::Any(any) => any.iter().any(|condition| condition.holds(item)),
        }
    }
}

/// An item of the in-memory store as DynamoDB would store it: the value of an attribute (a path
/// of names into maps), `None` when absent.
pub trait Attributes {
    fn attribute(&self, path: &[&str]) -> Option<Value>;
}

/// The item `item` would be on DynamoDB, checked against `condition` before a write: the
/// in-memory store's refusal when it does not hold (it decides under one lock, so a condition
/// that fails there means the declaration and the rule it enforces disagree).
pub fn require(
    what: &str,
    condition: &Condition,
    item: Option<&dyn Attributes>,
) -> Result<(), crate::StoreError> {
    if condition.holds(item) {
        Ok(())
    } else {
        Err(crate::StoreError::internal(format!(
            "{what}: the write's condition does not hold: {condition:?}"
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Item(Vec<(&'static str, Value)>);

    impl Attributes for Item {
        fn attribute(&self, path: &[&str]) -> Option<Value> {
            let name = path.join(".");
            self.0
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| v.clone())
        }
    }

    #[test]
    fn conditions_hold_as_dynamodb_decides_them() {
        let item = Item(vec![
            ("remaining", Value::N(2)),
            ("status", "active".into()),
            ("s0.purchaseId", "p1".into()),
            ("a.b.c.d.e", Value::N(5)),
        ]);
        let item: Option<&dyn Attributes> = Some(&item);
        assert!(Condition::is("remaining", Compare::Ge, 1u64).holds(item));
        assert!(!Condition::is("remaining", Compare::Ge, 3u64).holds(item));
        assert!(Condition::eq("s0.purchaseId", "p1").holds(item));
        // Paths of any depth, past the names read on the stack.
        assert!(Condition::eq("a.b.c.d.e", 5u64).holds(item));
        assert!(Condition::absent("a.b.c.d.f").holds(item));
        // A missing attribute compares false; a number never equals a string.
        assert!(!Condition::is("missing", Compare::Lt, 5u64).holds(item));
        assert!(!Condition::eq("status", 1u64).holds(item));
        assert!(Condition::absent("max").holds(item));
        assert!(
            Condition::eq("status", "active")
                .and(Condition::absent("max").or(Condition::eq("max", 2u64)))
                .holds(item)
        );
        assert!(
            !Condition::eq("status", "active")
                .and(Condition::exists("max"))
                .holds(item)
        );
        // No item: only absences hold.
        assert!(Condition::new_item().holds(None));
        assert!(!Condition::exists("PK").holds(None));
        assert!(!Condition::is("remaining", Compare::Ge, 0u64).holds(None));
    }
}
