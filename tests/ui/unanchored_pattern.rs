use llm_extract::Extract;
use serde::Deserialize;

#[derive(Extract, Deserialize)]
struct Slug {
    #[extract(pattern = "[a-z]+")]
    slug: String,
}

fn main() {}
