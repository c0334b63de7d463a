//! Partial values while they stream: an answer fed to [`PartialReader`] chunk by chunk, a
//! snapshot taken after every chunk that changed something visible, against its baselines.
//!
//! `cargo bench --bench partial` runs the criterion benchmarks, then prints the ratio tables (each
//! ratio measured in the same run by interleaving ours and the baseline, per-thread CPU time, so drift
//! on a shared machine cancels out). `-- --ratios-only` prints only the tables; `-- --incremental-only [N]`
//! runs only the incremental reader (4-byte chunks, N times, default 2,000), for a profiler, `-- --parser-only [N]`
//! the parser alone (no typed value), and `-- --one-shot-only [N]` only the one-shot baseline (`--chunk N`
//! sets the chunk size of the first two: with a chunk larger than the answer, what the whole answer
//! costs in one piece, so the rest is what the chunking costs); `-- --doubling-only` only table 3;
//! `-- --chunks-of KIND` feeds 3,000 chunks of one kind to a reader (in `kinds`: the cost of one kind
//! of chunk, for a profiler that collects only in `feed_all`); `-- --deep-only [N]` feeds a catalog
//! nested seven levels deep in 4-byte chunks, N times.
//!
//! 1. A 20 KB answer in 4-byte and 16-byte chunks, snapshots included, vs one-shot
//!    `from_str::<Invoice>` of the whole answer (validated), and vs re-parsing the accumulated prefix on
//!    every chunk (what instructor and the Vercel AI SDK do: here our own parser run from scratch over
//!    the prefix, then the typed partial built from it, so only the re-reading differs).
//!    Also a catalog nested seven levels deep in 4-byte chunks against its own one-shot `from_str`:
//!    a chunk changes the value far below the root, and must not cost a walk from it.
//!    Then the first rows again with each function timed alone in a fresh process, the processes
//!    alternated (`-- --isolated-only` prints only these): in one process the one-shot baseline runs
//!    on the heap the incremental reader left behind, which slows its 290 allocations by about a
//!    quarter and so flatters the ratios above.
//! 2. How each grows from 10 KB to 100 KB: incremental (4-byte chunks) grows linearly, re-parsing the
//!    prefix (64-byte chunks, to keep it runnable) quadratically.
//! 3. Hostile answers of 8 to 128 KB (doubling), fed in 4-byte chunks with snapshots: the cost of each
//!    doubling (about 2x when linear). A flood of keys the type does not know, before the invoice's
//!    `stream = "required"` number (the invoice stays hidden) or inside the customer (hidden until
//!    one of its fields is written): each chunk looks the type's fields up, and must not scan the
//!    flood.

use criterion::{criterion_group, BenchmarkId, Criterion, Throughput};
use llm_extract::parse::{PartialParser, PartialReader};
use llm_extract::{from_str, Extract};
use serde::Deserialize;
use serde_json::json;
use std::hint::black_box;
use std::time::Duration;

#[path = "support/timing.rs"]
mod timing;
use timing::{doubling_rows, interleaved, isolated_table, row};

#[derive(Extract, Deserialize)]
#[allow(dead_code)]
struct Invoice {
    #[extract(stream = "required")]
    number: String,
    customer: Customer,
    lines: Vec<Line>,
    status: Status,
    total: f64,
    #[extract(stream = "done")]
    iban: String,
}

#[derive(Extract, Deserialize)]
#[allow(dead_code)]
struct Customer {
    name: String,
    email: Option<String>,
}

#[derive(Extract, Deserialize)]
#[allow(dead_code)]
struct Line {
    sku: String,
    description: String,
    quantity: u32,
    price: f64,
    tags: Vec<String>,
}

#[derive(Extract, Deserialize)]
#[serde(rename_all = "lowercase")]
#[allow(dead_code)]
enum Status {
    Paid,
    Open,
}

/// A catalog nested seven levels deep (sections, groups, items, notes): each change a chunk makes is
/// far below the root, so what a chunk costs must not grow with the depth.
#[derive(Extract, Deserialize)]
#[allow(dead_code)]
struct Catalog {
    sections: Vec<Section>,
}

#[derive(Extract, Deserialize)]
#[allow(dead_code)]
struct Section {
    title: String,
    groups: Vec<Group>,
}

#[derive(Extract, Deserialize)]
#[allow(dead_code)]
struct Group {
    title: String,
    items: Vec<Item>,
}

#[derive(Extract, Deserialize)]
#[allow(dead_code)]
struct Item {
    name: String,
    notes: Vec<String>,
    count: u32,
}

/// A pretty-printed catalog answer of about 20 KB (six sections of four groups of four items).
fn deep_answer() -> String {
    let item = |i: usize| json!({"name": format!("item {i}"), "notes": ["first note", "second"], "count": i});
    let group = |i: usize| json!({"title": format!("group {i}"), "items": (0..4).map(|j| item(i * 4 + j)).collect::<Vec<_>>()});
    let section = |i: usize| json!({"title": format!("section {i}"), "groups": (0..4).map(|j| group(i * 4 + j)).collect::<Vec<_>>()});
    let value = json!({"sections": (0..6).map(section).collect::<Vec<_>>()});
    serde_json::to_string_pretty(&value).unwrap_or_default()
}

/// The catalog fed in 4-byte pieces, a snapshot taken after each that changed something.
#[inline(never)]
fn deep(text: &[u8]) -> usize {
    let mut reader = PartialReader::<Catalog>::new();
    let mut snapshots = 0;
    for piece in text.chunks(4) {
        if reader.feed(piece) {
            drop(black_box(reader.snapshot()));
            snapshots += 1;
        }
    }
    snapshots
}

/// A pretty-printed invoice answer of about `bytes` bytes (lines with escapes and non-ASCII text).
fn answer(bytes: usize) -> String {
    let line = |i: usize| {
        json!({
            "sku": format!("SKU-{i:05}"),
            "description": format!("Widget \"{i}\" — größe {i}, line\\n {}", "x".repeat(i % 17)),
            "quantity": i % 9 + 1,
            "price": (i as f64) * 1.25,
            "tags": ["hardware", "b2b"],
        })
    };
    let mut lines = Vec::new();
    let mut value;
    loop {
        lines.push(line(lines.len()));
        value = json!({
            "number": "INV-2026-0001",
            "customer": {"name": "Ada Lovelace", "email": "ada@example.com"},
            "lines": lines,
            "status": "paid",
            "total": 1234.5,
            "iban": "DE89370400440532013000",
        });
        if serde_json::to_string_pretty(&value).map_or(0, |t| t.len()) >= bytes {
            break;
        }
    }
    serde_json::to_string_pretty(&value).unwrap_or_default()
}

/// Feeds `text` in `chunk`-byte pieces, taking a snapshot after each that changed something.
#[inline(never)]
fn incremental(text: &[u8], chunk: usize) -> usize {
    fed(text, chunk, |reader| drop(black_box(reader.snapshot())))
}

/// The same, reading each snapshot by reference ([`PartialReader::partial`]) rather than sharing it.
fn incremental_borrowed(text: &[u8], chunk: usize) -> usize {
    fed(text, chunk, |reader| {
        black_box(reader.partial());
    })
}

/// Feeds `text` in `chunk`-byte pieces, calling `read` after each piece that changed something.
fn fed(text: &[u8], chunk: usize, read: impl Fn(&PartialReader<Invoice>)) -> usize {
    let mut reader = PartialReader::<Invoice>::new();
    let mut snapshots = 0;
    for piece in text.chunks(chunk) {
        if reader.feed(piece) {
            read(&reader);
            snapshots += 1;
        }
    }
    snapshots
}

/// The parser alone, without the typed value: how the cost of `incremental` splits.
#[inline(never)]
fn parser_only(text: &[u8], chunk: usize) -> u64 {
    let mut parser = PartialParser::new(true);
    for piece in text.chunks(chunk) {
        parser.feed(piece);
    }
    black_box(parser.chunk())
}

/// Re-parses the accumulated prefix from scratch after every `chunk` bytes, building the partial
/// value each time.
fn reparse(text: &[u8], chunk: usize) -> usize {
    let mut snapshots = 0;
    let mut end = 0;
    while end < text.len() {
        end = (end + chunk).min(text.len());
        let mut reader = PartialReader::<Invoice>::new();
        if reader.feed(&text[..end]) {
            black_box(reader.snapshot());
            snapshots += 1;
        }
    }
    snapshots
}

#[inline(never)]
fn one_shot(text: &str) {
    black_box(from_str::<Invoice>(black_box(text)).ok());
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("partial_20kb");
    let text = answer(20_000);
    group.throughput(Throughput::Bytes(text.len() as u64));
    group.bench_function("one_shot_from_str", |b| b.iter(|| one_shot(&text)));
    for chunk in [4, 16] {
        group.bench_with_input(
            BenchmarkId::new("incremental", chunk),
            &chunk,
            |b, &chunk| b.iter(|| incremental(black_box(text.as_bytes()), chunk)),
        );
    }
    group.bench_with_input(BenchmarkId::new("reparse_prefix", 16), &16, |b, &chunk| {
        b.iter(|| reparse(black_box(text.as_bytes()), chunk))
    });
    group.finish();
}

fn ratios() {
    const ROUNDS: usize = 15;
    let text = answer(20_000);
    let bytes = text.as_bytes();
    let deep_text = deep_answer();
    // The answers must be valid, or the baselines would time an error.
    assert!(from_str::<Invoice>(&text).is_ok());
    assert!(from_str::<Catalog>(&deep_text).is_ok());
    println!(
        "\n## 20 KB answer ({} bytes; ours / baseline: median on-CPU time of {ROUNDS} interleaved batches)\n",
        text.len()
    );
    println!("| benchmark | ours | baseline | ratio | goal |");
    println!("|---|---|---|---|---|");
    let t = interleaved(
        &mut [
            &mut || one_shot(&text),
            &mut || {
                black_box(incremental(black_box(bytes), 4));
            },
            &mut || {
                black_box(incremental(black_box(bytes), 16));
            },
            &mut || {
                black_box(reparse(black_box(bytes), 4));
            },
            &mut || {
                black_box(reparse(black_box(bytes), 16));
            },
            &mut || {
                black_box(parser_only(black_box(bytes), 4));
            },
            &mut || {
                black_box(incremental_borrowed(black_box(bytes), 4));
            },
            &mut || {
                black_box(from_str::<Catalog>(black_box(&deep_text)).ok());
            },
            &mut || {
                black_box(deep(black_box(deep_text.as_bytes())));
            },
        ],
        ROUNDS,
    );
    row(
        "4-byte chunks + snapshots vs one-shot `from_str`",
        t[1],
        t[0],
        "<= 3x",
    );
    row(
        "the same, each snapshot read by reference (`partial()`, no `Arc`)",
        t[6],
        t[0],
        "",
    );
    row(
        "of which the parser alone (no typed value), 4-byte chunks",
        t[5],
        t[0],
        "",
    );
    row(
        "16-byte chunks + snapshots vs one-shot `from_str`",
        t[2],
        t[0],
        "",
    );
    row(
        "a catalog nested 7 levels deep, 4-byte chunks + snapshots vs its one-shot `from_str`",
        t[8],
        t[7],
        "",
    );
    row(
        "4-byte chunks: re-parsing the prefix per chunk vs incremental",
        t[3],
        t[1],
        "",
    );
    row(
        "16-byte chunks: re-parsing the prefix per chunk vs incremental",
        t[4],
        t[2],
        "",
    );
    isolated_rows();

    println!("\n## Growth from 10 KB to 100 KB (median on-CPU time of 5 interleaved batches)\n");
    println!("| size | one-shot `from_str` | incremental, 4-byte chunks | ratio to one-shot | re-parse prefix, 64-byte chunks | ratio to one-shot |");
    println!("|---|---|---|---|---|---|");
    for size in [10_000, 20_000, 50_000, 100_000] {
        let text = answer(size);
        let bytes = text.as_bytes();
        let t = interleaved(
            &mut [
                &mut || one_shot(&text),
                &mut || {
                    black_box(incremental(black_box(bytes), 4));
                },
                &mut || {
                    black_box(reparse(black_box(bytes), 64));
                },
            ],
            5,
        );
        let us = |d: Duration| d.as_secs_f64() * 1e6;
        println!(
            "| {} KB | {:.0} us | {:.0} us | {:.2}x | {:.0} us | {:.1}x |",
            size / 1000,
            us(t[0]),
            us(t[1]),
            us(t[1]) / us(t[0]),
            us(t[2]),
            us(t[2]) / us(t[0]),
        );
    }
    doubling(9);
}

/// A flood of `bytes` bytes of keys no type knows, as members of an object.
fn junk(bytes: usize) -> String {
    let mut text = String::new();
    let mut i = 0;
    while text.len() < bytes {
        text.push_str(&format!("\"junk{i}\": {i}, "));
        i += 1;
    }
    text
}

/// A hostile answer of table 3: its name, and how to make one of about `bytes` bytes.
type Hostile = (&'static str, fn(usize) -> String);

fn hostile() -> [Hostile; 2] {
    [
        ("unknown keys before the required field", |bytes| {
            format!(
                "{{{}\"number\": \"INV-1\", \"customer\": {{\"name\": \"Ada\"}}, \"lines\": [], \"status\": \"paid\", \"total\": 1, \"iban\": \"DE89\"}}",
                junk(bytes)
            )
        }),
        ("unknown keys in a nested object", |bytes| {
            format!(
                "{{\"number\": \"INV-1\", \"customer\": {{{}\"name\": \"Ada\"}}, \"lines\": [], \"status\": \"paid\", \"total\": 1, \"iban\": \"DE89\"}}",
                junk(bytes)
            )
        }),
    ]
}

/// The sizes of table 3, each twice the one before.
const DOUBLING_KB: [usize; 5] = [8, 16, 32, 64, 128];

/// Table 3: the cost of each doubling of every hostile answer.
fn doubling(rounds: usize) {
    println!("\n## Hostile answers, 4-byte chunks + snapshots: each doubling (median on-CPU time of {rounds} interleaved batches)\n");
    println!("| benchmark | larger | smaller | ratio | goal |");
    println!("|---|---|---|---|---|");
    for (name, make) in hostile() {
        let texts: Vec<String> = DOUBLING_KB.iter().map(|kb| make(kb * 1024)).collect();
        // Each must be a valid `Invoice`, shown in the end.
        for text in &texts {
            assert!(from_str::<Invoice>(text).is_ok());
            assert!(incremental(text.as_bytes(), 4) > 0);
        }
        let run = |text: &str| {
            black_box(incremental(black_box(text.as_bytes()), 4));
        };
        doubling_rows(name, &DOUBLING_KB, &texts, &run, rounds);
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .sample_size(10);
    targets = bench
}

/// Feeds `chunks` one by one, taking a snapshot after each that changed something (as `fed`).
#[inline(never)]
fn feed_all(reader: &mut PartialReader<Invoice>, chunks: &[&[u8]]) -> usize {
    let mut snapshots = 0;
    for piece in chunks {
        if reader.feed(piece) {
            drop(black_box(reader.snapshot()));
            snapshots += 1;
        }
    }
    snapshots
}

/// A reader fed up to where a kind of chunk is read, and 3,000 chunks of that kind: `grow` (4 ASCII
/// bytes appended to a string being written), `between` (4 spaces between tokens), `key` (4 bytes of a
/// key), `lines` (4-byte pieces of whole invoice lines, the answer's mix).
fn kinds(kind: &str) -> Option<(PartialReader<Invoice>, Vec<Vec<u8>>)> {
    let mut reader = PartialReader::<Invoice>::new();
    let head = br#"{"number": "INV", "customer": {"name": "A"}, "lines": ["#;
    let line = r#"{"sku": "SKU-00017", "description": "Widget 17, line xxxxxxxx", "quantity": 9, "price": 21.25, "tags": ["hardware", "b2b"]}, "#;
    let (prefix, unit): (Vec<u8>, Vec<u8>) = match kind {
        "grow" => (
            [&head[..], br#"{"sku": "S", "description": "x"#].concat(),
            b"abcd".to_vec(),
        ),
        "between" => ([&head[..], br#"{"sku": "S""#].concat(), b"    ".to_vec()),
        "key" => ([&head[..], br#"{"sku": "S", ""#].concat(), b"abcd".to_vec()),
        "lines" => (head.to_vec(), line.as_bytes().to_vec()),
        _ => return None,
    };
    reader.feed(&prefix);
    let stream: Vec<u8> = unit.iter().copied().cycle().take(3_000 * 4).collect();
    Some((reader, stream.chunks(4).map(<[u8]>::to_vec).collect()))
}

/// `read` of the 20 KB invoice answer in `chunk`-byte pieces, as a function to time alone.
fn on_invoice<R: 'static>(read: fn(&[u8], usize) -> R, chunk: usize) -> Box<dyn FnMut()> {
    let text = answer(20_000);
    Box::new(move || {
        black_box(read(black_box(text.as_bytes()), chunk));
    })
}

/// The functions [`timing::isolated_table`] times, each alone in its own process (`--time-alone NAME`).
fn alone_fn(name: &str) -> Option<Box<dyn FnMut()>> {
    let invoice = || answer(20_000);
    let f: Box<dyn FnMut()> = match name {
        "one-shot" => {
            let text = invoice();
            Box::new(move || one_shot(&text))
        }
        "incremental-4" => on_invoice(incremental, 4),
        "incremental-16" => on_invoice(incremental, 16),
        "parser-4" => on_invoice(parser_only, 4),
        "catalog-one-shot" => {
            let deep_text = deep_answer();
            Box::new(move || {
                black_box(from_str::<Catalog>(black_box(&deep_text)).ok());
            })
        }
        "catalog-4" => {
            let deep_text = deep_answer();
            Box::new(move || {
                black_box(deep(black_box(deep_text.as_bytes())));
            })
        }
        _ => return None,
    };
    Some(f)
}

/// Table 1 again with each function timed alone in a fresh process, alternated: no function runs on
/// a heap another left behind.
fn isolated_rows() {
    const DEEP: &str =
        "a catalog nested 7 levels deep, 4-byte chunks + snapshots vs its one-shot `from_str`";
    isolated_table(
        "The same",
        &[
            "one-shot",
            "incremental-4",
            "incremental-16",
            "parser-4",
            "catalog-one-shot",
            "catalog-4",
        ],
        &[
            (
                1,
                0,
                "4-byte chunks + snapshots vs one-shot `from_str`",
                "<= 3x",
            ),
            (
                2,
                0,
                "16-byte chunks + snapshots vs one-shot `from_str`",
                "",
            ),
            (
                3,
                0,
                "of which the parser alone (no typed value), 4-byte chunks",
                "",
            ),
            (5, 4, DEEP, ""),
        ],
    );
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if timing::time_alone(&args, alone_fn) {
        return;
    }
    if let Some(kind) = args
        .iter()
        .position(|a| a == "--chunks-of")
        .and_then(|at| args.get(at + 1))
    {
        let Some((mut reader, chunks)) = kinds(kind) else {
            eprintln!("--chunks-of: grow, between, key or lines");
            std::process::exit(2);
        };
        let chunks: Vec<&[u8]> = chunks.iter().map(Vec::as_slice).collect();
        black_box(feed_all(&mut reader, &chunks));
        return;
    }
    // For a profiler: the incremental reader alone (4-byte chunks), or the one-shot baseline alone,
    // many times (2,000, or the number after the flag).
    let alone = |flag: &str| {
        let at = args.iter().position(|a| a == flag)?;
        Some(
            args.get(at + 1)
                .and_then(|n| n.parse().ok())
                .unwrap_or(2_000),
        )
    };
    // The chunk size of `--incremental-only` and `--parser-only` (4 unless `--chunk N`).
    let chunk = alone("--chunk").unwrap_or(4);
    if let Some(rounds) = alone("--incremental-only") {
        let text = answer(20_000);
        for _ in 0..rounds {
            black_box(incremental(black_box(text.as_bytes()), chunk));
        }
        return;
    }
    if let Some(rounds) = alone("--parser-only") {
        let text = answer(20_000);
        for _ in 0..rounds {
            black_box(parser_only(black_box(text.as_bytes()), chunk));
        }
        return;
    }
    if let Some(rounds) = alone("--one-shot-only") {
        let text = answer(20_000);
        for _ in 0..rounds {
            one_shot(&text);
        }
        return;
    }
    if let Some(rounds) = alone("--deep-only") {
        let text = deep_answer();
        for _ in 0..rounds {
            black_box(deep(black_box(text.as_bytes())));
        }
        return;
    }
    if args.iter().any(|a| a == "--isolated-only") {
        isolated_rows();
        return;
    }
    if args.iter().any(|a| a == "--doubling-only") {
        doubling(9);
        return;
    }
    timing::run(&args, benches, ratios);
}
