use llm_extract::Extract;
use serde::Deserialize;

#[derive(Extract, Deserialize)]
struct Page<T> {
    items: Vec<T>,
}

fn main() {}
