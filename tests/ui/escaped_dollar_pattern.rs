use llm_extract::Extract;
use serde::Deserialize;

#[derive(Extract, Deserialize)]
struct Price {
    // `\$` is a literal dollar sign, not the end anchor.
    #[extract(pattern = r"^[0-9]+\$")]
    price: String,
}

fn main() {}
