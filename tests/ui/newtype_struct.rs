use llm_extract::Extract;
use serde::Deserialize;

#[derive(Extract, Deserialize)]
struct Meters(f64);

fn main() {}
