// Combinations serde itself rejects: the derive says why, next to serde's own errors.
use llm_extract::Extract;
use serde::Deserialize;

#[derive(Extract, Deserialize)]
#[serde(untagged, tag = "type")]
enum Both {
    A { a: u8 },
}

#[derive(Extract, Deserialize)]
#[serde(content = "c")]
enum ContentAlone {
    A(u8),
}

#[derive(Extract, Deserialize)]
#[serde(tag = "type")]
enum TupleInTagged {
    Pair(u8, u8),
}

#[derive(Extract, Deserialize)]
#[serde(tag = "type")]
enum OtherWithData {
    A,
    #[serde(other)]
    Rest(String),
}

#[derive(Extract, Deserialize)]
#[serde(transparent)]
struct TwoFields {
    a: u8,
    b: u8,
}

#[derive(Extract, Deserialize)]
#[serde(tag = "type")]
struct TaggedTuple(u8, u8);

fn main() {}
