use llm_extract::Extract;
use serde::Deserialize;

#[derive(Extract, Deserialize)]
struct Invoice {
    #[extract(stream = "bogus")]
    number: String,
    #[extract(stream = 1)]
    total: f64,
    #[extract(stream = "done", stream = "required")]
    iban: String,
}

fn main() {}
