//! A generic internally tagged enum derives, a schema per instantiation.

use llm_extract::{Extract, Schema};
use serde::Deserialize;

#[derive(Extract, Deserialize)]
#[serde(tag = "type")]
enum Either<L, R> {
    Left { value: L },
    Right { value: R },
}

#[test]
fn derives() {
    let numbers = <Either<u8, String>>::json_schema();
    assert_ne!(numbers, <Either<String, u8>>::json_schema());
}
