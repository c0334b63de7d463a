//! `#[serde(flatten)]` of a struct and of a map derives: the struct's fields join the outer ones, the
//! map's values become `additionalProperties`.

use llm_extract::{Extract, Schema};
use serde::Deserialize;
use std::collections::HashMap;

#[derive(Extract, Deserialize)]
struct Address {
    city: String,
}

#[derive(Extract, Deserialize)]
struct Person {
    name: String,
    #[serde(flatten)]
    address: Address,
    #[serde(flatten)]
    extra: HashMap<String, String>,
}

#[test]
fn derives() {
    let schema = Person::json_schema();
    assert_eq!(schema["required"], serde_json::json!(["name", "city"]));
    assert_eq!(schema["additionalProperties"]["type"], "string");
}
