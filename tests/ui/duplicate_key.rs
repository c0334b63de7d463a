use llm_extract::Extract;
use serde::Deserialize;

#[derive(Extract, Deserialize)]
struct Person {
    #[extract(max_length = 40)]
    #[extract(max_length = 80)]
    name: String,
}

fn main() {}
