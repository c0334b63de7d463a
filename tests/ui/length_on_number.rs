use llm_extract::Extract;
use serde::Deserialize;

#[derive(Extract, Deserialize)]
struct Order {
    #[extract(min_length = 1)]
    quantity: u32,
}

fn main() {}
