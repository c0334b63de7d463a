use llm_extract::Extract;
use serde::Deserialize;

#[derive(Extract, Deserialize)]
struct Point(f64, f64);

fn main() {}
