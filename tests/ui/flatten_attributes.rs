use llm_extract::Extract;
use serde::Deserialize;

#[derive(Extract, Deserialize)]
struct Address {
    city: String,
}

#[derive(Extract, Deserialize)]
struct Person {
    /// Where the person lives.
    #[serde(flatten, rename = "addr")]
    address: Address,
    #[serde(flatten)]
    #[extract(stream = "done")]
    rest: std::collections::HashMap<String, String>,
    #[serde(flatten)]
    anything: serde_json::Value,
}

fn main() {}
