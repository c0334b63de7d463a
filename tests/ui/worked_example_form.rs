use llm_extract::Extract;
use serde::{Deserialize, Serialize};

// A worked example is written `example(text = "...", value = ...)`, not `example = ...`.
#[derive(Extract, Deserialize, Serialize)]
#[extract(example = "Invoice 12 was paid.")]
struct Invoice {
    paid: bool,
}

fn main() {}
