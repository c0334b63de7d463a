//! A runtime schema through `Extractor::with_schema` gives, method for method, the values the typed
//! methods give for the type whose schema it is: both run the same generic code.

use futures_util::StreamExt;
use llm_extract::extract::{DocumentEvent, Extractor, PartialEvent};
use llm_extract::llm::{from_fn, ChatRequest, ChatResponse, Role};
use llm_extract::{DynamicSchema, Extract, Llm, Schema};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

#[derive(Extract, Deserialize, Serialize, Debug, Clone, PartialEq)]
struct Person {
    /// The name as the text writes it.
    #[extract(grounded, key)]
    name: String,
    age: Option<u32>,
}

const TEXT: &str = "Ada Lovelace, 36, wrote to Charles Babbage. Ada Lovelace again.";

/// A stand-in model: one person for one value, and for a list every person the text it was sent
/// names (Ada twice: the copies merge on the key), in the list shape.
fn model() -> impl Llm {
    from_fn(|request: ChatRequest| {
        let text = request
            .messages
            .iter()
            .filter(|m| m.role == Role::User)
            .map(|m| m.content.clone())
            .collect::<String>();
        let list = request
            .schema
            .as_ref()
            .is_some_and(|schema| schema.pointer("/properties/items").is_some());
        let answer = if list {
            let mut items = Vec::new();
            if text.contains("Ada Lovelace") {
                items.push(json!({"name": "Ada Lovelace", "age": null}));
            }
            if text.contains("Charles Babbage") {
                items.push(json!({"name": "Charles Babbage", "age": null}));
            }
            if text.contains("Ada Lovelace, 36") {
                items.push(json!({"name": "Ada Lovelace", "age": 36}));
            }
            json!({ "items": items }).to_string()
        } else {
            json!({"name": "Ada Lovelace", "age": 36}).to_string()
        };
        async move { Ok(ChatResponse::new(answer)) }
    })
}

fn json<T: Serialize>(value: &T) -> Value {
    serde_json::to_value(value).unwrap()
}

#[tokio::test]
async fn the_schema_view_gives_the_values_of_the_typed_methods() {
    let extractor = Extractor::new(model()).chunk_bytes(64);
    let dynamic = DynamicSchema::from_json(Person::schema().generic().clone()).unwrap();
    let views = [
        extractor.with_schema(Person::schema()),
        extractor.with_schema(&dynamic),
    ];
    for view in views {
        let typed = extractor.extract::<Person>(TEXT).await.unwrap();
        let value = view.extract(TEXT).await.unwrap();
        assert_eq!(value.value, json(&typed.value));
        assert_eq!(value.report.attempts.len(), typed.report.attempts.len());

        let typed = extractor.extract_all::<Person>(TEXT).await.unwrap();
        let values = view.extract_all(TEXT).await.unwrap();
        assert_eq!(json(&values.value), json(&typed.value));
        assert_eq!(values.value.len(), 2);
        assert_eq!(values.report.conflicts.len(), typed.report.conflicts.len());

        let typed: Vec<Person> = extractor
            .extract_stream::<Person>(TEXT)
            .map(Result::unwrap)
            .collect()
            .await;
        let values: Vec<Value> = view
            .extract_stream(TEXT)
            .map(Result::unwrap)
            .collect()
            .await;
        assert_eq!(json(&values), json(&typed));

        let typed = extractor
            .extract_partial::<Person>(TEXT)
            .map(Result::unwrap)
            .collect::<Vec<_>>()
            .await
            .into_iter()
            .find_map(|event| match event {
                PartialEvent::Final { extraction, .. } => Some(extraction.value),
                _ => None,
            });
        let value = view
            .extract_partial(TEXT)
            .map(Result::unwrap)
            .collect::<Vec<_>>()
            .await
            .into_iter()
            .find_map(|event| match event {
                PartialEvent::Final { extraction, .. } => Some(extraction.value),
                _ => None,
            });
        assert_eq!(value, Some(json(&typed.unwrap())));

        let typed = extractor.extract_grounded::<Person>(TEXT).await.unwrap();
        let values = view.extract_grounded(TEXT).await.unwrap();
        assert_eq!(json(&values.value), json(&typed.value));
        assert_eq!(values.value[0].spans[0].bytes, 0..12);

        let document = format!("{TEXT}\n\n").repeat(4);
        let typed = extractor
            .extract_document::<Person>(&document)
            .await
            .unwrap();
        let values = view.extract_document(&document).await.unwrap();
        assert!(typed.chunks.len() > 1);
        assert_eq!(json(&values.items), json(&typed.items));
        assert_eq!(values.chunks.len(), typed.chunks.len());

        let mut events = view.extract_document_stream(&document);
        let mut finished = None;
        while let Some(event) = events.next().await {
            if let DocumentEvent::Finished(doc) = event.unwrap() {
                finished = Some(doc);
            }
        }
        assert_eq!(json(&finished.unwrap().items), json(&typed.items));
    }
}

#[tokio::test]
async fn the_checks_of_the_extractor_run_on_the_view() {
    let extractor = Extractor::new(model()).check(|value, issues| {
        if value["age"].as_u64() > Some(30) {
            issues.soft("/age", "over thirty");
        }
    });
    let out = extractor
        .with_schema(Person::schema())
        .extract(TEXT)
        .await
        .unwrap();
    assert_eq!(out.report.issues.len(), 1);
    // They run on the derived type's values too, as JSON.
    let typed = extractor.extract::<Person>(TEXT).await.unwrap();
    assert_eq!(typed.report.issues, out.report.issues);
}
