//! Gemini's Files API against a local server speaking its resumable upload: media past the inline limit
//! are uploaded (the start with its `X-Goog-Upload-*` headers, the bytes exact to the URL the server
//! gives, a `PROCESSING` file read again until `ACTIVE`) and the `generateContent` body names them in
//! `file_data` parts (a part sent again names the same file, not uploaded again), while small media stay
//! `inline_data`; an upload URL on another origin is refused
//! and gets nothing; a file that never leaves `PROCESSING` ends with a clear error, and one the API
//! reports `FAILED` with a permanent media error naming the part.

use crate::support;

use futures_util::StreamExt;

use llm_extract::llm::{
    ChatRequest, Gemini, Llm, LlmError, Media, MediaError, MediaLimits, Message,
};
use serde_json::json;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use support::providers::gemini;
use support::{Answer, Reply, Request, TestServer};

const KEY: &str = "AIza-files-0123456789abcdef-SECRET";
/// The inline limit the tests set, so that a file of a few tens of kilobytes is "large".
const INLINE_LIMIT: usize = 20_000;

/// A PDF of `n` bytes that are not text (every byte value, repeated), so a byte lost or re-encoded
/// on the way shows.
fn large_pdf(n: usize) -> Vec<u8> {
    let mut bytes = b"%PDF-1.7\n".to_vec();
    bytes.extend((0..n).map(|i| (i * 31 % 256) as u8));
    bytes
}

fn client(server: &TestServer, attempts: u32) -> Gemini {
    Gemini::builder("gemini-test")
        .base_url(server.url())
        .api_key(KEY)
        .media_limits(MediaLimits::gemini().with_max_request_bytes(Some(INLINE_LIMIT)))
        .file_polling(Duration::from_millis(1), attempts)
        .build()
        .unwrap()
}

/// `http://{host}` of the server the request reached.
fn origin(request: &Request) -> String {
    format!("http://{}", request.header("host").unwrap_or_default())
}

/// A Files API and `generateContent` server: the upload URL on `upload_origin` (the server's own
/// when `None`), the file `PROCESSING` for the first `processing` reads and `ACTIVE` after.
fn files_server(upload_origin: Option<String>, processing: usize) -> TestServer {
    files_server_ending(upload_origin, processing, "ACTIVE")
}

/// [`files_server`] with the file in `state` once it is no longer `PROCESSING`.
fn files_server_ending(
    upload_origin: Option<String>,
    processing: usize,
    state: &'static str,
) -> TestServer {
    let reads = Arc::new(AtomicUsize::new(0));
    TestServer::start(move |request| {
        let here = origin(request);
        let file = |state: &str| {
            json!({
                "name": "files/abc-123",
                "uri": format!("{here}/v1beta/files/abc-123"),
                "mimeType": "application/pdf",
                "state": state,
            })
        };
        match (request.method.as_str(), request.path.as_str()) {
            ("POST", "/upload/v1beta/files") => {
                let at = upload_origin.clone().unwrap_or_else(|| here.clone());
                Reply::json(200, json!({})).with_header(
                    "X-Goog-Upload-URL",
                    &format!("{at}/upload/v1beta/files?upload_id=UPLOAD-ID-777&upload_protocol=resumable"),
                )
            }
            ("POST", path) if path.starts_with("/upload/v1beta/files?upload_id=") => {
                let now = if processing > 0 { "PROCESSING" } else { state };
                Reply::json(200, json!({ "file": file(now) }))
            }
            ("GET", "/v1beta/files/abc-123") => {
                let read = reads.fetch_add(1, Ordering::SeqCst) + 1;
                let now = if read < processing {
                    "PROCESSING"
                } else {
                    state
                };
                Reply::json(200, file(now))
            }
            ("POST", "/v1beta/models/gemini-test:generateContent")
            | ("POST", "/v1beta/models/gemini-test:streamGenerateContent?alt=sse") => {
                gemini(request, &Answer::new(r#"{"total": 12}"#))
            }
            _ => Reply::text(
                404,
                format!("no route for {} {}", request.method, request.path),
            ),
        }
    })
}

fn request_with(large: &[u8], small: &[u8]) -> ChatRequest {
    ChatRequest::new("").with_message(Message::user("What is the total?").with_media([
        Media::pdf(large.to_vec()).with_name("invoice.pdf"),
        Media::png(small.to_vec()),
    ]))
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack
        .windows(needle.len())
        .any(|window| window == needle)
}

#[tokio::test]
async fn a_large_part_is_uploaded_and_sent_as_file_data_while_a_small_one_stays_inline() {
    let server = files_server(None, 2);
    let llm = client(&server, 5);
    let large = large_pdf(40_000);
    let small = support::media::png();
    let request = request_with(&large, &small);
    llm.accepts(&request).unwrap();
    let answer = llm.chat(request).await.unwrap();
    assert_eq!(answer.text, r#"{"total": 12}"#);

    let requests = server.requests();
    let route: Vec<(&str, &str)> = requests
        .iter()
        .map(|r| {
            (
                r.method.as_str(),
                r.path.split('?').next().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(
        route,
        [
            ("POST", "/upload/v1beta/files"),
            ("POST", "/upload/v1beta/files"),
            ("GET", "/v1beta/files/abc-123"),
            ("GET", "/v1beta/files/abc-123"),
            ("POST", "/v1beta/models/gemini-test:generateContent"),
        ]
    );
    let start = &requests[0];
    assert_eq!(start.header("x-goog-upload-protocol"), Some("resumable"));
    assert_eq!(start.header("x-goog-upload-command"), Some("start"));
    let length = large.len().to_string();
    assert_eq!(
        start.header("x-goog-upload-header-content-length"),
        Some(length.as_str())
    );
    assert_eq!(
        start.header("x-goog-upload-header-content-type"),
        Some("application/pdf")
    );
    assert_eq!(start.json, json!({"file": {"display_name": "invoice.pdf"}}));
    assert_eq!(start.header("x-goog-api-key"), Some(KEY));

    let upload = &requests[1];
    assert!(
        upload.path.contains("upload_id=UPLOAD-ID-777"),
        "{}",
        upload.path
    );
    assert_eq!(
        upload.header("x-goog-upload-command"),
        Some("upload, finalize")
    );
    assert_eq!(upload.header("x-goog-upload-offset"), Some("0"));
    assert_eq!(upload.header("content-length"), Some(length.as_str()));
    // The bytes arrive exact: the whole file, byte for byte, after the upload's head.
    let raw = server.raw();
    let head = b"upload_id=UPLOAD-ID-777";
    let after = raw.windows(head.len()).position(|w| w == head).unwrap();
    assert!(
        contains(&raw[after..], &large),
        "the uploaded bytes differ from the file"
    );

    let body = &requests[4].json;
    let parts = body["contents"][1]["parts"].as_array().unwrap();
    assert_eq!(
        parts[0],
        json!({"file_data": {"mime_type": "application/pdf", "file_uri": format!("{}/v1beta/files/abc-123", server.url())}})
    );
    assert_eq!(parts[1]["inline_data"]["mime_type"], "image/png");
    assert_eq!(
        support::media::decode(&parts[1]["inline_data"]["data"]),
        small
    );
    assert_eq!(parts[2], json!({"text": "What is the total?"}));
    assert!(!requests[4].body.contains("UPLOAD-ID-777"));

    // The same part sent again (a repair, another call) names the file already uploaded.
    llm.chat(request_with(&large, &small)).await.unwrap();
    let requests = server.requests();
    assert_eq!(requests.len(), 6);
    assert_eq!(requests[5].json["contents"][1]["parts"][0], parts[0]);
}

#[tokio::test]
async fn media_within_the_inline_limit_are_not_uploaded() {
    let server = files_server(None, 0);
    let llm = client(&server, 5);
    let small = support::media::png();
    let request = request_with(&large_pdf(1_000), &small);
    llm.chat(request).await.unwrap();
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    let parts = requests[0].json["contents"][1]["parts"]
        .as_array()
        .unwrap()
        .clone();
    assert!(
        parts.iter().all(|part| part.get("file_data").is_none()),
        "{parts:?}"
    );
    assert_eq!(parts[0]["inline_data"]["mime_type"], "application/pdf");
}

#[tokio::test]
async fn an_upload_url_on_another_origin_is_refused_and_receives_nothing() {
    let elsewhere = TestServer::start_on("127.0.0.2", |_| Reply::json(200, json!({})));
    let server = files_server(Some(elsewhere.url()), 0);
    let llm = client(&server, 5);
    let err = llm
        .chat(request_with(&large_pdf(40_000), &support::media::png()))
        .await
        .unwrap_err();
    let text = err.to_string();
    let LlmError::UploadElsewhere { location } = &err else {
        panic!("{err:?}");
    };
    assert!(location.starts_with(&elsewhere.url()), "{location}");
    assert!(!text.contains("UPLOAD-ID-777"), "{text}");
    assert!(
        !text.contains(KEY) && !format!("{err:?}").contains(KEY),
        "{text}"
    );
    assert_eq!(elsewhere.hits(), 0);
    assert!(elsewhere.raw().is_empty());
    // Only the start went out: no bytes, no generateContent.
    assert_eq!(server.hits(), 1);
}

#[tokio::test]
async fn a_file_stuck_in_processing_ends_with_a_clear_error() {
    let server = files_server(None, usize::MAX);
    let llm = client(&server, 3);
    let err = llm
        .chat(request_with(&large_pdf(40_000), &support::media::png()))
        .await
        .unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, LlmError::InvalidResponse { .. }), "{err:?}");
    assert!(text.contains("still PROCESSING after 3 reads"), "{text}");
    let requests = server.requests();
    let reads = requests.iter().filter(|r| r.method == "GET").count();
    assert_eq!(reads, 3);
    assert!(requests.iter().all(|r| !r.path.contains("generateContent")));
}

#[tokio::test]
async fn a_file_the_api_could_not_process_is_a_permanent_error_naming_the_part() {
    let server = files_server_ending(None, 2, "FAILED");
    let llm = client(&server, 5);
    let err = llm
        .chat(request_with(&large_pdf(40_000), &support::media::png()))
        .await
        .unwrap_err();
    let LlmError::Media(MediaError::Unprocessable { what, state, .. }) = &err else {
        panic!("{err:?}");
    };
    assert!(what.contains("invoice.pdf"), "{what}");
    assert!(state.contains("FAILED"), "{state}");
    assert!(!err.is_transient(), "the same bytes fail again: {err:?}");
    assert!(!err.to_string().contains(KEY));
    let requests = server.requests();
    assert!(requests.iter().all(|r| !r.path.contains("generateContent")));
}

#[tokio::test]
async fn a_part_over_the_files_api_limit_is_refused_before_sending() {
    let server = files_server(None, 0);
    let llm = client(&server, 5);
    // Zeroed pages are not touched: the 2 GB are reserved, not written.
    let huge = Media::pdf(vec![0u8; 2 * 1024 * 1024 * 1024 + 1]);
    let request = ChatRequest::new("").with_message(Message::user("x").with_media([huge]));
    let err = llm.accepts(&request).unwrap_err();
    assert!(err.to_string().contains("2 GB per file"), "{err}");
    let err = llm.chat(request).await.unwrap_err();
    assert!(
        matches!(&err, LlmError::Media(_)) && err.to_string().contains("2 GB per file"),
        "{err:?}"
    );
    assert_eq!(server.hits(), 0);
}

#[tokio::test]
async fn a_streamed_request_uploads_its_large_part_too() {
    let server = files_server(None, 0);
    let llm = client(&server, 5);
    let mut stream = llm
        .chat_stream(request_with(&large_pdf(40_000), &support::media::png()))
        .await
        .unwrap();
    while let Some(event) = stream.next().await {
        event.unwrap();
    }
    let requests = server.requests();
    let last = requests.last().unwrap();
    assert!(last.path.contains("streamGenerateContent"), "{}", last.path);
    assert_eq!(
        last.json["contents"][1]["parts"][0]["file_data"]["file_uri"],
        format!("{}/v1beta/files/abc-123", server.url())
    );
}
