//! A generic struct derives, a schema per instantiation.

use llm_extract::{Extract, Schema};
use serde::Deserialize;

#[derive(Extract, Deserialize)]
struct Page<T> {
    items: Vec<T>,
}

#[derive(Extract, Deserialize)]
struct Person {
    name: String,
}

#[test]
fn derives() {
    let people = <Page<Person>>::json_schema();
    assert_eq!(
        people["properties"]["items"]["items"]["required"][0],
        "name"
    );
    assert_ne!(people, <Page<u8>>::json_schema());
}
