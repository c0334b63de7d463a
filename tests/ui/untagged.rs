use llm_extract::Extract;
use serde::Deserialize;

#[derive(Extract, Deserialize)]
#[serde(untagged)]
enum Contact {
    Email { address: String },
    Phone { number: String },
}

fn main() {}
