//! The demo's types and settings measured on texts they were not written for: the quickstart's people
//! and companies (`examples/data/demo/people.jsonl`) or the ontology's facts about a person
//! (`examples/data/demo/facts.jsonl`), scored field by field as `llm-extract eval` scores them.
//!
//! ```text
//! cargo build --workspace --all-features --examples
//! target/debug/examples/demo_eval people [--json people-run.json]
//! target/debug/examples/demo_eval facts [--json facts-run.json]
//! ```
//!
//! For the people, it also counts the kinds the quickstart marks as doubtful, right and wrong.

// The quickstart and the ontology each include `support/backend.rs`: two copies, both harmless.
#![allow(clippy::duplicate_mod)]

#[allow(dead_code)]
#[path = "quickstart.rs"]
mod quickstart;

#[allow(dead_code)]
#[path = "ontology.rs"]
mod ontology;

use llm_extract::eval::{read_gold, score_document, DocumentRun, EvalReport, ScoreOptions};
use serde_json::{json, Value};
use std::path::Path;
use std::time::Instant;

#[tokio::main]
async fn main() -> std::process::ExitCode {
    match run().await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

async fn run() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let set = args.first().map(String::as_str).unwrap_or("people");
    let json_out = args
        .iter()
        .position(|a| a == "--json")
        .and_then(|at| args.get(at + 1));
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/data/demo");
    let cases = read_gold(&dir.join(format!("{set}.jsonl")))?;
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(
        dir.join(format!("{set}.schema.json")),
    )?)?;
    let (llm, scorer) = quickstart::backend::with_scorer()?;
    let mut runs = Vec::new();
    let (mut wrong, mut wrong_marked, mut right, mut right_marked) = (0, 0, 0, 0);
    for case in &cases {
        let started = Instant::now();
        let (predicted, tokens, error) = match set {
            "people" => {
                match quickstart::people_and_companies(&llm, scorer.as_deref(), &case.text).await {
                    Ok(found) => {
                        for named in &found.names {
                            let gold = case.value["names"].as_array().and_then(|names| {
                                names.iter().find(|n| n["name"] == named.name.as_str())
                            });
                            let kind_right = gold.is_some_and(|g| g["kind"] == json!(named.kind));
                            let marked = named.probability.is_some_and(|p| p < quickstart::SURE);
                            if kind_right {
                                right += 1;
                                right_marked += usize::from(marked);
                            } else {
                                wrong += 1;
                                wrong_marked += usize::from(marked);
                            }
                        }
                        let tokens = found.usage.total();
                        (Some(json!({ "names": found.names })), tokens, None)
                    }
                    Err(e) => (None, 0, Some(e.to_string())),
                }
            }
            _ => match ontology::facts(&*llm, scorer.as_deref(), &case.text).await {
                Ok((facts, usage)) => {
                    let facts: Vec<Value> = facts.iter().map(gold_form).collect();
                    (Some(json!({ "facts": facts })), usage.total(), None)
                }
                Err(e) => (None, 0, Some(e.to_string())),
            },
        };
        let leaves = score_document(
            case,
            predicted.as_ref(),
            &[],
            Some(&schema),
            &ScoreOptions::default(),
        );
        let run = DocumentRun::new(case, predicted, error, tokens, started.elapsed(), leaves);
        eprintln!(
            "{}: {}/{} ({:.0?})",
            run.id,
            run.correct,
            run.total,
            started.elapsed()
        );
        runs.push(run);
    }
    let report = EvalReport::new(runs);
    println!("{report}");
    if set == "people" {
        println!(
            "names listed: {}; kind wrong (or name not in the gold): {wrong}, of which marked doubtful: \
             {wrong_marked}; kind right: {right}, of which marked doubtful: {right_marked}",
            wrong + right
        );
    }
    if let Some(path) = json_out {
        std::fs::write(path, serde_json::to_string_pretty(&report)?)?;
    }
    Ok(())
}

/// A fact as the gold file writes it: an attribute names its person `entity`, a relationship `subject`.
fn gold_form(item: &ontology::Item) -> Value {
    let mut value = json!(item);
    if value["type"] == "attribute" {
        if let Some(fields) = value.as_object_mut() {
            if let Some(person) = fields.remove("subject") {
                fields.insert("entity".to_owned(), person);
            }
        }
    }
    value
}
