//! Real-world JSON Schemas through `DynamicSchema`: how many are taken, how many each provider dialect
//! lowers, and whether the instances their authors label valid and invalid get that verdict.
//!
//! The corpus is laid out as SchemaStore's (github.com/SchemaStore/schemastore): a directory of
//! schemas (`src/schemas/json/NAME.json`), and directories of instances with a directory per schema
//! (`src/test/NAME/*.json` valid, `src/negative_test/NAME/*.json` invalid). Only `.json` instances
//! are read. A schema that refers to another document of the corpus (by its `$id`, or by
//! `https://json.schemastore.org/FILE`) is given that document, as a caller registers it; nothing is
//! fetched.
//!
//! ```sh
//! cargo run --release --example schema_corpus -- SCHEMAS_DIR [--valid DIR] [--invalid DIR] [--per-draft] [--verbose]
//! ```
//!
//! `--per-draft` validates with the strict reading of `format` ([`Formats::PerDraft`]: only the
//! formats the schema's draft defines); by default every format a draft defines is asserted.

use llm_extract::schema::{Dialect, DynamicSchema, Shape};
use llm_extract::validate::Formats;
use llm_extract::SchemaError;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How many schemas a schema may pull in from the corpus through its `$ref`s.
const MAX_REGISTERED: usize = 64;

/// The URI SchemaStore serves its schemas at.
const STORE: &str = "https://json.schemastore.org/";

struct Args {
    schemas: PathBuf,
    valid: Option<PathBuf>,
    invalid: Option<PathBuf>,
    formats: Formats,
    verbose: bool,
}

fn args() -> Result<Args, String> {
    let mut schemas = None;
    let mut valid = None;
    let mut invalid = None;
    let mut verbose = false;
    let mut formats = Formats::AnyDraft;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--valid" => valid = args.next().map(PathBuf::from),
            "--invalid" => invalid = args.next().map(PathBuf::from),
            "--verbose" => verbose = true,
            "--per-draft" => formats = Formats::PerDraft,
            other if schemas.is_none() && !other.starts_with("--") => {
                schemas = Some(PathBuf::from(other))
            }
            other => return Err(format!("unexpected argument {other}")),
        }
    }
    Ok(Args {
        schemas: schemas.ok_or("usage: schema_corpus SCHEMAS_DIR [--valid DIR] [--invalid DIR] [--per-draft] [--verbose]")?,
        valid,
        invalid,
        formats,
        verbose,
    })
}

/// The `.json` files directly in `dir`, sorted (none when it does not exist).
fn json_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| path.is_file() && path.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    files
}

fn read_json(path: &Path) -> Option<Value> {
    let text = std::fs::read_to_string(path).ok()?;
    serde_json::from_str(text.trim_start_matches('\u{feff}')).ok()
}

/// The corpus's documents by every URI a `$ref` may name them with.
fn index(schemas: &[(String, Value)]) -> HashMap<String, usize> {
    let mut by_uri = HashMap::new();
    for (i, (file, schema)) in schemas.iter().enumerate() {
        by_uri.insert(format!("{STORE}{file}"), i);
        by_uri.insert(format!("{STORE}{}", file.trim_end_matches(".json")), i);
        for key in ["$id", "id"] {
            if let Some(id) = schema.get(key).and_then(Value::as_str) {
                by_uri.insert(id.trim_end_matches('#').to_owned(), i);
            }
        }
    }
    by_uri
}

/// The schema through `DynamicSchema`, registering the corpus documents the errors name.
/// The schema's base URI is where SchemaStore publishes it (`https://json.schemastore.org/FILE`).
fn build(
    file: &str,
    formats: Formats,
    schema: &Value,
    corpus: &[(String, Value)],
    by_uri: &HashMap<String, usize>,
) -> (Result<DynamicSchema, SchemaError>, usize) {
    let mut registered: Vec<(String, usize)> = Vec::new();
    loop {
        let mut builder = DynamicSchema::builder(schema.clone())
            .base_uri(format!("{STORE}{file}"))
            .formats(formats);
        for (uri, i) in &registered {
            builder = builder.register(uri, corpus[*i].1.clone());
        }
        match builder.build() {
            Err(SchemaError::RemoteRef { uri }) if registered.len() < MAX_REGISTERED => {
                let known = by_uri
                    .get(&uri)
                    .or_else(|| by_uri.get(&uri.replace("http://", "https://")));
                match known {
                    Some(i) if !registered.iter().any(|(u, _)| *u == uri) => {
                        registered.push((uri, *i))
                    }
                    _ => return (Err(SchemaError::RemoteRef { uri }), registered.len()),
                }
            }
            result => return (result, registered.len()),
        }
    }
}

#[derive(Default)]
struct Counts {
    schemas: usize,
    taken: usize,
    taken_with_corpus_documents: usize,
    panicked: Vec<String>,
    refused: BTreeMap<&'static str, Vec<String>>,
    valid: usize,
    valid_rejected: Vec<String>,
    invalid: usize,
    invalid_accepted: Vec<String>,
    slowest: Vec<(Duration, String)>,
    /// Per dialect: schemas it lowers, of which strict, and the reasons of the refusals.
    lowered: BTreeMap<&'static str, (usize, usize, BTreeMap<String, usize>)>,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = args()?;
    println!("format reading: {:?}", args.formats);
    let corpus: Vec<(String, Value)> = json_files(&args.schemas)
        .into_iter()
        .filter_map(|path| {
            let file = path.file_name()?.to_str()?.to_owned();
            Some((file, read_json(&path)?))
        })
        .collect();
    let unreadable = json_files(&args.schemas).len() - corpus.len();
    let by_uri = index(&corpus);
    let mut counts = Counts::default();
    let started = Instant::now();
    for (file, schema) in &corpus {
        counts.schemas += 1;
        let stem = file.trim_end_matches(".json");
        let clock = Instant::now();
        let built =
            std::panic::catch_unwind(|| build(file, args.formats, schema, &corpus, &by_uri));
        let (dynamic, registered) = match built {
            Err(_) => {
                counts.panicked.push(file.clone());
                continue;
            }
            Ok((Err(error), _)) => {
                let reason = match error {
                    SchemaError::RemoteRef { .. } => "a remote $ref outside the corpus",
                    SchemaError::Invalid { .. } => "invalid for the validator",
                    _ => "other",
                };
                if args.verbose {
                    eprintln!("not taken: {file}: {error}");
                }
                counts.refused.entry(reason).or_default().push(file.clone());
                continue;
            }
            Ok((Ok(dynamic), registered)) => (dynamic, registered),
        };
        counts.taken += 1;
        if registered > 0 {
            counts.taken_with_corpus_documents += 1;
        }
        for dialect in Dialect::ALL {
            let entry = counts.lowered.entry(dialect.name()).or_default();
            match dynamic.schema_set().lowering(dialect, Shape::One) {
                Ok(lowering) => {
                    entry.0 += 1;
                    entry.1 += usize::from(lowering.strict());
                }
                Err(error) => {
                    // The reason without its path: the refusals grouped by kind.
                    let reason = error.to_string();
                    let reason = reason.rsplit(": ").next().unwrap_or(&reason).to_owned();
                    *entry.2.entry(reason).or_default() += 1;
                }
            }
        }
        let validator = dynamic.schema_set().validator()?;
        for (dir, expected) in [(&args.valid, true), (&args.invalid, false)] {
            let Some(dir) = dir else { continue };
            for path in json_files(&dir.join(stem)) {
                let Some(instance) = read_json(&path) else {
                    continue;
                };
                let valid = validator.is_valid(&instance);
                let name = format!(
                    "{stem}/{}",
                    path.file_name().unwrap_or_default().to_string_lossy()
                );
                if expected {
                    counts.valid += 1;
                    if !valid {
                        if args.verbose {
                            let why: Vec<String> = validator
                                .violations(&instance)
                                .iter()
                                .take(3)
                                .map(|v| v.to_string())
                                .collect();
                            eprintln!("valid rejected: {name}: {}", why.join("; "));
                        }
                        counts.valid_rejected.push(name);
                    }
                } else {
                    counts.invalid += 1;
                    if valid {
                        if args.verbose {
                            eprintln!("invalid accepted: {name}");
                        }
                        counts.invalid_accepted.push(name);
                    }
                }
            }
        }
        counts.slowest.push((clock.elapsed(), file.clone()));
    }
    counts
        .slowest
        .sort_by_key(|(time, _)| std::cmp::Reverse(*time));
    report(&counts, unreadable, started.elapsed());
    Ok(())
}

fn report(counts: &Counts, unreadable: usize, total: Duration) {
    let share = |n: usize, of: usize| 100.0 * n as f64 / of.max(1) as f64;
    println!(
        "schemas read: {} ({unreadable} files not JSON, skipped)",
        counts.schemas
    );
    println!(
        "schemas taken: {} ({:.1}%), {} of them with corpus documents registered for their remote $refs",
        counts.taken,
        share(counts.taken, counts.schemas),
        counts.taken_with_corpus_documents
    );
    for (reason, files) in &counts.refused {
        let shown: Vec<&str> = files.iter().take(8).map(String::as_str).collect();
        println!(
            "  not taken, {reason}: {} ({})",
            files.len(),
            shown.join(", ")
        );
    }
    println!(
        "  panicked: {} {:?}",
        counts.panicked.len(),
        counts.panicked
    );
    println!(
        "valid instances rejected: {} of {} ({:.2}%)",
        counts.valid_rejected.len(),
        counts.valid,
        share(counts.valid_rejected.len(), counts.valid)
    );
    for name in &counts.valid_rejected {
        println!("  {name}");
    }
    println!(
        "invalid instances accepted: {} of {} ({:.2}%)",
        counts.invalid_accepted.len(),
        counts.invalid,
        share(counts.invalid_accepted.len(), counts.invalid)
    );
    for name in &counts.invalid_accepted {
        println!("  {name}");
    }
    for (dialect, (lowered, strict, refused)) in &counts.lowered {
        println!(
            "{dialect}: lowers {lowered} of {} taken ({:.1}%), {strict} of them strict",
            counts.taken,
            share(*lowered, counts.taken)
        );
        let mut reasons: Vec<_> = refused.iter().collect();
        reasons.sort_by(|a, b| b.1.cmp(a.1));
        for (reason, n) in reasons.into_iter().take(3) {
            println!("  refused {n}: {reason}");
        }
    }
    let slowest: Vec<String> = counts
        .slowest
        .iter()
        .take(5)
        .map(|(time, file)| format!("{file} {:.1} ms", time.as_secs_f64() * 1000.0))
        .collect();
    println!(
        "slowest schemas (compile and every instance): {}",
        slowest.join(", ")
    );
    println!("total: {:.1} s", total.as_secs_f64());
}
