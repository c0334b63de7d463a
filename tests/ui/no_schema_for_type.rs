use llm_extract::Extract;
use serde::Deserialize;

#[derive(Deserialize)]
struct NotDerived {
    name: String,
}

#[derive(Extract, Deserialize)]
struct Holder {
    inner: NotDerived,
}

fn main() {}
