//! The five annotated reference types, (a) to (e), shared by every integration test that needs them.
//!
//! Each derives `Extract`, `Deserialize`, `Serialize`, `Debug`, `Clone` and `PartialEq`, so a test can
//! build a value, serialize it with serde, validate it against the type's schema and read it back.

use llm_extract::Extract;
use serde::{Deserialize, Serialize};

// (a)
/// The people and companies a text mentions.
#[derive(Extract, Deserialize, Serialize, Debug, Clone, PartialEq)]
pub struct Extracted {
    /// A person's full name, if the text names one.
    pub person: Option<String>,
    /// A company's name, if the text names one.
    pub company: Option<String>,
}

// (b)
/// A fact stated in a text: a definition or a relationship.
#[derive(Extract, Deserialize, Serialize, Debug, Clone, PartialEq)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Fact {
    /// What an entity is.
    Definition {
        /// The entity being defined.
        entity: String,
        /// Its definition, in one sentence.
        definition: String,
    },
    /// How a subject relates to an object.
    Relationship {
        /// Who or what acts.
        subject: String,
        /// The relation, as a verb phrase.
        predicate: String,
        /// Who or what is acted upon.
        object: String,
        /// Whether the object is itself an entity (rather than a literal value).
        #[serde(rename = "object-entity")]
        object_entity: bool,
    },
}

// (c)
/// One item of an ontology: an entity, a relationship between entities, or an attribute of one.
#[derive(Extract, Deserialize, Serialize, Debug, Clone, PartialEq)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum OntologyItem {
    /// An entity and its type.
    Entity {
        /// The entity's name.
        entity: String,
        /// Its type, e.g. person, organisation, place.
        entity_type: String,
    },
    /// A typed relation between two entities.
    Relationship {
        /// The subject entity.
        subject: String,
        /// The subject's type.
        subject_type: String,
        /// The relation.
        relation: String,
        /// The object entity.
        object: String,
        /// The object's type.
        object_type: String,
    },
    /// An attribute of an entity and its value.
    Attribute {
        /// The entity.
        entity: String,
        /// The entity's type.
        entity_type: String,
        /// The attribute's name.
        attribute: String,
        /// The attribute's value.
        value: String,
    },
}

// (d)
/// The reply to one conversation turn, with an analysis of what was discussed.
#[derive(Extract, Deserialize, Serialize, Debug, Clone, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ConversationTurn {
    /// The reply to the user.
    #[extract(min_length = 1, max_length = 10000)]
    pub response: String,
    /// What the conversation is about so far.
    pub analysis: Analysis,
}

/// What a conversation is about.
#[derive(Extract, Deserialize, Serialize, Debug, Clone, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Analysis {
    /// The subjects discussed in this turn.
    #[extract(min_items = 0, max_items = 3)]
    pub subjects: Vec<Subject>,
    /// How this turn changes the running summary.
    #[extract(min_length = 10, max_length = 500)]
    pub summary_update: String,
}

/// One subject of a conversation.
#[derive(Extract, Deserialize, Serialize, Debug, Clone, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Subject {
    /// A short slug naming the subject.
    #[extract(pattern = "^[a-z0-9]+(-[a-z0-9]+)*$", min_length = 2, max_length = 50)]
    pub name: String,
    /// What the subject is about.
    #[extract(min_length = 10, max_length = 200)]
    pub description: String,
    /// Whether the subject first came up in this turn.
    pub is_new: bool,
    /// Keywords of the subject.
    #[extract(min_items = 0, max_items = 10)]
    pub keywords: Vec<Keyword>,
}

/// A keyword and how sure the model is of it.
#[derive(Extract, Deserialize, Serialize, Debug, Clone, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Keyword {
    /// The keyword, as a slug.
    #[extract(pattern = "^[a-z0-9]+(-[a-z0-9]+)*$")]
    pub term: String,
    /// Confidence from 0 to 1.
    #[extract(minimum = 0.0, maximum = 1.0)]
    pub confidence: f64,
}

// (e)
/// The sentiment of a text.
#[derive(Extract, Deserialize, Serialize, Debug, Clone, PartialEq)]
pub struct Sentiment {
    /// The overall polarity.
    pub sentiment: Polarity,
    /// How strongly the text expresses it, from 0 to 1.
    #[extract(minimum = 0.0, maximum = 1.0)]
    pub score: f64,
}

/// A sentiment's polarity.
#[derive(Extract, Deserialize, Serialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Polarity {
    /// Approving, happy, favourable.
    Positive,
    /// Disapproving, unhappy, unfavourable.
    Negative,
    /// Neither.
    Neutral,
}
