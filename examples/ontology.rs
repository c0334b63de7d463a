//! Facts about a person as a small ontology: relationships and attributes, each printed as a typed
//! value the moment it is found, while the model is still reading the rest.
//!
//! ```text
//! scripts/demo.sh                                            # installs what is missing, runs this
//! cargo run --features llama-cpp --example ontology          # the embedded model
//! cargo run --features llama-cpp --example ontology -- "Ada Lovelace was a mathematician."
//! OLLAMA_HOST=localhost:11434 cargo run --example ontology   # an Ollama server (or pass --ollama)
//! ```
//!
//! A model this small does best with one small question at a time, and with choosing rather than
//! writing where it can:
//! 1. who the text is about (a name copied from the text);
//! 2. who or what each clause names besides that person, streamed: grounded (the embedded engine can
//!    only copy them from the clause), with a worked example and a check that knows the person;
//! 3. what kind of thing each mention is, chosen by the model's likelihood of each kind
//!    (`Chooser`, calibrated), which says whether it is a property of the person ("physicist": an
//!    occupation) or someone or something the person relates to ("Warsaw": a place);
//! 4. for a relationship, the verb that relates them, copied from the clause.
//!
//! Each fact carries how sure the model was of its kind; below `SURE` it is shown as doubtful.
//!
//! `Extractor::strategy(Strategy::PerField)` asks such questions for one value of a fixed shape; the
//! steps here depend on each other (the person found first is the subject of every later question, and
//! each mention's kind decides whether a verb is asked for), which a schema walk cannot say, so they stay
//! written out.

#[allow(dead_code)] // shared with `demo_eval`, which uses another of its functions
#[path = "support/backend.rs"]
mod backend;

#[path = "support/sentences.rs"]
mod sentences;

use futures_util::StreamExt;
use llm_extract::extract::{Chooser, Example, Input};
use llm_extract::llm::{Likelihood, Usage};
use llm_extract::{Extract, Extractor, Llm};
use sentences::{clauses, sentences};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::time::Instant;

/// The person a text is about.
#[derive(Extract, Deserialize, Debug)]
struct Subject {
    /// The person's full name, as the text first writes it.
    #[extract(grounded)]
    name: String,
}

/// Someone or something a sentence names, other than the person: what a fact points to.
#[derive(Extract, Serialize, Deserialize, Debug, Clone, PartialEq)]
struct Mention {
    /// Who or what the sentence says the person is or relates to, as the sentence writes it.
    #[extract(grounded)]
    object: String,
}

/// How the person relates to what a sentence names.
#[derive(Extract, Serialize, Deserialize, Debug, Clone, PartialEq)]
struct Relation {
    /// The verb, as the sentence writes it ("was born in", "married", "worked at").
    #[extract(grounded)]
    predicate: String,
}

/// What a mention is. Its kind says which fact it is: someone or something the person relates to,
/// a property of the person (named after the kind), or neither.
#[derive(Extract, Serialize, Deserialize, Debug, Clone, Copy, PartialEq)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// A human being.
    Person,
    /// A city, a country or another place.
    Place,
    /// A company, a university or another organisation.
    Organisation,
    /// A nationality.
    Nationality,
    /// A job or a profession.
    Occupation,
    /// A year.
    Year,
    /// A word for a relative ("sister"), which is how the person relates to someone, not whom.
    Relative,
    /// An action, which no fact points to.
    Action,
}

/// What a mention written with a capital names (English capitalises names and nationalities).
#[derive(Extract, Deserialize, Debug, Clone, Copy, PartialEq)]
#[serde(rename_all = "snake_case")]
enum Name {
    /// A human being.
    Person,
    /// A city, a country or another place.
    Place,
    /// A company, a university or another organisation.
    Organisation,
    /// A nationality.
    Nationality,
}

/// What a mention in lower case is.
#[derive(Extract, Deserialize, Debug, Clone, Copy, PartialEq)]
#[serde(rename_all = "snake_case")]
enum Word {
    /// A job or a profession.
    Occupation,
    /// A year.
    Year,
    /// A word for a relative.
    Relative,
    /// An action.
    Action,
}

impl Kind {
    /// Which fact a mention of this kind is: a relationship, a property of the person (with its
    /// name), or none.
    fn fact(self) -> Option<Option<&'static str>> {
        match self {
            Kind::Person | Kind::Place | Kind::Organisation => Some(None),
            Kind::Occupation => Some(Some("occupation")),
            Kind::Nationality => Some(Some("nationality")),
            Kind::Year => Some(Some("year")),
            Kind::Relative | Kind::Action => None,
        }
    }
}

impl From<Name> for Kind {
    fn from(name: Name) -> Self {
        match name {
            Name::Person => Kind::Person,
            Name::Place => Kind::Place,
            Name::Organisation => Kind::Organisation,
            Name::Nationality => Kind::Nationality,
        }
    }
}

impl From<Word> for Kind {
    fn from(word: Word) -> Self {
        match word {
            Word::Occupation => Kind::Occupation,
            Word::Year => Kind::Year,
            Word::Relative => Kind::Relative,
            Word::Action => Kind::Action,
        }
    }
}

/// One fact about the person: what the ontology holds.
#[derive(Serialize, Debug, Clone, PartialEq)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Fact {
    /// How the person relates to someone or something else.
    Relationship {
        /// The relation, as a short verb phrase ("born in", "married").
        predicate: String,
        /// Who or what the relation points to, as the sentence writes it.
        object: String,
    },
    /// A property of the person.
    Attribute {
        /// The property's name ("occupation", "nationality").
        name: String,
        /// Its value, as the sentence writes it.
        value: String,
    },
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
    /// How sure the model was of the fact's kind, when the backend can score options.
    #[serde(skip)]
    pub probability: Option<f64>,
}

/// Below this probability a fact's kind is shown as doubtful.
pub const SURE: f64 = 0.6;

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
    let (llm, scorer) = backend::with_scorer()?;
    // A text of your own as the first argument, or the demo's.
    let text = std::env::args()
        .skip(1)
        .find(|arg| !arg.starts_with("--"))
        .unwrap_or_else(|| TEXT.to_owned());
    println!("{text}\n");
    let started = Instant::now();
    let (items, usage) = facts_with(&*llm, scorer.as_deref(), &text, |item| {
        let at = started.elapsed().as_secs_f32();
        let doubt = match item.probability {
            Some(p) if p < SURE => format!("  doubtful ({:.0}% sure)", p * 100.0),
            _ => String::new(),
        };
        match &item.fact {
            Fact::Relationship { predicate, object } => println!(
                "{at:5.1}s  relationship  {} --{predicate}--> {object}{doubt}",
                item.subject
            ),
            Fact::Attribute { name, value } => println!(
                "{at:5.1}s  attribute     {}: {name} = {value}{doubt}",
                item.subject
            ),
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
    scorer: Option<&dyn Likelihood>,
    text: &str,
) -> Result<(Vec<Item>, Usage), Box<dyn std::error::Error>> {
    facts_with(llm, scorer, text, |_| {}).await
}

/// [`facts`], calling `on_item` on each as soon as it is complete.
async fn facts_with(
    llm: &dyn Llm,
    scorer: Option<&dyn Likelihood>,
    text: &str,
    mut on_item: impl FnMut(&Item),
) -> Result<(Vec<Item>, Usage), Box<dyn std::error::Error>> {
    // Who the text is about: a list of one, since a list's grounded strings are copied by construction.
    let subject = Extractor::new(llm)
        .require_grounding(true)
        .max_items(1)
        .max_tokens(40)
        .extract_all::<Subject>(text)
        .await?;
    let mut usage = subject.report.usage;
    let Some(person) = subject.value.into_iter().next().map(|s| s.name) else {
        return Ok((Vec::new(), usage));
    };

    // Who or what each sentence names besides the person, streamed, in the sentence's own words
    // (grounded: the embedded engine can only copy them). The template names the person, so "She"
    // needs no guessing; one worked example shows the shape of an answer; a check that needs the
    // person (which the type cannot know) turns away the person themself, and a clause.
    let example = Example::items(
        "The text is about Ada Lovelace.\n\nAda Lovelace was a mathematician, born in London.",
        [
            Mention {
                object: "mathematician".into(),
            },
            Mention {
                object: "London".into(),
            },
        ],
    )?;
    let who = person.clone();
    let mentions = Extractor::new(llm)
        .template("The text is about {{subject}}.\n\n{{text}}")
        .with_example(example)
        .check(move |value, issues| {
            let object = &value["object"];
            if only_words_of(&who, object) || pronoun_in(object) {
                issues.hard(
                    "/object",
                    "write who or what the sentence says the person is or relates to, not the person",
                );
            } else if lowercase_words(object.as_str().unwrap_or_default()).len() > 4 {
                issues.hard(
                    "/object",
                    "write one name or thing in a few words, not a clause: list each on its own",
                );
            }
        })
        .require_grounding(true)
        .max_tokens(60)
        .max_continuations(0);
    // Which kind of thing each mention is decides the fact: where the backend can score options
    // (the embedded engine), the model's likelihood of each kind, with how sure it is.
    let chooser = scorer.map(|scorer| Chooser::new(scorer, text).calibrated());
    let mut items: Vec<Item> = Vec::new();
    for clause in sentences(text).into_iter().flat_map(clauses) {
        let input = Input::text(clause).var("subject", &person);
        let mut stream = mentions.extract_stream::<Mention>(input);
        let mut found: Vec<String> = Vec::new();
        while let Some(mention) = stream.next().await {
            found.push(mention?.object.trim().to_owned());
        }
        if let Some(report) = stream.report() {
            usage += report.usage;
        }
        // The shortest reading of a phrase: "Warsaw", not also "born in Warsaw"; and nothing a
        // fact already points to.
        let shortest: Vec<&String> = found
            .iter()
            .filter(|m| !found.iter().any(|n| n != *m && contains_words(m, n)))
            .filter(|m| !items.iter().any(|i| target(&i.fact) == m.as_str()))
            .collect();
        for object in shortest {
            let (kind, probability) = match &chooser {
                Some(chooser) => {
                    let (kind, probability) = chosen_kind(chooser, object).await?;
                    (kind, Some(probability))
                }
                None => (written_kind(llm, clause, object, &mut usage).await?, None),
            };
            let fact = match kind.fact() {
                None => continue,
                Some(Some(name)) => Fact::Attribute {
                    name: name.to_string(),
                    value: object.clone(),
                },
                Some(None) => match relation_to(llm, clause, &person, object, &mut usage).await? {
                    Some(predicate) => Fact::Relationship {
                        predicate,
                        object: object.clone(),
                    },
                    None => continue,
                },
            };
            let item = Item {
                subject: person.clone(),
                fact,
                probability,
            };
            on_item(&item);
            items.push(item);
        }
    }
    Ok((items, usage))
}

/// How `sentence` says `person` relates to `object`: the verb, copied from the sentence (a list of
/// one, since a list's strings are copied by construction), or `None` when the model found none.
async fn relation_to(
    llm: &dyn Llm,
    sentence: &str,
    person: &str,
    object: &str,
    usage: &mut Usage,
) -> Result<Option<String>, Box<dyn std::error::Error>> {
    let example = Example::items(
        "Ada Lovelace was born in London.\n\nHow does Ada Lovelace relate to London?",
        [Relation {
            predicate: "was born in".into(),
        }],
    )?;
    let (who, what) = (person.to_owned(), object.to_owned());
    let relation = Extractor::new(llm)
        .template("{{text}}\n\nHow does {{subject}} relate to {{object}}?")
        .with_example(example)
        .check(move |value, issues| {
            let words = &value["predicate"];
            if only_words_of(&who, words) || shares_words(&what, words) || pronoun_in(words) {
                issues.hard(
                    "/predicate",
                    "write the verb only (\"was born in\", \"married\"), without who or what",
                );
            }
        })
        .require_grounding(true)
        .max_items(1)
        .max_tokens(30)
        .extract_all::<Relation>(
            Input::text(sentence)
                .var("subject", person)
                .var("object", object),
        )
        .await?;
    *usage += relation.report.usage;
    Ok(relation
        .value
        .first()
        .map(|relation| relation_name(&relation.predicate)))
}

/// Whether the JSON string `value` holds only words of `name` ("Curie" of "Marie Curie").
fn only_words_of(name: &str, value: &Value) -> bool {
    let name = lowercase_words(name);
    let words = lowercase_words(value.as_str().unwrap_or_default());
    !words.is_empty() && words.iter().all(|w| name.contains(w))
}

/// Whether the JSON string `value` shares a word with `name`.
fn shares_words(name: &str, value: &Value) -> bool {
    let name = lowercase_words(name);
    lowercase_words(value.as_str().unwrap_or_default())
        .iter()
        .any(|w| name.contains(w))
}

/// Whether the JSON string `value` holds a pronoun for a person.
fn pronoun_in(value: &Value) -> bool {
    let pronouns = ["she", "he", "they", "her", "his", "him", "their"];
    lowercase_words(value.as_str().unwrap_or_default())
        .iter()
        .any(|w| pronouns.contains(&w.as_str()))
}

/// Whether the words of `long` hold those of `short` as a run ("born in Warsaw" holds "Warsaw").
fn contains_words(long: &str, short: &str) -> bool {
    let long = lowercase_words(long);
    let short = lowercase_words(short);
    !short.is_empty() && long.windows(short.len()).any(|run| run == short.as_slice())
}

fn lowercase_words(text: &str) -> Vec<String> {
    text.split_whitespace().map(str::to_lowercase).collect()
}

/// The kind of `object` by the model's likelihood of each, among the kinds of a name when it is
/// written with a capital and among those of a word when not, with its probability.
async fn chosen_kind(
    chooser: &Chooser<&dyn Likelihood>,
    object: &str,
) -> Result<(Kind, f64), Box<dyn std::error::Error>> {
    Ok(if object.starts_with(char::is_uppercase) {
        let choice = chooser.choose::<Name>(object).await?;
        (choice.value.into(), choice.probability)
    } else {
        let choice = chooser.choose::<Word>(object).await?;
        (choice.value.into(), choice.probability)
    })
}

/// The kind of `object` as the model writes it, for a backend that cannot score options.
async fn written_kind(
    llm: &dyn Llm,
    sentence: &str,
    object: &str,
    usage: &mut Usage,
) -> Result<Kind, Box<dyn std::error::Error>> {
    let kind = Extractor::new(llm)
        .max_tokens(10)
        .extract::<Kind>(format!("{sentence}\n\nWhat kind of thing is \"{object}\"?").as_str())
        .await?;
    *usage += kind.report.usage;
    Ok(kind.value)
}

/// Who or what a fact points to.
fn target(fact: &Fact) -> &str {
    match fact {
        Fact::Relationship { object, .. } => object,
        Fact::Attribute { value, .. } => value,
    }
}

/// A relation's name from the sentence's words: without the leading "was" or "is" of the verb
/// ("was born in" is "born in").
fn relation_name(predicate: &str) -> String {
    let words: Vec<&str> = predicate.split_whitespace().collect();
    let auxiliary = ["is", "was", "are", "were", "has", "had", "been", "be"];
    let start = words
        .iter()
        .position(|w| !auxiliary.contains(&w.to_lowercase().as_str()))
        .unwrap_or(0);
    words.get(start..).unwrap_or_default().join(" ")
}

#[cfg(test)]
mod tests {
    use super::relation_name;

    #[test]
    fn relations_drop_a_leading_auxiliary() {
        assert_eq!(relation_name("was born in"), "born in");
        assert_eq!(relation_name("married"), "married");
        assert_eq!(relation_name("is married to"), "married to");
        assert_eq!(relation_name("was"), "was");
    }
}
