use llm_extract::Extract;
use serde::Deserialize;
use std::collections::HashMap;

#[derive(Extract, Deserialize)]
struct Unsupported {
    name: &'static str,
    unit: Option<()>,
    by_id: HashMap<u32, String>,
}

fn main() {}
