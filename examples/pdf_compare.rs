//! Two pure-Rust readings of PDFs' text layers side by side, for the "PDF text" section of
//! BENCHMARKS.md: `pdf-extract` (what `llm_extract::document::pdf` uses) and `lopdf`'s own
//! `extract_text`. For each file: pages, the text each yields, the time each takes, pages that fail,
//! and how much of one's words the other has (a low share means one of them lost or garbled text).
//!
//! ```text
//! cargo run --release --example pdf_compare -- tests/data/pdf/*.pdf [more.pdf ...]
//! cargo run --release --example pdf_compare -- --text FILE.pdf   # both texts, to read
//! ```

use std::collections::HashMap;
use std::time::Instant;

fn main() {
    let mut paths: Vec<String> = std::env::args().skip(1).collect();
    if paths.first().map(String::as_str) == Some("--text") {
        for path in paths.drain(..).skip(1) {
            let bytes = std::fs::read(&path).unwrap_or_default();
            match llm_extract::document::pdf::read(&bytes) {
                Ok(pages) => println!("== pdf-extract, {path}\n{}", pages.text()),
                Err(e) => println!("== pdf-extract, {path}: {e}"),
            }
            match lopdf_pages(&bytes) {
                Ok((pages, _)) => println!("== lopdf, {path}\n{}", pages.join("\n\u{c}\n")),
                Err(e) => println!("== lopdf, {path}: {e}"),
            }
        }
        return;
    }
    if paths.is_empty() {
        eprintln!("usage: pdf_compare FILE.pdf ...");
        std::process::exit(2);
    }
    println!(
        "| file | KB | pages | pdf-extract: chars, ms, failure | lopdf: chars, ms, failure | words of each in the other |"
    );
    println!("|---|---|---|---|---|---|");
    for path in paths {
        let Ok(bytes) = std::fs::read(&path) else {
            eprintln!("cannot read {path}");
            continue;
        };
        let name = path.rsplit('/').next().unwrap_or(&path);
        let started = Instant::now();
        let ours = llm_extract::document::pdf::read(&bytes);
        let ours_ms = started.elapsed().as_secs_f64() * 1000.0;
        let started = Instant::now();
        let theirs = lopdf_pages(&bytes);
        let theirs_ms = started.elapsed().as_secs_f64() * 1000.0;
        let (ours_text, ours_pages, ours_failure) = match &ours {
            Ok(pages) => (
                pages.text().replace('\u{c}', " "),
                pages.len(),
                match pages.unreadable().len() {
                    0 => String::new(),
                    n => format!("{n} page(s) unreadable"),
                },
            ),
            Err(e) => (String::new(), 0, short(&e.to_string())),
        };
        let (theirs_text, theirs_pages, theirs_failure) = match &theirs {
            Ok((pages, failed)) => (
                pages.join("\n"),
                pages.len(),
                match failed {
                    0 => String::new(),
                    n => format!("{n} page(s) failed"),
                },
            ),
            Err(e) => (String::new(), 0, short(e)),
        };
        println!(
            "| {name} | {} | {} | {}, {ours_ms:.1}, {ours_failure} | {}, {theirs_ms:.1}, {theirs_failure} | {:.2} / {:.2} |",
            bytes.len() / 1024,
            ours_pages.max(theirs_pages),
            ours_text.chars().count(),
            theirs_text.chars().count(),
            share(&ours_text, &theirs_text),
            share(&theirs_text, &ours_text),
        );
    }
}

/// `lopdf`'s text of each page, and how many pages failed.
fn lopdf_pages(bytes: &[u8]) -> Result<(Vec<String>, usize), String> {
    let read = std::panic::catch_unwind(|| {
        let document = lopdf::Document::load_mem(bytes).map_err(|e| e.to_string())?;
        let mut pages = Vec::new();
        let mut failed = 0;
        for number in document.get_pages().keys() {
            match document.extract_text(&[*number]) {
                Ok(text) => pages.push(text),
                Err(_) => {
                    failed += 1;
                    pages.push(String::new());
                }
            }
        }
        Ok((pages, failed))
    });
    read.unwrap_or_else(|_| Err("panicked".to_owned()))
}

/// The share of `a`'s words (with repeats) that `b` has.
fn share(a: &str, b: &str) -> f64 {
    let mut have: HashMap<&str, usize> = HashMap::new();
    for word in b.split_whitespace() {
        *have.entry(word).or_default() += 1;
    }
    let (mut found, mut total) = (0, 0);
    for word in a.split_whitespace() {
        total += 1;
        if let Some(n) = have.get_mut(word).filter(|n| **n > 0) {
            *n -= 1;
            found += 1;
        }
    }
    if total == 0 {
        return 0.0;
    }
    found as f64 / total as f64
}

/// The first words of an error.
fn short(error: &str) -> String {
    error.chars().take(60).collect::<String>().replace('|', "/")
}
