//! Worked examples end to end: what the backend receives (examples as earlier turns, in the answer's
//! format, before the real input), that only the answer to the real input comes back, and how the
//! type's own examples, the extractor's and runtime-schema examples combine.
//!
//! The backend is a `from_fn` recorder: it keeps every request and answers a fixed text, so the tests
//! check the request itself rather than a model's behaviour.

use llm_extract::extract::{Example, ExampleError, ExtractErrorKind};
use llm_extract::llm::{from_fn, ChatRequest, ChatResponse, Role};
use llm_extract::{extract::Mode, schema::SchemaSet, Extract, Extractor, Llm};
use serde::{Deserialize, Serialize};
use serde_json::json;
use std::sync::{Arc, Mutex};

/// An invoice.
#[derive(Extract, Deserialize, Serialize, Debug, Clone, PartialEq)]
#[extract(example(
    text = "Invoice 3310 for Redwood Cafe was settled on 3 March.",
    value = Invoice { number: "3310".into(), customer: "Redwood Cafe".into(), paid: true }
))]
struct Invoice {
    /// The invoice's own number.
    number: String,
    /// Who is billed.
    customer: String,
    /// Whether it was paid.
    paid: bool,
}

/// A tag whose own example breaks its bounds: caught at run time, before anything is sent.
#[derive(Extract, Deserialize, Serialize, Debug)]
#[extract(example(text = "Tagged urgent.", value = Tag { name: "much too long".into() }))]
struct Tag {
    #[extract(max_length = 6)]
    name: String,
}

/// A type with no examples of its own.
#[derive(Extract, Deserialize, Serialize, Debug, PartialEq)]
struct City {
    name: String,
}

type Requests = Arc<Mutex<Vec<ChatRequest>>>;

/// A backend that records each request and answers `answer`.
fn recorder(answer: &'static str) -> (impl Llm, Requests) {
    let seen: Requests = Arc::default();
    let log = Arc::clone(&seen);
    let llm = from_fn(move |request: ChatRequest| {
        log.lock().unwrap().push(request);
        async move { Ok(ChatResponse::new(answer)) }
    });
    (llm, seen)
}

fn turns(request: &ChatRequest) -> Vec<(Role, String)> {
    request
        .messages
        .iter()
        .map(|m| (m.role, m.content.clone()))
        .collect()
}

fn redwood() -> Invoice {
    Invoice {
        number: "3310".into(),
        customer: "Redwood Cafe".into(),
        paid: true,
    }
}

#[tokio::test]
async fn the_types_example_precedes_the_input_and_never_comes_back() {
    let (llm, seen) = recorder(r#"{"number": "A-9", "customer": "Lena Novak", "paid": false}"#);
    let text = "Bill A-9 for Lena Novak, payable in May.";
    let got = Invoice::extract(&llm, text).await.unwrap();
    assert_eq!(
        got,
        Invoice {
            number: "A-9".into(),
            customer: "Lena Novak".into(),
            paid: false
        }
    );
    assert_ne!(got, redwood());
    let requests = seen.lock().unwrap();
    assert_eq!(
        turns(&requests[0]),
        vec![
            (
                Role::User,
                "Invoice 3310 for Redwood Cafe was settled on 3 March.".to_owned()
            ),
            (
                Role::Assistant,
                r#"{"number": "3310", "customer": "Redwood Cafe", "paid": true}"#.to_owned()
            ),
            (Role::User, text.to_owned()),
        ]
    );
    // The example is never part of the text being extracted from.
    let last = &requests[0].messages.last().unwrap().content;
    assert!(!last.contains("Redwood"), "{last}");
    let system = requests[0].system.as_deref().unwrap();
    assert!(system.contains("worked examples"), "{system}");
}

#[tokio::test]
async fn extract_all_shows_examples_as_json_lines_or_as_the_list() {
    let extractor_answer = "{\"name\":\"Oslo\"}\n";
    let (llm, seen) = recorder(extractor_answer);
    let extractor = Extractor::new(&llm)
        .mode(Mode::Prompted)
        .with_example(
            Example::items(
                "From Lyon we drove to Turin.",
                [
                    City {
                        name: "Lyon".into(),
                    },
                    City {
                        name: "Turin".into(),
                    },
                ],
            )
            .unwrap(),
        )
        .with_example(Example::items::<City>("No place is named here.", []).unwrap());
    let got = extractor
        .extract_all::<City>("We live in Oslo.")
        .await
        .unwrap();
    assert_eq!(
        got.value,
        vec![City {
            name: "Oslo".into()
        }]
    );
    {
        let requests = seen.lock().unwrap();
        let sent = turns(&requests[0]);
        assert_eq!(sent.len(), 5);
        assert_eq!(
            sent[1],
            (
                Role::Assistant,
                "{\"name\": \"Lyon\"}\n{\"name\": \"Turin\"}".to_owned()
            )
        );
        assert_eq!(sent[3], (Role::Assistant, String::new()));
        assert_eq!(sent[4], (Role::User, "We live in Oslo.".to_owned()));
    }

    // Constrained against a backend without line-by-line constraints: the list shape.
    let (llm, seen) = recorder(r#"{"items": []}"#);
    let extractor = Extractor::new(&llm)
        .example(
            "From Lyon we drove on.",
            City {
                name: "Lyon".into(),
            },
        )
        .unwrap();
    let got = extractor
        .extract_all::<City>("Nothing here.")
        .await
        .unwrap();
    assert!(
        got.value.is_empty(),
        "the example's item must not come back"
    );
    let requests = seen.lock().unwrap();
    assert_eq!(
        turns(&requests[0])[1],
        (
            Role::Assistant,
            r#"{"items": [{"name": "Lyon"}]}"#.to_owned()
        )
    );
}

#[tokio::test]
async fn extractor_examples_replace_the_types_own_and_can_turn_them_off() {
    let answer = r#"{"number": "1", "customer": "X", "paid": true}"#;
    let (llm, seen) = recorder(answer);
    let other = Invoice {
        number: "Q-82".into(),
        customer: "Lena Novak".into(),
        paid: false,
    };
    Extractor::new(&llm)
        .example("Bill Q-82 to Lena Novak.", other)
        .unwrap()
        .extract::<Invoice>("t")
        .await
        .unwrap();
    Extractor::new(&llm)
        .default_examples(false)
        .extract::<Invoice>("t")
        .await
        .unwrap();
    // An example for another type is not shown either.
    Extractor::new(&llm)
        .default_examples(false)
        .example(
            "Oslo.",
            City {
                name: "Oslo".into(),
            },
        )
        .unwrap()
        .extract::<Invoice>("t")
        .await
        .unwrap();
    let requests = seen.lock().unwrap();
    let first = turns(&requests[0]);
    assert_eq!(first.len(), 3);
    assert!(first[1].1.contains("Q-82") && !first[1].1.contains("3310"));
    assert_eq!(turns(&requests[1]), vec![(Role::User, "t".to_owned())]);
    assert_eq!(turns(&requests[2]), vec![(Role::User, "t".to_owned())]);
    assert!(!requests[1]
        .system
        .as_deref()
        .unwrap()
        .contains("worked examples"));
}

#[tokio::test]
async fn an_item_list_example_is_left_out_of_a_one_value_extraction() {
    let (llm, seen) = recorder(r#"{"name": "Oslo"}"#);
    Extractor::new(&llm)
        .with_example(
            Example::items(
                "Lyon.",
                [City {
                    name: "Lyon".into(),
                }],
            )
            .unwrap(),
        )
        .extract::<City>("Oslo.")
        .await
        .unwrap();
    assert_eq!(turns(&seen.lock().unwrap()[0]).len(), 1);
}

#[tokio::test]
async fn a_types_invalid_example_fails_before_anything_is_sent() {
    let (llm, seen) = recorder(r#"{"name": "x"}"#);
    let err = Tag::extract(&llm, "t").await.unwrap_err();
    let ExtractErrorKind::Example(ExampleError::Invalid { violations, .. }) = err.kind() else {
        panic!("{err:?}");
    };
    assert_eq!(violations[0].path, "/name");
    assert!(seen.lock().unwrap().is_empty());
    // Without the type's examples the same extraction runs.
    let got = Extractor::new(&llm)
        .default_examples(false)
        .extract::<Tag>("t")
        .await
        .unwrap();
    assert_eq!(got.value.name, "x");
}

#[test]
fn an_invalid_value_is_refused_when_the_example_is_added() {
    let (llm, _) = recorder("{}");
    let Err(err) = Extractor::new(&llm).example(
        "Tagged urgent.",
        Tag {
            name: "far too long".into(),
        },
    ) else {
        panic!("an example that breaks maxLength was accepted");
    };
    assert!(matches!(err, ExampleError::Invalid { .. }), "{err:?}");
    assert!(
        err.to_string().contains("maxLength") || err.to_string().contains("longer"),
        "{err}"
    );
}

#[tokio::test]
async fn repairs_keep_the_examples_first_and_the_template_fills_their_text() {
    let (llm, seen) = {
        let seen: Requests = Arc::default();
        let log = Arc::clone(&seen);
        let llm = from_fn(move |request: ChatRequest| {
            let mut log = log.lock().unwrap();
            let answer = if log.is_empty() {
                "not json"
            } else {
                r#"{"name": "Oslo"}"#
            };
            log.push(request);
            async move { Ok(ChatResponse::new(answer)) }
        });
        (llm, seen)
    };
    let schema = SchemaSet::new(
        "City",
        json!({"type": "object", "properties": {"name": {"type": "string"}},
               "required": ["name"], "additionalProperties": false}),
    );
    let example = Example::value(&schema, "We flew to Lima.", json!({"name": "Lima"})).unwrap();
    let got = Extractor::new(&llm)
        .template("City of: {{text}} ({{lang}})")
        .with_example(example)
        .with_schema(&schema)
        .extract(llm_extract::extract::Input::text("We live in Oslo.").var("lang", "en"))
        .await
        .unwrap();
    assert_eq!(got.value, json!({"name": "Oslo"}));
    let requests = seen.lock().unwrap();
    let repair = turns(&requests[1]);
    assert_eq!(
        repair[0],
        (Role::User, "City of: We flew to Lima. (en)".to_owned())
    );
    assert_eq!(
        repair[1],
        (Role::Assistant, r#"{"name": "Lima"}"#.to_owned())
    );
    assert_eq!(
        repair[2],
        (Role::User, "City of: We live in Oslo. (en)".to_owned())
    );
    assert_eq!(repair[3], (Role::Assistant, "not json".to_owned()));
    assert_eq!(repair.len(), 5);
}
