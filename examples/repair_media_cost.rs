//! What a repair costs when the input carries an image: the repair turn resends the media (the
//! providers keep no state between requests, so the model can only check its fix against the image if
//! the image comes again), and this program measures what that adds, for the "Documents" section of
//! BENCHMARKS.md.
//!
//! ```text
//! cargo run --example repair_media_cost [IMAGE.png]   # default examples/data/invoice.png
//! ```
//!
//! No model is called: a stand-in answers the first request with an invalid value (a field missing)
//! and the repair with a valid one, and records both requests as the extraction loop built them. Their
//! text is counted with OpenAI's `o200k_base` tokenizer; each image is priced by each provider's
//! documented formula for its pixel size:
//!
//! - OpenAI (GPT-4o / GPT-4.1 family, `detail: high`): fit within 2048 × 2048, then the shortest side
//!   scaled to 768; 170 tokens per 512-pixel tile plus 85.
//! - Anthropic: images over 1568 pixels on the long side are scaled down; width × height / 750.
//! - Gemini (2.x): 258 tokens for an image of at most 384 pixels a side, else 258 per 768 × 768 tile.

use llm_extract::extract::{Extractor, Input};
use llm_extract::llm::{from_fn, ChatRequest, ChatResponse, Media};
use llm_extract::Extract;
use serde::Deserialize;
use std::sync::{Arc, Mutex};

#[derive(Extract, Deserialize, Debug)]
#[allow(dead_code)]
struct Invoice {
    /// The invoice number, as printed.
    number: String,
    /// The company billed.
    customer: String,
    /// The total due with its currency, as printed.
    total: String,
}

fn text_tokens(request: &ChatRequest) -> usize {
    let count = |text: &str| {
        tiktoken_rs::o200k_base_singleton()
            .encode_ordinary(text)
            .len()
    };
    request.system.as_deref().map_or(0, count)
        + request
            .messages
            .iter()
            .map(|m| count(&m.content))
            .sum::<usize>()
}

fn openai(width: f64, height: f64) -> u64 {
    let fit = (2048.0 / width.max(height)).min(1.0);
    let (w, h) = (width * fit, height * fit);
    let short = (768.0 / w.min(h)).min(1.0);
    let (w, h) = (w * short, h * short);
    85 + 170 * ((w / 512.0).ceil() * (h / 512.0).ceil()) as u64
}

fn anthropic(width: f64, height: f64) -> u64 {
    let fit = (1568.0 / width.max(height)).min(1.0);
    ((width * fit) * (height * fit) / 750.0).round() as u64
}

fn gemini(width: f64, height: f64) -> u64 {
    if width <= 384.0 && height <= 384.0 {
        258
    } else {
        258 * ((width / 768.0).ceil() * (height / 768.0).ceil()) as u64
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args().nth(1).unwrap_or_else(|| {
        concat!(env!("CARGO_MANIFEST_DIR"), "/examples/data/invoice.png").into()
    });
    let png = std::fs::read(&path)?;
    let size = |at: usize| {
        png.get(at..at + 4)
            .and_then(|b| b.try_into().ok())
            .map_or(0, u32::from_be_bytes)
    };
    let (width, height) = (f64::from(size(16)), f64::from(size(20)));
    let seen: Arc<Mutex<Vec<ChatRequest>>> = Arc::default();
    let record = seen.clone();
    let llm = from_fn(move |request: ChatRequest| {
        let mut requests = record.lock().unwrap_or_else(|e| e.into_inner());
        let answer = if requests.is_empty() {
            r#"{"number": "INV-2026-0457", "total": "3876.00 EUR"}"#
        } else {
            r#"{"number": "INV-2026-0457", "customer": "Northwind Traders Ltd", "total": "3876.00 EUR"}"#
        };
        requests.push(request);
        async move { Ok(ChatResponse::new(answer)) }
    });
    let input = Input::text("The invoice is the attached image.")
        .with_media(Media::png(png.clone()).with_name("invoice.png"));
    let out = Extractor::new(llm).extract::<Invoice>(input).await?;
    let requests = seen.lock().unwrap_or_else(|e| e.into_inner()).clone();
    println!(
        "{path}: {width} x {height} pixels; {} requests ({} attempts)",
        requests.len(),
        out.report.attempts.len()
    );
    let images: Vec<usize> = requests
        .iter()
        .map(|r| r.messages.iter().map(|m| m.media.len()).sum())
        .collect();
    println!("images sent per request: {images:?}");
    let Some(repair) = requests.get(1) else {
        return Err("no repair was asked".into());
    };
    let first = text_tokens(&requests[0]);
    let text = text_tokens(repair);
    println!("text tokens (o200k_base): first request {first}, repair {text}\n");
    println!("| provider | image tokens | repair with the image | without | share of the repair |");
    println!("|---|---|---|---|---|");
    for (name, image) in [
        ("OpenAI (high detail)", openai(width, height)),
        ("Anthropic", anthropic(width, height)),
        ("Gemini 2.x", gemini(width, height)),
    ] {
        let with = text as u64 + image;
        println!(
            "| {name} | {image} | {with} | {text} | {:.0}% |",
            100.0 * image as f64 / with as f64
        );
    }
    Ok(())
}
