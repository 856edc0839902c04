//! The OpenAPI document: up to date, deprecations, examples, parameters.

use super::*;

/// The checked-in `openapi.json` must equal the document generated from this crate. This is the
/// one test that pins the file (a review sees each change to the contract in its diff); other
/// tests compare against the generated document, not the file.
#[test]
fn openapi_json_is_up_to_date() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../openapi.json");
    let current = std::fs::read_to_string(&path).unwrap_or_default();
    let fresh = appzone_contract::openapi::document_json();
    if current != fresh {
        panic!(
            "openapi.json is stale: the contract crate changed.\n\
             Run `cargo xtask openapi` and commit openapi.json."
        );
    }
}

#[test]
fn a_deprecated_operation_is_marked_with_its_dates_and_headers_in_the_document() {
    use appzone_contract::openapi::{document, document_with};
    use appzone_contract::Deprecation;
    // No operation of this version is deprecated.
    assert!(appzone_contract::DEPRECATIONS.is_empty());
    assert!(!document().to_string().contains("\"deprecated\""));

    let deprecation = Deprecation {
        operation_id: "listZones",
        since: 1_798_761_600,
        sunset: Some(1_814_400_000),
    };
    let doc = document_with(&[deprecation]);
    let item = &doc["paths"]["/api/v1/providers/{providerId}/regions/{regionId}/zones"];
    for method in ["get", "head"] {
        let op = &item[method];
        assert_eq!(op["deprecated"], true, "{method}");
        let description = op["description"].as_str().unwrap();
        assert!(
            description.ends_with(
                "**Deprecated** since Fri, 01 Jan 2027 00:00:00 GMT: it keeps working \
                 unchanged, and its answers carry `Deprecation: @1798761600`. It stops \
                 answering on Thu, 01 Jul 2027 00:00:00 GMT (`Sunset` header)."
            ),
            "{description}"
        );
        for (status, response) in op["responses"].as_object().unwrap() {
            let headers = &response["headers"];
            assert_eq!(
                headers["Deprecation"]["required"], true,
                "{method} {status}"
            );
            assert_eq!(headers["Deprecation"]["example"], "@1798761600");
            assert_eq!(
                headers["Sunset"]["example"],
                "Thu, 01 Jul 2027 00:00:00 GMT"
            );
        }
    }
    // Only that operation.
    let others = doc["paths"]
        .as_object()
        .unwrap()
        .iter()
        .filter(|(path, _)| !path.ends_with("/zones"))
        .flat_map(|(_, item)| item.as_object().unwrap().values());
    for op in others {
        assert!(op.get("deprecated").is_none(), "{}", op["operationId"]);
    }
    // Without a sunset date, no Sunset header is promised.
    let undated = document_with(&[Deprecation {
        sunset: None,
        ..deprecation
    }]);
    let op = &undated["paths"]["/api/v1/providers/{providerId}/regions/{regionId}/zones"]["get"];
    assert!(op["responses"]["200"]["headers"].get("Sunset").is_none());
    assert!(op["description"]
        .as_str()
        .unwrap()
        .ends_with("No removal date is set yet."));
}

/// A portal (Swagger UI, Postman) shows each response with an example: every response with a
/// JSON body has one of its own (not the `ErrorBody` schema's, which would put a
/// `profile_not_found` under a 413), each example is valid against the response's schema, and
/// an error example's `error_code` is one the response documents: a code of its status (for
/// `default`, of a status the operation does not list), named in the response's description.
#[test]
fn every_json_response_has_its_own_valid_example_with_a_code_of_its_status() {
    let doc = appzone_contract::openapi::document();
    let mut checked = 0;
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, operation) in item.as_object().unwrap() {
            let responses = operation["responses"].as_object().unwrap();
            for (status, response) in responses {
                let place = format!("{method} {path} {status}");
                let Some(media) = response.get("content").map(|c| &c["application/json"]) else {
                    continue;
                };
                let schema = &media["schema"];
                let is_error = schema["$ref"] == "#/components/schemas/ErrorBody";
                let mut examples: Vec<(String, &serde_json::Value)> = Vec::new();
                if let Some(example) = media.get("example") {
                    examples.push((String::new(), example));
                }
                for (name, example) in media
                    .get("examples")
                    .and_then(|e| e.as_object())
                    .into_iter()
                    .flatten()
                {
                    examples.push((name.clone(), &example["value"]));
                }
                if examples.is_empty() && !is_error {
                    // A listing's own schema (one per operation) carries its example.
                    let schema = resolve(&doc, schema);
                    if let Some(example) = schema.get("example") {
                        examples.push(("(schema)".to_owned(), example));
                    }
                }
                assert!(!examples.is_empty(), "{place}: no example of its own");
                for (name, example) in examples {
                    let at = format!("{place} example {name:?}");
                    if let Err(why) = validate(&doc, schema, example) {
                        panic!("{at} does not match the response's schema: {why}\n{example}");
                    }
                    if !is_error {
                        continue;
                    }
                    let code = example["error_code"].as_str().unwrap();
                    let code_status = ErrorCode::from_wire(code).status().as_u16().to_string();
                    if status == "default" {
                        assert!(
                            !responses.contains_key(&code_status),
                            "{at}: {code} comes with {code_status}, which the operation lists \
                             itself"
                        );
                    } else {
                        assert_eq!(&code_status, status, "{at}: {code} is a {code_status} code");
                    }
                    let description = response["description"].as_str().unwrap();
                    assert!(
                        description.contains(&format!("`{code}`")),
                        "{at}: the description does not name `{code}`: {description}"
                    );
                    checked += 1;
                }
            }
        }
    }
    eprintln!("{checked} error examples checked");
    assert!(checked >= 40, "{checked}");
}

/// `schema`, or the schema its local `$ref` names.
fn resolve<'d>(doc: &'d serde_json::Value, schema: &'d serde_json::Value) -> &'d serde_json::Value {
    match schema.get("$ref").and_then(|r| r.as_str()) {
        Some(reference) => {
            let pointer = reference.strip_prefix('#').expect("a local $ref");
            resolve(
                doc,
                doc.pointer(pointer)
                    .unwrap_or_else(|| panic!("no {reference}")),
            )
        }
        None => schema,
    }
}

/// Validates `value` against `schema` for the JSON Schema keywords the document uses; a
/// keyword it does not know fails, so nothing is skipped silently.
fn validate(
    doc: &serde_json::Value,
    schema: &serde_json::Value,
    value: &serde_json::Value,
) -> Result<(), String> {
    use serde_json::Value;
    let Some(keywords) = schema.as_object() else {
        return match schema {
            Value::Bool(true) => Ok(()),
            _ => Err(format!("schema {schema} refuses everything")),
        };
    };
    for (keyword, rule) in keywords {
        let fail = |why: String| Err(format!("{keyword}: {why}"));
        match keyword.as_str() {
            "$ref" => validate(doc, resolve(doc, schema), value)?,
            "description" | "title" | "example" | "examples" | "format" | "deprecated" => {}
            "type" => {
                let types: Vec<&str> = match rule {
                    Value::String(t) => vec![t.as_str()],
                    Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
                    _ => return fail(format!("bad type {rule}")),
                };
                let matches = |t: &str| match t {
                    "string" => value.is_string(),
                    "object" => value.is_object(),
                    "array" => value.is_array(),
                    "integer" => value.is_i64() || value.is_u64(),
                    "number" => value.is_number(),
                    "boolean" => value.is_boolean(),
                    "null" => value.is_null(),
                    _ => false,
                };
                if !types.iter().any(|t| matches(t)) {
                    return fail(format!("{value} is not {types:?}"));
                }
            }
            "enum" => {
                if !list(rule)?.contains(value) {
                    return fail(format!("{value} is not one of {rule}"));
                }
            }
            "const" => {
                if rule != value {
                    return fail(format!("{value} is not {rule}"));
                }
            }
            // `then` or `else` by whether `if` holds; read with `if`, never alone.
            "if" => {
                let branch = if validate(doc, rule, value).is_ok() {
                    "then"
                } else {
                    "else"
                };
                if let Some(branch_schema) = schema.get(branch) {
                    validate(doc, branch_schema, value).map_err(|e| format!("{branch}: {e}"))?;
                }
            }
            "then" | "else" => {}
            "anyOf" | "oneOf" => {
                let passing = list(rule)?
                    .iter()
                    .filter(|branch| validate(doc, branch, value).is_ok())
                    .count();
                let ok = if keyword == "oneOf" {
                    passing == 1
                } else {
                    passing >= 1
                };
                if !ok {
                    return fail(format!("{value} matches {passing} branches"));
                }
            }
            "allOf" => {
                for branch in list(rule)? {
                    validate(doc, branch, value)?;
                }
            }
            "required" => {
                for name in list(rule)? {
                    if value.is_object() && value.get(name.as_str().unwrap_or_default()).is_none() {
                        return fail(format!("{name} is missing"));
                    }
                }
            }
            "properties" => {
                for (name, property) in rule.as_object().ok_or("properties: not an object")? {
                    if let Some(field) = value.get(name) {
                        validate(doc, property, field).map_err(|e| format!("{name}: {e}"))?;
                    }
                }
            }
            "additionalProperties" => {
                let declared = schema["properties"].as_object();
                for (name, field) in value.as_object().into_iter().flatten() {
                    if declared.is_some_and(|d| d.contains_key(name)) {
                        continue;
                    }
                    validate(doc, rule, field).map_err(|e| format!("{name}: {e}"))?;
                }
            }
            "items" => {
                for item in value.as_array().into_iter().flatten() {
                    validate(doc, rule, item)?;
                }
            }
            "minLength" | "maxLength" => {
                if let Some(text) = value.as_str() {
                    let n = text.chars().count() as u64;
                    let bound = rule.as_u64().ok_or("a bound that is not a number")?;
                    if (keyword == "minLength" && n < bound)
                        || (keyword == "maxLength" && n > bound)
                    {
                        return fail(format!("{n} characters"));
                    }
                }
            }
            "minItems" | "maxItems" => {
                if let Some(items) = value.as_array() {
                    let n = items.len() as u64;
                    let bound = rule.as_u64().ok_or("a bound that is not a number")?;
                    if (keyword == "minItems" && n < bound) || (keyword == "maxItems" && n > bound)
                    {
                        return fail(format!("{n} items"));
                    }
                }
            }
            "minimum" | "maximum" => {
                if let Some(n) = value.as_f64() {
                    let bound = rule.as_f64().ok_or("a bound that is not a number")?;
                    if (keyword == "minimum" && n < bound) || (keyword == "maximum" && n > bound) {
                        return fail(format!("{n}"));
                    }
                }
            }
            "pattern" => {
                if let Some(text) = value.as_str() {
                    let pattern = regex::Regex::new(rule.as_str().unwrap_or_default())
                        .map_err(|e| format!("pattern {rule}: {e}"))?;
                    if !pattern.is_match(text) {
                        return fail(format!("{text:?} does not match {rule}"));
                    }
                }
            }
            _ => return fail(format!("the test's validator does not know `{keyword}`")),
        }
    }
    Ok(())
}

/// Every parameter has an example a request can be built from (Postman's "Example" parameter
/// generation, Swagger UI for path parameters): a path parameter its own `example`, naming what
/// `serve --demo` holds; a header its schema's `examples`, which Swagger UI does not pre-fill
/// (its "Try it out" sends no header the reader did not type). Each is valid for its schema, and
/// `If-None-Match`'s is an entity tag, not `*` (which would answer every listing 304).
#[test]
fn every_parameter_has_a_valid_example() {
    let doc = appzone_contract::openapi::document();
    let mut checked = 0;
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, operation) in item.as_object().unwrap() {
            for parameter in operation["parameters"].as_array().into_iter().flatten() {
                let name = parameter["name"].as_str().unwrap();
                let at = format!("{method} {path} {name}");
                let schema = &parameter["schema"];
                let example = match parameter["in"].as_str().unwrap() {
                    "path" => parameter.get("example"),
                    _ => {
                        assert!(
                            parameter.get("example").is_none(),
                            "{at}: Swagger UI would pre-fill and send it"
                        );
                        resolve(&doc, schema)["examples"].get(0)
                    }
                };
                let example = example.unwrap_or_else(|| panic!("{at}: no example"));
                if let Err(why) = validate(&doc, schema, example) {
                    panic!("{at}: example {example} does not match its schema: {why}");
                }
                assert_ne!(example, "*", "{at}");
                checked += 1;
            }
        }
    }
    assert_eq!(
        appzone_contract::openapi::EXAMPLE_PROFILE_ID
            .parse::<ProfileId>()
            .map(|p| p.to_string()),
        Ok(appzone_contract::openapi::EXAMPLE_PROFILE_ID.to_owned())
    );
    assert!(checked >= 20, "{checked}");
}

/// The server accepts any `X-Request-Id` (it echoes a valid one and replaces any other), so the
/// request header's schema refuses nothing: a validating proxy or a fuzzer must not take an
/// accepted value for a schema violation. The response header keeps the pattern the server's
/// ids always match.
#[test]
fn the_request_id_sent_is_any_string_and_the_one_answered_has_the_pattern() {
    let doc = appzone_contract::openapi::document();
    let mut sent = 0;
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, operation) in item.as_object().unwrap() {
            for parameter in operation["parameters"].as_array().into_iter().flatten() {
                if parameter["name"] != "X-Request-Id" {
                    continue;
                }
                let schema = resolve(&doc, &parameter["schema"]);
                for anything in ["", "two words", "é", &"x".repeat(300)] {
                    assert!(
                        validate(&doc, schema, &serde_json::json!(anything)).is_ok(),
                        "{method} {path}: the X-Request-Id sent refuses {anything:?}"
                    );
                }
                let description = schema["description"].as_str().unwrap();
                assert!(
                    description.contains("replaced by a new id"),
                    "{description}"
                );
                sent += 1;
            }
            for (status, response) in operation["responses"].as_object().unwrap() {
                let header = &response["headers"]["X-Request-Id"];
                let schema = resolve(&doc, &header["schema"]);
                assert!(
                    schema["pattern"].is_string(),
                    "{method} {path} {status}: the X-Request-Id answered has no pattern"
                );
                assert!(validate(&doc, schema, &serde_json::json!("two words")).is_err());
            }
        }
    }
    // 7 GETs with their HEADs, and 3 other operations.
    assert_eq!(sent, 17, "every operation takes X-Request-Id");
}

/// The array a keyword's value must be.
fn list(rule: &serde_json::Value) -> Result<&Vec<serde_json::Value>, String> {
    rule.as_array()
        .ok_or_else(|| format!("{rule} is not an array"))
}

/// The document states the clouds' output shapes: what their CLIs print is valid, and bodies
/// that are no output (`[]`, `[{}]`, which a fuzzer generated as valid while the document said
/// only "an object or an array", and the server refused) are not.
#[test]
fn cloud_output_schema_admits_the_clouds_outputs_and_refuses_what_is_none() {
    let doc = appzone_contract::openapi::document();
    let schema = &doc["components"]["schemas"]["CloudOutput"];
    let read = |text: &str| -> serde_json::Value { serde_json::from_str(text).unwrap() };
    let aws = read(include_str!(
        "../../../test-support/fixtures/describe-us-east-1.json"
    ));
    let azure = read(include_str!(
        "../../../test-support/fixtures/list-locations-sample.json"
    ));
    let no_zones = serde_json::json!([{"name": "global", "availabilityZoneMappings": null}]);
    for output in [aws.clone(), serde_json::json!([aws]), azure, no_zones] {
        assert!(validate(&doc, schema, &output).is_ok(), "{output}");
    }
    for output in [
        serde_json::json!([]),
        serde_json::json!([{}]),
        serde_json::json!({}),
        serde_json::json!({"AvailabilityZones": []}),
        serde_json::json!({"AvailabilityZones": [{"ZoneName": "us-east-1a"}]}),
        serde_json::json!([{"name": "eastus", "availabilityZoneMappings": [{"logicalZone": "1"}]}]),
    ] {
        assert!(validate(&doc, schema, &output).is_err(), "{output}");
    }
}

/// The body schema says which cloud's output each provider takes, as the server reads it: each
/// cloud's own outputs (and the empty lists their CLIs print when nothing matches) are valid
/// under its provider, another cloud's are not, and neither is a GCP mapping with zones or
/// without offerings (bodies a fuzzer generated as valid and the server refused).
#[test]
fn the_zone_mapping_body_takes_each_providers_own_outputs_and_no_other_clouds() {
    use serde_json::json;
    let doc = appzone_contract::openapi::document();
    let schema = &doc["components"]["schemas"]["ZoneMappingRequest"];
    let read = |text: &str| -> serde_json::Value { serde_json::from_str(text).unwrap() };
    let aws = read(include_str!(
        "../../../test-support/fixtures/describe-us-east-1.json"
    ));
    let azure = read(include_str!(
        "../../../test-support/fixtures/list-locations-sample.json"
    ));
    let aws_offerings = read(include_str!(
        "../../../test-support/fixtures/offerings/aws-offerings-az-id-us-east-1.json"
    ));
    let skus = read(include_str!(
        "../../../test-support/fixtures/offerings/azure-list-skus-eastus.json"
    ));
    let machine_types = read(include_str!(
        "../../../test-support/fixtures/offerings/gcp-machine-types-us-central1.json"
    ));
    let valid = [
        json!({"provider": "aws", "output": aws}),
        json!({"provider": "aws", "output": [aws], "offerings": aws_offerings, "label": "prod"}),
        json!({"provider": "aws", "output": aws, "offerings": [aws_offerings]}),
        json!({"provider": "aws", "output": aws, "offerings": {"InstanceTypeOfferings": []}}),
        json!({"provider": "aws", "output": aws, "offerings": null}),
        json!({"provider": "azure", "output": azure, "offerings": skus}),
        json!({"provider": "azure", "output": azure, "offerings": []}),
        json!({"provider": "gcp", "offerings": machine_types}),
    ];
    for body in &valid {
        if let Err(why) = validate(&doc, schema, body) {
            let body: String = body.to_string().chars().take(200).collect();
            panic!("refused: {why}: {body}");
        }
    }
    let invalid = [
        json!({"provider": "aws"}),
        json!({"provider": "aws", "output": azure}),
        json!({"provider": "aws", "output": aws, "offerings": skus}),
        json!({"provider": "azure", "output": aws}),
        json!({"provider": "azure", "output": azure, "offerings": aws_offerings}),
        json!({"provider": "azure", "offerings": skus}),
        json!({"provider": "gcp", "output": aws, "offerings": machine_types}),
        json!({"provider": "gcp"}),
        json!({"provider": "gcp", "offerings": []}),
        json!({"provider": "gcp", "offerings": skus}),
        json!({"provider": "oci", "offerings": machine_types}),
    ];
    for body in &invalid {
        assert!(
            validate(&doc, schema, body).is_err(),
            "admitted: {}",
            body.to_string().chars().take(200).collect::<String>()
        );
    }
}
