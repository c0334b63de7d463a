use llm_extract::Extract;
use serde::Deserialize;

#[derive(Extract, Deserialize)]
enum Never {}

fn main() {}
