use llm_extract::Extract;
use serde::Deserialize;

#[derive(Extract, Deserialize)]
#[extract(stream = "done")]
struct Invoice {
    #[serde(skip)]
    #[extract(stream = "done")]
    cache: String,
    number: String,
}

#[derive(Extract, Deserialize)]
#[serde(tag = "type")]
enum Payment {
    #[extract(stream = "required")]
    Card { last4: String },
}

fn main() {}
