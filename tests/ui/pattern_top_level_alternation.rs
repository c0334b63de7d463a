use llm_extract::Extract;
use serde::Deserialize;

#[derive(Extract, Deserialize)]
struct Answer {
    #[extract(pattern = "^yes|no$")]
    answer: String,
}

fn main() {}
