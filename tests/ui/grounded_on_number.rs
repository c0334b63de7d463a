use llm_extract::Extract;
use serde::Deserialize;

#[derive(Extract, Deserialize)]
struct Person {
    #[extract(grounded)]
    name: String,
    #[extract(grounded)]
    age: u32,
    #[extract(grounded)]
    tags: Vec<u32>,
}

fn main() {}
