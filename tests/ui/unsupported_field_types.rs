use llm_extract::Extract;
use serde::Deserialize;
use std::collections::HashMap;

#[derive(Extract, Deserialize)]
struct Unsupported {
    corners: [u8; 4],
    pair: Option<(String, u8)>,
    by_id: HashMap<u32, String>,
}

fn main() {}
