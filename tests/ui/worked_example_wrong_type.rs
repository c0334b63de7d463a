use llm_extract::Extract;
use serde::{Deserialize, Serialize};

// The value is a value of the type itself.
#[derive(Extract, Deserialize, Serialize)]
#[extract(example(text = "Invoice 12 was paid.", value = true))]
struct Invoice {
    paid: bool,
}

fn main() {}
