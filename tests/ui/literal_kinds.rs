use llm_extract::Extract;
use serde::Deserialize;

#[derive(Extract, Deserialize)]
struct Reading {
    #[extract(minimum = "zero")]
    celsius: f64,
    #[extract(min_length = -1)]
    label: String,
    #[extract(pattern = 3)]
    code: String,
    #[extract(examples = "one")]
    note: String,
}

fn main() {}
