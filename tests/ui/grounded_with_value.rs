use llm_extract::Extract;
use serde::Deserialize;

#[derive(Extract, Deserialize)]
struct Person {
    #[extract(grounded = true)]
    name: String,
}

fn main() {}
