#![cfg(feature = "llama-cpp")]
mod common;
mod llama_common;
use common::types::{Extracted, OntologyItem};
use llama_common::{model, ONTOLOGY_TEXT, PERSON_AND_COMPANY};
use llm_extract::{ChatRequest, Dialect, Extract, Llm, Shape};

#[tokio::test]
async fn scratch() {
    let t = std::time::Instant::now();
    let r = ChatRequest::new(format!("Who is the person and which is the company?\n\n{PERSON_AND_COMPANY}"))
        .with_system("Extract the person and the company the text names, as JSON.")
        .with_schema("Extracted", Extracted::schema().for_dialect(Dialect::Ollama, Shape::One).unwrap().clone())
        .with_max_tokens(64);
    let g = model().generate(&r, |_| true).unwrap();
    eprintln!("{:?} {:?} {:?} {:.1} tok/s total {:?}", g.response.text, g.prompt_time, g.generation_time, g.tokens_per_second(), t.elapsed());
    let g = model().generate(&r, |_| true).unwrap();
    eprintln!("{:?} {:?} {:?} {:.1} tok/s", g.response.text, g.prompt_time, g.generation_time, g.tokens_per_second());
    let r = ChatRequest::new(format!("List the entities, relationships and attributes.\n\n{ONTOLOGY_TEXT}"))
        .with_system("Answer with JSON Lines: one JSON object per line.")
        .with_schema("OntologyItem", OntologyItem::schema().for_dialect(Dialect::Ollama, Shape::Line).unwrap().clone())
        .with_json_lines(true)
        .with_max_tokens(120);
    eprintln!("{}", serde_json::to_string(&r.schema).unwrap());
    let g = model().generate(&r, |_| true).unwrap();
    eprintln!("{} {:?} {:?} {:?} {:.1} tok/s {:?}", g.response.text, g.response.finish, g.prompt_time, g.generation_time, g.tokens_per_second(), g.response.usage);
    let r = ChatRequest::new("Tell me about Paris.").with_max_tokens(64);
    let g = model().generate(&r, |_| true).unwrap();
    eprintln!("{} {:?} {:?} {:?} {:.1} tok/s", g.response.text, g.response.finish, g.prompt_time, g.generation_time, g.tokens_per_second());
}
