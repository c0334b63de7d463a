//! Quickstart: the people and companies in a short text, as one typed value and as a list, with the
//! library's tools for a small model: names grounded in the text, copies merged on a key, a worked
//! example, a check, and each kind chosen by the model's likelihood of each option.
//!
//! ```text
//! scripts/demo.sh                                              # installs what is missing, runs this
//! cargo run --features llama-cpp --example quickstart          # the embedded model
//! OLLAMA_HOST=localhost:11434 cargo run --example quickstart   # an Ollama server (or pass --ollama)
//! ```
//!
//! The default embedded model is tiny (135M parameters): the answers are always valid, typed values, but
//! not always right, so every kind the model was unsure of is marked as doubtful. Point
//! `LLM_EXTRACT_MODEL` at a larger GGUF file, or use Ollama, for better content.
//!
//! The list is built by hand, not with `Extractor::strategy(Strategy::PerField)`: that strategy extracts
//! one value field by field, and this list needs every name of every sentence, merged on its keys, each
//! with its kind; asked field by field, this model copies from the text's start (the company of the
//! first sentence comes back as the whole sentence). See BENCHMARKS.md, "One question per field".

#[path = "support/backend.rs"]
pub mod backend;

#[allow(dead_code)] // `clauses` is the ontology's
#[path = "support/sentences.rs"]
mod sentences;

use llm_extract::check::{Check, Issues};
use llm_extract::extract::{Chooser, Example};
use llm_extract::llm::Likelihood;
use llm_extract::llm::Usage;
use llm_extract::{Extract, Extractor, Llm};
use sentences::sentences;
use serde::{Deserialize, Serialize};

/// The person and the company a text names.
#[derive(Extract, Deserialize, Debug)]
struct Extracted {
    /// The person's full name.
    person: String,
    /// The company's name.
    company: String,
}

/// Someone the text names and the company they lead or founded.
#[derive(Extract, Serialize, Deserialize, Debug)]
#[extract(check)]
pub struct Role {
    /// The person's full name, as the text writes it. `grounded`: the embedded engine can only copy
    /// it from the text; `key`: copies of one pair are merged into one item.
    #[extract(grounded, key)]
    person: String,
    /// The company's name, as the text writes it.
    #[extract(grounded, key)]
    company: String,
}

/// What a name is.
#[derive(Extract, Serialize, Deserialize, Debug, Clone, Copy, PartialEq)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// A human being.
    Person,
    /// A business.
    Company,
}

/// Checks a schema cannot say: a name is a name, not a blank, and a person is not their own company.
/// A hard issue re-asks the model.
impl Check for Role {
    fn check(&self, issues: &mut Issues) {
        for (path, name) in [("/person", &self.person), ("/company", &self.company)] {
            if !name.chars().any(char::is_alphanumeric) {
                issues.hard(
                    path,
                    "a name has letters: write the name as the text writes it",
                );
            }
        }
        if self.person == self.company {
            issues.hard(
                "/company",
                "the company is not the person: write the company's name",
            );
        }
    }
}

/// Below this probability a chosen kind is shown as doubtful.
pub const SURE: f64 = 0.75;

const SENTENCE: &str = "Satya Nadella is the chief executive of Microsoft.";
const TEXT: &str = "Tim Cook runs Apple. Lisa Su leads AMD. Jensen Huang co-founded Nvidia.";

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
    let (llm, scorer) = backend::with_scorer()?;

    // One value: the whole answer is one `Extracted`, validated against its schema.
    println!("{SENTENCE}");
    let one = Extracted::extract(&llm, SENTENCE).await?;
    println!("  -> person: {}, company: {}\n", one.person, one.company);

    // A list: every person and company in the text, each with its kind.
    println!("{TEXT}");
    let found = people_and_companies(&llm, scorer.as_deref(), TEXT).await?;
    for named in &found.names {
        let doubt = match named.probability {
            Some(p) if p < SURE => format!("  doubtful ({:.0}% sure)", p * 100.0),
            _ => String::new(),
        };
        println!("  -> {:<14} {:?}{doubt}", named.name, named.kind);
    }
    println!(
        "  ({} prompt + {} completion tokens)",
        found.usage.prompt_tokens, found.usage.completion_tokens
    );
    Ok(())
}

/// A name of the text with its kind.
#[derive(Debug, Serialize)]
pub struct Named {
    /// The name, as the text writes it.
    pub name: String,
    /// What it is.
    pub kind: Kind,
    /// How sure the model was of the kind, when the backend can score options.
    #[serde(skip)]
    pub probability: Option<f64>,
}

/// What [`people_and_companies`] found.
pub struct Found {
    /// Every name once, in the order the text gives them.
    pub names: Vec<Named>,
    /// The tokens it took.
    pub usage: Usage,
}

/// Every person and company `text` names, each once, with its kind.
pub async fn people_and_companies(
    llm: &dyn Llm,
    scorer: Option<&dyn Likelihood>,
    text: &str,
) -> Result<Found, Box<dyn std::error::Error>> {
    // Every `Role` of each sentence (a model this small reads best one sentence at a time), each
    // validated and checked on its own, merged on its keys, and dropped if a name is not in the text.
    // One worked example shows the model what to list.
    let example = Example::items(
        "Ana Ruiz founded Solvent Labs, which Omar Haddad now leads.",
        [
            Role {
                person: "Ana Ruiz".into(),
                company: "Solvent Labs".into(),
            },
            Role {
                person: "Omar Haddad".into(),
                company: "Solvent Labs".into(),
            },
        ],
    )?;
    let extractor = Extractor::new(llm)
        .with_example(example)
        .require_grounding(true)
        .max_tokens(80)
        .max_continuations(0);
    let mut roles = Vec::new();
    let mut usage = Usage::default();
    for sentence in sentences(text) {
        let found = extractor.extract_all::<Role>(sentence).await?;
        usage += found.report.usage;
        roles.extend(found.value);
    }

    // Every name once ("Huang" after "Jensen Huang" is the same name), with its kind. The model's
    // pairing says which name it took for a person, but a small model mixes them up: where the
    // backend can score options (the embedded engine), ask which kind the model finds most likely
    // for each name, and keep how sure it is.
    let mut names: Vec<Named> = Vec::new();
    for role in &roles {
        for (name, kind) in [(&role.person, Kind::Person), (&role.company, Kind::Company)] {
            if !names.iter().any(|n| part_of(name, &n.name)) {
                names.retain(|n| !part_of(&n.name, name));
                names.push(Named {
                    name: name.clone(),
                    kind,
                    probability: None,
                });
            }
        }
    }
    if let Some(scorer) = scorer {
        let chooser = Chooser::new(scorer, text);
        for named in &mut names {
            let choice = chooser.choose::<Kind>(&named.name).await?;
            named.kind = choice.value;
            named.probability = Some(choice.probability);
        }
    }
    Ok(Found { names, usage })
}

/// Whether the words of `short` are the words of `long` or a run of them ("Su" of "Lisa Su").
fn part_of(short: &str, long: &str) -> bool {
    let short: Vec<&str> = short.split_whitespace().collect();
    let long: Vec<&str> = long.split_whitespace().collect();
    !short.is_empty() && long.windows(short.len()).any(|run| run == short.as_slice())
}
