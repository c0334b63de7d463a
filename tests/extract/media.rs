//! Images and PDFs in a request, against local servers speaking each provider's wire format: the parts
//! in each documented shape (OpenAI-compatible `image_url` and `file` parts, Anthropic `image` and
//! `document` blocks, Gemini `inline_data` and `file_data`, Ollama's raw base64 `images`), their bytes
//! exact once decoded, base64 and URL, several parts in order; a part a backend cannot take and a part
//! over a limit refused before anything is sent; the parts resent with every repair; and the same parts
//! through `extract_all`, `extract_stream`, `extract_partial`, a batch and named prompts.

use crate::support;

use futures_util::StreamExt;
use llm_extract::batch::{Batch, Record};
use llm_extract::extract::{ExtractErrorKind, Extractor, Input, PartialEvent};
use llm_extract::llm::{
    from_fn, Anthropic, ChatRequest, ChatResponse, Gemini, LlmError, Media, MediaError,
    MediaLimits, MediaType, Ollama, OpenAiCompatible,
};
use llm_extract::schema::DynamicSchema;
use serde_json::json;
use std::sync::{Arc, Mutex};
use support::media::{data_url, decode, jpeg, last_message, pdf, png};
use support::providers::{anthropic, gemini};
use support::types::{Entity, Person};
use support::{Answer, Reply, TestServer};

const PERSON: &str = r#"{"name": "Ada", "age": 36}"#;

/// A derived type, for `extract_partial` (which needs the partial form the derive writes).
#[derive(llm_extract::Extract, serde::Deserialize, Debug)]
struct Badge {
    #[allow(dead_code)]
    name: String,
}

fn anthropic_server() -> (TestServer, Anthropic) {
    let server = TestServer::start(|request| anthropic(request, &Answer::new(PERSON)));
    let llm = Anthropic::builder("claude-test")
        .base_url(server.url())
        .api_key("sk-ant-test")
        .build()
        .unwrap();
    (server, llm)
}

/// A Gemini backend with `limits` if given, its provider's otherwise.
fn gemini_server(limits: Option<MediaLimits>) -> (TestServer, Gemini) {
    let server = TestServer::start(|request| gemini(request, &Answer::new(PERSON)));
    let builder = Gemini::builder("gemini-test")
        .base_url(server.url())
        .api_key("gemini-test-key");
    let builder = match limits {
        Some(limits) => builder.media_limits(limits),
        None => builder,
    };
    (server, builder.build().unwrap())
}

fn openai_server() -> TestServer {
    TestServer::start(|request| Reply::openai(request, &Answer::new(PERSON)))
}

fn openai(server: &TestServer) -> OpenAiCompatible {
    OpenAiCompatible::builder(server.url(), "vision-model")
        .build()
        .unwrap()
}

#[tokio::test]
async fn openai_compatible_sends_image_url_and_file_parts_before_the_text() {
    let server = openai_server();
    let input = Input::text("Who is on the badge?")
        .with_media(Media::png(png()))
        .with_media(Media::image_url(
            MediaType::Jpeg,
            "https://example.com/badge.jpg",
        ))
        .with_media(Media::pdf(pdf()).with_name("badge.pdf"))
        .with_media(Media::jpeg(jpeg()));
    let out = Extractor::new(openai(&server))
        .extract::<Person>(input)
        .await
        .unwrap();
    assert_eq!(out.value.name, "Ada");
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    let message = last_message(&requests[0]);
    assert_eq!(message["role"], "user");
    let parts = message["content"].as_array().expect("content parts");
    assert_eq!(parts.len(), 5, "{parts:?}");
    assert_eq!(parts[0]["type"], "image_url");
    assert_eq!(data_url(&parts[0]["image_url"]["url"], "image/png"), png());
    assert_eq!(
        parts[1],
        json!({"type": "image_url", "image_url": {"url": "https://example.com/badge.jpg"}})
    );
    assert_eq!(parts[2]["type"], "file");
    assert_eq!(parts[2]["file"]["filename"], "badge.pdf");
    assert_eq!(
        data_url(&parts[2]["file"]["file_data"], "application/pdf"),
        pdf()
    );
    assert_eq!(
        data_url(&parts[3]["image_url"]["url"], "image/jpeg"),
        jpeg()
    );
    assert_eq!(
        parts[4],
        json!({"type": "text", "text": "Who is on the badge?"})
    );
    // The system prompt stays a plain string.
    assert!(requests[0].json["messages"][0]["content"].is_string());
}

#[tokio::test]
async fn a_request_without_media_keeps_its_text_content() {
    let server = openai_server();
    Extractor::new(openai(&server))
        .extract::<Person>("Ada, 36")
        .await
        .unwrap();
    assert_eq!(last_message(&server.requests()[0])["content"], "Ada, 36");
}

#[tokio::test]
async fn anthropic_sends_image_and_document_blocks_base64_and_url() {
    let (server, llm) = anthropic_server();
    let input = Input::text("Read the scan.")
        .with_media(Media::gif(b"GIF89a\x01\x00\x01\x00".to_vec()))
        .with_media(Media::pdf(pdf()).with_name("contract.pdf"))
        .with_media(Media::image_url(
            MediaType::Png,
            "https://example.com/a.png",
        ))
        .with_media(Media::pdf_url("https://example.com/b.pdf"));
    Extractor::new(&llm).extract::<Person>(input).await.unwrap();
    let message = last_message(&server.requests()[0]);
    let blocks = message["content"].as_array().expect("content blocks");
    assert_eq!(blocks.len(), 5);
    assert_eq!(blocks[0]["type"], "image");
    assert_eq!(blocks[0]["source"]["type"], "base64");
    assert_eq!(blocks[0]["source"]["media_type"], "image/gif");
    assert_eq!(
        decode(&blocks[0]["source"]["data"]),
        b"GIF89a\x01\x00\x01\x00"
    );
    assert_eq!(blocks[1]["type"], "document");
    assert_eq!(blocks[1]["title"], "contract.pdf");
    assert_eq!(blocks[1]["source"]["media_type"], "application/pdf");
    assert_eq!(decode(&blocks[1]["source"]["data"]), pdf());
    assert_eq!(
        blocks[2],
        json!({"type": "image", "source": {"type": "url", "url": "https://example.com/a.png"}})
    );
    assert_eq!(
        blocks[3],
        json!({"type": "document", "source": {"type": "url", "url": "https://example.com/b.pdf"}})
    );
    assert_eq!(blocks[4], json!({"type": "text", "text": "Read the scan."}));
}

#[tokio::test]
async fn gemini_sends_inline_data_and_file_data_parts() {
    let (server, llm) = gemini_server(None);
    let webp = b"RIFF\x20\x00\x00\x00WEBPVP8 \x00\xff".to_vec();
    let input = Input::text("Read it.")
        .with_media(Media::webp(webp.clone()))
        .with_media(Media::pdf(pdf()))
        .with_media(Media::pdf_url("https://example.com/c.pdf"));
    Extractor::new(&llm).extract::<Person>(input).await.unwrap();
    let body = &server.requests()[0].json;
    let contents = body["contents"].as_array().unwrap();
    let parts = contents.last().unwrap()["parts"].as_array().unwrap();
    assert_eq!(parts.len(), 4);
    assert_eq!(parts[0]["inline_data"]["mime_type"], "image/webp");
    assert_eq!(decode(&parts[0]["inline_data"]["data"]), webp);
    assert_eq!(parts[1]["inline_data"]["mime_type"], "application/pdf");
    assert_eq!(decode(&parts[1]["inline_data"]["data"]), pdf());
    assert_eq!(
        parts[2],
        json!({"file_data": {"mime_type": "application/pdf", "file_uri": "https://example.com/c.pdf"}})
    );
    assert_eq!(parts[3], json!({"text": "Read it."}));
}

fn ollama_server() -> (TestServer, Ollama) {
    let server = TestServer::start(|request| Reply::ollama(request, &Answer::new(PERSON)));
    let llm = Ollama::builder("llava").host(server.url()).build().unwrap();
    (server, llm)
}

#[tokio::test]
async fn ollama_sends_raw_base64_images_on_the_message() {
    let (server, llm) = ollama_server();
    let input = Input::text("Who?")
        .with_media(Media::png(png()))
        .with_media(Media::jpeg(jpeg()));
    Extractor::new(&llm).extract::<Person>(input).await.unwrap();
    let message = last_message(&server.requests()[0]);
    assert_eq!(message["content"], "Who?");
    let images = message["images"].as_array().unwrap();
    assert_eq!(images.len(), 2);
    assert!(!images[0].as_str().unwrap().starts_with("data:"));
    assert_eq!(decode(&images[0]), png());
    assert_eq!(decode(&images[1]), jpeg());
}

/// The backend error an extraction ended with.
fn media_error<T: std::fmt::Debug>(result: Result<T, llm_extract::ExtractError>) -> MediaError {
    let error = result.expect_err("the request must be refused");
    match error.kind() {
        ExtractErrorKind::Llm(LlmError::Media(media)) => media.clone(),
        other => panic!("not a media error: {other:?}"),
    }
}

#[tokio::test]
async fn ollama_refuses_a_pdf_and_a_url_before_sending() {
    let (server, llm) = ollama_server();
    let pdf_input = Input::text("x")
        .with_media(Media::png(png()))
        .with_media(Media::pdf(pdf()));
    let err = media_error(Extractor::new(&llm).extract::<Person>(pdf_input).await);
    assert!(
        matches!(
            err,
            MediaError::Unsupported {
                backend: "Ollama",
                ..
            }
        ),
        "{err}"
    );
    assert!(err.to_string().contains("PDF 2"), "{err}");
    let url_input = Input::text("x").with_media(Media::image_url(
        MediaType::Png,
        "https://example.com/a.png",
    ));
    let err = media_error(Extractor::new(&llm).extract::<Person>(url_input).await);
    assert!(err.to_string().contains("images by URL"), "{err}");
    assert!(server.requests().is_empty(), "nothing may be sent");
}

#[tokio::test]
async fn openai_compatible_refuses_a_pdf_by_url() {
    let server = openai_server();
    let input = Input::text("x").with_media(Media::pdf_url("https://example.com/a.pdf"));
    let err = media_error(
        Extractor::new(openai(&server))
            .extract::<Person>(input)
            .await,
    );
    assert!(
        matches!(
            err,
            MediaError::Unsupported {
                backend: "OpenAI-compatible",
                ..
            }
        ),
        "{err}"
    );
    assert!(server.requests().is_empty());
}

#[tokio::test]
async fn anthropic_refuses_an_image_over_its_documented_five_mib_before_sending() {
    let (server, llm) = anthropic_server();
    // 3,932,163 bytes are 5,242,884 in base64: four over 5 MiB as sent.
    let mut big = png();
    big.resize(3 * 1024 * 1024 * 5 / 4 + 3, 0);
    let input = Input::text("x").with_media(Media::png(big).with_name("huge.png"));
    let err = media_error(Extractor::new(&llm).extract::<Person>(input).await);
    assert_eq!(
        err,
        MediaError::TooLarge {
            backend: "Anthropic",
            limit: "max_image_bytes",
            what: "image 1 (\"huge.png\")".into(),
            size: 5_242_884,
            max: 5 * 1024 * 1024,
        }
    );
    assert!(err.to_string().contains("`max_image_bytes`"), "{err}");
    // One byte fewer of file is 5,242,880 as sent: exactly the limit, and sent.
    let mut fits = png();
    fits.resize(3 * 1024 * 1024 * 5 / 4, 0);
    Extractor::new(&llm)
        .extract::<Person>(Input::text("x").with_media(Media::png(fits)))
        .await
        .unwrap();
    assert_eq!(
        server.requests().len(),
        1,
        "only the request within the limit went"
    );
}

#[tokio::test]
async fn limits_set_on_the_builder_replace_the_providers_and_name_the_limit() {
    let (server, llm) = gemini_server(Some(
        MediaLimits::gemini()
            .with_max_parts(Some(2))
            .with_max_request_bytes(Some(2000)),
    ));
    let three = Input::text("x")
        .with_media(Media::png(png()))
        .with_media(Media::png(png()))
        .with_media(Media::png(png()));
    let err = media_error(Extractor::new(&llm).extract::<Person>(three).await);
    assert_eq!(
        err,
        MediaError::TooMany {
            backend: "Gemini",
            count: 3,
            max: 2
        }
    );
    // A part over the request limit goes through the Files API (`tests/runtime/gemini_files.rs`); a
    // request still over it with every part uploaded is refused before anything is sent.
    let big = Input::text("x".repeat(2500)).with_media(Media::pdf(vec![b'%'; 1600]));
    let err = media_error(Extractor::new(&llm).extract::<Person>(big).await);
    assert!(
        matches!(
            err,
            MediaError::TooLarge {
                limit: "max_request_bytes",
                ..
            }
        ),
        "{err}"
    );
    assert!(err.to_string().contains("Gemini"), "{err}");
    assert!(server.requests().is_empty());
}

#[tokio::test]
async fn a_repair_resends_the_media_with_the_first_user_message() {
    let replies = Arc::new(Mutex::new(vec![PERSON, r#"{"name": "Ada"}"#]));
    let server = TestServer::start(move |request| {
        let answer = replies.lock().unwrap().pop().unwrap_or(PERSON);
        Reply::openai(request, &Answer::new(answer))
    });
    let input = Input::text("Badge.").with_media(Media::png(png()));
    let out = Extractor::new(openai(&server))
        .extract::<Person>(input)
        .await
        .unwrap();
    assert_eq!(out.report.attempts.len(), 2, "a repair happened");
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let repair = &requests[1].json["messages"];
    let user = repair
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "user")
        .unwrap();
    assert_eq!(
        data_url(&user["content"][0]["image_url"]["url"], "image/png"),
        png()
    );
    // The repair's own turns (the bad answer, the problems) are text.
    assert!(repair.as_array().unwrap().last().unwrap()["content"].is_string());
}

/// A backend recording each request's media and answering `answer`.
fn recording(answer: &'static str) -> (impl llm_extract::llm::Llm, Arc<Mutex<Vec<Vec<Media>>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let record = Arc::clone(&seen);
    let llm = from_fn(move |request: ChatRequest| {
        let media: Vec<Media> = request
            .messages
            .iter()
            .flat_map(|m| m.media.clone())
            .collect();
        record.lock().unwrap().push(media);
        async move { Ok(ChatResponse::new(answer)) }
    });
    (llm, seen)
}

#[tokio::test]
async fn every_entry_point_sends_the_media() {
    let image = Media::png(png());
    let input = || Input::text("list").with_media(image.clone());
    let items = r#"{"items": [{"name": "Ada", "kind": "person"}]}"#;
    let (llm, seen) = recording(items);
    let extractor = Extractor::new(llm);
    extractor.extract_all::<Entity>(input()).await.unwrap();
    let mut stream = extractor.extract_stream::<Entity>(input());
    while let Some(item) = stream.next().await {
        item.unwrap();
    }
    let (llm, partial_seen) = recording(PERSON);
    let extractor = Extractor::new(llm);
    let mut partial = extractor.extract_partial::<Badge>(input());
    let mut finished = false;
    while let Some(event) = partial.next().await {
        finished |= matches!(event.unwrap(), PartialEvent::Final { .. });
    }
    assert!(finished);
    let seen: Vec<Vec<Media>> = seen
        .lock()
        .unwrap()
        .iter()
        .chain(partial_seen.lock().unwrap().iter())
        .cloned()
        .collect();
    assert_eq!(seen.len(), 3);
    assert!(
        seen.iter()
            .all(|media| media == std::slice::from_ref(&image)),
        "{seen:?}"
    );
}

#[tokio::test]
async fn a_batch_sends_each_records_own_media() {
    let (llm, seen) = recording(r#"{"n": 1}"#);
    let schema = DynamicSchema::from_signature("{n :int}").unwrap();
    let records = vec![
        Record::new("a", Input::text("one").with_media(Media::png(png()))),
        Record::new("b", Input::text("two").with_media(Media::pdf(pdf()))),
        Record::new("c", "three"),
    ];
    let results = Batch::new(Extractor::new(llm))
        .concurrency(1)
        .extract_many(schema.schema_set(), records, |_| {})
        .await;
    assert!(results.iter().all(|r| r.is_ok()));
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 3);
    assert_eq!(seen[0], vec![Media::png(png())]);
    assert_eq!(seen[1], vec![Media::pdf(pdf())]);
    assert!(seen[2].is_empty());
}

#[test]
fn files_are_read_with_their_type_from_their_first_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("scan.bin");
    std::fs::write(&path, pdf()).unwrap();
    let media = Media::from_path(&path).unwrap();
    assert_eq!(media.media_type(), MediaType::Pdf);
    assert_eq!(media.name(), Some("scan.bin"));
    assert_eq!(media.data(), Some(pdf().as_slice()));
    std::fs::write(&path, "not an image").unwrap();
    assert!(matches!(
        Input::text("x").with_file(&path),
        Err(MediaError::UnknownType { .. })
    ));
    assert!(matches!(
        Media::from_path(dir.path().join("missing.png")),
        Err(MediaError::Read { .. })
    ));
}

#[tokio::test]
async fn an_image_without_text_sends_no_empty_text_part() {
    let (server, llm) = anthropic_server();
    let input = Input::text("").with_media(Media::png(png()));
    Extractor::new(&llm).extract::<Person>(input).await.unwrap();
    let blocks = last_message(&server.requests()[0])["content"].clone();
    assert_eq!(blocks.as_array().unwrap().len(), 1, "{blocks}");
    assert_eq!(blocks[0]["type"], "image");
}

#[tokio::test]
async fn named_prompts_send_the_media_of_their_input() {
    let prompts = llm_extract::prompts::PromptSet::from_json(json!({
        "badge": {"prompt": "Read the badge. {{text}}", "schema": "{name :string}"},
        "describe": {"prompt": "Describe it. {{text}}"}
    }))
    .unwrap();
    let (llm, seen) = recording(r#"{"name": "Ada"}"#);
    let input = || Input::text("").with_media(Media::png(png()));
    for id in ["badge", "describe"] {
        prompts
            .get(id)
            .unwrap()
            .invoke(&llm, input())
            .await
            .unwrap();
    }
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 2);
    assert!(
        seen.iter().all(|media| media == &[Media::png(png())]),
        "{seen:?}"
    );
}
