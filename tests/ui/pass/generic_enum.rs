use llm_extract::{Extract, Schema};
use serde::Deserialize;

#[derive(Extract, Deserialize)]
#[serde(tag = "type")]
enum Either<L, R> {
    Left { value: L },
    Right { value: R },
}

fn main() {
    let numbers = <Either<u8, String>>::json_schema();
    assert_ne!(numbers, <Either<String, u8>>::json_schema());
}
