//! The per-field strategy ([`Strategy::PerField`](super::Strategy::PerField)): one value extracted by
//! walking its schema and asking one short question per field, instead of asking for the whole value in
//! one answer.
//!
//! - a string the text holds: a span copied from the text (the answer's string is marked grounded, so the
//!   embedded engine can only copy, and every other backend's copy is checked against the text and
//!   re-asked), or null where the field may be null; a string whose description asks for a summary is
//!   written instead (one short answer, under the loop guard);
//! - an enum or a boolean: the option the model finds most likely, scored on a backend that can
//!   ([`Llm::likelihood`](crate::llm::Llm::likelihood), through [`Chooser::choose_answer`]), its
//!   probability the field's confidence; written under the schema elsewhere; but an option the text
//!   writes out (a currency code, "email"), the only one it does, is taken as written;
//! - a number, a date, a time: copied, then read by code (`copied_values.rs`); a copy that does not read is
//!   null where the field may be null, else the field is written;
//! - an object: field by field; a list of objects: the items' key field copied as a list, then each
//!   item's fields asked about the text around the item's first mention; a list of strings: a list of
//!   copies; anything else: written under its schema.
//!
//! Every question shares the text as its prompt's start (`prompts/questions.rs`), which the embedded engine
//! reads once. The value is then read as the target reads an answer; one that does not validate (a
//! pattern a copy broke, a bound) falls back to one answer, whose requests join the ledger.

use super::confidence::choose::Chooser;
use super::document::grounded_target::GroundedTarget;
use super::engine::Engine;
use super::error::{ExtractError, ExtractErrorKind};
use super::prompts::questions::{self, Asking};
use super::setup::config::{Input, Strategy};
use super::setup::target::{Runtime, Target};
use crate::ground::Source;
use crate::llm::BoxFuture;
use crate::report::{Extraction, FieldCost, FoundBy, Report};
use crate::schema::{node, SchemaSet};
use serde_json::{json, Map, Value};
use std::time::Instant;

mod copied_values;

/// The most tokens of a copied or chosen answer.
const ANSWER_TOKENS: u32 = 64;
/// The most tokens of a list of copies.
const LIST_TOKENS: u32 = 256;
/// The most items of a list of objects asked about one by one.
const MAX_ITEMS: usize = 50;
/// The most bytes of the text around an item that its questions are asked about.
const NEIGHBOURHOOD: usize = 600;

/// One value of `target` from `input`'s text, field by field. An input without a `text` variable (a
/// context of other variables) is asked in one answer.
pub(super) async fn one<G: Target>(
    engine: Engine<'_>,
    target: &G,
    input: Input,
) -> Result<Extraction<G::Output>, ExtractError> {
    let Some(text) = input.text_var().map(str::to_owned) else {
        return engine.one(target, input).await;
    };
    let root = target.schema().generic().clone();
    let mut walk = Walk {
        engine,
        root: &root,
        report: Report::default(),
    };
    let value = walk
        .value(Field {
            path: String::new(),
            name: target.schema().name().to_string(),
            schema: &root,
            context: &text,
            about: None,
            nullable: false,
        })
        .await?;
    let mut report = walk.report;
    match target.parse_one(&value.to_string(), &engine.config.parse) {
        Ok(parsed) => {
            report.fixes.extend(parsed.fixes);
            Ok(Extraction::new(parsed.value, report))
        }
        Err(_) => {
            // A value the fields do not make valid together: one answer, in the same ledger.
            let fields = std::mem::take(&mut report.fields);
            let confidence = std::mem::take(&mut report.confidence);
            let merge = |mut later: Report| {
                let mut all = report.clone();
                for attempt in later.attempts.drain(..) {
                    all.push(attempt);
                }
                all.fields = fields.clone();
                all.confidence = later.confidence;
                all.confidence.extend(confidence.clone());
                all.fixes = later.fixes;
                all.issues = later.issues;
                all.finish = later.finish.or(all.finish);
                all
            };
            match engine.one(target, input).await {
                Ok(extraction) => {
                    let report = merge(extraction.report);
                    Ok(Extraction::new(extraction.value, report))
                }
                Err(mut error) => {
                    let report = merge(std::mem::take(error.report_mut()));
                    *error.report_mut() = report;
                    Err(error)
                }
            }
        }
    }
}

/// A field to find: where it is, its name and schema, the text it is asked about, the item it belongs
/// to (a list's item, by its key), and whether null is an answer.
struct Field<'f> {
    path: String,
    name: String,
    schema: &'f Value,
    context: &'f str,
    about: Option<&'f str>,
    nullable: bool,
}

/// How a string field is found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Read {
    /// As copied.
    Text,
    /// As an ISO date.
    Date,
    /// As a time of day.
    Time,
    /// As an email address.
    Email,
    /// As a phone number.
    Phone,
    /// Written, not copied.
    Written,
}

/// The walk through one value's schema, with the ledger of every question.
struct Walk<'a> {
    engine: Engine<'a>,
    root: &'a Value,
    report: Report,
}

impl<'a> Walk<'a> {
    /// The value of `field`.
    fn value<'b>(&'b mut self, field: Field<'b>) -> BoxFuture<'b, Result<Value, ExtractError>>
    where
        'a: 'b,
    {
        Box::pin(async move {
            let schema = node::resolve(self.root, field.schema);
            let (schema, nullable) = unwrap_nullable(self.root, schema);
            let field = Field {
                schema,
                nullable: field.nullable || nullable,
                ..field
            };
            if let Some(constant) = schema.get("const") {
                return Ok(constant.clone());
            }
            if let Some(Value::Array(values)) = schema.get("enum") {
                return self.choose(&field, values.clone()).await;
            }
            match main_type(schema) {
                Some("object") => self.object(field).await,
                Some("array") => self.array(field).await,
                Some("boolean") => {
                    self.choose(&field, vec![Value::Bool(true), Value::Bool(false)])
                        .await
                }
                Some("string") => self.string(&field).await,
                Some("number") | Some("integer") => self.number(&field).await,
                _ => self.write(&field, schema.clone()).await,
            }
        })
    }

    /// An object, property by property; a property that is not required and not found is left out.
    async fn object(&mut self, field: Field<'_>) -> Result<Value, ExtractError> {
        let required: Vec<&str> = field
            .schema
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let mut out = Map::new();
        let Some(properties) = field.schema.get("properties").and_then(Value::as_object) else {
            return self.write(&field, field.schema.clone()).await;
        };
        for (name, schema) in properties {
            let needed = required.contains(&name.as_str());
            let value = self
                .value(Field {
                    path: format!("{}/{}", field.path, escape(name)),
                    name: name.clone(),
                    schema,
                    context: field.context,
                    about: field.about,
                    nullable: false,
                })
                .await?;
            if needed || !value.is_null() {
                out.insert(name.clone(), value);
            }
        }
        Ok(Value::Object(out))
    }

    /// A list: of objects by their key field, then each item's fields; of strings as copies; else
    /// written.
    async fn array(&mut self, field: Field<'_>) -> Result<Value, ExtractError> {
        let items = field
            .schema
            .get("items")
            .map(|items| node::resolve(self.root, items))
            .unwrap_or(&Value::Null);
        let (items, _) = unwrap_nullable(self.root, items);
        match main_type(items) {
            Some("string") if items.get("enum").is_none() => {
                let question = questions::question(
                    &field.name,
                    field.schema,
                    Asking::List,
                    self.own(&field.path),
                );
                let answer =
                    json!({"type": "array", "items": {"type": "string", "x-grounded": true}});
                let mut cost = FieldCost::default();
                let found = self
                    .ask(&field, question, answer, true, LIST_TOKENS, &mut cost)
                    .await?;
                let list = found.unwrap_or_else(|| json!([]));
                cost.how = FoundBy::Copied;
                self.report.fields.insert(field.path.clone(), cost);
                Ok(list)
            }
            Some("object") => self.objects(&field, items).await,
            _ => self.write(&field, field.schema.clone()).await,
        }
    }

    /// A list of objects: the key of each item copied as a list, then each item field by field, asked
    /// about the text around the item's first mention.
    async fn objects(&mut self, field: &Field<'_>, items: &Value) -> Result<Value, ExtractError> {
        let Some(key) = key_field(items) else {
            return self.write(field, field.schema.clone()).await;
        };
        let question =
            questions::list_question(&field.name, field.schema, &key, self.own(&field.path));
        let answer = json!({"type": "array", "items": {"type": "string", "x-grounded": true}});
        let mut cost = FieldCost::default();
        let found = self
            .ask(field, question, answer, true, LIST_TOKENS, &mut cost)
            .await?;
        cost.how = FoundBy::Copied;
        self.report.fields.insert(field.path.clone(), cost);
        let mut keys: Vec<String> = Vec::new();
        for key in found
            .as_ref()
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
        {
            let key = key.trim();
            if !key.is_empty() && !keys.iter().any(|k| k == key) && keys.len() < MAX_ITEMS {
                keys.push(key.to_string());
            }
        }
        let properties = items
            .get("properties")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        let required: Vec<String> = items
            .get("required")
            .and_then(Value::as_array)
            .map(|r| {
                r.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default();
        let mut list = Vec::new();
        for (index, item) in keys.iter().enumerate() {
            let around = neighbourhood(field.context, item);
            let mut object = Map::new();
            for (name, schema) in &properties {
                let value = if *name == key {
                    Value::String(item.clone())
                } else {
                    self.value(Field {
                        path: format!("{}/{index}/{}", field.path, escape(name)),
                        name: name.clone(),
                        schema,
                        context: around,
                        about: Some(item),
                        nullable: false,
                    })
                    .await?
                };
                if required.contains(name) || !value.is_null() {
                    object.insert(name.clone(), value);
                }
            }
            list.push(Value::Object(object));
        }
        Ok(Value::Array(list))
    }

    /// A string: copied (read as a date or a time where the schema wants one), or written.
    async fn string(&mut self, field: &Field<'_>) -> Result<Value, ExtractError> {
        let read = string_read(&field.name, field.schema);
        if read == Read::Written {
            let answer = answer_schema("string", field.nullable);
            return self.write(field, answer).await;
        }
        let copy = self.copy(field).await?;
        let Some(copy) = copy else {
            return Ok(Value::Null);
        };
        let read_as = match read {
            Read::Date => copied_values::date(&copy),
            Read::Time => copied_values::time(&copy),
            Read::Email => copied_values::email(&copy),
            Read::Phone => copied_values::phone(&copy),
            Read::Text | Read::Written => Some(copied_values::clause(&field.name, &copy)),
        };
        Ok(match read_as {
            Some(value) => Value::String(value),
            None if field.nullable => self.nulled(&field.path),
            None => Value::String(copy),
        })
    }

    /// A number or an integer: copied, then read.
    async fn number(&mut self, field: &Field<'_>) -> Result<Value, ExtractError> {
        let integer = main_type(field.schema) == Some("integer");
        let Some(copy) = self.copy(field).await? else {
            return Ok(Value::Null);
        };
        let read = if integer {
            copied_values::integer(&copy).map(Value::from)
        } else {
            copied_values::amount(&copy)
                .and_then(serde_json::Number::from_f64)
                .map(Value::Number)
        };
        match read {
            Some(value) => Ok(value),
            None if field.nullable => Ok(self.nulled(&field.path)),
            None => {
                let kind = if integer { "integer" } else { "number" };
                self.write(field, answer_schema(kind, false)).await
            }
        }
    }

    /// A copy's field left null because the copy did not read as its type.
    fn nulled(&mut self, path: &str) -> Value {
        if let Some(cost) = self.report.fields.get_mut(path) {
            cost.how = FoundBy::Null;
        }
        Value::Null
    }

    /// The span of the text that answers `field`, or `None` (the text does not say, or no copy came).
    async fn copy(&mut self, field: &Field<'_>) -> Result<Option<String>, ExtractError> {
        let asking = Asking::Copy {
            nullable: field.nullable,
        };
        let question = self.question(field, asking);
        let answer = if field.nullable {
            json!({"type": ["string", "null"], "x-grounded": true})
        } else {
            json!({"type": "string", "x-grounded": true})
        };
        let mut cost = FieldCost::default();
        let found = self
            .ask(field, question, answer, true, ANSWER_TOKENS, &mut cost)
            .await?;
        let copy = found
            .as_ref()
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_owned);
        cost.how = if copy.is_some() {
            FoundBy::Copied
        } else {
            FoundBy::Null
        };
        self.report.fields.insert(field.path.clone(), cost);
        Ok(copy)
    }

    /// One of `values` (an enum's, or `true` and `false`): chosen by likelihood where the backend scores
    /// options, else written under the schema. Null, where the field may be null, is the option
    /// "unknown".
    async fn choose(
        &mut self,
        field: &Field<'_>,
        values: Vec<Value>,
    ) -> Result<Value, ExtractError> {
        let mut values: Vec<Value> = values.into_iter().filter(|v| !v.is_null()).collect();
        if field.nullable
            || field
                .schema
                .get("enum")
                .and_then(Value::as_array)
                .is_some_and(|e| e.contains(&Value::Null))
        {
            values.push(Value::Null);
        }
        // The one option the text writes out, as a whole word: taken as written, sure.
        let written: Vec<&Value> = values
            .iter()
            .filter(|v| v.as_str().is_some_and(|o| writes(field.context, o)))
            .collect();
        if let [only] = written.as_slice() {
            let value = (*only).clone();
            self.report.confidence.insert(field.path.clone(), 1.0);
            self.report.fields.insert(
                field.path.clone(),
                FieldCost {
                    how: FoundBy::Copied,
                    ..FieldCost::default()
                },
            );
            return Ok(value);
        }
        let boolean = values.iter().all(|v| v.is_boolean() || v.is_null());
        let asking = if boolean {
            Asking::YesNo
        } else {
            Asking::Choice
        };
        let question = self.question(field, asking);
        let Some(scorer) = self.engine.llm.likelihood().filter(|_| values.len() >= 2) else {
            let schema = json!({"enum": values});
            return self.write(field, schema).await;
        };
        let options: Vec<String> = values.iter().map(option_words).collect();
        let context = field.context;
        let start = Instant::now();
        let chooser = Chooser::new(scorer, context);
        let choice = chooser.choose_answer(&question, &options).await;
        let mut cost = FieldCost {
            elapsed: start.elapsed(),
            requests: u32::try_from(options.len()).unwrap_or(u32::MAX),
            how: FoundBy::Chosen,
            ..FieldCost::default()
        };
        // The prompt each scoring reads, counted with the model's tokenizer.
        if let Some(tokens) = self
            .engine
            .llm
            .count_tokens(&format!("{context}\n\nQuestion: {question}"))
        {
            cost.usage.prompt_tokens = (tokens * options.len()) as u64;
            cost.usage.estimated = true;
            self.report.usage += cost.usage;
        }
        let choice = match choice {
            Ok(choice) => choice,
            Err(super::ChooseError::Llm(error)) => {
                self.report.fields.insert(field.path.clone(), cost);
                return Err(ExtractError::new(
                    ExtractErrorKind::Llm(error),
                    std::mem::take(&mut self.report),
                ));
            }
            Err(_) => {
                let schema = json!({"enum": values});
                return self.write(field, schema).await;
            }
        };
        let value = options
            .iter()
            .position(|o| *o == choice.value)
            .and_then(|i| values.get(i))
            .cloned()
            .unwrap_or(Value::Null);
        if value.is_null() {
            cost.how = FoundBy::Null;
        }
        self.report
            .confidence
            .insert(field.path.clone(), choice.probability as f32);
        self.report.fields.insert(field.path.clone(), cost);
        Ok(value)
    }

    /// A value the model writes under `answer` (one short answer, under the loop guard).
    async fn write(&mut self, field: &Field<'_>, answer: Value) -> Result<Value, ExtractError> {
        let question = self.question(field, Asking::Write);
        let mut cost = FieldCost::default();
        let found = self
            .ask(field, question, answer, false, LIST_TOKENS, &mut cost)
            .await?;
        cost.how = if found.as_ref().is_some_and(|v| !v.is_null()) {
            FoundBy::Written
        } else {
            FoundBy::Null
        };
        self.report.fields.insert(field.path.clone(), cost);
        Ok(found.unwrap_or(Value::Null))
    }

    /// The question about `field`, asking as `asking`, about its item when it has one.
    fn question(&self, field: &Field<'_>, asking: Asking) -> String {
        let question =
            questions::question(&field.name, field.schema, asking, self.own(&field.path));
        match field.about {
            Some(item) => questions::item_question(item, &question),
            None => question,
        }
    }

    /// The question the extractor was given for `path`, if any (an item's fields by their path
    /// without the position: `/lines/price` for `/lines/0/price`).
    fn own(&self, path: &str) -> Option<&str> {
        let questions = &self.engine.config.questions;
        questions.get(path).map(String::as_str).or_else(|| {
            let general: Vec<&str> = path
                .split('/')
                .filter(|part| !part.bytes().all(|b| b.is_ascii_digit()) || part.is_empty())
                .collect();
            questions.get(&general.join("/")).map(String::as_str)
        })
    }

    /// Asks `question` about the field's text; the answer is `{"answer": <answer>}` (its strings copied
    /// from the text when `copy`). `None` when no valid answer came within the attempts (the backend's
    /// own failures end the extraction).
    async fn ask(
        &mut self,
        field: &Field<'_>,
        question: String,
        answer: Value,
        copy: bool,
        max_tokens: u32,
        cost: &mut FieldCost,
    ) -> Result<Option<Value>, ExtractError> {
        let set = SchemaSet::new(
            "Answer",
            json!({
                "type": "object",
                "properties": {"answer": answer},
                "required": ["answer"],
                "additionalProperties": false
            }),
        );
        let mut config = self.engine.config.clone();
        config.template = questions::QUESTION_TEMPLATE.to_owned();
        config.instructions = if copy {
            questions::COPY_INSTRUCTIONS
        } else {
            questions::WRITE_INSTRUCTIONS
        }
        .to_owned();
        config.examples.clear();
        config.default_examples = false;
        config.samples = 1;
        config.strategy = Strategy::OneAnswer;
        config.max_tokens = Some(config.max_tokens.unwrap_or(max_tokens).min(max_tokens));
        let engine = Engine {
            llm: self.engine.llm,
            config: &config,
            spent: self.engine.spent,
        };
        let input = Input::text(field.context).var("question", question);
        let start = Instant::now();
        let result = if copy {
            let source = Source::new(field.context);
            let target = GroundedTarget::new(Runtime::new(&set), &source);
            engine
                .one(&target, input)
                .await
                .map(|done| (done.value.value, done.report))
        } else {
            engine
                .one(&Runtime::new(&set), input)
                .await
                .map(|done| (done.value, done.report))
        };
        cost.elapsed += start.elapsed();
        let (found, mut report) = match result {
            Ok((value, report)) => (value.get("answer").cloned(), report),
            Err(mut error) => {
                let report = std::mem::take(error.report_mut());
                if matches!(
                    error.kind(),
                    ExtractErrorKind::Llm(_) | ExtractErrorKind::Budget { .. }
                ) {
                    self.absorb(report, cost, &field.path);
                    *error.report_mut() = std::mem::take(&mut self.report);
                    return Err(error);
                }
                (None, report)
            }
        };
        if let Some(confidence) = report.confidence.remove("/answer") {
            self.report
                .confidence
                .insert(field.path.clone(), confidence);
        }
        self.absorb(report, cost, &field.path);
        Ok(found)
    }

    /// A question's ledger into the walk's, and its cost into the field's.
    fn absorb(&mut self, report: Report, cost: &mut FieldCost, _path: &str) {
        cost.usage += report.usage;
        cost.requests += u32::try_from(report.attempts.len()).unwrap_or(u32::MAX);
        for attempt in report.attempts {
            self.report.push(attempt);
        }
        self.report.no_logprobs |= report.no_logprobs;
        if self.report.unenforced.is_none() {
            self.report.unenforced = report.unenforced;
        }
    }
}

/// Whether `text` writes `option` as a whole word or words (case-insensitively; `snake_case` and
/// `kebab-case` options also as words).
fn writes(text: &str, option: &str) -> bool {
    let text = text.to_lowercase();
    let option = option.to_lowercase();
    [option.clone(), option.replace(['_', '-'], " ")]
        .iter()
        .filter(|o| !o.trim().is_empty())
        .any(|o| {
            text.match_indices(o.as_str()).any(|(at, _)| {
                let before = text.get(..at).and_then(|b| b.chars().next_back());
                let after = text.get(at + o.len()..).and_then(|a| a.chars().next());
                !before.is_some_and(char::is_alphanumeric)
                    && !after.is_some_and(char::is_alphanumeric)
            })
        })
}

/// A JSON pointer token: `~` and `/` escaped.
fn escape(name: &str) -> String {
    name.replace('~', "~0").replace('/', "~1")
}

/// The schema without its null alternative, and whether it had one: `{"type": ["string", "null"]}`,
/// `{"anyOf": [X, {"type": "null"}]}`, an enum with `null` among its values.
fn unwrap_nullable<'v>(root: &'v Value, schema: &'v Value) -> (&'v Value, bool) {
    if let Some(Value::Array(branches)) = schema.get("anyOf").or_else(|| schema.get("oneOf")) {
        let is_null = |b: &Value| b.get("type") == Some(&Value::String("null".into()));
        let others: Vec<&Value> = branches.iter().filter(|b| !is_null(b)).collect();
        if let [only] = others.as_slice() {
            return (node::resolve(root, only), others.len() < branches.len());
        }
    }
    let nullable = match schema.get("type") {
        Some(Value::Array(types)) => types.iter().any(|t| t == "null"),
        _ => false,
    } || schema
        .get("enum")
        .and_then(Value::as_array)
        .is_some_and(|e| e.contains(&Value::Null));
    (schema, nullable)
}

/// The type a schema names besides `null`, when it names one.
fn main_type(schema: &Value) -> Option<&str> {
    match schema.get("type")? {
        Value::String(t) => Some(t.as_str()),
        Value::Array(types) => {
            let mut main = types
                .iter()
                .filter_map(Value::as_str)
                .filter(|t| *t != "null");
            let first = main.next();
            main.next().is_none().then_some(first).flatten()
        }
        _ => None,
    }
}

/// How a string field is found: as a date or a time where its format or pattern says so (or its
/// description asks for `YYYY-MM-DD` or `HH:MM`), as an email address or a phone number where its format
/// or name says so, written where its description asks for a
/// summary or it is marked `"x-written": true`, else copied.
fn string_read(name: &str, schema: &Value) -> Read {
    let format = schema
        .get("format")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let pattern = schema
        .get("pattern")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let description = schema
        .get("description")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_lowercase();
    if schema.get("x-written") == Some(&Value::Bool(true)) {
        return Read::Written;
    }
    if format == "date"
        || pattern.contains("[0-9]{4}-[0-9]{2}-[0-9]{2}")
        || pattern.contains("\\d{4}-\\d{2}-\\d{2}")
        || description.contains("yyyy-mm-dd")
    {
        return Read::Date;
    }
    if format == "time"
        || pattern.contains("[0-9]{2}:[0-9]{2}")
        || pattern.contains("\\d{2}:\\d{2}")
        || description.contains("hh:mm")
    {
        return Read::Time;
    }
    let name = name.to_lowercase();
    if format == "email" || name.contains("email") || name.contains("e_mail") {
        return Read::Email;
    }
    if ["phone", "mobile", "telephone", "fax"]
        .iter()
        .any(|w| name.contains(w))
        || name == "tel"
    {
        return Read::Phone;
    }
    let written = [
        "summary",
        "summarise",
        "summarize",
        "in your own words",
        "describe the",
    ];
    if written.iter().any(|w| description.contains(w)) {
        return Read::Written;
    }
    Read::Text
}

/// The key field of a list's items: the first marked `x-key`, else the first required string, else
/// the first string.
fn key_field(items: &Value) -> Option<String> {
    let properties = items.get("properties")?.as_object()?;
    let is_string = |s: &Value| main_type(s) == Some("string") && s.get("enum").is_none();
    if let Some((name, _)) = properties
        .iter()
        .find(|(_, s)| s.get("x-key") == Some(&Value::Bool(true)))
    {
        return Some(name.clone());
    }
    let required: Vec<&str> = items
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    properties
        .iter()
        .find(|(name, s)| required.contains(&name.as_str()) && is_string(s))
        .or_else(|| properties.iter().find(|(_, s)| is_string(s)))
        .map(|(name, _)| name.clone())
}

/// The schema of a written answer of `kind`.
fn answer_schema(kind: &str, nullable: bool) -> Value {
    if nullable {
        json!({"type": [kind, "null"]})
    } else {
        json!({"type": kind})
    }
}

/// An option as the words the model is scored on: `true` is "yes", `null` "unknown", `snake_case` and
/// `kebab-case` as words.
fn option_words(value: &Value) -> String {
    match value {
        Value::Bool(true) => "yes".into(),
        Value::Bool(false) => "no".into(),
        Value::Null => "unknown".into(),
        Value::String(s) => s.replace(['_', '-'], " "),
        other => other.to_string(),
    }
}

/// The text around the first mention of `item`: the sentence it is in, with the one before and the one
/// after, at most [`NEIGHBOURHOOD`] bytes on each side; the whole text when it is not found.
fn neighbourhood<'t>(text: &'t str, item: &str) -> &'t str {
    let Some(at) = text.find(item) else {
        return text;
    };
    let is_end = |c: char| matches!(c, '.' | '!' | '?' | '\n');
    let floor = at.saturating_sub(NEIGHBOURHOOD);
    let ceiling = (at + item.len() + NEIGHBOURHOOD).min(text.len());
    // Two sentence ends back (the one before the item's sentence), two forward.
    let mut start = at;
    let mut ends = 0;
    while start > floor {
        let Some(c) = text
            .get(..start)
            .and_then(|before| before.chars().next_back())
        else {
            break;
        };
        if is_end(c) {
            ends += 1;
            if ends == 2 {
                break;
            }
        }
        start -= c.len_utf8();
    }
    let mut end = at + item.len();
    let mut ends = 0;
    while end < ceiling {
        let Some(c) = text.get(end..).and_then(|after| after.chars().next()) else {
            break;
        };
        end += c.len_utf8();
        if is_end(c) {
            ends += 1;
            if ends == 2 {
                break;
            }
        }
    }
    let start = (0..=start)
        .rev()
        .find(|i| text.is_char_boundary(*i))
        .unwrap_or(0);
    let end = (end..=text.len())
        .find(|i| text.is_char_boundary(*i))
        .unwrap_or(text.len());
    text.get(start..end).map(str::trim).unwrap_or(text)
}

#[cfg(test)]
mod tests;
