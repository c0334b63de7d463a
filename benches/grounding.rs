//! Grounding cost: aligning one value against texts of growing length (it should grow linearly, so
//! the ratios between sizes are the figure), per match kind; and the fuzzy path on a 1 MB document
//! with 10,000 values.
//!
//! `cargo bench --bench grounding`. The text is The Adventures of Sherlock Holmes (one story, repeated
//! to length). The value for each kind is placed at the end of the text, the worst case for a search:
//! - exact: the value verbatim;
//! - normalized: the value re-spaced and upper-cased (exact search fails first, then the normalized one
//!   succeeds);
//! - fuzzy: the value with one word changed (exact and normalized fail, then the word index is used);
//! - not found: a value none of whose words occur.
//!
//! Each text is prepared once (`Source::new` plus a first alignment, which builds its indexes), as a
//! grounded extraction does per chunk; what is timed is one alignment.

use criterion::{criterion_group, BenchmarkId, Criterion, Throughput};
use llm_extract::ground::Source;
use std::hint::black_box;

const STORY: &str = include_str!("../tests/data/a-case-of-identity.txt");
const TAIL: &str = " The tall gaunt visitor from Baskerville Hall remained silent.";

fn text_of(len: usize) -> String {
    let mut text = String::with_capacity(len + TAIL.len());
    while text.len() + STORY.len() < len {
        text.push_str(STORY);
    }
    let rest = len.saturating_sub(text.len());
    let mut cut = rest.min(STORY.len());
    while !STORY.is_char_boundary(cut) {
        cut -= 1;
    }
    text.push_str(&STORY[..cut]);
    text.push_str(TAIL);
    text
}

fn per_value(c: &mut Criterion) {
    let values = [
        ("exact", "gaunt visitor from Baskerville Hall"),
        ("normalized", "GAUNT   visitor\nFROM baskerville hall"),
        ("fuzzy", "gaunt visitor out of Baskerville Hall"),
        ("not_found", "quixotic zephyr jumbled"),
    ];
    for (kind, value) in values {
        let mut group = c.benchmark_group(format!("align_{kind}"));
        group.sample_size(20);
        for len in [4_000, 40_000, 400_000] {
            let text = text_of(len);
            let source = Source::new(&text);
            source.align("warm up the indexes");
            group.throughput(Throughput::Bytes(text.len() as u64));
            group.bench_with_input(BenchmarkId::from_parameter(len), &source, |b, source| {
                b.iter(|| black_box(source.align(black_box(value))))
            });
        }
        group.finish();
    }
}

fn megabyte_fuzzy(c: &mut Criterion) {
    let text = text_of(1_000_000);
    // 10,000 values: phrases of the text with one word changed, so each goes to the fuzzy path.
    let words: Vec<&str> = text.split_whitespace().collect();
    let values: Vec<String> = (0..10_000)
        .map(|i| {
            let at = (i * 97) % (words.len() - 6);
            let mut phrase: Vec<&str> = words[at..at + 6].to_vec();
            phrase[2] = "zqx";
            phrase.join(" ")
        })
        .collect();
    let mut group = c.benchmark_group("fuzzy_1mb");
    group.sample_size(10);
    group.throughput(Throughput::Elements(values.len() as u64));
    group.bench_function("10000_values", |b| {
        b.iter(|| {
            let source = Source::new(&text);
            values.iter().filter(|v| source.align(v).is_some()).count()
        })
    });
    group.finish();
}

criterion_group!(benches, per_value, megabyte_fuzzy);

fn main() {
    benches();
    criterion::Criterion::default()
        .configure_from_args()
        .final_summary();
}
