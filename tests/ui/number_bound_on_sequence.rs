use llm_extract::Extract;
use serde::Deserialize;

#[derive(Extract, Deserialize)]
struct Scores {
    #[extract(minimum = 0, maximum = 10)]
    scores: Vec<u8>,
}

fn main() {}
