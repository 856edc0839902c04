//! Which shapes a zone mapping's body takes for each provider: `output` and `offerings` are each
//! one of the clouds' outputs (`CloudOutput`, `OfferingsOutput`), and the `provider` says which
//! cloud's. JSON Schema says so with `if`/`then`/`else`, which utoipa has no builder for, so
//! [`add`] writes it into the generated `ZoneMappingRequest`.
//!
//! Generators ignore these keywords (the types they make stay as they were); validators (a
//! validating proxy, a property-based tester) read them, and no longer take an AWS mapping
//! with an Azure output, or a GCP mapping without offerings, for a valid body.

use serde_json::{json, Value};

use crate::mappings::MAX_OUTPUTS;
use crate::offerings::{MAX_MACHINE_TYPES, MAX_SKUS};

/// Adds the per-provider conditions to `components.schemas.ZoneMappingRequest` of `doc`.
pub(super) fn add(doc: &mut Value) {
    let Some(request) = doc
        .pointer_mut("/components/schemas/ZoneMappingRequest")
        .and_then(Value::as_object_mut)
    else {
        panic!("the document must hold the ZoneMappingRequest schema");
    };
    let names: Vec<String> = request
        .get("properties")
        .and_then(Value::as_object)
        .map(|properties| properties.keys().cloned().collect())
        .unwrap_or_default();
    let mut conditions = conditions();
    name_every_property(&mut conditions, &names);
    for key in ["if", "then", "else"] {
        request.insert(key.to_owned(), conditions[key].take());
    }
}

/// Names each of the body's properties in every branch, as anything (`{}`) where the branch
/// does not constrain it: a checker that treats a branch's unnamed properties as unexpected
/// (Redocly's example check does) then still takes the document's own example.
fn name_every_property(branch: &mut Value, names: &[String]) {
    if let Some(properties) = branch.get_mut("properties").and_then(Value::as_object_mut) {
        for name in names {
            properties.entry(name.clone()).or_insert_with(|| json!({}));
        }
    }
    for key in ["then", "else"] {
        if let Some(next) = branch.get_mut(key) {
            name_every_property(next, names);
        }
    }
}

fn schema(name: &str) -> Value {
    json!({"$ref": format!("#/components/schemas/{name}")})
}

fn array(items: Value, max: usize, min: usize) -> Value {
    let mut array = json!({"type": "array", "items": items, "maxItems": max});
    if min > 0 {
        array["minItems"] = json!(min);
    }
    array
}

fn provider_is(provider: &str) -> Value {
    json!({"properties": {"provider": {"const": provider}}, "required": ["provider"]})
}

/// `aws`: the zones of one region's output or several; `azure`: a `list-locations` array;
/// otherwise the provider must be `gcp`, whose mapping holds offerings alone (the server
/// refuses any other). An empty offerings array is a cloud's "nothing matched" for AWS and
/// Azure.
fn conditions() -> Value {
    let absent = json!({"type": "null"});
    json!({
        "if": provider_is("aws"),
        "then": {
            "required": ["output"],
            "properties": {
                "output": {"anyOf": [
                    schema("AwsDescribeOutput"),
                    array(schema("AwsDescribeOutput"), MAX_OUTPUTS, 1),
                ]},
                "offerings": {"anyOf": [
                    schema("AwsOfferingsOutput"),
                    array(schema("AwsOfferingsOutput"), MAX_OUTPUTS, 0),
                    absent,
                ]},
            },
        },
        "else": {
            "if": provider_is("azure"),
            "then": {
                "required": ["output"],
                "properties": {
                    "output": array(schema("AzureLocation"), MAX_OUTPUTS, 1),
                    "offerings": {"anyOf": [array(schema("AzureSku"), MAX_SKUS, 0), absent]},
                },
            },
            "else": {
                "required": ["provider", "offerings"],
                "properties": {
                    "provider": {"const": "gcp"},
                    "output": absent,
                    "offerings": array(schema("GcpMachineType"), MAX_MACHINE_TYPES, 1),
                },
            },
        },
    })
}
