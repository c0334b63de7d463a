//! The wording of the per-field strategy's questions ([`Strategy::PerField`](crate::extract::Strategy::PerField)),
//! in one place: one short question per field, made from its name, its `description` and its `examples`,
//! or the field's own question when one is given (the schema keyword `x-question`, or
//! [`Extractor::question`](crate::extract::Extractor::question) by path, which wins). The extraction prompts of one
//! answer are in `wording.rs`; these sit beside them in the extraction layer because the extractor asks
//! them (the `prompts` module is a layer above it).

use serde_json::Value;

/// The schema keyword that gives a field its own question.
pub const QUESTION: &str = "x-question";

/// The template of every per-field request: the text (the part every question of a document shares,
/// so an engine that reuses a prompt's prefix reads it once), then the question.
pub(crate) const QUESTION_TEMPLATE: &str = "{{text}}\n\nQuestion: {{question}}";

/// The system instructions of a question whose answer is copied from the text.
pub(crate) const COPY_INSTRUCTIONS: &str =
    "You answer a question about a text by copying the words \
that answer it exactly as the text writes them. If the text does not say, answer null.";

/// The system instructions of a question whose answer is written (free text).
pub(crate) const WRITE_INSTRUCTIONS: &str =
    "You answer a question about a text in a few words, from what the text states.";

/// What kind of answer a question asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Asking {
    /// A span copied from the text; `nullable`: "not in the text" is an answer.
    Copy { nullable: bool },
    /// A list of spans copied from the text.
    List,
    /// One of a few options (the options are listed by the chooser).
    Choice,
    /// Yes or no.
    YesNo,
    /// A few words of the model's own.
    Write,
}

/// `invoice_number`, `dueDate` and `due-date` as words: "invoice number", "due date".
pub(crate) fn field_words(name: &str) -> String {
    let mut out = String::new();
    let mut previous_lower = false;
    for c in name.chars() {
        if c == '_' || c == '-' {
            out.push(' ');
            previous_lower = false;
        } else if c.is_uppercase() && previous_lower {
            out.push(' ');
            out.extend(c.to_lowercase());
            previous_lower = false;
        } else {
            out.push(c);
            previous_lower = c.is_lowercase();
        }
    }
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The question for the field `name` with schema `schema`, asking as `asking`; `own` is a question given
/// for it by path, which wins over the schema's `x-question`, which wins over the wording made here.
pub(crate) fn question(name: &str, schema: &Value, asking: Asking, own: Option<&str>) -> String {
    if let Some(own) = own.or_else(|| schema.get(QUESTION).and_then(Value::as_str)) {
        return own.to_string();
    }
    let words = field_words(name);
    let description = schema
        .get("description")
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|d| !d.is_empty());
    let about = match description {
        Some(description) => format!("{words}: {description}"),
        None => format!("What is the {words}?"),
    };
    let examples = examples(schema);
    let mut out = about;
    if !examples.is_empty() {
        out.push_str(&format!(" (for example {})", examples.join(", ")));
    }
    match asking {
        Asking::Copy { nullable: true } => {
            out.push_str(" Copy it from the text, or answer null if the text does not say.");
        }
        Asking::Copy { nullable: false } => out.push_str(" Copy it from the text."),
        Asking::List => out.push_str(" Copy each one from the text."),
        Asking::YesNo => out.push_str(" Yes or no?"),
        Asking::Choice | Asking::Write => {}
    }
    out
}

/// The question that lists the items of an array by their key field: "invoice lines: each line of the
/// invoice. List the description of each."
pub(crate) fn list_question(name: &str, schema: &Value, key: &str, own: Option<&str>) -> String {
    if let Some(own) = own.or_else(|| schema.get(QUESTION).and_then(Value::as_str)) {
        return own.to_string();
    }
    let words = field_words(name);
    let about = match schema.get("description").and_then(Value::as_str) {
        Some(description) => format!("{words}: {}", description.trim()),
        None => format!("The {words}."),
    };
    format!(
        "{about} Copy the {} of each one from the text.",
        field_words(key)
    )
}

/// The question about one field of one item of a list: the item is named by its key, the field as
/// [`question`] words it.
pub(crate) fn item_question(item: &str, field: &str) -> String {
    format!("About \"{item}\": {field}")
}

/// The schema's `examples` (strings and numbers), quoted, at most three.
fn examples(schema: &Value) -> Vec<String> {
    schema
        .get("examples")
        .and_then(Value::as_array)
        .map(|examples| {
            examples
                .iter()
                .filter(|e| e.is_string() || e.is_number())
                .take(3)
                .map(Value::to_string)
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn field_names_read_as_words() {
        assert_eq!(field_words("invoice_number"), "invoice number");
        assert_eq!(field_words("dueDate"), "due date");
        assert_eq!(field_words("due-date"), "due date");
        assert_eq!(field_words("city"), "city");
    }

    #[test]
    fn a_question_is_made_of_the_name_the_description_and_the_examples() {
        let schema = json!({"type": "string", "description": "Who is billed.", "examples": ["Acme Ltd", "Jo Bloggs"]});
        assert_eq!(
            question("customer", &schema, Asking::Copy { nullable: true }, None),
            "customer: Who is billed. (for example \"Acme Ltd\", \"Jo Bloggs\") Copy it from the text, \
             or answer null if the text does not say."
        );
        assert_eq!(
            question(
                "customer_id",
                &json!({}),
                Asking::Copy { nullable: false },
                None
            ),
            "What is the customer id? Copy it from the text."
        );
        assert_eq!(
            question(
                "paid",
                &json!({"description": "Whether it is paid."}),
                Asking::YesNo,
                None
            ),
            "paid: Whether it is paid. Yes or no?"
        );
    }

    #[test]
    fn a_field_s_own_question_wins() {
        let schema = json!({"type": "string", "x-question": "Who pays?"});
        assert_eq!(
            question("customer", &schema, Asking::Write, None),
            "Who pays?"
        );
        assert_eq!(
            question(
                "customer",
                &schema,
                Asking::Write,
                Some("Who is the client?")
            ),
            "Who is the client?"
        );
        assert_eq!(list_question("lines", &schema, "item", None), "Who pays?");
    }

    #[test]
    fn a_list_is_asked_by_its_key() {
        assert_eq!(
            list_question(
                "line_items",
                &json!({"description": "What was bought."}),
                "product_name",
                None
            ),
            "line items: What was bought. Copy the product name of each one from the text."
        );
        assert_eq!(
            item_question("Toner", "price: The price."),
            "About \"Toner\": price: The price."
        );
    }
}
