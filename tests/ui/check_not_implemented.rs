use llm_extract::Extract;
use serde::Deserialize;

#[derive(Extract, Deserialize)]
#[extract(check)]
struct Invoice {
    total: u32,
}

fn main() {}
