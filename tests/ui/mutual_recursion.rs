use llm_extract::Extract;
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

fn main() {}
