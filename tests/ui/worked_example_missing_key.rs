use llm_extract::Extract;
use serde::{Deserialize, Serialize};

// A worked example needs both the text and the value read from it.
#[derive(Extract, Deserialize, Serialize)]
#[extract(example(value = Invoice { paid: true }))]
struct Invoice {
    paid: bool,
}

#[derive(Extract, Deserialize, Serialize)]
#[extract(example(text = "Order 7 is on its way."))]
struct Order {
    shipped: bool,
}

fn main() {}
