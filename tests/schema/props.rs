//! Property tests: the schemas of types (a)-(e) accept exactly what they should.
//!
//! - Any value of a type, serialized by serde, validates against the type's generic schema, its line
//!   and list schemas, and every dialect's rendering of them (a rendering only ever drops keywords, so
//!   it must accept at least what the generic schema accepts).
//! - A value with a wrong type, a missing required key or an extra key is rejected by the generic
//!   schema and by every rendering (and serde rejects the first two as well); a value breaking a
//!   constraint (pattern, length, bounds, item counts) is rejected by the generic schema, which is what
//!   we validate with, although serde accepts it.
//! - `from_str` in strict mode reads every valid value back unchanged and rejects every broken one: its
//!   fast path (clean JSON checked while it is deserialized, no `serde_json::Value`) must never accept
//!   what the validator rejects.

use crate::common;

use common::types::*;
use llm_extract::parse::{from_str_with, ParseOptions};
use llm_extract::validate::Validator;
use llm_extract::{
    schema::{Dialect, Shape},
    Extract,
};
use proptest::collection::vec;
use proptest::prelude::*;
use proptest::string::string_regex;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Value};
use std::ops::RangeInclusive;
use std::sync::LazyLock;

// ---------------------------------------------------------------------------------------------
// Strategies: values of each type that respect its constraints.

/// Any string of `len` characters (the schema counts characters, as JSON Schema does).
fn chars(len: RangeInclusive<usize>) -> impl Strategy<Value = String> {
    vec(any::<char>(), len).prop_map(|chars| chars.into_iter().collect())
}

/// A slug matching `^[a-z0-9]+(-[a-z0-9]+)*$` with a length in `len`.
fn slug(len: RangeInclusive<usize>) -> impl Strategy<Value = String> {
    string_regex("[a-z0-9]{1,12}(-[a-z0-9]{1,12}){0,4}")
        .expect("valid regex")
        .prop_filter("slug length", move |s| len.contains(&s.chars().count()))
}

fn extracted() -> impl Strategy<Value = Extracted> {
    (any::<Option<String>>(), any::<Option<String>>())
        .prop_map(|(person, company)| Extracted { person, company })
}

fn fact() -> impl Strategy<Value = Fact> {
    prop_oneof![
        (any::<String>(), any::<String>())
            .prop_map(|(entity, definition)| Fact::Definition { entity, definition }),
        (
            any::<String>(),
            any::<String>(),
            any::<String>(),
            any::<bool>()
        )
            .prop_map(
                |(subject, predicate, object, object_entity)| Fact::Relationship {
                    subject,
                    predicate,
                    object,
                    object_entity,
                }
            ),
    ]
}

fn ontology_item() -> impl Strategy<Value = OntologyItem> {
    prop_oneof![
        (any::<String>(), any::<String>()).prop_map(|(entity, entity_type)| OntologyItem::Entity {
            entity,
            entity_type
        }),
        (
            any::<String>(),
            any::<String>(),
            any::<String>(),
            any::<String>(),
            any::<String>()
        )
            .prop_map(|(subject, subject_type, relation, object, object_type)| {
                OntologyItem::Relationship {
                    subject,
                    subject_type,
                    relation,
                    object,
                    object_type,
                }
            }),
        (
            any::<String>(),
            any::<String>(),
            any::<String>(),
            any::<String>()
        )
            .prop_map(|(entity, entity_type, attribute, value)| {
                OntologyItem::Attribute {
                    entity,
                    entity_type,
                    attribute,
                    value,
                }
            }),
    ]
}

fn keyword() -> impl Strategy<Value = Keyword> {
    (slug(1..=80), 0.0f64..=1.0).prop_map(|(term, confidence)| Keyword { term, confidence })
}

fn subject() -> impl Strategy<Value = Subject> {
    (
        slug(2..=50),
        chars(10..=200),
        any::<bool>(),
        vec(keyword(), 0..=10),
    )
        .prop_map(|(name, description, is_new, keywords)| Subject {
            name,
            description,
            is_new,
            keywords,
        })
}

fn conversation_turn() -> impl Strategy<Value = ConversationTurn> {
    let response = prop_oneof![9 => chars(1..=200), 1 => chars(9_990..=10_000)];
    (response, vec(subject(), 0..=3), chars(10..=500)).prop_map(
        |(response, subjects, summary_update)| ConversationTurn {
            response,
            analysis: Analysis {
                subjects,
                summary_update,
            },
        },
    )
}

fn sentiment() -> impl Strategy<Value = Sentiment> {
    let polarity = prop_oneof![
        Just(Polarity::Positive),
        Just(Polarity::Negative),
        Just(Polarity::Neutral)
    ];
    (polarity, 0.0f64..=1.0).prop_map(|(sentiment, score)| Sentiment { sentiment, score })
}

// ---------------------------------------------------------------------------------------------
// Checks.

/// The validators of every shape in every dialect the type can be sent in.
struct Validators {
    /// The validator extraction uses: the type's own, compiled once.
    generic: &'static Validator,
    /// `(what, shape, wrapped, validator)` for each rendering: `wrapped` when the root goes out as the
    /// one property, `value`, of an object (OpenAI's strict mode and Anthropic take object roots only).
    renderings: Vec<(String, Shape, bool, Validator)>,
}

impl Validators {
    fn of<T: Extract>() -> Self {
        let set = T::schema();
        let mut renderings = Vec::new();
        for dialect in Dialect::ALL {
            for shape in [Shape::One, Shape::Line, Shape::List] {
                match set.lowering(dialect, shape) {
                    Ok(lowering) => {
                        // Only OpenAI's strict mode and Anthropic wrap a root, and only one that is
                        // not an object.
                        if lowering.is_wrapped() {
                            assert!(matches!(
                                dialect,
                                Dialect::OpenAiStrict | Dialect::Anthropic
                            ));
                            assert_ne!(set.shape(shape)["type"], "object");
                        }
                        renderings.push((
                            format!("{dialect} {shape:?}"),
                            shape,
                            lowering.is_wrapped(),
                            Validator::new(lowering.schema()).unwrap(),
                        ))
                    }
                    Err(other) => panic!("{dialect} {shape:?}: {other}"),
                }
            }
        }
        Validators {
            generic: set.validator().unwrap(),
            renderings,
        }
    }
}

/// The value as the list shape carries it.
fn listed(values: &[Value]) -> Value {
    json!({ "items": values })
}

/// Asserts `value` (a serialized instance of `T`) is accepted everywhere and reads back unchanged.
fn assert_accepted<T>(validators: &Validators, original: &T)
where
    T: Extract + Serialize + DeserializeOwned + PartialEq + std::fmt::Debug,
{
    for text in [
        serde_json::to_string(original).unwrap(),
        serde_json::to_string_pretty(original).unwrap(),
    ] {
        let parsed = from_str_with::<T>(&text, &ParseOptions::strict()).unwrap();
        assert_eq!(&parsed.value, original);
        assert!(parsed.fixes.is_empty(), "{:?}", parsed.fixes);
    }
    let value = serde_json::to_value(original).unwrap();
    let violations = validators.generic.violations(&value);
    assert!(violations.is_empty(), "{violations:?}\n{value}");
    for (what, shape, wrapped, validator) in &validators.renderings {
        let instance = match shape {
            Shape::List => listed(&[value.clone(), value.clone()]),
            _ if *wrapped => json!({ "value": value }),
            _ => value.clone(),
        };
        let violations = validator.violations(&instance);
        assert!(violations.is_empty(), "{what}: {violations:?}\n{instance}");
    }
    let back: T = serde_json::from_value(value).unwrap();
    assert_eq!(&back, original);
}

/// Asserts a structurally broken value is rejected by the generic schema and every rendering.
fn assert_rejected_everywhere(validators: &Validators, value: &Value, what: &str) {
    assert!(
        !validators.generic.is_valid(value),
        "generic accepted {what}: {value}"
    );
    for (rendering, shape, wrapped, validator) in &validators.renderings {
        let instance = match shape {
            Shape::List => listed(std::slice::from_ref(value)),
            _ if *wrapped => json!({ "value": value }),
            _ => value.clone(),
        };
        assert!(
            !validator.is_valid(&instance),
            "{rendering} accepted {what}: {instance}"
        );
    }
}

/// Every object (with its schema) and every leaf value in `instance`, by JSON pointer, following
/// the schema through properties, items and the union branch the value belongs to.
fn walk<'s>(
    schema: &'s Value,
    instance: &Value,
    path: String,
    objects: &mut Vec<(String, &'s Value)>,
    leaves: &mut Vec<String>,
) {
    if let Some(branches) = schema
        .get("oneOf")
        .or_else(|| schema.get("anyOf"))
        .and_then(Value::as_array)
    {
        let branch = branches.iter().find(|branch| {
            branch.get("type") != Some(&json!("null"))
                && branch
                    .get("properties")
                    .and_then(Value::as_object)
                    .is_none_or(|properties| {
                        properties.iter().all(|(key, sub)| match sub.get("const") {
                            Some(tag) => instance.get(key) == Some(tag),
                            None => true,
                        })
                    })
        });
        if let (Some(branch), false) = (branch, instance.is_null()) {
            walk(branch, instance, path, objects, leaves);
        } else {
            leaves.push(path);
        }
        return;
    }
    match instance {
        Value::Object(entries) => {
            objects.push((path.clone(), schema));
            for (key, sub_instance) in entries {
                if let Some(sub_schema) = schema.get("properties").and_then(|p| p.get(key)) {
                    let sub_path = format!("{path}/{}", key.replace('~', "~0").replace('/', "~1"));
                    walk(sub_schema, sub_instance, sub_path, objects, leaves);
                }
            }
        }
        Value::Array(items) => {
            leaves.push(path.clone());
            if let Some(item_schema) = schema.get("items") {
                for (i, item) in items.iter().enumerate() {
                    walk(item_schema, item, format!("{path}/{i}"), objects, leaves);
                }
            }
        }
        _ => leaves.push(path),
    }
}

/// A value of a JSON type the value at `path` cannot have in any of the types (a)-(e).
fn wrong_type(value: &Value) -> Value {
    match value {
        Value::String(_) | Value::Null => json!(12345),
        Value::Number(_) => json!("not a number"),
        Value::Bool(_) => json!("yes"),
        Value::Array(_) => json!({ "not": "an array" }),
        Value::Object(_) => json!(["not", "an", "object"]),
    }
}

/// Asserts strict `from_str` refuses `value`: no fix may hide what the validator rejects, so a value
/// here would have come through the fast path by mistake.
fn assert_strict_parse_rejects<T: Extract + std::fmt::Debug>(value: &Value, what: &str) {
    let parsed = from_str_with::<T>(&value.to_string(), &ParseOptions::strict());
    assert!(parsed.is_err(), "strict parse accepted {what}: {value}");
}

/// Breaks `value` in every structural way: a wrong type at each leaf and object, each required key
/// removed, an extra key in each object. Serde must reject the first two kinds as well.
fn assert_structural_mutations_rejected<T: Extract + std::fmt::Debug>(
    validators: &Validators,
    value: &Value,
) {
    let schema = T::json_schema();
    let (mut objects, mut leaves) = (Vec::new(), Vec::new());
    walk(schema, value, String::new(), &mut objects, &mut leaves);

    for path in leaves.iter().chain(objects.iter().map(|(path, _)| path)) {
        let mut mutated = value.clone();
        let target = mutated.pointer_mut(path).unwrap();
        *target = wrong_type(target);
        let what = format!("a wrong type at {path:?}");
        assert_rejected_everywhere(validators, &mutated, &what);
        assert_strict_parse_rejects::<T>(&mutated, &what);
        assert!(
            serde_json::from_value::<T>(mutated).is_err(),
            "serde accepted a wrong type at {path:?}"
        );
    }
    for (path, object_schema) in &objects {
        let required = object_schema["required"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        for key in required.iter().filter_map(Value::as_str) {
            let mut mutated = value.clone();
            mutated
                .pointer_mut(path)
                .unwrap()
                .as_object_mut()
                .unwrap()
                .remove(key);
            let what = format!("no {key:?} at {path:?}");
            assert_rejected_everywhere(validators, &mutated, &what);
            assert_strict_parse_rejects::<T>(&mutated, &what);
            assert!(
                serde_json::from_value::<T>(mutated).is_err(),
                "serde accepted {what}"
            );
        }
        let mut mutated = value.clone();
        let object = mutated.pointer_mut(path).unwrap().as_object_mut().unwrap();
        object.insert("zz_unexpected".to_owned(), json!(1));
        let what = format!("an extra key at {path:?}");
        assert_rejected_everywhere(validators, &mutated, &what);
        assert_strict_parse_rejects::<T>(&mutated, &what);
    }
}

/// Asserts the generic schema rejects `value` changed by `mutate` at `path` (serde would take it).
fn assert_constraint_enforced<T: Extract + std::fmt::Debug>(
    validators: &Validators,
    value: &Value,
    path: &str,
    new: Value,
) {
    let mut mutated = value.clone();
    *mutated.pointer_mut(path).unwrap() = new;
    assert_strict_parse_rejects::<T>(&mutated, &format!("a broken constraint at {path}"));
    let violations = validators.generic.violations(&mutated);
    assert!(!violations.is_empty(), "accepted {mutated} at {path}");
    assert!(
        violations.iter().all(|v| v.path.starts_with(path)),
        "{violations:?} not at {path}"
    );
}

// ---------------------------------------------------------------------------------------------

static EXTRACTED: LazyLock<Validators> = LazyLock::new(Validators::of::<Extracted>);
static FACT: LazyLock<Validators> = LazyLock::new(Validators::of::<Fact>);
static ONTOLOGY: LazyLock<Validators> = LazyLock::new(Validators::of::<OntologyItem>);
static CONVERSATION: LazyLock<Validators> = LazyLock::new(Validators::of::<ConversationTurn>);
static SENTIMENT: LazyLock<Validators> = LazyLock::new(Validators::of::<Sentiment>);

fn config() -> ProptestConfig {
    ProptestConfig::with_cases(48)
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn extracted_values_validate(value in extracted()) {
        let validators = &*EXTRACTED;
        assert_accepted(validators, &value);
        assert_structural_mutations_rejected::<Extracted>(validators, &serde_json::to_value(&value).unwrap());
    }

    #[test]
    fn fact_values_validate(value in fact()) {
        let validators = &*FACT;
        assert_accepted(validators, &value);
        let json = serde_json::to_value(&value).unwrap();
        assert_structural_mutations_rejected::<Fact>(validators, &json);
        assert_constraint_enforced::<Fact>(validators, &json, "/type", json!("opinion"));
    }

    #[test]
    fn ontology_values_validate(value in ontology_item()) {
        let validators = &*ONTOLOGY;
        assert_accepted(validators, &value);
        let json = serde_json::to_value(&value).unwrap();
        assert_structural_mutations_rejected::<OntologyItem>(validators, &json);
        assert_constraint_enforced::<OntologyItem>(validators, &json, "/type", json!("definition"));
    }

    #[test]
    fn conversation_values_validate(value in conversation_turn()) {
        let validators = &*CONVERSATION;
        assert_accepted(validators, &value);
        let json = serde_json::to_value(&value).unwrap();
        assert_structural_mutations_rejected::<ConversationTurn>(validators, &json);

        assert_constraint_enforced::<ConversationTurn>(validators, &json, "/response", json!(""));
        assert_constraint_enforced::<ConversationTurn>(validators, &json, "/response", json!("x".repeat(10_001)));
        assert_constraint_enforced::<ConversationTurn>(validators, &json, "/analysis/summaryUpdate", json!("too short"));
        if let Some(first) = json["analysis"]["subjects"].get(0) {
            let four = vec![first.clone(); 4];
            assert_constraint_enforced::<ConversationTurn>(validators, &json, "/analysis/subjects", json!(four));
            for name in ["Not A Slug", "a", "trailing-", "a".repeat(51).as_str()] {
                assert_constraint_enforced::<ConversationTurn>(validators, &json, "/analysis/subjects/0/name", json!(name));
            }
            assert_constraint_enforced::<ConversationTurn>(validators, &json, "/analysis/subjects/0/description", json!("123456789"));
            let keywords = vec![json!({ "term": "k", "confidence": 0.5 }); 11];
            assert_constraint_enforced::<ConversationTurn>(validators, &json, "/analysis/subjects/0/keywords", json!(keywords));
            if json["analysis"]["subjects"][0]["keywords"].get(0).is_some() {
                let keyword = "/analysis/subjects/0/keywords/0";
                assert_constraint_enforced::<ConversationTurn>(validators, &json, &format!("{keyword}/confidence"), json!(1.5));
                assert_constraint_enforced::<ConversationTurn>(validators, &json, &format!("{keyword}/confidence"), json!(-0.01));
                assert_constraint_enforced::<ConversationTurn>(validators, &json, &format!("{keyword}/term"), json!("UPPER"));
            }
        }
    }

    #[test]
    fn sentiment_values_validate(value in sentiment()) {
        let validators = &*SENTIMENT;
        assert_accepted(validators, &value);
        let json = serde_json::to_value(&value).unwrap();
        assert_structural_mutations_rejected::<Sentiment>(validators, &json);
        assert_constraint_enforced::<Sentiment>(validators, &json, "/score", json!(1.0001));
        assert_constraint_enforced::<Sentiment>(validators, &json, "/score", json!(-0.5));
        assert_constraint_enforced::<Sentiment>(validators, &json, "/sentiment", json!("happy"));
    }
}
