//! A PDF invoice to a typed `Invoice`: its text layer read page by page, each field a quote of the
//! invoice located on its page; then, when a key is set, the same invoice as an image on a vision
//! backend.
//!
//! ```text
//! cargo run --example invoice_pdf --features llama-cpp
//! GEMINI_API_KEY=... cargo run --example invoice_pdf --features llama-cpp     # + the image on Gemini
//! ANTHROPIC_API_KEY=... cargo run --example invoice_pdf --features llama-cpp  # + the image on Claude
//! OPENAI_API_KEY=... cargo run --example invoice_pdf --features llama-cpp     # + the image on OpenAI
//! ```
//!
//! The invoice is `examples/data/invoice.pdf` (written by `scripts/invoice-pdf.py`: one A4 page with a
//! real text layer, its table cells placed one by one as invoicing software writes them);
//! `examples/data/invoice.png` is that page drawn at 100 dpi (826 × 1169 pixels) by
//! `llm_extract::document::render` (feature `pdf-render`). Each answer is checked against the
//! invoice's known values.
//!
//! On the embedded default model (SmolLM2 135M Instruct, Q4_1), measured 2026-12-05 with the command
//! above: 3 of 5 right. The number (`INV-2026-0457`), the date (`14 November 2026`) and the total
//! (`3876.00 EUR`) are right; the seller is given as the customer's name and the customer as the word
//! `Invoice`. Every value is an exact quote located on page 1 (grounding holds even where the field
//! is wrong: a quote, not a right answer). 1 chunk, 1302 tokens. A development figure: the invoice
//! was written for this example. The one-value document path (`one_value().extract_pages`) is used, so a
//! longer invoice is read chunk by chunk, each field taken from the chunk that grounds it best.

#[path = "support/backend.rs"]
mod backend;

use llm_extract::document::pdf;
use llm_extract::extract::{Extractor, Input};
use llm_extract::llm::{Anthropic, Gemini, Llm, Media, OpenAiCompatible};
use llm_extract::Extract;
use serde::Deserialize;

/// An invoice, each field copied from it.
#[derive(Extract, Deserialize, Debug)]
struct Invoice {
    /// The invoice number, as printed (e.g. "INV-...").
    #[extract(grounded)]
    number: String,
    /// The date the invoice was issued, as printed.
    #[extract(grounded)]
    date: String,
    /// The company that issued the invoice.
    #[extract(grounded)]
    seller: String,
    /// The company billed (under "Bill to").
    #[extract(grounded)]
    customer: String,
    /// The total due with its currency, as printed (e.g. "100.00 EUR").
    #[extract(grounded)]
    total: String,
}

/// What the invoice says, field by field.
const EXPECTED: [(&str, &str); 5] = [
    ("number", "INV-2026-0457"),
    ("date", "14 November 2026"),
    ("seller", "Atelier Moreau SARL"),
    ("customer", "Northwind Traders Ltd"),
    ("total", "3876.00 EUR"),
];

impl Invoice {
    fn fields(&self) -> [(&'static str, &str); 5] {
        [
            ("number", &self.number),
            ("date", &self.date),
            ("seller", &self.seller),
            ("customer", &self.customer),
            ("total", &self.total),
        ]
    }
}

/// Prints each field with a mark for whether it is the invoice's value; returns how many are.
fn score(invoice: &Invoice, located: &[String]) -> usize {
    let mut right = 0;
    for (i, ((name, got), (_, want))) in invoice.fields().iter().zip(EXPECTED).enumerate() {
        let ok = got.trim() == want;
        right += usize::from(ok);
        let mark = if ok { "ok " } else { "NO " };
        let at = located.get(i).map(String::as_str).unwrap_or_default();
        println!("  {mark} {name:9} {got:28} {at}");
    }
    right
}

const INSTRUCTIONS: &str = "Read the invoice. Copy each value exactly as the invoice prints it.";

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/data");
    let bytes = std::fs::read(format!("{dir}/invoice.pdf"))?;
    let pages = pdf::read(&bytes)?;
    println!(
        "invoice.pdf: {} page(s), {} bytes of text\n",
        pages.len(),
        pages.text().len()
    );

    let llm = backend::from_env_and_args()?;
    let extractor = Extractor::new(&llm).instructions(INSTRUCTIONS);
    let paged = extractor
        .one_value()
        .extract_pages::<Invoice>(&pages)
        .await?;
    let doc = &paged.document;
    let Some(invoice) = &doc.value else {
        return Err(format!("no value: {:?}", doc.rejected).into());
    };
    // Where each field was found: its page and how it matched.
    let located: Vec<String> = invoice
        .spans
        .iter()
        .zip(&paged.pages)
        .map(|(span, at)| match at {
            Some(at) => format!("page {} ({:?})", at.page, span.kind),
            None => "not found on any page".to_owned(),
        })
        .collect();
    println!("From the PDF's text, on the local model:");
    let right = score(&invoice.value, &located);
    println!(
        "  {right}/5 right; {} chunk(s), {} tokens\n",
        doc.chunks.len(),
        doc.usage.total()
    );

    // The same invoice as an image, on a vision backend when a key is set.
    let vision: Option<Box<dyn Llm>> = if has_key("GEMINI_API_KEY") {
        Some(Box::new(Gemini::new("gemini-2.5-flash")?))
    } else if has_key("ANTHROPIC_API_KEY") {
        Some(Box::new(Anthropic::new("claude-sonnet-4-5")?))
    } else if has_key("OPENAI_API_KEY") {
        Some(Box::new(OpenAiCompatible::new(
            "https://api.openai.com/v1",
            "gpt-4.1-mini",
        )?))
    } else {
        None
    };
    let Some(vision) = vision else {
        println!(
            "(Set GEMINI_API_KEY, ANTHROPIC_API_KEY or OPENAI_API_KEY to read invoice.png on a \
             vision backend too.)"
        );
        return Ok(());
    };
    let image = Media::png(std::fs::read(format!("{dir}/invoice.png"))?).with_name("invoice.png");
    // The image is the input: its words cannot be located in a text, so the fields are not grounded.
    let input = Input::text("The invoice is the attached image.").with_media(image);
    let seen = Extractor::new(vision)
        .instructions(INSTRUCTIONS)
        .extract::<Invoice>(input)
        .await?;
    println!("From the image, on a vision backend:");
    let right = score(&seen.value, &[]);
    println!("  {right}/5 right; {} tokens", seen.report.usage.total());
    Ok(())
}

fn has_key(name: &str) -> bool {
    std::env::var(name).is_ok_and(|key| !key.trim().is_empty())
}
