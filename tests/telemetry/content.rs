//! Telemetry: what was said goes on an attempt's span only when the extractor is asked
//! (`trace_content`), in the OpenTelemetry GenAI conventions' shape (`gen_ai.system_instructions`,
//! `gen_ai.input.messages`, `gen_ai.output.messages`: parts by role), an image summarised by its kind,
//! MIME type, size and SHA-256, never its bytes, and no key anywhere.

use crate::capture::{self, field};
use crate::support;

use llm_extract::extract::{Extractor, Input};
use llm_extract::llm::{from_fn, ChatRequest, ChatResponse, Media, OpenAiCompatible, RetryPolicy};
use serde_json::{json, Value};
use support::types::Person;
use support::{openai, Answer, TestServer};

const KEY: &str = "sk-test-content-9876543210-SECRET";

/// The image's bytes, their SHA-256 and their base64 (as a request sends them).
const IMAGE: &[u8] = b"\x89PNG\r\n\x1a\n portrait of Ada Lovelace, not a real image";
const IMAGE_SHA256: &str = "9af26a90319eecbc421e076c29a45d10e88e0bce6cc0b27b5b4a896950d9bbd7";
const IMAGE_BASE64: &str = "iVBORw0KGgogcG9ydHJhaXQgb2YgQWRhIExvdmVsYWNlLCBub3QgYSByZWFsIGltYWdl";

const CONTENT: [&str; 3] = [
    "gen_ai.system_instructions",
    "gen_ai.input.messages",
    "gen_ai.output.messages",
];

fn json_field(span: &capture::Fields, name: &str) -> Value {
    serde_json::from_str(field(span, name)).unwrap_or_else(|e| panic!("{name} is not JSON: {e}"))
}

#[tokio::test]
async fn messages_go_on_the_attempt_span_only_when_asked() {
    let (_serial, spans) = capture::start().await;
    let bad = r#"{"name": ["Ada"], "age": 36}"#;
    let good = r#"{"name": "Ada", "age": 36}"#;
    let server = TestServer::script(vec![
        openai(Answer::new(bad)),
        openai(Answer::new(good)),
        openai(Answer::new(bad)),
        openai(Answer::new(good)),
    ]);
    let llm = OpenAiCompatible::builder(format!("{}/v1?key=url-secret", server.url()), "m")
        .api_key(KEY)
        .retry(RetryPolicy::none())
        .build()
        .unwrap();
    let input = || Input::text("Ada Lovelace, 36").with_media(Media::png(IMAGE.to_vec()));

    // Not asked: no content on any span, though the request and the answer had some.
    let quiet = Extractor::new(&llm).instructions("Find the person.");
    quiet.extract::<Person>(input()).await.unwrap();
    let attempts = spans.named("extract_attempt");
    assert_eq!(attempts.len(), 2, "{attempts:?}");
    let everything = spans.everything();
    for name in CONTENT {
        assert!(!everything.contains(name), "{name} in {everything}");
    }
    assert!(!everything.contains("Ada Lovelace"), "{everything}");
    assert!(!everything.contains("Find the person"), "{everything}");

    // Asked: the first attempt and the repair carry what they sent and what came back.
    let loud = Extractor::new(&llm)
        .instructions("Find the person.")
        .trace_content(true);
    loud.extract::<Person>(input()).await.unwrap();
    let attempts = spans.named("extract_attempt");
    assert_eq!(attempts.len(), 4, "{attempts:?}");
    let (first, repair) = (&attempts[2], &attempts[3]);

    let system = json_field(first, "gen_ai.system_instructions");
    assert_eq!(system.as_array().map(Vec::len), Some(1), "{system}");
    assert_eq!(system[0]["type"], "text");
    let instructions = system[0]["content"].as_str().unwrap();
    assert!(
        instructions.starts_with("Find the person."),
        "{instructions}"
    );

    let sent = json_field(first, "gen_ai.input.messages");
    let asked = sent.as_array().unwrap().last().unwrap();
    assert_eq!(asked["role"], "user", "{sent}");
    assert_eq!(
        asked["parts"][0],
        json!({
            "type": "media",
            "modality": "image",
            "mime_type": "image/png",
            "size": IMAGE.len(),
            "sha256": IMAGE_SHA256,
        })
    );
    assert_eq!(asked["parts"][1]["type"], "text");
    let text = asked["parts"][1]["content"].as_str().unwrap();
    assert!(text.contains("Ada Lovelace, 36"), "{text}");
    assert_eq!(
        json_field(first, "gen_ai.output.messages"),
        json!([{
            "role": "assistant",
            "parts": [{"type": "text", "content": bad}],
            "finish_reason": "stop",
        }])
    );

    // The repair sends the bad answer back as the assistant's turn, then the problems.
    let sent = json_field(repair, "gen_ai.input.messages");
    let roles: Vec<&str> = sent
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["role"].as_str())
        .collect();
    assert_eq!(
        roles[roles.len() - 3..],
        ["user", "assistant", "user"],
        "{sent}"
    );
    let echoed = &sent[roles.len() - 2]["parts"][0]["content"];
    assert!(echoed.as_str().unwrap().contains(r#"["Ada"]"#), "{sent}");
    assert_eq!(
        json_field(repair, "gen_ai.output.messages"),
        json!([{
            "role": "assistant",
            "parts": [{"type": "text", "content": good}],
            "finish_reason": "stop",
        }])
    );

    // A model's reasoning is a part of its own, before the answer.
    let thinking = from_fn(move |_request: ChatRequest| async move {
        let mut response = ChatResponse::new(good);
        response.thinking = Some("the text names her age".into());
        Ok(response)
    });
    let extractor = Extractor::new(&thinking).trace_content(true);
    extractor.extract::<Person>("Ada, 36").await.unwrap();
    let last = spans.named("extract_attempt").pop().unwrap();
    assert_eq!(
        json_field(&last, "gen_ai.output.messages"),
        json!([{
            "role": "assistant",
            "parts": [
                {"type": "reasoning", "content": "the text names her age"},
                {"type": "text", "content": good},
            ],
            "finish_reason": "stop",
        }])
    );

    // Never the image's bytes, the key or the URL's credential.
    let everything = spans.everything();
    for secret in [IMAGE_BASE64, KEY, "9876543210", "url-secret"] {
        assert!(
            !everything.contains(secret),
            "{secret} leaked into {everything}"
        );
    }
}
