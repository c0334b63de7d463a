use llm_extract::Extract;
use serde::Deserialize;

#[derive(Extract, Deserialize)]
struct Rating {
    #[extract(minimum = 0.5, maximum = 5.0)]
    stars: u8,
    #[extract(maximum = 300)]
    percent: u8,
}

fn main() {}
