//! Grammar compile time over every schema of the JSON-Schema-Test-Suite: the embedded engine's path
//! (the schema as the engine receives it, [`Dialect::Generic`], through [`guidance_matcher`]: llguidance
//! on the schema itself, the gbnf lowering when llguidance refuses) against llguidance's own compile
//! of the same schema (`TopLevelGrammar::from_json_schema`, default options), in the same run, with the
//! same tokenizer. Also counts, per dialect, the schemas each lowering takes.
//!
//! ```text
//! cargo run --release --features llama-cpp --example grammar_compile -- [SUITE_DIR]
//! ```
//!
//! SUITE_DIR defaults to `JSON_SCHEMA_TEST_SUITE`, else `shared/data/json-schema-test-suite` beside an
//! ancestor of the working directory. The tokenizer is llguidance's single-byte one: compile work
//! depends on the grammar, not on the vocabulary (token masks, which do, are computed while decoding).

use llm_extract::llm::llama_cpp::llguidance::api::TopLevelGrammar;
use llm_extract::llm::llama_cpp::llguidance::toktrie::ApproximateTokEnv;
use llm_extract::llm::llama_cpp::llguidance::{Matcher, ParserFactory};
use llm_extract::llm::llama_cpp::{guidance_matcher, GrammarSource};
use llm_extract::schema::dialect;
use llm_extract::schema::Dialect;
use serde_json::Value;
use std::path::PathBuf;
use std::time::{Duration, Instant};

fn suite_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::args().nth(1) {
        return Some(dir.into());
    }
    if let Some(dir) = std::env::var_os("JSON_SCHEMA_TEST_SUITE") {
        return Some(dir.into());
    }
    let here = std::env::current_dir().ok()?;
    here.ancestors()
        .map(|dir| dir.join("shared/data/json-schema-test-suite"))
        .find(|dir| dir.is_dir())
}

fn schemas(dir: &std::path::Path) -> Vec<Value> {
    let mut out = Vec::new();
    for draft in ["draft4", "draft7", "draft2020-12"] {
        let Ok(entries) = std::fs::read_dir(dir.join("tests").join(draft)) else {
            continue;
        };
        let mut files: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .map(|entry| entry.path())
            .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
            .collect();
        files.sort();
        for file in files {
            let Ok(text) = std::fs::read_to_string(&file) else {
                continue;
            };
            let Ok(Value::Array(groups)) = serde_json::from_str::<Value>(&text) else {
                continue;
            };
            out.extend(
                groups
                    .into_iter()
                    .filter_map(|mut g| g.get_mut("schema").map(Value::take)),
            );
        }
    }
    out
}

fn percentile(times: &mut [Duration], p: f64) -> Duration {
    times.sort_unstable();
    let at = ((times.len() as f64 - 1.0) * p).round() as usize;
    times.get(at).copied().unwrap_or_default()
}

fn main() {
    let Some(dir) = suite_dir() else {
        eprintln!(
            "JSON-Schema-Test-Suite not found: pass its folder, or set JSON_SCHEMA_TEST_SUITE"
        );
        std::process::exit(1);
    };
    let schemas = schemas(&dir);
    let env = ApproximateTokEnv::single_byte_env();
    let mut factory = ParserFactory::new_simple(&env).expect("a tokenizer for llguidance");
    factory.quiet();

    let (mut ours, mut alone) = (Vec::new(), Vec::new());
    // Per schema: whether each side took it, to compare times on the schemas both take.
    let (mut ours_ok, mut alone_ok) = (Vec::new(), Vec::new());
    let (mut ours_taken, mut lowered_taken, mut alone_taken) = (0, 0, 0);
    for (i, schema) in schemas.iter().enumerate() {
        let sent = dialect::render(schema, Dialect::Generic).unwrap_or_else(|_| schema.clone());
        let mut run_ours = || {
            let start = Instant::now();
            let result = guidance_matcher(&factory, &sent, false, None);
            ours.push(start.elapsed());
            ours_ok.push(result.is_ok());
            match result {
                Ok((_, GrammarSource::Schema)) => ours_taken += 1,
                Ok((_, _)) => lowered_taken += 1,
                Err(_) => {}
            }
        };
        let mut run_alone = || {
            let start = Instant::now();
            let grammar = TopLevelGrammar::from_json_schema(schema.clone());
            let matcher = Matcher::new(factory.create_parser(grammar));
            alone.push(start.elapsed());
            alone_ok.push(matcher.get_error().is_none());
            if matcher.get_error().is_none() {
                alone_taken += 1;
            }
        };
        // Alternate which runs first, so neither gains from a warm cache.
        if i % 2 == 0 {
            run_ours();
            run_alone();
        } else {
            run_alone();
            run_ours();
        }
    }

    let both: Vec<usize> = (0..schemas.len())
        .filter(|&i| ours_ok.get(i) == Some(&true) && alone_ok.get(i) == Some(&true))
        .collect();
    let mut ours_both: Vec<Duration> = both.iter().filter_map(|&i| ours.get(i).copied()).collect();
    let mut alone_both: Vec<Duration> =
        both.iter().filter_map(|&i| alone.get(i).copied()).collect();
    let n = schemas.len();
    println!("{n} schemas (drafts 4, 7, 2020-12) from {}", dir.display());
    println!(
        "ours:       p50 {:>9.3?}  p99 {:>9.3?}  taken {} ({} on the schema itself, {} on the gbnf lowering)",
        percentile(&mut ours, 0.5),
        percentile(&mut ours, 0.99),
        ours_taken + lowered_taken,
        ours_taken,
        lowered_taken
    );
    println!(
        "llguidance: p50 {:>9.3?}  p99 {:>9.3?}  taken {}",
        percentile(&mut alone, 0.5),
        percentile(&mut alone, 0.99),
        alone_taken
    );
    println!(
        "on the {} schemas both take: ours p50 {:.3?} p99 {:.3?}; llguidance p50 {:.3?} p99 {:.3?}",
        both.len(),
        percentile(&mut ours_both, 0.5),
        percentile(&mut ours_both, 0.99),
        percentile(&mut alone_both, 0.5),
        percentile(&mut alone_both, 0.99)
    );
    for dialect in Dialect::ALL {
        let taken = schemas
            .iter()
            .filter(|schema| dialect::lower(schema, dialect).is_ok())
            .count();
        let strict = schemas
            .iter()
            .filter(|schema| dialect::lower(schema, dialect).is_ok_and(|l| l.strict()))
            .count();
        println!(
            "lowered for {dialect:<13} {taken:>4} of {n} ({strict} strict), refused {}",
            n - taken
        );
    }
}
