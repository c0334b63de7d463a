use llm_extract::Extract;
use serde::Deserialize;

#[derive(Extract, Deserialize)]
struct Person {
    name: String,
    #[serde(alias = "name")]
    full_name: String,
}

fn main() {}
