use llm_extract::Extract;
use serde::Deserialize;

#[derive(Extract, Deserialize)]
struct Person {
    #[extract(max_len = 40)]
    name: String,
}

fn main() {}
