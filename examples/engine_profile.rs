//! Where the time of an embedded request goes: the same kind of short extraction request, one at a
//! time, with the engine's own timings for each (waiting for a slot, reading the prompt, generating).
//! The first request also creates the model's context; the others reuse it.
//!
//! ```text
//! cargo run --release --features llama-cpp --example engine_profile -- [THREADS] [REQUESTS] [reuse|noreuse]
//! ```
//!
//! THREADS 0 (the default) keeps the engine's default thread count.

use llm_extract::llm::llama_cpp::{model_path_from_env, LlamaCpp};
use llm_extract::llm::ChatRequest;
use serde_json::json;
use std::time::{Duration, Instant};

fn main() {
    let mut args = std::env::args().skip(1);
    let threads: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(0);
    let requests: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(6);
    let reuse = args.next().is_none_or(|a| a != "noreuse");
    let path = match model_path_from_env() {
        Ok(path) => path,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    };
    let mut builder = LlamaCpp::builder(path).parallel(1).reuse_prefix(reuse);
    if threads > 0 {
        builder = builder.threads(threads);
    }
    let llm = match builder.build() {
        Ok(llm) => llm,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    };
    let schema = json!({"type": "object", "properties": {
        "number": {"type": "string"}, "vendor": {"type": "string"}, "total": {"type": "number"},
        "currency": {"type": "string"}}, "required": ["number", "vendor", "total", "currency"],
        "additionalProperties": false});
    println!("threads {threads} (0: the default), prefix reuse {reuse}");
    let mut sum = [Duration::ZERO; 3];
    for i in 0..requests {
        let request = ChatRequest::new(format!(
            "Invoice INV-{i:04} from Acme Tools Ltd, dated 2024-03-{:02}. Total due: {}.50 EUR.",
            i % 28 + 1,
            100 + i * 7
        ))
        .with_system("Extract the invoice fields as JSON. Use the exact text of the document.")
        .with_schema("Invoice", schema.clone())
        .with_max_tokens(200);
        let started = Instant::now();
        let g = match llm.generate(&request, |_| true) {
            Ok(g) => g,
            Err(e) => {
                eprintln!("{e}");
                std::process::exit(1);
            }
        };
        let total = started.elapsed();
        if i > 0 {
            sum[0] += total;
            sum[1] += g.prompt_time;
            sum[2] += g.generation_time;
        }
        println!(
            "request {i}: total {total:.1?} = prompt {:.1?} ({} tokens, {} reused) + generation {:.1?} \
             ({} tokens, {} forced, {:.1} tokens/s) + the rest {:.1?}",
            g.prompt_time,
            g.response.usage.prompt_tokens,
            g.reused_prompt_tokens,
            g.generation_time,
            g.response.usage.completion_tokens,
            g.forced_tokens,
            g.tokens_per_second(),
            total.saturating_sub(g.prompt_time + g.generation_time)
        );
    }
    if requests > 1 {
        let n = (requests - 1) as u32;
        println!(
            "mean of requests 1..: total {:.1?}, prompt {:.1?}, generation {:.1?}",
            sum[0] / n,
            sum[1] / n,
            sum[2] / n
        );
    }
}
