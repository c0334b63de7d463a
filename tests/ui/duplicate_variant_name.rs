use llm_extract::Extract;
use serde::Deserialize;

#[derive(Extract, Deserialize)]
enum Status {
    Open,
    #[serde(alias = "Open")]
    Reopened,
}

fn main() {}
