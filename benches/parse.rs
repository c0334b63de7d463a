//! The parsing engine against its baselines (benchmarks 1-5, the rows of BENCHMARKS.md, "Parsing").
//!
//! `cargo bench --bench parse` runs the criterion benchmarks, then prints a table of ratios, each
//! measured in the same run by interleaving ours and the baseline (so drift on a shared machine
//! cancels out). `-- --ratios-only` prints only the ratios, `-- --doubling-only` only benchmark 5. Short runs: `cargo bench --bench parse -- --warm-up-time 1 --measurement-time 3`.
//!
//! 1. Clean JSON -> `T`: ours (validation off / on) vs `serde_json::from_str::<T>`.
//! 2. The same JSON fenced and wrapped in prose, vs serde_json on the clean text.
//! 3. 1,000 valid JSON Lines -> validated `Vec<T>`, vs serde_json line by line.
//! 4. A JSON Lines answer fed to the decoder in 4-, 8- and 64-byte chunks vs one-shot `lines_from_str`,
//!    and the common approach of re-parsing the accumulated text on every (64-byte) chunk; 10-100 KB.
//! 5. Pathological inputs of 6 to 384 KB (doubling) through `from_str` (the cost of each doubling): an
//!    unterminated string; smart-quoted strings with no closing quote after a value; many fenced
//!    blocks; many distinct values in prose; an enum value named over and over in prose; many
//!    coerced values under one long key.

use criterion::{criterion_group, BenchmarkId, Criterion, Throughput};
use llm_extract::parse::{from_str_with, LineEvent, ParseOptions};
use llm_extract::{
    from_str,
    parse::{lines_from_str, LineDecoder},
    schema::SchemaSet,
    Schema,
};
use serde::{Deserialize, Serialize};
use serde_json::json;
use std::collections::HashMap;
use std::hint::black_box;
use std::sync::OnceLock;
use std::time::Duration;

#[path = "support/timing.rs"]
mod timing;
use timing::{doubling_rows, interleaved, isolated_table, row};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Fact {
    subject: String,
    predicate: String,
    object: String,
    confidence: f64,
    kind: Kind,
    source: Option<String>,
    tags: Vec<String>,
    line: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Kind {
    Claim,
    Definition,
    Relation,
}

impl Schema for Fact {
    fn schema() -> &'static SchemaSet {
        static S: OnceLock<SchemaSet> = OnceLock::new();
        S.get_or_init(|| {
            SchemaSet::new(
                "Fact",
                json!({
                    "type": "object",
                    "description": "One fact stated in the text.",
                    "properties": {
                        "subject": {"type": "string", "description": "Who or what it is about."},
                        "predicate": {"type": "string"},
                        "object": {"type": "string"},
                        "confidence": {"type": "number", "minimum": 0, "maximum": 1},
                        "kind": {"type": "string", "enum": ["claim", "definition", "relation"]},
                        "source": {"type": ["string", "null"]},
                        "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": true},
                        "line": {"type": "integer", "minimum": 0, "maximum": u32::MAX}
                    },
                    "required": ["subject", "predicate", "object", "confidence", "kind", "tags", "line"],
                    "additionalProperties": false
                }),
            )
        })
    }
}

#[derive(Debug, Deserialize)]
#[allow(dead_code)]
struct Bio {
    bio: String,
}

impl Schema for Bio {
    fn schema() -> &'static SchemaSet {
        static S: OnceLock<SchemaSet> = OnceLock::new();
        S.get_or_init(|| {
            SchemaSet::new(
                "Bio",
                json!({"type": "object", "properties": {"bio": {"type": "string"}},
                       "required": ["bio"], "additionalProperties": false}),
            )
        })
    }
}

fn fact(i: u32) -> Fact {
    Fact {
        subject: format!("The Rust programming language #{i}"),
        predicate: "was first released in".into(),
        object: "2015, after years of development at Mozilla \"Research\"".into(),
        confidence: 0.93,
        kind: if i.is_multiple_of(2) {
            Kind::Claim
        } else {
            Kind::Relation
        },
        source: i
            .is_multiple_of(3)
            .then(|| "https://example.invalid/history".into()),
        tags: vec!["programming".into(), "history".into(), format!("t{i}")],
        line: i,
    }
}

fn clean() -> String {
    serde_json::to_string(&fact(7)).unwrap()
}

/// `json` in a fence, with prose before and after.
fn fenced(json: &str) -> String {
    format!(
        "Sure! Here is the fact I found in the text:\n\n```json\n{json}\n```\n\nLet me know if you need anything else."
    )
}

/// Benchmark 2: the same JSON as [`clean`], fenced and wrapped in prose.
fn wrapped() -> String {
    fenced(&clean())
}

/// A harder variant of benchmark 2: the value pretty-printed (more bytes than the baseline reads).
fn wrapped_pretty() -> String {
    fenced(&serde_json::to_string_pretty(&fact(7)).unwrap())
}

/// About `bytes` of JSON Lines.
fn jsonl(bytes: usize) -> String {
    let mut out = String::new();
    let mut i = 0;
    while out.len() < bytes {
        out.push_str(&serde_json::to_string(&fact(i)).unwrap());
        out.push('\n');
        i += 1;
    }
    out
}

fn lines_of(count: u32) -> String {
    (0..count)
        .map(|i| serde_json::to_string(&fact(i)).unwrap())
        .collect::<Vec<_>>()
        .join("\n")
}

fn unterminated(bytes: usize) -> String {
    let mut out = String::from("{\"bio\": \"");
    let piece = "He said \"no\", then {left} [quickly], and wrote C:\\path\\to it.\n";
    while out.len() < bytes {
        out.push_str(piece);
    }
    out.truncate(bytes);
    out
}

/// `{"bio":"x" “y" “y" ...` with no closing smart quote: each `"` in the string is a candidate
/// closer followed by a smart-quoted string whose end is nowhere.
fn smart_quotes(bytes: usize) -> String {
    let mut out = String::from("{\"bio\":\"x\"");
    while out.len() < bytes {
        out.push_str(" \u{201c}y\"");
    }
    out
}

/// Many fenced blocks, each holding the same value.
fn many_fences(bytes: usize) -> String {
    let mut out = String::new();
    while out.len() < bytes {
        out.push_str("```json\n{\"bio\":\"same\"}\n```\n");
    }
    out
}

/// Many distinct values in prose (the answer is ambiguous).
fn many_values(bytes: usize) -> String {
    let mut out = String::new();
    let mut i = 0;
    while out.len() < bytes {
        out.push_str(&format!("Draft {i}: {{\"bio\":\"v{i}\"}}\n"));
        i += 1;
    }
    out
}

/// One enum value named over and over in prose.
fn named_enum(bytes: usize) -> String {
    let mut out = String::from("The mood is ");
    while out.len() < bytes {
        out.push_str("very happy, ");
    }
    out
}

/// A value under a long key: `{"ééé...": {"k0": "1", "k1": "1", ...}}`, every number quoted, so
/// that each is coerced (and its fix names the path through the long key).
fn long_key(bytes: usize) -> String {
    let mut out = format!("{{\"{}\": {{", "é".repeat(bytes / 4));
    let mut i = 0;
    while out.len() < bytes {
        out.push_str(&format!("\"k{i}\": \"1\", "));
        i += 1;
    }
    out.push_str("\"end\": 1}}");
    out
}

#[derive(Debug, Deserialize)]
#[serde(transparent)]
#[allow(dead_code)]
struct Nested(HashMap<String, HashMap<String, i64>>);

impl Schema for Nested {
    fn schema() -> &'static SchemaSet {
        static S: OnceLock<SchemaSet> = OnceLock::new();
        S.get_or_init(|| {
            SchemaSet::new(
                "Nested",
                json!({"type": "object", "additionalProperties":
                    {"type": "object", "additionalProperties": {"type": "integer"}}}),
            )
        })
    }
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "snake_case")]
#[allow(dead_code)]
enum Mood {
    Happy,
    VeryHappy,
    Sad,
}

impl Schema for Mood {
    fn schema() -> &'static SchemaSet {
        static S: OnceLock<SchemaSet> = OnceLock::new();
        S.get_or_init(|| {
            SchemaSet::new(
                "Mood",
                json!({"type": "string", "enum": ["happy", "very_happy", "sad"]}),
            )
        })
    }
}

/// The pathological inputs of benchmark 5: a name, the input of about `bytes`, and a parse of it.
type Pathological = (&'static str, fn(usize) -> String, fn(&str));

fn pathological() -> [Pathological; 6] {
    [
        ("unterminated string", unterminated, |t| {
            drop(black_box(from_str::<Bio>(black_box(t))))
        }),
        ("smart quotes, no closer", smart_quotes, |t| {
            drop(black_box(from_str::<Bio>(black_box(t))))
        }),
        ("many fenced blocks", many_fences, |t| {
            drop(black_box(from_str::<Bio>(black_box(t))))
        }),
        ("many distinct values", many_values, |t| {
            drop(black_box(from_str::<Bio>(black_box(t))))
        }),
        ("an enum named over and over", named_enum, |t| {
            drop(black_box(from_str::<Mood>(black_box(t))))
        }),
        ("coerced values under a long key", long_key, |t| {
            drop(black_box(from_str::<Nested>(black_box(t))))
        }),
    ]
}

fn decode_chunked(text: &[u8], chunk: usize) -> usize {
    let mut decoder = LineDecoder::<Fact>::new();
    let mut items = 0;
    for piece in text.chunks(chunk) {
        items += decoder
            .feed(piece)
            .iter()
            .filter(|e| matches!(e, LineEvent::Item(_)))
            .count();
    }
    items
        + decoder
            .finish()
            .iter()
            .filter(|e| matches!(e, LineEvent::Item(_)))
            .count()
}

/// The common approach: on every chunk, re-parse everything received so far.
fn reparse_chunked(text: &str, chunk: usize) -> usize {
    let mut seen = 0;
    let mut end = 0;
    while end < text.len() {
        end = (end + chunk).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        seen = lines_from_str::<Fact>(&text[..end]).items.len();
    }
    seen
}

fn no_validation() -> ParseOptions {
    ParseOptions::default().with_validation(false)
}

fn one_value(c: &mut Criterion) {
    let clean = clean();
    let wrapped = wrapped();
    let pretty = wrapped_pretty();
    let mut g = c.benchmark_group("1-2 one value");
    g.throughput(Throughput::Bytes(clean.len() as u64));
    g.bench_function("serde_json::from_str", |b| {
        b.iter(|| serde_json::from_str::<Fact>(black_box(&clean)).unwrap())
    });
    g.bench_function("parse, validation off", |b| {
        b.iter(|| from_str_with::<Fact>(black_box(&clean), &no_validation()).unwrap())
    });
    g.bench_function("parse, validated", |b| {
        b.iter(|| from_str::<Fact>(black_box(&clean)).unwrap())
    });
    g.bench_function("parse fenced in prose, validation off", |b| {
        b.iter(|| from_str_with::<Fact>(black_box(&wrapped), &no_validation()).unwrap())
    });
    g.bench_function("parse fenced in prose, validated", |b| {
        b.iter(|| from_str::<Fact>(black_box(&wrapped)).unwrap())
    });
    g.bench_function("parse pretty-printed, fenced in prose, validated", |b| {
        b.iter(|| from_str::<Fact>(black_box(&pretty)).unwrap())
    });
    g.finish();
}

fn many_lines(c: &mut Criterion) {
    let text = lines_of(1000);
    let mut g = c.benchmark_group("3 json lines x1000");
    g.throughput(Throughput::Bytes(text.len() as u64));
    g.bench_function("serde_json per line", |b| {
        b.iter(|| {
            black_box(&text)
                .lines()
                .map(serde_json::from_str::<Fact>)
                .collect::<Result<Vec<_>, _>>()
                .unwrap()
        })
    });
    g.bench_function("lines_from_str, validated", |b| {
        b.iter(|| lines_from_str::<Fact>(black_box(&text)))
    });
    g.finish();
}

fn decoder(c: &mut Criterion) {
    let mut g = c.benchmark_group("4 decoder");
    g.sample_size(10);
    for kb in [10, 20, 50, 100] {
        let text = jsonl(kb * 1024);
        g.throughput(Throughput::Bytes(text.len() as u64));
        g.bench_with_input(
            BenchmarkId::new("lines_from_str one-shot", kb),
            &text,
            |b, t| b.iter(|| lines_from_str::<Fact>(black_box(t))),
        );
        for chunk in [4, 8, 64] {
            g.bench_with_input(
                BenchmarkId::new(format!("decoder {chunk}-byte chunks"), kb),
                &text,
                |b, t| b.iter(|| decode_chunked(black_box(t.as_bytes()), chunk)),
            );
        }
        g.bench_with_input(
            BenchmarkId::new("re-parse 64-byte chunks", kb),
            &text,
            |b, t| b.iter(|| reparse_chunked(black_box(t), 64)),
        );
    }
    g.finish();
}

fn unterminated_strings(c: &mut Criterion) {
    for (name, make, run) in pathological() {
        let mut g = c.benchmark_group(format!("5 {name}"));
        for kb in [6, 12, 24, 48] {
            let text = make(kb * 1024);
            g.throughput(Throughput::Bytes(text.len() as u64));
            g.bench_with_input(BenchmarkId::new("parse", kb), &text, |b, t| {
                b.iter(|| run(t))
            });
        }
        g.finish();
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .sample_size(20);
    targets = one_value, many_lines, decoder, unterminated_strings
}

fn ratios() {
    const ROUNDS: usize = 15;
    println!("\n## Ratios (ours / baseline: median on-CPU time of {ROUNDS} interleaved batches)\n");
    println!("| benchmark | ours | baseline | ratio | goal |");
    println!("|---|---|---|---|---|");
    let clean = clean();
    let wrapped = wrapped();
    let pretty = wrapped_pretty();
    let t = interleaved(
        &mut [
            &mut || drop(black_box(serde_json::from_str::<Fact>(black_box(&clean)))),
            &mut || {
                drop(black_box(from_str_with::<Fact>(
                    black_box(&clean),
                    &no_validation(),
                )))
            },
            &mut || drop(black_box(from_str::<Fact>(black_box(&clean)))),
            &mut || {
                drop(black_box(from_str_with::<Fact>(
                    black_box(&wrapped),
                    &no_validation(),
                )))
            },
            &mut || drop(black_box(from_str::<Fact>(black_box(&wrapped)))),
            &mut || drop(black_box(from_str::<Fact>(black_box(&pretty)))),
        ],
        ROUNDS,
    );
    row("1 clean -> T, validation off", t[1], t[0], "<= 1.10x");
    row("1 clean -> T, validated", t[2], t[0], "<= 1.30x");
    row(
        "2 fenced + prose -> T, validation off",
        t[3],
        t[0],
        "<= 1.25x",
    );
    row("2 fenced + prose -> T, validated", t[4], t[0], "<= 1.25x");
    row(
        "2 pretty-printed, fenced + prose -> T, validated",
        t[5],
        t[0],
        "(harder than asked)",
    );

    let text = lines_of(1000);
    let t = interleaved(
        &mut [
            &mut || {
                let v: Result<Vec<Fact>, _> =
                    black_box(&text).lines().map(serde_json::from_str).collect();
                drop(black_box(v));
            },
            &mut || drop(black_box(lines_from_str::<Fact>(black_box(&text)))),
        ],
        ROUNDS,
    );
    row(
        "3 1,000 JSON Lines -> validated Vec<T>",
        t[1],
        t[0],
        "<= 1.30x",
    );

    let mut scaling = Vec::new();
    for kb in [10, 100] {
        let text = jsonl(kb * 1024);
        let t = interleaved(
            &mut [
                &mut || drop(black_box(lines_from_str::<Fact>(black_box(&text)))),
                &mut || {
                    black_box(decode_chunked(text.as_bytes(), 4));
                },
                &mut || {
                    black_box(decode_chunked(text.as_bytes(), 8));
                },
                &mut || {
                    black_box(reparse_chunked(&text, 64));
                },
            ],
            if kb == 100 { 5 } else { ROUNDS },
        );
        if kb == 100 {
            row("4 decoder, 4-byte chunks, 100 KB", t[1], t[0], "<= 3x");
            row("4 decoder, 8-byte chunks, 100 KB", t[2], t[0], "<= 2x");
            row(
                "4 re-parse per 64-byte chunk, 100 KB",
                t[3],
                t[0],
                "(quadratic)",
            );
        }
        scaling.push(t);
    }
    let grow = |i: usize| scaling[1][i].as_secs_f64() / scaling[0][i].as_secs_f64();
    println!("\n10 KB -> 100 KB (10x the input): one-shot {:.1}x, decoder 4-byte {:.1}x, decoder 8-byte {:.1}x, re-parse {:.1}x",
        grow(0), grow(1), grow(2), grow(3));
    isolated_rows();

    doubling(ROUNDS);
}

/// The functions [`timing::isolated_table`] times, each alone in its own process (`--time-alone NAME`).
fn alone_fn(name: &str) -> Option<Box<dyn FnMut()>> {
    let f: Box<dyn FnMut()> = match name {
        "serde-clean" => {
            let clean = clean();
            Box::new(move || drop(black_box(serde_json::from_str::<Fact>(black_box(&clean)))))
        }
        "clean-validated" => {
            let clean = clean();
            Box::new(move || drop(black_box(from_str::<Fact>(black_box(&clean)))))
        }
        "lines-100k" => {
            let text = jsonl(100 * 1024);
            Box::new(move || drop(black_box(lines_from_str::<Fact>(black_box(&text)))))
        }
        "decoder-4-100k" => {
            let text = jsonl(100 * 1024);
            Box::new(move || {
                black_box(decode_chunked(text.as_bytes(), 4));
            })
        }
        "decoder-8-100k" => {
            let text = jsonl(100 * 1024);
            Box::new(move || {
                black_box(decode_chunked(text.as_bytes(), 8));
            })
        }
        _ => return None,
    };
    Some(f)
}

/// Rows 1 and 4 again with each function timed alone in a fresh process, the processes alternated:
/// no function runs on a heap another left behind.
fn isolated_rows() {
    isolated_table(
        "Rows 1 and 4",
        &[
            "serde-clean",
            "clean-validated",
            "lines-100k",
            "decoder-4-100k",
            "decoder-8-100k",
        ],
        &[
            (1, 0, "1 clean -> T, validated", "<= 1.30x"),
            (3, 2, "4 decoder, 4-byte chunks, 100 KB", "<= 3x"),
            (4, 2, "4 decoder, 8-byte chunks, 100 KB", "<= 2x"),
        ],
    );
}

/// Benchmark 5: the cost of each doubling of every pathological input.
fn doubling(rounds: usize) {
    println!();
    println!("| benchmark | larger | smaller | ratio | goal |");
    println!("|---|---|---|---|---|");
    for (name, make, run) in pathological() {
        let texts: Vec<String> = DOUBLING_KB.iter().map(|kb| make(kb * 1024)).collect();
        doubling_rows(&format!("5 {name}"), &DOUBLING_KB, &texts, &run, rounds);
    }
}

/// The sizes of benchmark 5, each twice the one before. They run past 48 KB because the step from a
/// text that fits the L1 data cache to one that does not costs more than a doubling on its own for
/// inputs read in several passes (the fenced blocks: fences, candidates, then each value), and the
/// same holds of the step where what a parse builds besides the text outgrows the next level; the
/// doublings after each such step show whether the growth is the algorithm's.
const DOUBLING_KB: [usize; 7] = [6, 12, 24, 48, 96, 192, 384];

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if timing::time_alone(&args, alone_fn) {
        return;
    }
    if args.iter().any(|a| a == "--isolated-only") {
        isolated_rows();
        return;
    }
    // `--calls <case> <n>`: `n` calls of one case and nothing else, for counting instructions
    // (`scripts/instructions.sh` runs it under callgrind). A case is `serde`, `parse`, `fenced`, or
    // `5:<row>:<kb>`, a hostile input of benchmark 5 (its row from 0, its size in KB).
    if let Some(at) = args.iter().position(|a| a == "--calls") {
        let case = args.get(at + 1).map_or("", String::as_str);
        let n: usize = args.get(at + 2).and_then(|n| n.parse().ok()).unwrap_or(0);
        let clean = clean();
        let wrapped = wrapped();
        let hostile = case.strip_prefix("5:").map(|rest| {
            let (row, kb) = rest.split_once(':').expect("5:<row>:<kb>");
            let (_, make, run) = pathological()[row.parse::<usize>().expect("a row")];
            (make(kb.parse::<usize>().expect("a size in KB") * 1024), run)
        });
        for _ in 0..n {
            match (case, &hostile) {
                (_, Some((text, run))) => run(text),
                ("serde", _) => drop(black_box(serde_json::from_str::<Fact>(black_box(&clean)))),
                ("parse", _) => drop(black_box(from_str::<Fact>(black_box(&clean)))),
                ("fenced", _) => drop(black_box(from_str::<Fact>(black_box(&wrapped)))),
                _ => panic!("--calls takes serde, parse, fenced or 5:<row>:<kb>, then a count"),
            }
        }
        return;
    }
    if args.iter().any(|a| a == "--doubling-only") {
        doubling(15);
        return;
    }
    timing::run(&args, benches, ratios);
}
