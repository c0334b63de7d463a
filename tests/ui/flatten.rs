use llm_extract::Extract;
use serde::Deserialize;

#[derive(Extract, Deserialize)]
struct Address {
    city: String,
}

#[derive(Extract, Deserialize)]
struct Person {
    name: String,
    #[serde(flatten)]
    address: Address,
}

fn main() {}
