use llm_extract::Extract;
use serde::{Deserialize, Serialize};

// A worked example shows a whole value: it belongs on the type.
#[derive(Extract, Deserialize, Serialize)]
struct Invoice {
    #[extract(example(text = "Paid.", value = true))]
    paid: bool,
}

#[derive(Extract, Deserialize, Serialize)]
#[serde(tag = "type")]
enum Fact {
    #[extract(example(text = "Ada was born in 1815.", value = Fact::Birth { year: 1815 }))]
    Birth { year: u16 },
}

fn main() {}
