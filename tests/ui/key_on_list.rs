use llm_extract::Extract;
use serde::Deserialize;

#[derive(Extract, Deserialize)]
struct Person {
    #[extract(key)]
    name: String,
    #[extract(key)]
    aliases: Vec<String>,
}

fn main() {}
