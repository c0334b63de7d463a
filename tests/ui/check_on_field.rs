use llm_extract::Extract;
use serde::Deserialize;

#[derive(Extract, Deserialize)]
struct Invoice {
    #[extract(check)]
    total: u32,
}

fn main() {}
