use llm_extract::Extract;
use serde::Deserialize;

#[derive(Extract, Deserialize)]
struct Borrowed<'a> {
    #[serde(borrow)]
    name: &'a str,
}

fn main() {}
