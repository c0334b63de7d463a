//! The reference types (a)-(e) exactly as specified: the fields, constraints and serde renaming the
//! specification names, and no doc comments, so their schemas carry no descriptions.
//!
//! `tests/common/types.rs` holds the same types with a doc comment on every item;
//! `tests/extract/instruction_tokens.rs` checks that the two differ only by those descriptions.

use llm_extract::Extract;
use serde::Deserialize;

// (a)
#[derive(Extract, Deserialize)]
pub struct Extracted {
    pub person: Option<String>,
    pub company: Option<String>,
}

// (b)
#[derive(Extract, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Fact {
    Definition {
        entity: String,
        definition: String,
    },
    Relationship {
        subject: String,
        predicate: String,
        object: String,
        #[serde(rename = "object-entity")]
        object_entity: bool,
    },
}

// (c)
#[derive(Extract, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum OntologyItem {
    Entity {
        entity: String,
        entity_type: String,
    },
    Relationship {
        subject: String,
        subject_type: String,
        relation: String,
        object: String,
        object_type: String,
    },
    Attribute {
        entity: String,
        entity_type: String,
        attribute: String,
        value: String,
    },
}

// (d)
#[derive(Extract, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ConversationTurn {
    #[extract(min_length = 1, max_length = 10000)]
    pub response: String,
    pub analysis: Analysis,
}

#[derive(Extract, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Analysis {
    #[extract(min_items = 0, max_items = 3)]
    pub subjects: Vec<Subject>,
    #[extract(min_length = 10, max_length = 500)]
    pub summary_update: String,
}

#[derive(Extract, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Subject {
    #[extract(pattern = "^[a-z0-9]+(-[a-z0-9]+)*$", min_length = 2, max_length = 50)]
    pub name: String,
    #[extract(min_length = 10, max_length = 200)]
    pub description: String,
    pub is_new: bool,
    #[extract(min_items = 0, max_items = 10)]
    pub keywords: Vec<Keyword>,
}

#[derive(Extract, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Keyword {
    #[extract(pattern = "^[a-z0-9]+(-[a-z0-9]+)*$")]
    pub term: String,
    #[extract(minimum = 0.0, maximum = 1.0)]
    pub confidence: f64,
}

// (e)
#[derive(Extract, Deserialize)]
pub struct Sentiment {
    pub sentiment: Polarity,
    #[extract(minimum = 0.0, maximum = 1.0)]
    pub score: f64,
}

#[derive(Extract, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Polarity {
    Positive,
    Negative,
    Neutral,
}
