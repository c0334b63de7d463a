use llm_extract::Extract;
use serde::Deserialize;

#[derive(Extract, Deserialize)]
struct Document {
    title: String,
    #[serde(skip)]
    #[extract(max_length = 100)]
    cache: String,
}

fn main() {}
