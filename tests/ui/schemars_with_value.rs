use llm_extract::Extract;
use serde::Deserialize;

#[derive(Extract, Deserialize)]
struct Event {
    #[extract(schemars = true)]
    when: String,
}

fn main() {}
