//! The blocking facade, from plain threads with no async runtime, against the local server.

use crate::support;

use llm_extract::llm::Ollama;
use llm_extract::{blocking, extract::Mode, Extractor};
use support::types::{entity, entity_line, Entity, Person};
use support::{Answer, Reply, TestServer};

fn server() -> TestServer {
    TestServer::start(|request| {
        if request.json["format"].is_null() {
            let lines = format!(
                "{}\n{}\n",
                entity_line("Ada", "person"),
                entity_line("Lyon", "place")
            );
            Reply::ollama(request, &Answer::new(lines))
        } else {
            Reply::ollama(request, &Answer::new(r#"{"name": "Ada", "age": 36}"#))
        }
    })
}

#[test]
fn blocking_calls_work_without_a_runtime_and_across_threads() {
    let server = server();
    let llm = Ollama::builder("m").host(server.url()).build().unwrap();

    let person: Person = blocking::extract(&llm, "x").unwrap();
    assert_eq!(person.age, 36);

    let extractor = Extractor::new(llm.clone()).mode(Mode::Prompted);
    let all = blocking::run(extractor.extract_all::<Entity>("x")).unwrap();
    assert_eq!(
        all.value,
        [entity("Ada", "person"), entity("Lyon", "place")]
    );

    let items: Vec<Entity> = blocking::iter(extractor.extract_stream::<Entity>("x"))
        .map(Result::unwrap)
        .collect();
    assert_eq!(items.len(), 2);

    // The same backend (and its pooled connections) from other threads.
    std::thread::scope(|scope| {
        for _ in 0..4 {
            scope.spawn(|| {
                let person: Person = blocking::extract(&llm, "x").unwrap();
                assert_eq!(person.name, "Ada");
            });
        }
    });
    assert_eq!(server.hits(), 7);
}
