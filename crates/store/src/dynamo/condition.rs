//! A declared [`Condition`] as DynamoDB takes it: a `ConditionExpression` with its own `#c<n>`
//! names and `:c<n>` values, which never collide with an update expression's; and what a
//! single-item conditional write answered ([`written`]).

use aws_sdk_dynamodb::error::{ProvideErrorMetadata, SdkError};
use aws_sdk_dynamodb::operation::delete_item::DeleteItemError;
use aws_sdk_dynamodb::operation::put_item::PutItemError;
use aws_sdk_dynamodb::operation::update_item::UpdateItemError;
use aws_sdk_dynamodb::types::AttributeValue;
use aws_smithy_runtime_api::client::orchestrator::HttpResponse;

use super::{classify, number, s};
use crate::StoreError;
use crate::condition::{AttributePath, Condition, Value};

/// A single-item write's error that says its condition did not hold.
pub(crate) trait ConditionFailed {
    fn condition_failed(&self) -> bool;
}

impl ConditionFailed for UpdateItemError {
    fn condition_failed(&self) -> bool {
        self.is_conditional_check_failed_exception()
    }
}

impl ConditionFailed for PutItemError {
    fn condition_failed(&self) -> bool {
        self.is_conditional_check_failed_exception()
    }
}

impl ConditionFailed for DeleteItemError {
    fn condition_failed(&self) -> bool {
        self.is_conditional_check_failed_exception()
    }
}

/// What a single-item conditional write answered: `Some(output)` when it wrote, `None` when its
/// condition did not hold (it wrote nothing), any other failure classified as `operation`'s.
pub(crate) fn written<T, E>(
    operation: &str,
    result: Result<T, SdkError<E, HttpResponse>>,
) -> Result<Option<T>, StoreError>
where
    E: ConditionFailed + ProvideErrorMetadata + std::error::Error + Send + Sync + 'static,
{
    match result {
        Ok(output) => Ok(Some(output)),
        Err(error)
            if error
                .as_service_error()
                .is_some_and(ConditionFailed::condition_failed) =>
        {
            Ok(None)
        }
        Err(error) => Err(classify(operation, error)),
    }
}

/// A rendered condition: the expression and the names and values it uses.
#[derive(Debug, Default)]
pub(crate) struct Rendered {
    pub expression: String,
    pub names: Vec<(String, String)>,
    pub values: Vec<(String, AttributeValue)>,
}

impl Rendered {
    fn name(&mut self, name: &str) -> String {
        if let Some((placeholder, _)) = self.names.iter().find(|(_, n)| n == name) {
            return placeholder.clone();
        }
        let placeholder = format!("#c{}", self.names.len());
        self.names.push((placeholder.clone(), name.to_owned()));
        placeholder
    }

    fn path(&mut self, path: &AttributePath) -> String {
        path.names()
            .map(|name| self.name(name))
            .collect::<Vec<_>>()
            .join(".")
    }

    fn value(&mut self, value: &Value) -> String {
        let placeholder = format!(":c{}", self.values.len());
        let value = match value {
            Value::N(n) => number(n),
            Value::S(text) => s(text),
        };
        self.values.push((placeholder.clone(), value));
        placeholder
    }

    fn write(&mut self, condition: &Condition) -> String {
        let joined = |this: &mut Self, parts: &[Condition], with: &str| {
            let parts: Vec<String> = parts.iter().map(|part| this.write(part)).collect();
            format!("({})", parts.join(with))
        };
        match condition {
            Condition::Exists(path) => format!("attribute_exists({})", self.path(path)),
            Condition::Absent(path) => format!("attribute_not_exists({})", self.path(path)),
            Condition::Is(path, compare, value) => {
                let (path, value) = (self.path(path), self.value(value));
                format!("{path} {} {value}", compare.symbol())
            }
            Condition::All(all) => joined(self, all, " AND "),
            Condition::Any(any) => joined(self, any, " OR "),
        }
    }
}

/// `put` under `condition`: its expression, names and values (no values map for a condition
/// without values: DynamoDB refuses an empty one).
pub(crate) fn put_under(
    put: aws_sdk_dynamodb::operation::put_item::builders::PutItemFluentBuilder,
    condition: &Condition,
) -> aws_sdk_dynamodb::operation::put_item::builders::PutItemFluentBuilder {
    let rendered = render(condition);
    put.condition_expression(rendered.expression)
        .set_expression_attribute_names(Some(rendered.names.into_iter().collect()))
        .set_expression_attribute_values(
            (!rendered.values.is_empty()).then(|| rendered.values.into_iter().collect()),
        )
}

/// `condition` as a `ConditionExpression`.
pub(crate) fn render(condition: &Condition) -> Rendered {
    let mut rendered = Rendered::default();
    rendered.expression = rendered.write(condition);
    rendered
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::condition::Compare;

    #[test]
    fn a_condition_renders_with_its_own_placeholders() {
        let condition = Condition::eq("status", "active")
            .and(Condition::absent("endsAt").or(Condition::is("endsAt", Compare::Gt, 5u64)))
            .and(Condition::eq("s1.purchaseId", "p"));
        let rendered = render(&condition);
        assert_eq!(
            rendered.expression,
            "(#c0 = :c0 AND (attribute_not_exists(#c1) OR #c1 > :c1) AND #c2.#c3 = :c2)"
        );
        assert_eq!(
            rendered.names,
            [
                ("#c0".to_owned(), "status".to_owned()),
                ("#c1".to_owned(), "endsAt".to_owned()),
                ("#c2".to_owned(), "s1".to_owned()),
                ("#c3".to_owned(), "purchaseId".to_owned()),
            ]
        );
        assert_eq!(
            rendered.values,
            [
                (":c0".to_owned(), s("active")),
                (":c1".to_owned(), number(5)),
                (":c2".to_owned(), s("p")),
            ]
        );
    }
}
