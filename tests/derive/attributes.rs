//! Integration tests of `#[derive(Extract)]`: the exact generic schema each annotated type yields
//! (key order included), and agreement with serde: what serde writes validates, what serde (or a
//! constraint) rejects does not.

use crate::common;

use common::types::*;
use llm_extract::validate::Validator;
use llm_extract::Extract;
use llm_extract::Schema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};

/// Compares as text, so key order counts (serde_json's `preserve_order` is on).
#[track_caller]
fn assert_schema<T: Extract>(expected: Value) {
    let actual = T::json_schema();
    assert_eq!(
        serde_json::to_string_pretty(actual).unwrap(),
        serde_json::to_string_pretty(&expected).unwrap()
    );
}

fn validator<T: Extract>() -> Validator {
    Validator::new(T::json_schema()).expect("the generic schema compiles")
}

/// `value` serializes to JSON the schema accepts, and that JSON reads back as `value`.
#[track_caller]
fn assert_round_trip<T: Extract + Serialize + PartialEq + std::fmt::Debug>(value: &T) {
    let json = serde_json::to_value(value).unwrap();
    let violations = validator::<T>().violations(&json);
    assert!(violations.is_empty(), "{json} violates {violations:?}");
    assert_eq!(&serde_json::from_value::<T>(json).unwrap(), value);
}

/// serde rejects `json`, and so does the schema.
#[track_caller]
fn assert_both_reject<T: Extract + std::fmt::Debug>(json: Value) {
    assert!(
        serde_json::from_value::<T>(json.clone()).is_err(),
        "serde accepted {json}"
    );
    assert!(
        !validator::<T>().is_valid(&json),
        "the schema accepted {json}"
    );
}

/// Only the schema rejects `json`: an extra key (objects are closed) or a broken constraint.
#[track_caller]
fn assert_schema_rejects<T: Extract>(json: Value) {
    assert!(
        !validator::<T>().is_valid(&json),
        "the schema accepted {json}"
    );
}

fn with<F: FnOnce(&mut Value)>(mut json: Value, change: F) -> Value {
    change(&mut json);
    json
}

// ----- (a) to (e): exact schemas -----

#[test]
fn extracted_schema() {
    assert_schema::<Extracted>(json!({
        "type": "object",
        "description": "The people and companies a text mentions.",
        "properties": {
            "person": {
                "type": ["string", "null"],
                "description": "A person's full name, if the text names one."
            },
            "company": {
                "type": ["string", "null"],
                "description": "A company's name, if the text names one."
            }
        },
        "required": [],
        "additionalProperties": false
    }));
}

#[test]
fn fact_schema() {
    assert_schema::<Fact>(json!({
        "oneOf": [
            {
                "type": "object",
                "description": "What an entity is.",
                "properties": {
                    "type": { "const": "definition" },
                    "entity": { "type": "string", "description": "The entity being defined." },
                    "definition": { "type": "string", "description": "Its definition, in one sentence." }
                },
                "required": ["type", "entity", "definition"],
                "additionalProperties": false
            },
            {
                "type": "object",
                "description": "How a subject relates to an object.",
                "properties": {
                    "type": { "const": "relationship" },
                    "subject": { "type": "string", "description": "Who or what acts." },
                    "predicate": { "type": "string", "description": "The relation, as a verb phrase." },
                    "object": { "type": "string", "description": "Who or what is acted upon." },
                    "object-entity": {
                        "type": "boolean",
                        "description": "Whether the object is itself an entity (rather than a literal value)."
                    }
                },
                "required": ["type", "subject", "predicate", "object", "object-entity"],
                "additionalProperties": false
            }
        ],
        "description": "A fact stated in a text: a definition or a relationship."
    }));
}

#[test]
fn ontology_schema() {
    let string = |description: &str| json!({ "type": "string", "description": description });
    assert_schema::<OntologyItem>(json!({
        "oneOf": [
            {
                "type": "object",
                "description": "An entity and its type.",
                "properties": {
                    "type": { "const": "entity" },
                    "entity": string("The entity's name."),
                    "entity_type": string("Its type, e.g. person, organisation, place.")
                },
                "required": ["type", "entity", "entity_type"],
                "additionalProperties": false
            },
            {
                "type": "object",
                "description": "A typed relation between two entities.",
                "properties": {
                    "type": { "const": "relationship" },
                    "subject": string("The subject entity."),
                    "subject_type": string("The subject's type."),
                    "relation": string("The relation."),
                    "object": string("The object entity."),
                    "object_type": string("The object's type.")
                },
                "required": ["type", "subject", "subject_type", "relation", "object", "object_type"],
                "additionalProperties": false
            },
            {
                "type": "object",
                "description": "An attribute of an entity and its value.",
                "properties": {
                    "type": { "const": "attribute" },
                    "entity": string("The entity."),
                    "entity_type": string("The entity's type."),
                    "attribute": string("The attribute's name."),
                    "value": string("The attribute's value.")
                },
                "required": ["type", "entity", "entity_type", "attribute", "value"],
                "additionalProperties": false
            }
        ],
        "description": "One item of an ontology: an entity, a relationship between entities, or an attribute of one."
    }));
}

#[test]
fn conversation_turn_schema() {
    let slug = "^[a-z0-9]+(-[a-z0-9]+)*$";
    let keyword = json!({
        "type": "object",
        "description": "A keyword and how sure the model is of it.",
        "properties": {
            "term": { "type": "string", "description": "The keyword, as a slug.", "pattern": slug },
            "confidence": {
                "type": "number",
                "description": "Confidence from 0 to 1.",
                "minimum": 0.0,
                "maximum": 1.0
            }
        },
        "required": ["term", "confidence"],
        "additionalProperties": false
    });
    let subject = json!({
        "type": "object",
        "description": "One subject of a conversation.",
        "properties": {
            "name": {
                "type": "string",
                "description": "A short slug naming the subject.",
                "pattern": slug,
                "minLength": 2,
                "maxLength": 50
            },
            "description": {
                "type": "string",
                "description": "What the subject is about.",
                "minLength": 10,
                "maxLength": 200
            },
            "isNew": { "type": "boolean", "description": "Whether the subject first came up in this turn." },
            "keywords": {
                "type": "array",
                "description": "Keywords of the subject.",
                "items": keyword,
                "minItems": 0,
                "maxItems": 10
            }
        },
        "required": ["name", "description", "isNew", "keywords"],
        "additionalProperties": false
    });
    assert_schema::<ConversationTurn>(json!({
        "type": "object",
        "description": "The reply to one conversation turn, with an analysis of what was discussed.",
        "properties": {
            "response": {
                "type": "string",
                "description": "The reply to the user.",
                "minLength": 1,
                "maxLength": 10000
            },
            "analysis": {
                "type": "object",
                "description": "What the conversation is about so far.",
                "properties": {
                    "subjects": {
                        "type": "array",
                        "description": "The subjects discussed in this turn.",
                        "items": subject,
                        "minItems": 0,
                        "maxItems": 3
                    },
                    "summaryUpdate": {
                        "type": "string",
                        "description": "How this turn changes the running summary.",
                        "minLength": 10,
                        "maxLength": 500
                    }
                },
                "required": ["subjects", "summaryUpdate"],
                "additionalProperties": false
            }
        },
        "required": ["response", "analysis"],
        "additionalProperties": false
    }));
}

#[test]
fn sentiment_schema() {
    assert_schema::<Sentiment>(json!({
        "type": "object",
        "description": "The sentiment of a text.",
        "properties": {
            "sentiment": {
                "type": "string",
                "description": "The overall polarity.",
                "enum": ["positive", "negative", "neutral"]
            },
            "score": {
                "type": "number",
                "description": "How strongly the text expresses it, from 0 to 1.",
                "minimum": 0.0,
                "maximum": 1.0
            }
        },
        "required": ["sentiment", "score"],
        "additionalProperties": false
    }));
    assert_schema::<Polarity>(json!({
        "type": "string",
        "description": "A sentiment's polarity.",
        "enum": ["positive", "negative", "neutral"]
    }));
}

#[test]
fn schema_set_is_built_once() {
    assert!(std::ptr::eq(Sentiment::schema(), Sentiment::schema()));
    assert_eq!(Sentiment::schema().name(), "Sentiment");
    assert_eq!(ConversationTurn::schema().name(), "ConversationTurn");
}

// ----- (a) to (e): serde and the schema agree -----

fn turn() -> ConversationTurn {
    ConversationTurn {
        response: "Sure, here is the plan.".into(),
        analysis: Analysis {
            subjects: vec![Subject {
                name: "trip-planning".into(),
                description: "Planning a trip to Lisbon.".into(),
                is_new: true,
                keywords: vec![
                    Keyword {
                        term: "lisbon".into(),
                        confidence: 0.9,
                    },
                    Keyword {
                        term: "budget-2025".into(),
                        confidence: 0.0,
                    },
                ],
            }],
            summary_update: "The user plans a trip.".into(),
        },
    }
}

#[test]
fn serialized_values_validate() {
    assert_round_trip(&Extracted {
        person: Some("Ada Lovelace".into()),
        company: None,
    });
    assert_round_trip(&Extracted {
        person: None,
        company: None,
    });
    assert_round_trip(&Fact::Definition {
        entity: "mitochondria".into(),
        definition: "The powerhouse of the cell.".into(),
    });
    assert_round_trip(&Fact::Relationship {
        subject: "Ada".into(),
        predicate: "worked with".into(),
        object: "Babbage".into(),
        object_entity: true,
    });
    for item in [
        OntologyItem::Entity {
            entity: "Lisbon".into(),
            entity_type: "city".into(),
        },
        OntologyItem::Relationship {
            subject: "Lisbon".into(),
            subject_type: "city".into(),
            relation: "capital of".into(),
            object: "Portugal".into(),
            object_type: "country".into(),
        },
        OntologyItem::Attribute {
            entity: "Lisbon".into(),
            entity_type: "city".into(),
            attribute: "population".into(),
            value: "545000".into(),
        },
    ] {
        assert_round_trip(&item);
    }
    assert_round_trip(&turn());
    for (sentiment, score) in [
        (Polarity::Positive, 1.0),
        (Polarity::Negative, 0.0),
        (Polarity::Neutral, 0.5),
    ] {
        assert_round_trip(&Sentiment { sentiment, score });
    }
}

#[test]
fn missing_keys_and_wrong_types_are_rejected_by_both() {
    assert_both_reject::<Extracted>(json!({ "person": 3 }));
    assert_both_reject::<Extracted>(json!("Ada, Acme"));
    // serde also reads a struct from an array of its fields in order; the schema asks for the
    // object a model should write, deliberately.
    assert!(serde_json::from_value::<Extracted>(json!(["Ada", "Acme"])).is_ok());
    assert_schema_rejects::<Extracted>(json!(["Ada", "Acme"]));
    assert_both_reject::<Sentiment>(json!({ "sentiment": "positive" }));
    assert_both_reject::<Sentiment>(json!({ "sentiment": "happy", "score": 0.5 }));
    assert_both_reject::<Sentiment>(json!({ "sentiment": "positive", "score": "high" }));
    assert_both_reject::<Sentiment>(json!({ "sentiment": null, "score": 0.5 }));
    let turn = serde_json::to_value(turn()).unwrap();
    assert_both_reject::<ConversationTurn>(with(turn.clone(), |t| {
        t["analysis"]
            .as_object_mut()
            .unwrap()
            .remove("summaryUpdate");
    }));
    assert_both_reject::<ConversationTurn>(with(turn.clone(), |t| {
        t["analysis"]["subjects"][0]["isNew"] = json!("yes");
    }));
    // The serde name is camelCase: the Rust name is an unknown key, and `isNew` is then missing.
    assert_both_reject::<ConversationTurn>(with(turn, |t| {
        let subject = t["analysis"]["subjects"][0].as_object_mut().unwrap();
        let is_new = subject.remove("isNew").unwrap();
        subject.insert("is_new".into(), is_new);
    }));
}

#[test]
fn wrong_or_missing_tags_are_rejected_by_both() {
    let definition = json!({ "type": "definition", "entity": "a", "definition": "b" });
    assert!(validator::<Fact>().is_valid(&definition));
    assert_both_reject::<Fact>(with(definition.clone(), |d| {
        d["type"] = json!("Definition")
    }));
    assert_both_reject::<Fact>(with(definition.clone(), |d| d["type"] = json!("synonym")));
    assert_both_reject::<Fact>(with(definition.clone(), |d| {
        d.as_object_mut().unwrap().remove("type");
    }));
    // A relationship's fields under the definition tag.
    assert_both_reject::<Fact>(json!({
        "type": "definition", "subject": "a", "predicate": "b", "object": "c", "object-entity": false
    }));
    assert_both_reject::<Fact>(json!({
        "type": "relationship", "subject": "a", "predicate": "b", "object": "c", "object_entity": false
    }));
    assert_both_reject::<OntologyItem>(
        json!({ "type": "attribute", "entity": "a", "entity_type": "b" }),
    );
}

#[test]
fn extra_keys_and_broken_constraints_are_rejected_by_the_schema() {
    assert_schema_rejects::<Extracted>(json!({ "person": "Ada", "age": 36 }));
    assert_schema_rejects::<Fact>(json!({
        "type": "definition", "entity": "a", "definition": "b", "source": "c"
    }));
    assert_schema_rejects::<Sentiment>(json!({ "sentiment": "positive", "score": 1.5 }));
    assert_schema_rejects::<Sentiment>(json!({ "sentiment": "positive", "score": -0.1 }));
    let turn = serde_json::to_value(turn()).unwrap();
    let broken: [fn(&mut Value); 8] = [
        |t| t["response"] = json!(""),
        |t| t["response"] = json!("x".repeat(10_001)),
        |t| t["analysis"]["summaryUpdate"] = json!("short"),
        |t| t["analysis"]["subjects"][0]["name"] = json!("Trip Planning"),
        |t| t["analysis"]["subjects"][0]["name"] = json!("-trip"),
        |t| t["analysis"]["subjects"][0]["keywords"][0]["confidence"] = json!(1.01),
        |t| t["analysis"]["subjects"][0]["keywords"][0]["term"] = json!("two words"),
        |t| {
            let subject = t["analysis"]["subjects"][0].clone();
            t["analysis"]["subjects"] = json!([subject, subject, subject, subject]);
        },
    ];
    for change in broken {
        let json = with(turn.clone(), change);
        // serde has no opinion on constraints: it reads these fine.
        assert!(serde_json::from_value::<ConversationTurn>(json.clone()).is_ok());
        assert_schema_rejects::<ConversationTurn>(json);
    }
}

// ----- serde mirroring -----

macro_rules! renamed_struct {
    ($name:ident, $rule:literal) => {
        #[derive(Extract, Deserialize, Serialize, Debug, PartialEq)]
        #[serde(rename_all = $rule)]
        struct $name {
            first_name: String,
            x2_value: u8,
        }
    };
}
renamed_struct!(Lower, "lowercase");
renamed_struct!(Upper, "UPPERCASE");
renamed_struct!(Pascal, "PascalCase");
renamed_struct!(Camel, "camelCase");
renamed_struct!(Snake, "snake_case");
renamed_struct!(ScreamingSnake, "SCREAMING_SNAKE_CASE");
renamed_struct!(Kebab, "kebab-case");
renamed_struct!(ScreamingKebab, "SCREAMING-KEBAB-CASE");

fn property_names<T: Extract>() -> Vec<String> {
    T::json_schema()["properties"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect()
}

/// The names serde itself writes, read off a serialized value.
fn serde_names(value: impl Serialize) -> Vec<String> {
    serde_json::to_value(value)
        .unwrap()
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect()
}

#[test]
fn rename_all_on_fields_follows_serde() {
    macro_rules! check {
        ($($name:ident => [$first:literal, $second:literal]),* $(,)?) => {$(
            let value = $name { first_name: "a".into(), x2_value: 1 };
            assert_eq!(property_names::<$name>(), [$first, $second], stringify!($name));
            assert_eq!(serde_names(&value), property_names::<$name>(), stringify!($name));
            assert_round_trip(&value);
        )*};
    }
    check! {
        Lower => ["first_name", "x2_value"],
        Upper => ["FIRST_NAME", "X2_VALUE"],
        Pascal => ["FirstName", "X2Value"],
        Camel => ["firstName", "x2Value"],
        Snake => ["first_name", "x2_value"],
        ScreamingSnake => ["FIRST_NAME", "X2_VALUE"],
        Kebab => ["first-name", "x2-value"],
        ScreamingKebab => ["FIRST-NAME", "X2-VALUE"],
    }
}

#[derive(Extract, Deserialize, Serialize, Debug, PartialEq, Clone, Copy)]
#[serde(rename_all = "kebab-case")]
enum Mood {
    VeryHappy,
    Sad,
    #[serde(rename = "meh")]
    Indifferent,
    #[serde(skip)]
    #[allow(dead_code)]
    Internal,
}

#[derive(Extract, Deserialize, Serialize, Debug, PartialEq, Clone, Copy)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
enum Level {
    LowRisk,
    HighRisk,
}

#[test]
fn rename_all_on_variants_follows_serde() {
    assert_schema::<Mood>(json!({ "type": "string", "enum": ["very-happy", "sad", "meh"] }));
    assert_schema::<Level>(json!({ "type": "string", "enum": ["LOW_RISK", "HIGH_RISK"] }));
    for mood in [Mood::VeryHappy, Mood::Sad, Mood::Indifferent] {
        assert_round_trip(&mood);
    }
    assert_round_trip(&Level::HighRisk);
    assert_both_reject::<Mood>(json!("Indifferent"));
    assert_both_reject::<Mood>(json!("internal"));
    assert_both_reject::<Level>(json!("low_risk"));
}

/// An event in a log.
#[derive(Extract, Deserialize, Serialize, Debug, PartialEq)]
#[serde(
    tag = "kind",
    rename_all = "UPPERCASE",
    rename_all_fields = "camelCase"
)]
enum Event {
    /// Someone signed in.
    SignIn {
        user_name: String,
        two_factor: bool,
    },
    #[serde(rename_all = "kebab-case")]
    PageView {
        page_url: String,
        #[serde(default)]
        load_ms: u32,
    },
    Shutdown,
}

#[test]
fn tagged_enums_follow_rename_all_fields_and_variant_rules() {
    assert_schema::<Event>(json!({
        "oneOf": [
            {
                "type": "object",
                "description": "Someone signed in.",
                "properties": {
                    "kind": { "const": "SIGNIN" },
                    "userName": { "type": "string" },
                    "twoFactor": { "type": "boolean" }
                },
                "required": ["kind", "userName", "twoFactor"],
                "additionalProperties": false
            },
            {
                "type": "object",
                "properties": {
                    "kind": { "const": "PAGEVIEW" },
                    "page-url": { "type": "string" },
                    "load-ms": { "type": "integer", "minimum": 0, "maximum": u32::MAX }
                },
                "required": ["kind", "page-url"],
                "additionalProperties": false
            },
            {
                "type": "object",
                "properties": { "kind": { "const": "SHUTDOWN" } },
                "required": ["kind"],
                "additionalProperties": false
            }
        ],
        "description": "An event in a log."
    }));
    assert_round_trip(&Event::SignIn {
        user_name: "ada".into(),
        two_factor: false,
    });
    assert_round_trip(&Event::PageView {
        page_url: "/".into(),
        load_ms: 12,
    });
    assert_round_trip(&Event::Shutdown);
    let defaulted = json!({ "kind": "PAGEVIEW", "page-url": "/" });
    assert!(validator::<Event>().is_valid(&defaulted));
    assert_eq!(
        serde_json::from_value::<Event>(defaulted).unwrap(),
        Event::PageView {
            page_url: "/".into(),
            load_ms: 0,
        }
    );
    assert_both_reject::<Event>(json!({ "kind": "SHUTDOWN2" }));
    assert_both_reject::<Event>(json!({ "kind": "SIGNIN", "userName": "ada" }));
}

#[derive(Extract, Deserialize, Serialize, Debug, PartialEq)]
#[serde(tag = "status")]
enum Status {
    Active,
    #[serde(rename = "on-hold", alias = "paused")]
    OnHold,
}

#[test]
fn a_tagged_fieldless_enum_is_a_one_of_of_tag_only_objects() {
    let tag_only = |name: &str| {
        json!({
            "type": "object",
            "properties": { "status": { "const": name } },
            "required": ["status"],
            "additionalProperties": false
        })
    };
    let mut on_hold = tag_only("on-hold");
    on_hold["properties"]["status"]["x-aliases"] = json!({ "paused": "on-hold" });
    assert_schema::<Status>(json!({ "oneOf": [tag_only("Active"), on_hold] }));
    assert_round_trip(&Status::Active);
    assert_round_trip(&Status::OnHold);
    assert_both_reject::<Status>(json!("Active"));
    assert_both_reject::<Status>(json!({ "status": "active" }));
    // A variant alias is read by serde but not offered by the schema, which asks for the
    // canonical name; the lenient reader maps it back (`x-aliases`).
    assert_eq!(
        serde_json::from_value::<Status>(json!({ "status": "paused" })).unwrap(),
        Status::OnHold
    );
    assert_schema_rejects::<Status>(json!({ "status": "paused" }));
    let parsed = llm_extract::from_str::<Status>(r#"{"status": "paused"}"#).unwrap();
    assert_eq!(parsed.value, Status::OnHold);
}

#[derive(Extract, Deserialize, Serialize, Debug, PartialEq, Default)]
struct Address {
    street: String,
    city: String,
}

#[derive(Extract, Deserialize, Serialize, Debug, PartialEq)]
struct Contact {
    #[serde(alias = "fullName", alias = "full_name")]
    name: String,
    #[serde(rename(deserialize = "e-mail"))]
    email: Option<String>,
    #[serde(default)]
    tags: Vec<String>,
    #[serde(skip)]
    cached: Option<u64>,
    #[serde(skip_deserializing)]
    computed: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    address: Option<Address>,
    r#type: String,
}

#[test]
fn rename_alias_default_and_skip_follow_serde() {
    assert_schema::<Contact>(json!({
        "type": "object",
        "properties": {
            "name": { "type": "string" },
            "e-mail": { "type": ["string", "null"] },
            "tags": { "type": "array", "items": { "type": "string" } },
            "address": {
                "type": ["object", "null"],
                "properties": {
                    "street": { "type": "string" },
                    "city": { "type": "string" }
                },
                "required": ["street", "city"],
                "additionalProperties": false
            },
            "type": { "type": "string" }
        },
        "required": ["name", "type"],
        "additionalProperties": false,
        "x-aliases": { "fullName": "name", "full_name": "name" }
    }));
    let minimal = json!({ "name": "Ada", "type": "person" });
    assert!(validator::<Contact>().is_valid(&minimal));
    let read: Contact = serde_json::from_value(minimal).unwrap();
    assert_eq!(
        (read.tags.len(), read.cached, read.computed),
        (0, None, false)
    );
    let full = json!({
        "name": "Ada", "e-mail": "ada@example.com", "tags": ["math"],
        "address": { "street": "1 Main St", "city": "London" }, "type": "person"
    });
    assert!(validator::<Contact>().is_valid(&full));
    assert_eq!(
        serde_json::from_value::<Contact>(full.clone()).unwrap(),
        Contact {
            name: "Ada".into(),
            email: Some("ada@example.com".into()),
            tags: vec!["math".into()],
            cached: None,
            computed: false,
            address: Some(Address {
                street: "1 Main St".into(),
                city: "London".into(),
            }),
            r#type: "person".into(),
        }
    );
    // The serialize-side name is not what serde reads, so the schema does not ask for it.
    assert_both_reject::<Contact>(with(full.clone(), |f| {
        f["address"] = json!({ "street": "1 Main St" });
    }));
    // serde reads an alias; the schema records it for the parser to map back, and (closed) rejects
    // it as written.
    let aliased = json!({ "fullName": "Ada", "type": "person" });
    // What the object leaves out takes its default.
    assert_eq!(
        serde_json::from_value::<Contact>(aliased.clone()).unwrap(),
        Contact {
            name: "Ada".into(),
            email: None,
            tags: Vec::new(),
            cached: None,
            computed: false,
            address: None,
            r#type: "person".into(),
        }
    );
    assert_schema_rejects::<Contact>(aliased);
    assert_schema_rejects::<Contact>(with(full, |f| f["cached"] = json!(3)));
}

/// Settings with defaults for every field.
#[derive(Extract, Deserialize, Serialize, Debug, PartialEq, Default)]
#[serde(default, deny_unknown_fields)]
struct Settings {
    verbose: bool,
    #[extract(minimum = 1, maximum = 16)]
    threads: u8,
}

#[test]
fn container_default_makes_every_field_optional() {
    assert_schema::<Settings>(json!({
        "type": "object",
        "description": "Settings with defaults for every field.",
        "properties": {
            "verbose": { "type": "boolean" },
            "threads": { "type": "integer", "minimum": 1, "maximum": 16 }
        },
        "required": [],
        "additionalProperties": false
    }));
    assert_round_trip(&Settings {
        verbose: true,
        threads: 4,
    });
    assert!(validator::<Settings>().is_valid(&json!({})));
    // Every field takes the container's default (`Settings::default()`, whose 0 threads the schema's
    // minimum does not check: a field the answer leaves out is never validated).
    assert_eq!(
        serde_json::from_value::<Settings>(json!({})).unwrap(),
        Settings {
            verbose: false,
            threads: 0,
        }
    );
    assert_eq!(
        serde_json::from_value::<Settings>(json!({ "threads": 8 })).unwrap(),
        Settings {
            verbose: false,
            threads: 8,
        }
    );
    // deny_unknown_fields: here serde rejects an extra key too.
    assert_both_reject::<Settings>(json!({ "verbose": true, "colour": "red" }));
    assert_both_reject::<Settings>(json!({ "threads": 300 }));
}

#[derive(Extract, Deserialize, Serialize, Debug, PartialEq)]
#[serde(tag = "type")]
struct Tagged {
    id: u16,
}

#[test]
fn a_tagged_struct_accepts_the_tag_serde_writes() {
    assert_schema::<Tagged>(json!({
        "type": "object",
        "properties": {
            "type": { "const": "Tagged" },
            "id": { "type": "integer", "minimum": 0, "maximum": 65535 }
        },
        "required": ["id"],
        "additionalProperties": false
    }));
    assert_round_trip(&Tagged { id: 7 });
    assert!(validator::<Tagged>().is_valid(&json!({ "id": 7 })));
}

// ----- types -----

#[derive(Extract, Deserialize, Serialize, Debug, PartialEq)]
struct Numbers {
    a: i8,
    b: i16,
    c: i32,
    d: i64,
    e: i128,
    f: isize,
    g: u8,
    h: u16,
    i: u32,
    j: u64,
    k: u128,
    l: usize,
    m: f32,
    n: f64,
}

#[test]
fn integer_widths_carry_their_ranges() {
    let range = |min: i64, max: u64| json!({ "type": "integer", "minimum": min, "maximum": max });
    let unsigned = json!({ "type": "integer", "minimum": 0 });
    let any_integer = json!({ "type": "integer" });
    let number = json!({ "type": "number" });
    assert_schema::<Numbers>(json!({
        "type": "object",
        "properties": {
            "a": range(-128, 127),
            "b": range(-32768, 32767),
            "c": range(-2147483648, 2147483647),
            "d": any_integer, "e": any_integer, "f": any_integer,
            "g": range(0, 255),
            "h": range(0, 65535),
            "i": range(0, 4294967295),
            "j": unsigned, "k": unsigned, "l": unsigned,
            "m": number, "n": number
        },
        "required": ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m", "n"],
        "additionalProperties": false
    }));
    let extremes = Numbers {
        a: i8::MIN,
        b: i16::MAX,
        c: i32::MIN,
        d: i64::MIN,
        e: -1,
        f: isize::MAX,
        g: u8::MAX,
        h: 0,
        i: u32::MAX,
        j: u64::MAX,
        k: 1,
        l: 0,
        m: 1.5,
        n: -2.25,
    };
    assert_round_trip(&extremes);
    let json = serde_json::to_value(&extremes).unwrap();
    assert_both_reject::<Numbers>(with(json.clone(), |n| n["a"] = json!(128)));
    assert_both_reject::<Numbers>(with(json.clone(), |n| n["g"] = json!(-1)));
    assert_both_reject::<Numbers>(with(json.clone(), |n| n["i"] = json!(4294967296u64)));
    assert_both_reject::<Numbers>(with(json.clone(), |n| n["j"] = json!(-1)));
    assert_both_reject::<Numbers>(with(json, |n| n["c"] = json!(1.5)));
}

#[derive(Extract, Deserialize, Serialize, Debug, PartialEq)]
#[serde(tag = "type", rename_all = "lowercase")]
enum Media {
    Image { url: String },
    Audio { url: String, seconds: f32 },
}

/// Containers of every supported kind.
#[allow(clippy::box_collection)]
#[derive(Extract, Deserialize, Serialize, Debug, PartialEq)]
struct Containers {
    initial: char,
    boxed: Box<String>,
    queue: VecDeque<bool>,
    ordered_set: BTreeSet<u8>,
    hash_set: HashSet<String>,
    ordered_map: BTreeMap<String, f64>,
    hash_map: HashMap<String, Vec<String>>,
    anything: Value,
    nested: Option<Address>,
    boxed_nested: Box<Address>,
    maybe_media: Option<Media>,
    maybe_mood: Option<Mood>,
    list_of_options: Vec<Option<String>>,
    nested_option: Box<Option<u8>>,
}

#[test]
fn containers_nest_their_item_schemas() {
    let address = Address::json_schema().clone();
    let media = Media::json_schema().clone();
    assert_schema::<Containers>(json!({
        "type": "object",
        "description": "Containers of every supported kind.",
        "properties": {
            "initial": { "type": "string", "minLength": 1, "maxLength": 1 },
            "boxed": { "type": "string" },
            "queue": { "type": "array", "items": { "type": "boolean" } },
            "ordered_set": {
                "type": "array",
                "items": { "type": "integer", "minimum": 0, "maximum": 255 },
                "uniqueItems": true
            },
            "hash_set": { "type": "array", "items": { "type": "string" }, "uniqueItems": true },
            "ordered_map": { "type": "object", "additionalProperties": { "type": "number" } },
            "hash_map": {
                "type": "object",
                "additionalProperties": { "type": "array", "items": { "type": "string" } }
            },
            "anything": {},
            "nested": {
                "type": ["object", "null"],
                "properties": address["properties"],
                "required": ["street", "city"],
                "additionalProperties": false
            },
            "boxed_nested": address,
            "maybe_media": { "anyOf": [media, { "type": "null" }] },
            "maybe_mood": { "type": ["string", "null"], "enum": ["very-happy", "sad", "meh", null] },
            "list_of_options": { "type": "array", "items": { "type": ["string", "null"] } },
            "nested_option": { "type": ["integer", "null"], "minimum": 0, "maximum": 255 }
        },
        "required": [
            "initial", "boxed", "queue", "ordered_set", "hash_set", "ordered_map", "hash_map",
            "anything", "boxed_nested", "list_of_options"
        ],
        "additionalProperties": false
    }));
    let value = Containers {
        initial: 'é',
        boxed: Box::new("b".into()),
        queue: VecDeque::from([true, false]),
        ordered_set: BTreeSet::from([1, 2]),
        hash_set: HashSet::from(["x".to_string()]),
        ordered_map: BTreeMap::from([("half".to_string(), 0.5)]),
        hash_map: HashMap::from([("k".to_string(), vec!["v".to_string()])]),
        anything: json!({ "free": ["form", 1, null] }),
        nested: Some(Address::default()),
        boxed_nested: Box::default(),
        maybe_media: Some(Media::Audio {
            url: "a.mp3".into(),
            seconds: 2.5,
        }),
        maybe_mood: None,
        list_of_options: vec![None, Some("s".into())],
        nested_option: Box::new(None),
    };
    assert_round_trip(&value);
    let json = serde_json::to_value(&value).unwrap();
    assert_both_reject::<Containers>(with(json.clone(), |c| c["initial"] = json!("ab")));
    assert_both_reject::<Containers>(with(json.clone(), |c| c["ordered_map"]["e"] = json!("x")));
    assert_both_reject::<Containers>(with(json.clone(), |c| {
        c["maybe_media"] = json!({ "type": "video", "url": "v" })
    }));
    assert_both_reject::<Containers>(with(json.clone(), |c| {
        c["nested"] = json!({ "street": "s" })
    }));
    assert_both_reject::<Containers>(with(json.clone(), |c| c["queue"] = json!([1])));
    assert_schema_rejects::<Containers>(with(json, |c| c["ordered_set"] = json!([1, 1])));
}

/// A product listing.
#[derive(Extract, Deserialize, Serialize, Debug, PartialEq)]
struct Listing {
    /// Shown to buyers.
    #[extract(
        description = "The product's title, as buyers see it.",
        max_length = 80
    )]
    title: String,
    /// Optional code.
    #[extract(pattern = "^[A-Z]{3}-[0-9]{4}$", examples("ABC-1234", "XYZ-0001"))]
    sku: Option<String>,
    #[extract(min_items = 1, max_items = 5, examples = [["red"], ["red", "blue"]])]
    colours: Option<BTreeSet<String>>,
    #[extract(minimum = -40, maximum = 85, examples(-5, 20))]
    temperature: Option<i8>,
    #[extract(minimum = 0.01, examples(9.99, 100))]
    price: f64,
    #[extract(examples(true))]
    media: Option<Media>,
}

#[test]
fn constraints_sit_next_to_the_type_or_in_the_non_null_branch() {
    let mut media = Media::json_schema().clone();
    media
        .as_object_mut()
        .unwrap()
        .insert("examples".into(), json!([true]));
    assert_schema::<Listing>(json!({
        "type": "object",
        "description": "A product listing.",
        "properties": {
            "title": {
                "type": "string",
                "description": "The product's title, as buyers see it.",
                "maxLength": 80
            },
            "sku": {
                "type": ["string", "null"],
                "description": "Optional code.",
                "pattern": "^[A-Z]{3}-[0-9]{4}$",
                "examples": ["ABC-1234", "XYZ-0001"]
            },
            "colours": {
                "type": ["array", "null"],
                "items": { "type": "string" },
                "uniqueItems": true,
                "minItems": 1,
                "maxItems": 5,
                "examples": [["red"], ["red", "blue"]]
            },
            "temperature": {
                "type": ["integer", "null"],
                "minimum": -40,
                "maximum": 85,
                "examples": [-5, 20]
            },
            "price": { "type": "number", "minimum": 0.01, "examples": [9.99, 100] },
            "media": { "anyOf": [media, { "type": "null" }] }
        },
        "required": ["title", "price"],
        "additionalProperties": false
    }));
    let listing = Listing {
        title: "Teapot".into(),
        sku: Some("TEA-0042".into()),
        colours: Some(BTreeSet::from(["white".to_string()])),
        temperature: Some(-5),
        price: 19.5,
        media: None,
    };
    assert_round_trip(&listing);
    let json = serde_json::to_value(&listing).unwrap();
    for broken in [
        with(json.clone(), |l| l["sku"] = json!("tea-42")),
        with(json.clone(), |l| l["colours"] = json!([])),
        with(json.clone(), |l| l["temperature"] = json!(-41)),
        with(json.clone(), |l| l["price"] = json!(0)),
        with(json.clone(), |l| l["title"] = json!("t".repeat(81))),
    ] {
        assert_schema_rejects::<Listing>(broken);
    }
}

// ----- foreign types through schemars -----

#[derive(Extract, Deserialize, Serialize, Debug, PartialEq)]
struct Server {
    #[extract(schemars)]
    port: std::num::NonZeroU16,
    #[extract(schemars)]
    address: Option<std::net::Ipv4Addr>,
    #[extract(schemars)]
    timeout: std::time::Duration,
}

#[test]
fn schemars_fields_use_the_foreign_schema() {
    let schema = Server::json_schema();
    let properties = &schema["properties"];
    assert_eq!(properties["port"]["type"], "integer");
    assert_eq!(properties["port"]["minimum"], 1);
    assert_eq!(properties["address"]["type"], json!(["string", "null"]));
    assert_eq!(properties["timeout"]["type"], "object");
    assert_eq!(properties["timeout"]["additionalProperties"], false);
    assert_eq!(schema["required"], json!(["port", "timeout"]));
    assert!(!serde_json::to_string(schema).unwrap().contains("\"title\""));
    assert_round_trip(&Server {
        port: std::num::NonZeroU16::new(8080).unwrap(),
        address: Some(std::net::Ipv4Addr::LOCALHOST),
        timeout: std::time::Duration::from_millis(1500),
    });
    let valid = json!({ "port": 80, "address": null, "timeout": { "secs": 1, "nanos": 0 } });
    assert!(validator::<Server>().is_valid(&valid));
    assert_both_reject::<Server>(with(valid.clone(), |s| s["port"] = json!(0)));
    assert_both_reject::<Server>(with(valid, |s| s["timeout"] = json!("1s")));
}

/// Named like the foreign type it wraps: a qualified path is not taken for a self-reference.
#[derive(Extract, Deserialize, Debug)]
struct Duration {
    #[extract(schemars)]
    #[allow(dead_code)]
    inner: std::time::Duration,
}

#[test]
fn a_qualified_namesake_is_not_recursion() {
    assert_eq!(
        Duration::json_schema()["properties"]["inner"]["required"],
        json!(["secs", "nanos"])
    );
}

// ----- recursion through other types -----
// A type that contains itself through other derived types does not compile (a cycle on
// `FieldSchema::NESTING`): tests/ui/mutual_recursion.rs. A hand-written recursive impl is a schema
// error at run time: `schema::builder`'s unit tests.

fn assert_deserialize_owned<T: DeserializeOwned>() {}

#[test]
fn derived_types_are_usable_as_extract_targets() {
    assert_deserialize_owned::<Containers>();
    for schema in [
        Extracted::json_schema(),
        Fact::json_schema(),
        OntologyItem::json_schema(),
        ConversationTurn::json_schema(),
        Sentiment::json_schema(),
        Containers::json_schema(),
        Listing::json_schema(),
        Event::json_schema(),
    ] {
        Validator::new(schema).expect("every derived schema compiles");
    }
}
