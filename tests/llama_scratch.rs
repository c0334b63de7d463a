#![cfg(feature = "llama-cpp")]
mod common;
mod llama_common;
use common::types::{Extracted, OntologyItem};
use llama_common::{model, ONTOLOGY_TEXT, PERSON_AND_COMPANY};
use llm_extract::llm::llama_cpp::LlamaCpp;
use llm_extract::{ChatRequest, Dialect, Extract, Shape};

#[test]
fn scratch() {
    for ff in [true, false] {
        let llm = LlamaCpp::builder(model().model_path()).fast_forward(ff).build().unwrap();
        let r = ChatRequest::new(format!("Who is the person and which is the company?\n\n{PERSON_AND_COMPANY}"))
            .with_system("Extract the person and the company the text names, as JSON.")
            .with_schema("Extracted", Extracted::schema().for_dialect(Dialect::Ollama, Shape::One).unwrap().clone())
            .with_max_tokens(64);
        for _ in 0..2 {
            let g = llm.generate(&r, |_| true).unwrap();
            eprintln!("ff={ff} {:?} prompt {:?} gen {:?} {:.1} tok/s forced {}/{}", g.response.text, g.prompt_time, g.generation_time, g.tokens_per_second(), g.forced_tokens, g.response.usage.completion_tokens);
        }
        let r = ChatRequest::new(format!("List the entities, relationships and attributes.\n\n{ONTOLOGY_TEXT}"))
            .with_system("Answer with JSON Lines: one JSON object per line.")
            .with_schema("OntologyItem", OntologyItem::schema().for_dialect(Dialect::Ollama, Shape::Line).unwrap().clone())
            .with_json_lines(true)
            .with_max_tokens(100);
        let g = llm.generate(&r, |_| true).unwrap();
        eprintln!("ff={ff} {} {:?} prompt {:?} gen {:?} {:.1} tok/s forced {}/{}", g.response.text, g.response.finish, g.prompt_time, g.generation_time, g.tokens_per_second(), g.forced_tokens, g.response.usage.completion_tokens);
    }
    let r = ChatRequest::new("Tell me about Paris.").with_max_tokens(64);
    let g = model().generate(&r, |_| true).unwrap();
    eprintln!("free {:?} {:?} {:.1} tok/s", g.prompt_time, g.generation_time, g.tokens_per_second());
}
