//! The embedded engine on a real model, with schemas llguidance enforces as written (no lowering): a
//! recursive schema and an `allOf`, each with a bound the text contradicts, so only the grammar can
//! make the answer hold it.
#![cfg(feature = "llama-cpp")]

use crate::llama_common;

use llama_common::model;
use llm_extract::schema::dialect;
use llm_extract::{
    llm::{ChatRequest, Finish},
    schema::Dialect,
    Llm,
};
use serde_json::{json, Value};
use std::time::Duration;

async fn answer(schema: &Value, text: &str) -> (String, Finish) {
    assert_eq!(model().dialect(), Dialect::Generic);
    let sent = dialect::render(schema, model().dialect()).unwrap();
    let request = ChatRequest::new(text)
        .with_system("Answer with JSON only.")
        .with_schema("Answer", sent)
        .with_max_tokens(160);
    let response = tokio::time::timeout(Duration::from_secs(120), model().chat(request))
        .await
        .expect("the request did not finish in time")
        .unwrap();
    (response.text, response.finish)
}

fn parsed(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not one JSON value ({e}): {text}"))
}

/// Every node of a tree answer: a name of at most 4 chars, at most one child.
fn check_tree(node: &Value, depth: usize) -> usize {
    let name = node["name"].as_str().expect("a name");
    assert!(name.chars().count() <= 4, "{node}");
    let kids = node["kids"].as_array().expect("kids");
    assert!(kids.len() <= 1, "{node}");
    assert_eq!(node.as_object().unwrap().len(), 2, "{node}");
    kids.iter()
        .map(|kid| check_tree(kid, depth + 1))
        .max()
        .unwrap_or(depth)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recursive_schema_constrains_generation() {
    let tree = json!({
        "type": "object",
        "properties": {
            "name": { "type": "string", "maxLength": 4 },
            "kids": { "type": "array", "items": { "$ref": "#/$defs/Person" }, "maxItems": 1 }
        },
        "required": ["name", "kids"],
        "additionalProperties": false,
        "$defs": { "Person": { "$ref": "#" } }
    });
    let (text, finish) = answer(
        &tree,
        "The family line: Annabelle is the mother of Bartholomew, who is the father of Cornelius.",
    )
    .await;
    if finish == Finish::Length {
        // A small model may nest until the token limit: every node written so far still holds the
        // bounds, at every depth the recursion reached.
        let names: Vec<&str> = text.split("{\"name\": \"").skip(1).collect();
        assert!(names.len() >= 2, "{text}");
        for rest in &names[..names.len() - 1] {
            let name = rest.split('"').next().unwrap_or_default();
            assert!(name.chars().count() <= 4, "{name:?} in {text}");
            assert!(rest.contains("\"kids\": ["), "{text}");
        }
        assert!(!text.contains("}, {"), "a second child: {text}");
    } else {
        check_tree(&parsed(&text), 0);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_all_of_schema_constrains_generation() {
    let merged = json!({
        "allOf": [
            { "type": "object", "properties": { "age": { "type": "integer", "minimum": 100 } }, "required": ["age"] },
            { "properties": { "age": { "maximum": 120 }, "name": { "type": "string", "maxLength": 24 } },
              "required": ["name"], "additionalProperties": false }
        ]
    });
    let (text, _) = answer(&merged, "Ada Lovelace was 36 years old.").await;
    let value = parsed(&text);
    let age = value["age"].as_i64().expect("an integer age");
    assert!((100..=120).contains(&age), "{value}");
    assert!(
        value["name"]
            .as_str()
            .is_some_and(|n| n.chars().count() <= 24),
        "{value}"
    );
}
