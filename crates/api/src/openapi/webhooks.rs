//! The document's `webhooks` section (OpenAPI 3.1; utoipa 5 has no field for it, so it is
//! written into the document's root extensions, which serialise flat): one entry per event type,
//! the envelope with that type's `data`, as a subscribed endpoint receives it, signed as
//! Standard Webhooks says (docs/events.md). Also the operators' IAM security scheme.

use serde_json::{Value, json};
use utoipa::openapi::extensions::Extensions;
use utoipa::openapi::security::{ApiKey, ApiKeyValue, SecurityScheme};

use domain::events::EventType;

/// The name of the operators' security scheme (API Gateway's `AWS_IAM` authorizer).
pub const OPERATOR_IAM: &str = "operatorIam";

/// The operators' scheme: a SigV4 signature, checked by API Gateway before the function runs.
pub(super) fn add_operator_scheme(openapi: &mut utoipa::openapi::OpenApi) {
    let mut value = ApiKeyValue::with_description(
        "Authorization",
        "A SigV4 signature (AWS IAM) of an identity allowed `execute-api:Invoke` on the route: \
         API Gateway's `AWS_IAM` authorizer checks it before the function runs. local-api: \
         `Bearer <the operator key it prints>`.",
    );
    value.extensions = Some(Extensions::from_iter([(
        "x-amazon-apigateway-authtype",
        "awsSigv4",
    )]));
    openapi
        .components
        .get_or_insert_with(Default::default)
        .add_security_scheme(OPERATOR_IAM, SecurityScheme::ApiKey(ApiKey::Header(value)));
}

/// An operators' route answers 401 when no credentials come at all (local-api: no key; deployed,
/// API Gateway refuses an unsigned request before the function): the shared response.
pub(super) fn operators_may_answer_401(document: &mut utoipa::openapi::OpenApi) {
    use utoipa::ToResponse;
    let name = super::responses::Unauthorized::response().0;
    for operation in super::operations_mut(document) {
        let operators = operation.security.as_ref().is_some_and(|schemes| {
            serde_json::to_value(schemes)
                .is_ok_and(|value| value.to_string().contains(OPERATOR_IAM))
        });
        if operators {
            operation
                .responses
                .responses
                .entry("401".to_owned())
                .or_insert_with(|| {
                    utoipa::openapi::RefOr::Ref(utoipa::openapi::Ref::from_response_name(name))
                });
        }
    }
}

/// A Standard Webhooks header of every delivery.
fn header(name: &str, description: &str) -> Value {
    json!({"name": name, "in": "header", "required": true, "description": description,
           "schema": {"type": "string"}})
}

/// The name of type `event_type`'s data schema in `components/schemas`.
fn data_schema_name(event_type: EventType) -> String {
    format!("{event_type:?}Data")
}

/// Adds each type's data schema to the components and its entry to `webhooks`.
pub(super) fn add_webhooks(document: &mut utoipa::openapi::OpenApi) {
    let components = document.components.get_or_insert_with(Default::default);
    let mut webhooks = serde_json::Map::new();
    for (event_type, description, schema) in EventType::catalogue() {
        let name = data_schema_name(event_type);
        components.schemas.insert(name.clone(), schema);
        let kind: &'static str = event_type.subject_kind().into();
        let body = json!({"allOf": [
            {"$ref": "#/components/schemas/Event"},
            {"type": "object", "properties": {
                "type": {"const": event_type.as_str()},
                "subject": {"type": "object", "properties": {"kind": {"const": kind}}},
                "data": {"$ref": format!("#/components/schemas/{name}")},
            }},
        ]});
        webhooks.insert(
            event_type.as_str().to_owned(),
            json!({"post": {
                "operationId": format!("on{event_type:?}"),
                "tags": ["Webhooks"],
                "summary": description,
                "description": format!("{description} Subject: the {kind}."),
                "parameters": [
                    header("webhook-id", "The event's id: the same on every retry (deduplicate on it)."),
                    header("webhook-timestamp", "When this attempt was signed, in Unix seconds: refuse one more than 5 minutes from your clock."),
                    header("webhook-signature", "`v1,<base64 HMAC-SHA256 of {webhook-id}.{webhook-timestamp}.{body}>` with the endpoint's `whsec_` secret; during a rotation one per secret, space-separated."),
                ],
                "requestBody": {"required": true, "content": {"application/json": {"schema": body}}},
                "responses": {
                    "2XX": {"description": "Received: any 2xx ends the delivery."},
                    "410": {"description": "Gone: the endpoint is disabled; no more deliveries."},
                    "429": {"description": "Later: the next attempt waits `Retry-After` (as for 502 and 504)."},
                    "default": {"description": "Any other answer, a timeout (15 s) or a redirect: retried on the schedule (docs/events.md)."},
                },
            }}),
        );
    }
    document
        .extensions
        .get_or_insert_with(Default::default)
        .insert("webhooks".to_owned(), Value::Object(webhooks));
}
