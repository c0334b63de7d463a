//! One value from a long document (`Extractor::one_value`, `OneValue::extract_pages`): an
//! agreement of eight PDF pages written here, its date, parties and governing law on different pages, each
//! field of the one value taken from the chunk that grounds it, located on its page, and checked
//! against a second, independent reading of the PDF (`lopdf`'s text extraction).

use crate::pdf_writer;

use llm_extract::document::pdf;
use llm_extract::extract::Extractor;
use llm_extract::llm::{from_fn, ChatRequest, ChatResponse, Role};
use llm_extract::Extract;
use pdf_writer::write_pdf;
use serde::Deserialize;
use serde_json::json;

#[derive(Extract, Deserialize, Debug)]
struct Agreement {
    /// The date the agreement takes effect.
    #[extract(grounded)]
    effective_date: Option<String>,
    /// The parties, as named.
    #[extract(grounded)]
    parties: Vec<String>,
    /// The governing law.
    #[extract(grounded)]
    governing_law: Option<String>,
}

/// Eight pages; the clause lines are long enough that each page is about a chunk.
fn agreement_pdf() -> Vec<u8> {
    let filler = "Each party shall perform its obligations in good faith and with due care.";
    let clauses: [&str; 8] = [
        "This Agreement is effective as of 1 March 2026.",
        "Clause 2. Definitions apply throughout.",
        "Clause 3. Services are set out in Schedule A.",
        "This Agreement is made between Acme Widgets Ltd and Borealis Shipping GmbH.",
        "Clause 5. Fees are payable within 30 days.",
        "Schedule B is effective as of 2 April 2026.",
        "This Agreement is governed by the laws of Ireland.",
        "Signed for and on behalf of each party.",
    ];
    let pages: Vec<Vec<&str>> = clauses
        .iter()
        .map(|clause| {
            let mut lines = vec![*clause];
            lines.extend(std::iter::repeat_n(filler, 6));
            lines
        })
        .collect();
    let pages: Vec<&[&str]> = pages.iter().map(Vec::as_slice).collect();
    write_pdf(&pages, false)
}

/// A stand-in model that reads its chunk (every user turn, repairs included) and gives what it says.
fn reader() -> impl llm_extract::llm::Llm {
    from_fn(|request: ChatRequest| {
        let text: String = request
            .messages
            .iter()
            .filter(|m| m.role == Role::User)
            .map(|m| m.content.as_str())
            .collect();
        let seen = |words: &'static str| text.contains(words).then_some(words);
        let mut items = Vec::new();
        for date in ["1 March 2026", "2 April 2026"] {
            if let Some(date) = seen(date) {
                items.push(json!({"effective_date": date, "parties": [], "governing_law": null}));
            }
        }
        let parties: Vec<&str> = ["Acme Widgets Ltd", "Borealis Shipping GmbH"]
            .into_iter()
            .filter_map(seen)
            .collect();
        if !parties.is_empty() {
            items.push(json!({"effective_date": null, "parties": parties, "governing_law": null}));
        }
        if let Some(law) = seen("the laws of Ireland") {
            items.push(json!({"effective_date": null, "parties": [], "governing_law": law}));
        }
        let answer = json!({ "items": items }).to_string();
        async move { Ok(ChatResponse::new(answer)) }
    })
}

#[tokio::test]
async fn one_value_from_an_eight_page_agreement_names_the_page_of_each_field() {
    let bytes = agreement_pdf();
    let pages = pdf::read(&bytes).expect("the PDF reads");
    assert_eq!(pages.len(), 8);
    let paged = Extractor::new(reader())
        .chunk_bytes(700)
        .one_value()
        .extract_pages::<Agreement>(&pages)
        .await
        .expect("no read error");
    let doc = &paged.document;
    assert!(doc.chunks.len() >= 6, "{} chunks", doc.chunks.len());
    let value = doc.value.as_ref().expect("a value");
    assert_eq!(value.value.effective_date.as_deref(), Some("1 March 2026"));
    assert_eq!(
        value.value.parties,
        ["Acme Widgets Ltd", "Borealis Shipping GmbH"]
    );
    assert_eq!(
        value.value.governing_law.as_deref(),
        Some("the laws of Ireland")
    );
    // The schedule's date is a conflict, not lost.
    let conflicts: Vec<(&str, &serde_json::Value)> = doc
        .conflicts
        .iter()
        .map(|c| (c.path.as_str(), &c.other))
        .collect();
    assert_eq!(conflicts, [("/effective_date", &json!("2 April 2026"))]);
    // Each span on its page, its words there by an independent reading.
    let independent = lopdf::Document::load_mem(&bytes).expect("lopdf reads it");
    let on: Vec<u32> = paged
        .pages
        .iter()
        .map(|at| at.as_ref().expect("found").page as u32)
        .collect();
    assert_eq!(on, [1, 4, 4, 7]);
    for (span, at) in value.spans.iter().zip(&paged.pages) {
        let at = at.as_ref().expect("found");
        let page_text = pages.page_text(at.page).expect("the page");
        assert_eq!(&page_text[at.bytes.clone()], span.value);
        let theirs = independent
            .extract_text(&[at.page as u32])
            .expect("lopdf's text");
        assert!(
            theirs.contains(&span.value),
            "{} not on page {}",
            span.value,
            at.page
        );
    }
    // The fields came from different chunks.
    assert!(doc.sources["/effective_date"].chunk < doc.sources["/parties"].chunk);
    assert!(doc.sources["/parties"].chunk < doc.sources["/governing_law"].chunk);
}
