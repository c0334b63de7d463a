use llm_extract::Extract;
use serde::{Deserialize, Serialize};

// `example(...)` takes `text` and `value`, once each.
#[derive(Extract, Deserialize, Serialize)]
#[extract(example(text = "Paid.", value = Invoice { paid: true }, note = "settled means paid"))]
#[extract(example(text = "Paid.", text = "Settled.", value = Invoice { paid: true }))]
struct Invoice {
    paid: bool,
}

fn main() {}
