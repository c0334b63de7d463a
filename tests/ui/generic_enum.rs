use llm_extract::Extract;
use serde::Deserialize;

#[derive(Extract, Deserialize)]
#[serde(tag = "type")]
enum Either<L, R> {
    Left { value: L },
    Right { value: R },
}

#[derive(Extract, Deserialize)]
struct Sized<const N: usize> {
    name: String,
}

fn main() {}
