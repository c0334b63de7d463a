use llm_extract::Extract;
use serde::Deserialize;

#[derive(Extract, Deserialize)]
struct Review {
    #[extract(min_length = 50, max_length = 10)]
    text: String,
    #[extract(minimum = 1.0, maximum = 0.0)]
    score: f64,
    #[extract(min_items = 3, max_items = 2)]
    tags: Vec<String>,
}

fn main() {}
