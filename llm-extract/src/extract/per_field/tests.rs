use super::*;
use crate::extract::{Extractor, Strategy};
use crate::llm::{from_fn, ChatRequest, ChatResponse};
use serde_json::json;
use std::sync::{Arc, Mutex};

/// A model that answers each question from a table of (words of the question, answer JSON), and records
/// every question.
fn table(
    answers: &'static [(&'static str, &'static str)],
) -> (impl crate::llm::Llm + Clone, Arc<Mutex<Vec<String>>>) {
    let asked = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&asked);
    let llm = from_fn(move |request: ChatRequest| {
        let seen = Arc::clone(&seen);
        async move {
            let user = request
                .messages
                .last()
                .map(|m| m.content.clone())
                .unwrap_or_default();
            let question = user
                .rsplit("Question: ")
                .next()
                .unwrap_or_default()
                .to_string();
            seen.lock().unwrap().push(question.clone());
            let answer = answers
                .iter()
                .find(|(words, _)| question.contains(words))
                .map_or("null", |(_, answer)| answer);
            Ok(ChatResponse::new(format!("{{\"answer\": {answer}}}")).with_usage(30, 5))
        }
    });
    (llm, asked)
}

fn claim() -> SchemaSet {
    SchemaSet::new(
        "Claim",
        json!({
            "type": "object",
            "properties": {
                "claim_id": {"type": "string", "description": "The claim's reference."},
                "filed": {"type": ["string", "null"], "format": "date", "description": "When it was filed."},
                "amount": {"type": "number", "description": "The amount claimed."},
                "channel": {"enum": ["email", "phone", "letter"], "description": "How it came in."},
                "urgent": {"type": "boolean", "description": "Whether it is urgent."},
                "adjuster": {"type": ["string", "null"], "description": "Who handles it."},
                "claimant": {
                    "type": "object",
                    "properties": {"name": {"type": "string", "description": "The claimant's name."}},
                    "required": ["name"],
                    "additionalProperties": false
                },
                "items": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "item": {"type": "string", "description": "What was damaged."},
                            "cost": {"type": ["number", "null"], "description": "Its cost."}
                        },
                        "required": ["item", "cost"],
                        "additionalProperties": false
                    }
                }
            },
            "required": ["claim_id", "filed", "amount", "channel", "urgent", "adjuster", "claimant", "items"],
            "additionalProperties": false
        }),
    )
}

/// An object named `name` whose one property, required, is `property` of schema `schema`.
fn one_property(name: &str, property: &str, schema: Value) -> SchemaSet {
    SchemaSet::new(
        name,
        json!({
            "type": "object",
            "properties": {property: schema},
            "required": [property],
            "additionalProperties": false
        }),
    )
}

/// What `extractor`, set to the per-field strategy, extracts of `schema` from `text`.
async fn per_field<L: crate::llm::Llm>(
    extractor: Extractor<L>,
    schema: &SchemaSet,
    text: &str,
) -> Extraction<Value> {
    extractor
        .strategy(Strategy::PerField)
        .with_schema(schema)
        .extract(text)
        .await
        .unwrap()
}

const TEXT: &str =
    "Claim CL-88 from Ana Ruiz, sent by email on 4 April 2025: EUR 1,250.00 in all. \
The laptop cost $900. The lamp cost 350 dollars.";

#[tokio::test]
async fn the_schema_is_walked_field_by_field() {
    let (llm, asked) = table(&[
        ("claim id", "\"CL-88\""),
        ("filed", "\"4 April 2025\""),
        ("amount", "\"EUR 1,250.00\""),
        ("channel", "\"email\""),
        ("urgent", "false"),
        ("adjuster", "null"),
        ("name", "\"Ana Ruiz\""),
        ("item of each", "[\"laptop\", \"lamp\"]"),
        ("About \"laptop\"", "\"$900\""),
        ("About \"lamp\"", "\"350\""),
    ]);
    let set = claim();
    let out = per_field(Extractor::new(llm), &set, TEXT).await;
    assert_eq!(
        out.value,
        json!({
            "claim_id": "CL-88",
            "filed": "2025-04-04",
            "amount": 1250.0,
            "channel": "email",
            "urgent": false,
            "adjuster": null,
            "claimant": {"name": "Ana Ruiz"},
            "items": [{"item": "laptop", "cost": 900.0}, {"item": "lamp", "cost": 350.0}]
        })
    );
    // One question per field, the list's items each asked about by name; none for the channel, the
    // only option the text writes out.
    let asked = asked.lock().unwrap().clone();
    assert_eq!(asked.len(), 9, "{asked:#?}");
    assert!(
        !asked.iter().any(|q| q.starts_with("channel")),
        "{asked:#?}"
    );
    assert!(
        asked.iter().any(|q| q.starts_with("About \"lamp\": cost")),
        "{asked:#?}"
    );
    let fields: Vec<&str> = out.report.fields.keys().map(String::as_str).collect();
    assert_eq!(
        fields,
        [
            "/adjuster",
            "/amount",
            "/channel",
            "/claim_id",
            "/claimant/name",
            "/filed",
            "/items",
            "/items/0/cost",
            "/items/1/cost",
            "/urgent"
        ]
    );
    assert_eq!(out.report.fields["/adjuster"].how, FoundBy::Null);
    assert_eq!(out.report.fields["/channel"].how, FoundBy::Copied);
    assert_eq!(out.report.confidence["/channel"], 1.0);
    assert_eq!(out.report.fields["/urgent"].how, FoundBy::Written);
    assert_eq!(out.report.fields["/amount"].how, FoundBy::Copied);
    assert_eq!(out.report.fields["/amount"].usage.total(), 35);
    assert_eq!(out.report.usage.total(), 315);
}

#[tokio::test]
async fn a_copy_not_in_the_text_is_asked_again_and_then_left_null() {
    // The model invents an adjuster each time: the copy is not in the text, so it is re-asked within the
    // attempts, then the field is null (a wrong copy is worse than a null).
    let (llm, asked) = table(&[("adjuster", "\"Jon Smith\"")]);
    let set = one_property("Claim", "adjuster", json!({"type": ["string", "null"]}));
    let out = per_field(Extractor::new(llm).max_attempts(2), &set, TEXT).await;
    assert_eq!(out.value, json!({"adjuster": null}));
    assert_eq!(asked.lock().unwrap().len(), 2);
    assert_eq!(out.report.fields["/adjuster"].requests, 2);
}

#[tokio::test]
async fn a_copy_that_does_not_read_as_a_date_is_null() {
    let (llm, _) = table(&[("filed", "\"4 April\"")]);
    let set = one_property(
        "Claim",
        "filed",
        json!({"type": ["string", "null"], "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}$"}),
    );
    let out = per_field(Extractor::new(llm), &set, TEXT).await;
    assert_eq!(out.value, json!({"filed": null}));
    assert_eq!(out.report.fields["/filed"].how, FoundBy::Null);
}

#[tokio::test]
async fn a_field_s_own_question_is_asked() {
    let (llm, asked) = table(&[("Who filed it?", "\"Ana Ruiz\"")]);
    let set = one_property("Claim", "claimant", json!({"type": "string"}));
    let out = per_field(
        Extractor::new(llm).question("/claimant", "Who filed it?"),
        &set,
        TEXT,
    )
    .await;
    assert_eq!(out.value, json!({"claimant": "Ana Ruiz"}));
    assert_eq!(asked.lock().unwrap().as_slice(), ["Who filed it?"]);
}

#[tokio::test]
async fn a_value_the_fields_leave_invalid_falls_back_to_one_answer() {
    // The copied total is below the schema's minimum: one answer is asked for the whole value.
    let llm = from_fn(|request: ChatRequest| async move {
        let user = request
            .messages
            .last()
            .map(|m| m.content.clone())
            .unwrap_or_default();
        let answer = if user.contains("Question:") {
            r#"{"answer": "5"}"#
        } else {
            r#"{"total": 1250}"#
        };
        Ok(ChatResponse::new(answer))
    });
    let set = one_property("Invoice", "total", json!({"type": "number", "minimum": 10}));
    let out = per_field(Extractor::new(llm), &set, "Total 5, or rather 1250.").await;
    assert_eq!(out.value, json!({"total": 1250}));
    assert_eq!(out.report.attempts.len(), 2);
    assert!(out.report.fields.contains_key("/total"));
}

#[test]
fn string_fields_are_read_by_their_schema() {
    assert_eq!(string_read("due", &json!({"format": "date"})), Read::Date);
    assert_eq!(
        string_read("due", &json!({"pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}$"})),
        Read::Date
    );
    assert_eq!(
        string_read("time", &json!({"pattern": "^[0-9]{2}:[0-9]{2}$"})),
        Read::Time
    );
    assert_eq!(
        string_read("about", &json!({"description": "A one-line summary."})),
        Read::Written
    );
    assert_eq!(string_read("name", &json!({})), Read::Text);
    assert_eq!(string_read("email", &json!({})), Read::Email);
    assert_eq!(
        string_read("contact", &json!({"format": "email"})),
        Read::Email
    );
    assert_eq!(string_read("mobilePhone", &json!({})), Read::Phone);
}

#[test]
fn an_option_is_written_in_a_text_as_a_whole_word() {
    assert!(writes("total 19 CHF, overdue", "CHF"));
    assert!(writes("sent by e-mail or email.", "email"));
    assert!(writes("a bank transfer", "bank_transfer"));
    assert!(!writes("emails", "email"));
    assert!(!writes("CHFX", "CHF"));
}

#[test]
fn nullable_shapes_are_unwrapped() {
    let root = json!({});
    let any_of = json!({"anyOf": [{"type": "string"}, {"type": "null"}]});
    let (inner, nullable) = unwrap_nullable(&root, &any_of);
    assert_eq!(inner, &json!({"type": "string"}));
    assert!(nullable);
    assert!(unwrap_nullable(&root, &json!({"type": ["integer", "null"]})).1);
    assert!(!unwrap_nullable(&root, &json!({"type": "integer"})).1);
    assert_eq!(
        main_type(&json!({"type": ["integer", "null"]})),
        Some("integer")
    );
}

#[test]
fn a_list_s_key_is_its_marked_or_first_required_string() {
    let items = json!({"properties": {"qty": {"type": "integer"}, "sku": {"type": "string"}, "name": {"type": "string", "x-key": true}}, "required": ["sku"]});
    assert_eq!(key_field(&items).as_deref(), Some("name"));
    let items = json!({"properties": {"qty": {"type": "integer"}, "note": {"type": "string"}, "sku": {"type": "string"}}, "required": ["sku"]});
    assert_eq!(key_field(&items).as_deref(), Some("sku"));
    assert_eq!(
        key_field(&json!({"properties": {"qty": {"type": "integer"}}})),
        None
    );
}

#[test]
fn an_item_s_neighbourhood_is_its_sentence_and_those_around_it() {
    let text = "First one. The laptop cost $900. The lamp cost 350 dollars. Last one. After that.";
    assert_eq!(
        neighbourhood(text, "lamp"),
        "The laptop cost $900. The lamp cost 350 dollars. Last one."
    );
    assert_eq!(neighbourhood(text, "sofa"), text);
    // Linear and safe on any text: multi-byte characters around the item.
    let long = "é".repeat(2_000) + " lamp " + &"ü".repeat(2_000);
    assert!(neighbourhood(&long, "lamp").len() <= 2 * NEIGHBOURHOOD + 8);
}
