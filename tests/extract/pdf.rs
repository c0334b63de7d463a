//! PDFs read page by page (`llm_extract::document::pdf`, feature `pdf`): PDFs written here with known
//! text on known pages, real PDFs from several producers (`tests/data/pdf/`, see its SOURCE.md), the
//! errors (scan, encrypted, malformed, limits), corrupted bytes that must never panic, and grounded
//! spans located on their page, checked against a second, independent reading of the same PDF
//! (`lopdf`'s own text extraction).

use crate::pdf_writer;

use llm_extract::document::pdf::{self, PdfError, PdfLimits};
use llm_extract::document::Pages;
use llm_extract::extract::Extractor;
use llm_extract::llm::{from_fn, ChatRequest, ChatResponse, Role};
use llm_extract::Extract;
use pdf_writer::write_pdf;
use proptest::prelude::*;
use serde::Deserialize;
use std::path::Path;

fn data(name: &str) -> Vec<u8> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/pdf")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The independent reading: `lopdf`'s text of each page.
fn lopdf_pages(bytes: &[u8]) -> Vec<String> {
    let document = lopdf::Document::load_mem(bytes).expect("lopdf reads it");
    document
        .get_pages()
        .keys()
        .map(|number| document.extract_text(&[*number]).unwrap_or_default())
        .collect()
}

fn words(text: &str) -> Vec<&str> {
    text.split_whitespace().collect()
}

#[test]
fn known_text_lands_on_its_pages() {
    let pages: &[&[&str]] = &[
        &["Invoice number 2024-117", "Issued by Acme Tools Ltd."],
        &["Line items follow."],
        &["Total due: 1,250.00 EUR", "Payment within 30 days (net)."],
    ];
    let read = pdf::read(&write_pdf(pages, false)).expect("reads");
    assert_eq!(read.len(), 3);
    assert!(read.unreadable().is_empty());
    for (index, lines) in pages.iter().enumerate() {
        let text = read.page_text(index + 1).unwrap();
        assert_eq!(words(text), words(&lines.join(" ")), "page {}", index + 1);
    }
}

#[test]
fn a_scan_is_refused_and_says_to_use_a_backend_that_reads_images() {
    let scan = write_pdf(&[&[], &[]], true);
    let error = pdf::read(&scan).unwrap_err();
    assert!(matches!(error, PdfError::NoText { pages: 2 }), "{error:?}");
    assert!(error.to_string().contains("reads images"), "{error}");
    // An image beside text is not a scan.
    let mixed = write_pdf(&[&["A caption under a photo."]], true);
    assert_eq!(
        words(pdf::read(&mixed).unwrap().text()),
        ["A", "caption", "under", "a", "photo."]
    );
}

#[test]
fn limits_are_errors_that_name_them() {
    let three = write_pdf(&[&["one"], &["two"], &["three"]], false);
    let error = pdf::read_with(&three, &PdfLimits::default().max_pages(2)).unwrap_err();
    assert!(matches!(
        error,
        PdfError::TooManyPages { pages: 3, limit: 2 }
    ));
    assert!(error.to_string().contains("max_pages"));
    let error = pdf::read_with(&three, &PdfLimits::default().max_text_bytes(5)).unwrap_err();
    assert!(
        matches!(error, PdfError::TooMuchText { page: 2, limit: 5 }),
        "{error:?}"
    );
    let error = pdf::read_with(&three, &PdfLimits::default().max_bytes(100)).unwrap_err();
    assert!(error.to_string().contains("max_bytes"));
}

#[test]
fn encrypted_and_malformed_files_are_errors() {
    let error = pdf::read(&data("password-example.pdf")).unwrap_err();
    assert!(matches!(error, PdfError::Encrypted), "{error:?}");
    // The malformed file: an error or its text, never a panic.
    match pdf::read(&data("malformed-from-issue-932.pdf")) {
        Ok(pages) => assert!(!pages.is_empty()),
        Err(error) => assert!(!error.to_string().is_empty()),
    }
    assert!(matches!(
        pdf::read(b"%PDF-1.7\n1 0 obj << /Type /Catalog"),
        Err(PdfError::Malformed { .. })
    ));
}

/// The real PDFs: every page read, and the words of each page found in the independent reading of the
/// same page. The two readers space text differently (`pdf-extract` glues a table's cells, `lopdf`
/// glues the words of prose), so a word counts as found when it occurs in the other reading with all
/// whitespace removed; a low share would mean lost or garbled text.
#[test]
fn real_pdfs_from_several_producers_agree_with_an_independent_reading() {
    for (name, min_share) in [
        ("issue-33-lorem-ipsum.pdf", 0.95),
        ("2023-06-20-PV.pdf", 0.9),
        ("issue-987-test.pdf", 0.7),
        ("issue-140-example.pdf", 0.9),
        ("la-precinct-bulletin-2014-p1.pdf", 0.9),
        ("scotus-transcript-p1.pdf", 0.9),
    ] {
        let bytes = data(name);
        let ours = pdf::read(&bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
        let theirs = lopdf_pages(&bytes);
        assert_eq!(ours.len(), theirs.len(), "{name}: pages");
        for (index, their_text) in theirs.iter().enumerate() {
            let page = ours.page_text(index + 1).unwrap();
            let share = share(&words(page), their_text);
            assert!(
                share >= min_share,
                "{name} page {}: {share:.2} of our words in lopdf's",
                index + 1
            );
        }
    }
}

/// `text` without whitespace.
fn squeezed(text: &str) -> String {
    text.chars().filter(|c| !c.is_whitespace()).collect()
}

/// The share of `words` that occur in `other` once whitespace is removed from both.
fn share(words: &[&str], other: &str) -> f64 {
    if words.is_empty() {
        return 1.0;
    }
    let other = squeezed(other);
    let found = words.iter().filter(|word| other.contains(*word)).count();
    found as f64 / words.len() as f64
}

#[derive(Extract, Deserialize, Debug)]
struct Phrase {
    /// A phrase quoted from the document.
    #[extract(grounded, key)]
    text: String,
}

/// A model that quotes every phrase of `phrases` its chunk holds.
fn quoting(phrases: Vec<String>) -> impl llm_extract::Llm {
    from_fn(move |request: ChatRequest| {
        let chunk = request
            .messages
            .iter()
            .find(|m| m.role == Role::User)
            .map(|m| m.content.clone())
            .unwrap_or_default();
        let items: Vec<String> = phrases
            .iter()
            .filter(|p| chunk.contains(p.as_str()))
            .map(|p| serde_json::json!({ "text": p }).to_string())
            .collect();
        let answer = format!(r#"{{"items": [{}]}}"#, items.join(","));
        async move { Ok(ChatResponse::new(answer)) }
    })
}

/// Three consecutive words of page `page` of `pages` that occur once in the whole text and, in the
/// same order, in the independent reading of that page (whitespace aside).
fn phrases_of(pages: &Pages, theirs: &[String]) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for page in 1..=pages.len() {
        let text = pages.page_text(page).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        let their_text = squeezed(&theirs[page - 1]);
        let found = lines.iter().find_map(|line| {
            let w = words(line);
            w.windows(3).map(|w| w.join(" ")).find(|phrase| {
                phrase.len() > 12
                    && pages.text().matches(phrase.as_str()).count() == 1
                    && their_text.contains(&squeezed(phrase))
            })
        });
        if let Some(phrase) = found {
            out.push((page, phrase));
        }
    }
    out
}

#[tokio::test]
async fn grounded_spans_from_a_pdf_resolve_to_the_right_page_and_words() {
    for name in ["issue-33-lorem-ipsum.pdf", "2023-06-20-PV.pdf"] {
        let bytes = data(name);
        let pages = pdf::read(&bytes).unwrap();
        let theirs = lopdf_pages(&bytes);
        let phrases = phrases_of(&pages, &theirs);
        assert!(phrases.len() >= 2, "{name}: {phrases:?}");
        let llm = quoting(phrases.iter().map(|(_, p)| p.clone()).collect());
        // Small chunks: several per document, each ending at a page break where one is near.
        let doc = Extractor::new(llm)
            .chunk_bytes(600)
            .extract_pages::<Phrase>(&pages)
            .await
            .unwrap();
        assert!(doc.document.chunks.len() > 2, "{name}");
        assert_eq!(doc.document.items.len(), phrases.len(), "{name}");
        for (item, located) in doc.document.items.iter().zip(&doc.pages) {
            let (page, _) = phrases.iter().find(|(_, p)| *p == item.value.text).unwrap();
            assert!(!located.is_empty());
            for at in located {
                let at = at.as_ref().expect("found");
                assert_eq!(at.page, *page, "{name}: {}", item.value.text);
                let page_text = pages.page_text(at.page).unwrap();
                assert_eq!(&page_text[at.bytes.clone()], item.value.text);
                let by_chars: String = page_text
                    .chars()
                    .skip(at.chars.start)
                    .take(at.chars.len())
                    .collect();
                assert_eq!(by_chars, item.value.text);
                // The independent reading has those words on that page.
                assert!(squeezed(&theirs[at.page - 1]).contains(&squeezed(&item.value.text)));
            }
        }
    }
}

#[tokio::test]
async fn chunks_of_a_pdf_end_at_page_breaks() {
    let long: Vec<String> = (1..=6)
        .map(|page| {
            format!(
                "Page {page} opens here. {}",
                "Filler words on this page. ".repeat(12)
            )
        })
        .collect();
    let lines: Vec<[&str; 1]> = long.iter().map(|line| [line.as_str()]).collect();
    let pages_in: Vec<&[&str]> = lines.iter().map(|l| l.as_slice()).collect();
    let pages = pdf::read(&write_pdf(&pages_in, false)).unwrap();
    let extractor = Extractor::new(quoting(Vec::new()))
        .chunk_bytes(800)
        .chunk_overlap(0);
    let chunks = extractor.chunks(pages.text(), 0);
    assert!(chunks.len() >= 3);
    for chunk in &chunks[..chunks.len() - 1] {
        assert!(chunk.text.ends_with("\u{c}\n"), "{:?}", chunk.text);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    /// Truncated or bit-flipped PDFs are text or an error, never a panic (or a hang: the test would
    /// not finish).
    #[test]
    fn corrupted_pdfs_never_panic(
        which in 0usize..3,
        cut in 0.0f64..1.0,
        flips in proptest::collection::vec((0.0f64..1.0, 0u8..8), 0..12),
    ) {
        let mut bytes = match which {
            0 => write_pdf(&[&["Corrupted copy of a small page."], &["Second page."]], false),
            1 => data("issue-987-test.pdf"),
            _ => data("issue-140-example.pdf"),
        };
        for (at, bit) in flips {
            let at = ((bytes.len() as f64) * at) as usize % bytes.len().max(1);
            if let Some(byte) = bytes.get_mut(at) {
                *byte ^= 1 << bit;
            }
        }
        if cut < 0.5 {
            bytes.truncate(((bytes.len() as f64) * cut * 2.0) as usize);
        }
        let _ = pdf::read(&bytes);
    }
}
