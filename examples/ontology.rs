//! Facts about a person as a small ontology: relationships and attributes as one tagged enum, each
//! printed as a typed value the moment its line is complete, while the model is still writing the next.
//!
//! ```text
//! scripts/demo.sh                                            # installs what is missing, runs this
//! cargo run --features llama-cpp --example ontology          # the embedded model
//! OLLAMA_HOST=localhost:11434 cargo run --example ontology   # an Ollama server (or pass --ollama)
//! ```
//!
//! A model this small does best with one small question at a time: first who the text is about, then
//! the facts of each sentence about that person. The values are grounded (the embedded engine can only
//! copy them from the sentence), a worked example shows the shape of an answer, and the loop guard
//! stops a model that starts repeating itself.

#[allow(dead_code)] // shared with `demo_eval`, which uses another of its functions
#[path = "support/backend.rs"]
mod backend;

use futures_util::StreamExt;
use llm_extract::check::{Check, Issues};
use llm_extract::extract::{Example, Input};
use llm_extract::llm::Usage;
use llm_extract::{Extract, Extractor, Llm};
use serde::{Deserialize, Serialize};
use std::time::Instant;

/// The person a text is about.
#[derive(Extract, Deserialize, Debug)]
struct Subject {
    /// The person's full name, as the text first writes it.
    name: String,
}

/// One fact a sentence states about the person.
#[derive(Extract, Serialize, Deserialize, Debug, Clone)]
#[serde(tag = "type", rename_all = "snake_case")]
#[extract(check)]
pub enum Fact {
    /// How the person relates to someone or something else.
    Relationship {
        /// The relation, as a short verb phrase ("born in", "married", "worked at").
        predicate: String,
        /// Who or what the relation points to, as the sentence writes it.
        #[extract(grounded)]
        object: String,
    },
    /// A property of the person.
    Attribute {
        /// The property's name ("occupation", "nationality", "birth year").
        name: String,
        /// Its value, as the sentence writes it.
        #[extract(grounded)]
        value: String,
    },
}

/// Checks a schema cannot say: a relation or a property's name is a few plain words. A hard issue
/// re-asks the model; a line that still fails is left out.
impl Check for Fact {
    fn check(&self, issues: &mut Issues) {
        let (path, words) = match self {
            Fact::Relationship { predicate, .. } => ("/predicate", predicate),
            Fact::Attribute { name, .. } => ("/name", name),
        };
        let plain = words
            .chars()
            .all(|c| c.is_alphabetic() || c == ' ' || c == '-');
        if !plain || words.trim().is_empty() || words.split_whitespace().count() > 4 {
            issues.hard(
                path,
                "write a few plain words, such as \"born in\" or \"occupation\"",
            );
        }
    }
}

/// A fact with the person it is about: one item of the ontology.
#[derive(Debug, Clone, Serialize)]
pub struct Item {
    /// The person.
    #[serde(rename = "subject")]
    pub subject: String,
    /// The fact.
    #[serde(flatten)]
    pub fact: Fact,
}

const TEXT: &str = "Marie Curie was a physicist. She was born in Warsaw. She married Pierre Curie.";

#[tokio::main]
async fn main() -> std::process::ExitCode {
    match run().await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

async fn run() -> Result<(), Box<dyn std::error::Error>> {
    let llm = backend::from_env_and_args()?;
    println!("{TEXT}\n");
    let started = Instant::now();
    let (items, usage) = facts_with(&*llm, TEXT, |item| {
        let at = started.elapsed().as_secs_f32();
        match &item.fact {
            Fact::Relationship { predicate, object } => {
                println!(
                    "{at:5.1}s  relationship  {} --{predicate}--> {object}",
                    item.subject
                )
            }
            Fact::Attribute { name, value } => {
                println!(
                    "{at:5.1}s  attribute     {}: {name} = {value}",
                    item.subject
                )
            }
        }
    })
    .await?;
    println!(
        "\n({} facts; {} prompt + {} completion tokens)",
        items.len(),
        usage.prompt_tokens,
        usage.completion_tokens
    );
    Ok(())
}

/// Every fact `text` states about the person it is about.
pub async fn facts(
    llm: &dyn Llm,
    text: &str,
) -> Result<(Vec<Item>, Usage), Box<dyn std::error::Error>> {
    facts_with(llm, text, |_| {}).await
}

/// [`facts`], calling `on_item` on each as soon as it is complete.
async fn facts_with(
    llm: &dyn Llm,
    text: &str,
    mut on_item: impl FnMut(&Item),
) -> Result<(Vec<Item>, Usage), Box<dyn std::error::Error>> {
    // Who the text is about: one value.
    let subject = Extractor::new(llm)
        .max_tokens(40)
        .extract::<Subject>(text)
        .await?;
    let person = subject.value.name;
    let mut usage = subject.report.usage;

    // The facts of each sentence about that person, streamed. The template names the person, so
    // "She" in a sentence needs no guessing; one worked example shows the shape of an answer.
    let example = Example::items(
        "The text is about Ada Lovelace.\n\nAda Lovelace, a mathematician, was born in London.",
        [
            Fact::Attribute {
                name: "occupation".into(),
                value: "mathematician".into(),
            },
            Fact::Relationship {
                predicate: "born in".into(),
                object: "London".into(),
            },
        ],
    )?;
    let extractor = Extractor::new(llm)
        .template("The text is about {{subject}}.\n\n{{text}}")
        .with_example(example)
        .require_grounding(true)
        .max_tokens(80)
        .max_continuations(0);
    let mut items = Vec::new();
    for sentence in sentences(text) {
        let input = Input::text(sentence).var("subject", &person);
        let mut stream = extractor.extract_stream::<Fact>(input);
        while let Some(fact) = stream.next().await {
            let fact = fact?;
            // A fact that points back at the person, or repeats one already found, says nothing new.
            let target = match &fact {
                Fact::Relationship { object, .. } => object,
                Fact::Attribute { value, .. } => value,
            };
            let seen = items.iter().any(|i: &Item| same(&i.fact, &fact));
            if *target == person || seen {
                continue;
            }
            let item = Item {
                subject: person.clone(),
                fact,
            };
            on_item(&item);
            items.push(item);
        }
        if let Some(report) = stream.report() {
            usage += report.usage;
        }
    }
    Ok((items, usage))
}

/// Whether two facts say the same: the same relation to the same target, or the same property value.
fn same(a: &Fact, b: &Fact) -> bool {
    match (a, b) {
        (
            Fact::Relationship {
                predicate: p,
                object: o,
            },
            Fact::Relationship {
                predicate: q,
                object: r,
            },
        ) => p == q && o == r,
        (Fact::Attribute { value: v, .. }, Fact::Attribute { value: w, .. }) => v == w,
        _ => false,
    }
}

/// The sentences of `text`: each ends after a `.`, `!` or `?` that is followed by a space or the end.
fn sentences(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    for (at, c) in text.char_indices() {
        let end = at + c.len_utf8();
        let next = text[end..].chars().next();
        if matches!(c, '.' | '!' | '?') && next.is_none_or(char::is_whitespace) {
            out.push(text[start..end].trim());
            start = end;
        }
    }
    out.push(text[start..].trim());
    out.retain(|s| !s.is_empty());
    out
}
