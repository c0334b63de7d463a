//! Conversion instead of refusal (`ConvertMedia`): against a local server speaking Ollama's wire
//! format (Ollama takes images, not PDFs), a PDF with a text layer arrives as its text before the
//! message's own, a scan arrives as one PNG image per page (feature `pdf-render`), the request
//! unchanged where nothing was refused, an image by URL still refused, and nothing sent on a refusal.

use crate::pdf_writer;
use crate::support;

use llm_extract::extract::{ExtractErrorKind, Extractor, Input};
use llm_extract::llm::{ConvertMedia, LlmError, Media, MediaError, MediaType, Ollama};
use pdf_writer::write_pdf;
use support::media::{decode, last_message, png};
use support::types::Person;
use support::{Answer, Reply, TestServer};

const PERSON: &str = r#"{"name": "Ada", "age": 36}"#;

fn ollama_server() -> (TestServer, ConvertMedia<Ollama>) {
    let server = TestServer::start(|request| Reply::ollama(request, &Answer::new(PERSON)));
    let llm = Ollama::builder("llava").host(server.url()).build().unwrap();
    (server, ConvertMedia::new(llm))
}

#[tokio::test]
async fn a_pdf_ollama_refuses_arrives_as_its_text_and_an_image_beside_it_stays() {
    let (server, llm) = ollama_server();
    let pdf = write_pdf(
        &[
            &["Ada Lovelace, age 36."],
            &["Page two: the analytical engine."],
        ],
        false,
    );
    let input = Input::text("Who is it?")
        .with_media(Media::png(png()))
        .with_media(Media::pdf(pdf).with_name("notes.pdf"));
    let out = Extractor::new(&llm).extract::<Person>(input).await.unwrap();
    assert_eq!(out.value.name, "Ada");
    let requests = server.requests();
    assert_eq!(
        requests.len(),
        1,
        "the refusal is before sending: one request"
    );
    let message = last_message(&requests[0]);
    let content = message["content"].as_str().unwrap();
    assert!(
        content.starts_with("[PDF \"notes.pdf\", its text, 2 page(s)]\nAda Lovelace, age 36."),
        "{content}"
    );
    assert!(content.contains("Page two: the analytical engine.\n[end of PDF \"notes.pdf\"]"));
    assert!(content.ends_with("Who is it?"), "{content}");
    let images = message["images"].as_array().unwrap();
    assert_eq!(images.len(), 1);
    assert_eq!(decode(&images[0]), png());
}

#[tokio::test]
async fn a_scan_arrives_as_one_png_per_page() {
    let (server, llm) = ollama_server();
    let scan = write_pdf(&[&[], &[]], true);
    let input = Input::text("Who?").with_media(Media::pdf(scan).with_name("scan.pdf"));
    Extractor::new(&llm).extract::<Person>(input).await.unwrap();
    let message = last_message(&server.requests()[0]);
    assert_eq!(message["content"], "Who?");
    let images = message["images"].as_array().unwrap();
    assert_eq!(images.len(), 2, "one image per page");
    for image in images {
        let png = decode(image);
        assert_eq!(MediaType::sniff(&png), Some(MediaType::Png));
        // A US Letter page (612 x 792 points) at 150 dpi.
        let width = u32::from_be_bytes(png[16..20].try_into().unwrap());
        let height = u32::from_be_bytes(png[20..24].try_into().unwrap());
        assert_eq!((width, height), (1275, 1650));
    }
}

fn media_error<T: std::fmt::Debug>(result: Result<T, llm_extract::ExtractError>) -> MediaError {
    match result.expect_err("refused").kind() {
        ExtractErrorKind::Llm(LlmError::Media(media)) => media.clone(),
        other => panic!("not a media error: {other:?}"),
    }
}

#[tokio::test]
async fn what_cannot_be_converted_is_still_refused_before_sending() {
    let (server, llm) = ollama_server();
    // An image by URL: never fetched, so never converted.
    let input = Input::text("x").with_media(Media::image_url(
        MediaType::Png,
        "https://example.com/a.png",
    ));
    let err = media_error(Extractor::new(&llm).extract::<Person>(input).await);
    assert!(err.to_string().contains("images by URL"), "{err}");
    // A PDF that is not one: named, with why it could not be converted.
    let input =
        Input::text("x").with_media(Media::pdf(b"%PDF-1.7 broken".to_vec()).with_name("bad.pdf"));
    let err = media_error(Extractor::new(&llm).extract::<Person>(input).await);
    let message = err.to_string();
    assert!(
        message.contains("PDF \"bad.pdf\"") && message.contains("could not be converted either"),
        "{message}"
    );
    assert!(server.requests().is_empty(), "nothing may be sent");
}
