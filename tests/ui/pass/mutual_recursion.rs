//! Two types that hold each other derive: each schema has its own type in `$defs`.

use llm_extract::{Extract, Schema};
use serde::Deserialize;

#[derive(Extract, Deserialize)]
struct Folder {
    name: String,
    files: Vec<File>,
}

#[derive(Extract, Deserialize)]
struct File {
    name: String,
    parent: Option<Box<Folder>>,
}

#[test]
fn derives() {
    assert!(Folder::json_schema()["$defs"].get("Folder").is_some());
    assert!(File::json_schema()["$defs"].get("File").is_some());
}
