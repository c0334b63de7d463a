use llm_extract::Extract;
use serde::{Deserialize, Serialize};

const TEXT: &str = "Invoice 12 was paid.";

// The text must be a non-empty string literal.
#[derive(Extract, Deserialize, Serialize)]
#[extract(example(text = TEXT, value = Invoice { paid: true }))]
#[extract(example(text = " ", value = Invoice { paid: false }))]
struct Invoice {
    paid: bool,
}

fn main() {}
