//! Decoding speed of the embedded llama.cpp engine: free text vs schema-constrained with llguidance (the
//! default, with and without fast-forwarding the tokens the grammar forces) vs llama.cpp's own GBNF grammar
//! sampler (what Ollama runs).
//!
//! ```text
//! scripts/fetch-model.sh   # once: the default model
//! cargo bench --features llama-cpp --bench constrained
//! ```
//!
//! Every mode gets the same prompt and generates exactly the same number of tokens: end-of-generation is
//! masked out and the grammar is JSON Lines of a tagged ontology enum, which always allows one more line.
//! Tokens per second count generation only (sampling, masks and decoding), not reading the prompt.
//! `BENCH_TOKENS` (default 128), `BENCH_RUNS` (default 5, after one warm-up) and `BENCH_THREADS` (default:
//! the engine's, one per physical core) tune it; `LLM_EXTRACT_MODEL` picks another GGUF file.

use llm_extract::llm::llama_cpp::{model_path_from_env, GrammarEngine, LlamaCpp};
use llm_extract::llm::ChatRequest;
use serde_json::{json, Value};
use std::time::Duration;

const TEXT: &str = "Marie Curie was a physicist born in Warsaw. She worked at the University of Paris with \
    Pierre Curie, her husband. In 1903 she shared the Nobel Prize in Physics with him and Henri Becquerel.";

/// The GBNF-dialect line schema of a tagged enum: entity, relationship or attribute.
fn line_schema() -> Value {
    let string = || json!({"type": "string"});
    json!({"oneOf": [
        {"type": "object", "properties": {
            "type": {"const": "entity"}, "entity": string(), "entity_type": string()},
         "required": ["type", "entity", "entity_type"], "additionalProperties": false},
        {"type": "object", "properties": {
            "type": {"const": "relationship"}, "subject": string(), "relation": string(), "object": string()},
         "required": ["type", "subject", "relation", "object"], "additionalProperties": false},
        {"type": "object", "properties": {
            "type": {"const": "attribute"}, "entity": string(), "attribute": string(), "value": string()},
         "required": ["type", "entity", "attribute", "value"], "additionalProperties": false}
    ]})
}

fn env_number(name: &str, default: u32) -> u32 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

struct Mode {
    name: &'static str,
    engine: GrammarEngine,
    constrained: bool,
    fast_forward: bool,
}

fn main() {
    let path = match model_path_from_env() {
        Ok(path) => path,
        Err(e) => fail(&e),
    };
    let tokens = env_number("BENCH_TOKENS", 128);
    let runs = env_number("BENCH_RUNS", 5).max(1);
    let threads = std::env::var("BENCH_THREADS")
        .ok()
        .and_then(|t| t.parse::<usize>().ok());
    let mode = |name, engine, constrained, fast_forward| Mode {
        name,
        engine,
        constrained,
        fast_forward,
    };
    let modes = [
        mode("unconstrained", GrammarEngine::Guidance, false, false),
        mode("llguidance", GrammarEngine::Guidance, true, true),
        mode("llguidance no-ff", GrammarEngine::Guidance, true, false),
        mode("llama.cpp GBNF", GrammarEngine::Gbnf, true, false),
    ];
    println!("model: {}", path.display());
    println!("{tokens} tokens per run, median of {runs} runs after one warm-up; generation only\n");

    let mut rates = Vec::new();
    for mode in &modes {
        let mut builder = LlamaCpp::builder(&path)
            .grammar_engine(mode.engine)
            .fast_forward(mode.fast_forward)
            .ignore_eos(true);
        if let Some(threads) = threads {
            builder = builder.threads(threads);
        }
        let llm = builder.build().unwrap_or_else(|e| fail(&e));
        let mut request = ChatRequest::new(format!(
            "List the entities, relationships and attributes in this text, one JSON object per line.\n\n{TEXT}"
        ))
        .with_max_tokens(tokens);
        if mode.constrained {
            request = request
                .with_schema("OntologyItem", line_schema())
                .with_json_lines(true);
        }
        let mut samples = Vec::new();
        let mut last = None;
        for run in 0..=runs {
            let generation = llm
                .generate(&request, |_| true)
                .unwrap_or_else(|e| fail(&format!("{}: {e}", mode.name)));
            let generated = generation.response.usage.completion_tokens;
            if generated != u64::from(tokens) {
                fail(&format!(
                    "{}: generated {generated} tokens, not {tokens}",
                    mode.name
                ));
            }
            if run > 0 {
                samples.push(generation.tokens_per_second());
            }
            last = Some(generation);
        }
        let Some(last) = last else { return };
        samples.sort_by(f64::total_cmp);
        let rate = samples[samples.len() / 2];
        println!(
            "{:<17} {:>6.1} tokens/s  (min {:.1}, max {:.1}; {} of {tokens} tokens forced; prompt {:.0} ms)",
            mode.name,
            rate,
            samples[0],
            samples[samples.len() - 1],
            last.forced_tokens,
            ms(last.prompt_time),
        );
        let first_line = last.response.text.lines().next().unwrap_or_default();
        println!(
            "{:<17} {}",
            "",
            first_line.chars().take(100).collect::<String>()
        );
        rates.push(rate);
    }
    println!();
    for (mode, rate) in modes.iter().zip(&rates).skip(1) {
        println!("{:<17} {:.2}x of unconstrained", mode.name, rate / rates[0]);
    }
}

fn fail(message: &dyn std::fmt::Display) -> ! {
    eprintln!("constrained bench: {message}");
    std::process::exit(1)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}
