//! End to end with derived types: `#[derive(Extract)]` schemas, the dialect renderings sent over both
//! wire formats, the lenient parser and the loop, against the local server.

use crate::common;
use crate::support;

use common::types::{Extracted, OntologyItem};
use futures_util::StreamExt;
use llm_extract::llm::{Ollama, OpenAiCompatible};
use llm_extract::Schema;
use llm_extract::{
    extract::Mode,
    schema::{Dialect, Shape},
    Extract, Extractor,
};
use serde_json::json;
use support::{Answer, Reply, TestServer};

fn ontology() -> Vec<OntologyItem> {
    vec![
        OntologyItem::Entity {
            entity: "Ada Lovelace".into(),
            entity_type: "person".into(),
        },
        OntologyItem::Relationship {
            subject: "Ada Lovelace".into(),
            subject_type: "person".into(),
            relation: "worked with".into(),
            object: "Charles Babbage".into(),
            object_type: "person".into(),
        },
        OntologyItem::Attribute {
            entity: "Ada Lovelace".into(),
            entity_type: "person".into(),
            attribute: "born".into(),
            value: "1815".into(),
        },
    ]
}

#[tokio::test]
async fn a_tagged_enum_streams_over_ollama_as_a_constrained_list() {
    let items = ontology();
    let body = json!({ "items": items }).to_string();
    let server = TestServer::start(move |request| {
        Reply::ollama(request, &Answer::new(body.clone()).pieces_of(4))
    });
    let llm = Ollama::builder("m").host(server.url()).build().unwrap();
    let mut stream =
        OntologyItem::extract_stream(&llm, "Ada Lovelace, born 1815, worked with Babbage.");
    let mut got = Vec::new();
    while let Some(item) = stream.next().await {
        got.push(item.unwrap());
    }
    assert_eq!(got, items);
    assert_eq!(
        &server.requests()[0].json["format"],
        OntologyItem::schema()
            .for_dialect(Dialect::Gbnf, Shape::List)
            .unwrap()
    );
}

#[tokio::test]
async fn a_tagged_enum_as_prompted_json_lines_over_openai() {
    let items = ontology();
    let text: String = items
        .iter()
        .map(|item| format!("{}\n", serde_json::to_string(item).unwrap()))
        .collect();
    let server =
        TestServer::start(move |request| Reply::openai(request, &Answer::new(text.clone())));
    let llm = OpenAiCompatible::new(server.url(), "m").unwrap();
    let out = Extractor::new(&llm)
        .mode(Mode::Prompted)
        .extract_all::<OntologyItem>("x")
        .await
        .unwrap();
    assert_eq!(out.value, items);
    let system = server.requests()[0].messages()[0].1.clone();
    assert!(system.contains(OntologyItem::line_format_instructions()));
}

#[tokio::test]
async fn optional_fields_round_trip_through_both_backends() {
    let server = TestServer::start(|request| {
        let answer = Answer::new(r#"{"person": "Ada Lovelace", "company": null}"#);
        if request.path.starts_with("/api/") {
            Reply::ollama(request, &answer)
        } else {
            Reply::openai(request, &answer)
        }
    });
    let expected = Extracted {
        person: Some("Ada Lovelace".into()),
        company: None,
    };
    let ollama = Ollama::builder("m").host(server.url()).build().unwrap();
    assert_eq!(Extracted::extract(&ollama, "x").await.unwrap(), expected);
    let openai = OpenAiCompatible::new(server.url(), "m").unwrap();
    assert_eq!(Extracted::extract(&openai, "x").await.unwrap(), expected);
    let requests = server.requests();
    assert_eq!(
        &requests[1].json["response_format"]["json_schema"]["schema"],
        Extracted::schema()
            .for_dialect(Dialect::OpenAiStrict, Shape::One)
            .unwrap()
    );
}
