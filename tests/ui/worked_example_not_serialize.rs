use llm_extract::Extract;
use serde::Deserialize;

// A worked example is shown to the model as JSON: the type must implement `Serialize`.
#[derive(Extract, Deserialize)]
#[extract(example(text = "Invoice 12 was paid.", value = Invoice { paid: true }))]
struct Invoice {
    paid: bool,
}

fn main() {}
