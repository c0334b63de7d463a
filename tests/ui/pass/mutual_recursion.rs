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

fn main() {
    assert!(Folder::json_schema()["$defs"].get("Folder").is_some());
    assert!(File::json_schema()["$defs"].get("File").is_some());
}
