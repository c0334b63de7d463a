use llm_extract::Extract;
use serde::Deserialize;

// serde tries untagged variants after every tagged one, so they must come last.
#[derive(Extract, Deserialize)]
enum Amount {
    #[serde(untagged)]
    Raw(String),
    Exact { value: i64 },
}

fn main() {}
