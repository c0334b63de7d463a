use llm_extract::Extract;
use serde::Deserialize;

#[derive(Extract, Deserialize)]
struct Post {
    #[extract(max_items = 5)]
    tags: Option<String>,
}

fn main() {}
