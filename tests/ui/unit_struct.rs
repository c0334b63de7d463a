use llm_extract::Extract;
use serde::Deserialize;

#[derive(Extract, Deserialize)]
struct Nothing;

fn main() {}
