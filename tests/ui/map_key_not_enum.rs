use llm_extract::Extract;
use serde::Deserialize;
use std::collections::HashMap;

#[derive(Extract, Deserialize, PartialEq, Eq, Hash)]
struct Key {
    name: String,
}

#[derive(Extract, Deserialize)]
struct Index {
    by_key: HashMap<Key, u32>,
}

fn main() {}
