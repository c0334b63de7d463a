use llm_extract::Extract;
use serde::Deserialize;

#[derive(Extract, Deserialize)]
struct Sized<const N: usize> {
    name: String,
}

fn main() {}
