//! A schema that is not a Rust type: a JSON Schema file read at run time (examples/data/invoice.schema.json)
//! gives the same validated extraction a derived type does, as `serde_json::Value`. The same schema can be
//! written as a one-line signature.
//!
//! ```sh
//! cargo run --features llama-cpp --example dynamic_schema
//! OLLAMA_HOST=http://localhost:11434 cargo run --example dynamic_schema
//! ```

#[path = "support/backend.rs"]
mod backend;

use llm_extract::extract::Extractor;
use llm_extract::schema::DynamicSchema;
use std::path::Path;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/data");
    let schema = DynamicSchema::from_file(data.join("invoice.schema.json"))?;
    let invoice = std::fs::read_to_string(data.join("invoice.txt"))?;

    // What the model is told (the `$ref` is inlined, objects are closed):
    println!(
        "format instructions:\n{}\n",
        schema.schema_set().format_instructions()
    );

    let llm = backend::from_env_and_args()?;
    let extractor = Extractor::new(&llm).max_tokens(300).temperature(0.0);
    match extractor
        .with_schema(schema.schema_set())
        .extract(invoice.as_str())
        .await
    {
        Ok(out) => println!(
            "{}\n({} attempt(s), {} tokens)",
            serde_json::to_string_pretty(&out.value)?,
            out.report.attempts.len(),
            out.report.usage.total()
        ),
        Err(err) => println!("no valid invoice: {err}"),
    }

    // The signature shorthand: inputs before `->`, the output type after.
    let quick = DynamicSchema::from_signature(
        "(text :string) -> {issuer :string, currency (EUR | USD | GBP), total :float}",
    )?;
    let out = extractor
        .with_schema(quick.schema_set())
        .extract(invoice.as_str())
        .await?;
    println!("\nwith a signature: {}", out.value);
    Ok(())
}
