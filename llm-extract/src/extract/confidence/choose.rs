//! Choosing a value of a string enum by the model's likelihood of each option instead of letting
//! the model write one.
//!
//! A small model asked to write `"kind": "` mid-answer often writes the option it favours everywhere
//! (every name a "company"). [`Chooser`] asks one short question per subject instead ("Is "Lisa Su"
//! a person or a company?"), then reads, without sampling, how likely the model finds each answer
//! ("Lisa Su" is a person / a company) on a backend that can score continuations ([`Likelihood`]:
//! the embedded engine). The question is asked once per order of the options (each option first
//! once, cyclically) and the scores averaged, which cancels the model's preference for the option it
//! was shown first or last. The [`Choice`] carries each option's probability (a softmax over the
//! averaged log-likelihoods): a low one marks a value to doubt.
//!
//! ```
//! use llm_extract::extract::Chooser;
//! use llm_extract::llm::{BoxFuture, Likelihood, LlmError};
//! use llm_extract::llm::ChatRequest;
//! use llm_extract::Extract;
//!
//! #[derive(Extract, serde::Deserialize, Debug, PartialEq)]
//! #[serde(rename_all = "lowercase")]
//! enum Kind { Person, Company }
//!
//! // A stand-in for the embedded engine: it finds "company" likely for anything named "AMD".
//! struct Scorer;
//! impl Likelihood for Scorer {
//!     fn log_likelihoods<'a>(&'a self, request: &'a ChatRequest, options: &'a [String])
//!         -> BoxFuture<'a, Result<Vec<f64>, LlmError>> {
//!         let amd = request.messages[0].content.contains("\"AMD\"");
//!         let scores = options.iter().map(|o| if o.contains("company") == amd { -0.1 } else { -3.0 }).collect();
//!         Box::pin(async move { Ok(scores) })
//!     }
//! }
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let chooser = Chooser::new(Scorer, "Lisa Su leads AMD.");
//! let choice = chooser.choose::<Kind>("AMD").await?;
//! assert_eq!(choice.value, Kind::Company);
//! assert!(choice.probability > 0.9);
//! # Ok::<(), llm_extract::extract::ChooseError>(())
//! # }).unwrap();
//! ```

use crate::extract::Extract;
use crate::llm::{ChatRequest, Likelihood, LlmError, Message};
use crate::schema::{node, SchemaSet};
use serde_json::Value;

/// Why no option could be chosen.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ChooseError {
    /// The type's schema is not a string enum of at least two values (`{"enum": [...]}`).
    #[error("`{type_name}` is not an enum of two or more plain values, so there is nothing to choose among")]
    NotAnEnum {
        /// The type's schema name.
        type_name: String,
    },
    /// The backend could not score the options.
    #[error("the model could not score the options: {0}")]
    Llm(#[from] LlmError),
    /// The backend returned a score count that does not match the options.
    #[error("the model scored {got} options of {expected}")]
    Scores {
        /// How many options were asked about.
        expected: usize,
        /// How many scores came back.
        got: usize,
    },
    /// The chosen option did not read back as the type (a `Deserialize` that disagrees with the schema).
    #[error("the option {option:?} does not read as the type: {source}")]
    Read {
        /// The option.
        option: String,
        /// serde's reason.
        source: serde_json::Error,
    },
}

/// One option chosen, with how sure the model was.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Choice<T> {
    /// The most likely option.
    pub value: T,
    /// Its probability among the options (0 to 1; `1 / options` is a coin toss).
    pub probability: f64,
    /// Every option (as its JSON string) with its probability, in the schema's order.
    pub options: Vec<(String, f64)>,
}

/// Chooses values of string enums for subjects of one text by the model's likelihood of each option.
#[derive(Debug, Clone)]
pub struct Chooser<L> {
    llm: L,
    text: String,
    calibrated: bool,
}

impl<L: Likelihood> Chooser<L> {
    /// A chooser reading `text` with `llm`.
    pub fn new(llm: L, text: impl Into<String>) -> Self {
        Chooser {
            llm,
            text: text.into(),
            calibrated: false,
        }
    }

    /// Corrects for the model's taste for some answers whatever the subject (a small model may find
    /// "is a verb" likely of anything): each option's score is measured against its score for a
    /// subject that says nothing (`"N/A"`), asked the same way ("contextual calibration", Zhao et al.,
    /// 2021). It doubles the questions asked. Best where the options differ in how common they are
    /// as words; compare on a few answers you know.
    pub fn calibrated(mut self) -> Self {
        self.calibrated = true;
        self
    }

    /// Which value of the string enum `T` `subject` (a name from the text) is, by the model's
    /// likelihood of each answer to "Is "subject" a X or a Y?". Each value is read as words (`_` and
    /// `-` as spaces).
    ///
    /// # Errors
    /// [`ChooseError::NotAnEnum`] for a `T` that is not a string enum, else the backend's error.
    pub async fn choose<T: Extract>(&self, subject: &str) -> Result<Choice<T>, ChooseError> {
        let choice = self.choose_value(T::schema(), subject).await?;
        let option = choice.value;
        let value = serde_json::from_value(Value::String(option.clone()))
            .map_err(|source| ChooseError::Read { option, source })?;
        Ok(Choice {
            value,
            probability: choice.probability,
            options: choice.options,
        })
    }

    /// [`Chooser::choose`] for a runtime schema: the chosen value as its string.
    ///
    /// # Errors
    /// As [`Chooser::choose`].
    pub async fn choose_value(
        &self,
        schema: &SchemaSet,
        subject: &str,
    ) -> Result<Choice<String>, ChooseError> {
        let values = enum_values(schema.generic()).ok_or_else(|| ChooseError::NotAnEnum {
            type_name: schema.name().to_string(),
        })?;
        let words: Vec<String> = values.iter().map(|v| with_article(&as_words(v))).collect();
        let answers: Vec<String> = words.iter().map(|w| format!(" {w}")).collect();
        let ask = |subject: &str, order: &[&str]| {
            ChatRequest::new(format!(
                "{}\n\nIs \"{subject}\" {}?",
                self.text,
                either(order)
            ))
            .with_message(Message::assistant(format!("\"{subject}\" is")))
        };
        self.choose_among(values, &words, &answers, subject, ask)
            .await
    }
}

impl<L: Likelihood> Chooser<L> {
    /// Which of `options` answers `question` about the text, by the model's likelihood of each as the
    /// answer to "question Answer with one of: X, Y or Z." (each option first once, as in
    /// [`Chooser::choose`]; calibrated against the same question about `"N/A"` with
    /// [`Chooser::calibrated`]). The options are the words the model is scored on, returned as given.
    ///
    /// # Errors
    /// [`ChooseError::NotAnEnum`] for fewer than two options, else the backend's error.
    pub async fn choose_answer(
        &self,
        question: &str,
        options: &[String],
    ) -> Result<Choice<String>, ChooseError> {
        if options.len() < 2 {
            return Err(ChooseError::NotAnEnum {
                type_name: question.to_string(),
            });
        }
        let answers: Vec<String> = options.iter().map(|o| format!(" {o}")).collect();
        let ask = |text: &str, order: &[&str]| {
            ChatRequest::new(format!(
                "{text}\n\nQuestion: {question} Answer with one of: {}.",
                either(order)
            ))
            .with_message(Message::assistant("Answer:"))
        };
        self.choose_among(options.to_vec(), options, &answers, &self.text, ask)
            .await
    }

    /// Chooses among `values` by the model's likelihood of each of `answers` (one per value, in the
    /// same order) to the question `ask` writes about `about` with the options named in an order
    /// (their `names`). The question is asked once per order (each name first once, cyclically) and
    /// the scores summed; [`Chooser::calibrated`] subtracts each answer's score to the same question
    /// about [`CONTENT_FREE`] instead of `about`. The most likely value wins (the first of equals).
    async fn choose_among(
        &self,
        values: Vec<String>,
        names: &[String],
        answers: &[String],
        about: &str,
        ask: impl Fn(&str, &[&str]) -> ChatRequest,
    ) -> Result<Choice<String>, ChooseError> {
        let mut totals = vec![0.0; values.len()];
        for first in 0..names.len() {
            let order: Vec<&str> = (0..names.len())
                .filter_map(|i| names.get((first + i) % names.len()).map(String::as_str))
                .collect();
            let scores = self.scored(&ask(about, &order), answers).await?;
            for (total, score) in totals.iter_mut().zip(scores) {
                *total += score;
            }
            if self.calibrated {
                let prior = self.scored(&ask(CONTENT_FREE, &order), answers).await?;
                for (total, score) in totals.iter_mut().zip(prior) {
                    *total -= score;
                }
            }
        }
        let probabilities = softmax(&totals, names.len() as f64);
        let options: Vec<(String, f64)> = values.into_iter().zip(probabilities).collect();
        let (value, probability) = options
            .iter()
            .fold(None::<&(String, f64)>, |best, option| match best {
                Some(top) if top.1 >= option.1 => Some(top),
                _ => Some(option),
            })
            .cloned()
            .unwrap_or_default();
        Ok(Choice {
            value,
            probability,
            options,
        })
    }

    /// The backend's scores of `answers` to `request`, one per answer.
    async fn scored(
        &self,
        request: &ChatRequest,
        answers: &[String],
    ) -> Result<Vec<f64>, ChooseError> {
        let scores = self.llm.log_likelihoods(request, answers).await?;
        if scores.len() != answers.len() {
            return Err(ChooseError::Scores {
                expected: answers.len(),
                got: scores.len(),
            });
        }
        Ok(scores)
    }
}

/// The subject that says nothing, for [`Chooser::calibrated`].
const CONTENT_FREE: &str = "N/A";

/// The string values of an enum schema (`{"enum": [...]}`, through `$ref`s), when there are two or more.
fn enum_values(root: &Value) -> Option<Vec<String>> {
    let node = node::resolve(root, root);
    let values: Vec<String> = node
        .get("enum")?
        .as_array()?
        .iter()
        .map(|v| v.as_str().map(str::to_string))
        .collect::<Option<_>>()?;
    (values.len() >= 2).then_some(values)
}

/// `snake_case` or `kebab-case` as words.
fn as_words(value: &str) -> String {
    value.replace(['_', '-'], " ")
}

/// "a person", "an organisation".
fn with_article(words: &str) -> String {
    let vowel = words
        .chars()
        .next()
        .is_some_and(|c| "aeiouAEIOU".contains(c));
    if vowel {
        format!("an {words}")
    } else {
        format!("a {words}")
    }
}

/// "a X or a Y", "a X, a Y or a Z".
fn either(options: &[&str]) -> String {
    match options.split_last() {
        Some((last, [])) => (*last).to_string(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    }
}

/// Probabilities from summed log-likelihoods (each the sum over `rounds` questions, so averaged first).
fn softmax(totals: &[f64], rounds: f64) -> Vec<f64> {
    let means: Vec<f64> = totals.iter().map(|t| t / rounds).collect();
    let max = means.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let exps: Vec<f64> = means.iter().map(|m| (m - max).exp()).collect();
    let sum: f64 = exps.iter().sum();
    exps.iter().map(|e| e / sum).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::BoxFuture;
    use serde_json::json;
    use std::sync::Mutex;

    fn kind() -> SchemaSet {
        SchemaSet::new(
            "Kind",
            json!({"type": "string", "enum": ["person", "company", "other"]}),
        )
    }

    /// Scores by a fixed table per option, plus a bonus for whichever option the question lists first
    /// (the bias the rotation cancels); records every question.
    struct Table {
        scores: Vec<(&'static str, f64)>,
        first_bonus: f64,
        asked: Mutex<Vec<String>>,
    }

    impl Likelihood for Table {
        fn log_likelihoods<'a>(
            &'a self,
            request: &'a ChatRequest,
            options: &'a [String],
        ) -> BoxFuture<'a, Result<Vec<f64>, LlmError>> {
            let question = request.messages[0].content.clone();
            let listed_first = question
                .rsplit("\" ")
                .next()
                .unwrap_or_default()
                .to_string();
            self.asked.lock().unwrap().push(question);
            let scores = options
                .iter()
                .map(|option| {
                    let base = self
                        .scores
                        .iter()
                        .find(|(word, _)| option.ends_with(word))
                        .map_or(-20.0, |(_, s)| *s);
                    let first = listed_first.starts_with(option.trim());
                    base + if first { self.first_bonus } else { 0.0 }
                })
                .collect();
            Box::pin(async move { Ok(scores) })
        }
    }

    fn table(scores: Vec<(&'static str, f64)>, first_bonus: f64) -> Table {
        Table {
            scores,
            first_bonus,
            asked: Mutex::new(Vec::new()),
        }
    }

    fn run<T>(future: impl std::future::Future<Output = T>) -> T {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap()
            .block_on(future)
    }

    #[test]
    fn the_likeliest_option_wins_with_its_probability() {
        let scorer = table(
            vec![("person", -2.0), ("company", -0.5), ("other", -4.0)],
            0.0,
        );
        let choice =
            run(Chooser::new(&scorer, "Lisa Su leads AMD.").choose_value(&kind(), "AMD")).unwrap();
        assert_eq!(choice.value, "company");
        let expected = 1.0 / (1.0 + (-1.5_f64).exp() + (-3.5_f64).exp());
        assert!((choice.probability - expected).abs() < 1e-9, "{choice:?}");
        let names: Vec<&str> = choice.options.iter().map(|(o, _)| o.as_str()).collect();
        assert_eq!(names, ["person", "company", "other"]);
        let total: f64 = choice.options.iter().map(|(_, p)| p).sum();
        assert!((total - 1.0).abs() < 1e-9);
    }

    #[test]
    fn each_option_is_listed_first_once_so_a_bias_for_the_first_cancels() {
        // Without the rotation, a bonus of 3 for the option listed first would make "person" win.
        let scorer = table(
            vec![("person", -2.0), ("company", -1.0), ("other", -9.0)],
            3.0,
        );
        let choice =
            run(Chooser::new(&scorer, "AMD makes chips.").choose_value(&kind(), "AMD")).unwrap();
        assert_eq!(choice.value, "company");
        let asked = scorer.asked.lock().unwrap();
        assert_eq!(asked.len(), 3);
        assert!(
            asked[0].ends_with("Is \"AMD\" a person, a company or an other?"),
            "{asked:?}"
        );
        assert!(
            asked[1].ends_with("Is \"AMD\" a company, an other or a person?"),
            "{asked:?}"
        );
        assert!(asked[2].starts_with("AMD makes chips.\n\n"), "{asked:?}");
    }

    #[test]
    fn an_answer_is_asked_of_the_text_in_each_order_and_of_nothing_when_calibrated() {
        let scorer = table(vec![("yes", -0.5), ("no", -2.0)], 0.0);
        let options = ["yes".to_string(), "no".to_string()];
        let chooser = Chooser::new(&scorer, "It rained.");
        let choice = run(chooser.choose_answer("Did it rain?", &options)).unwrap();
        assert_eq!(choice.value, "yes");
        let expected = 1.0 / (1.0 + (-1.5_f64).exp());
        assert!((choice.probability - expected).abs() < 1e-9, "{choice:?}");
        assert_eq!(
            *scorer.asked.lock().unwrap(),
            [
                "It rained.\n\nQuestion: Did it rain? Answer with one of: yes or no.",
                "It rained.\n\nQuestion: Did it rain? Answer with one of: no or yes.",
            ]
        );
        scorer.asked.lock().unwrap().clear();
        // The table's taste is the same whatever the text: calibrated, the options are equals, and
        // the first of equals wins.
        let calibrated = run(chooser.calibrated().choose_answer("Did it rain?", &options)).unwrap();
        assert_eq!(
            (calibrated.value.as_str(), calibrated.probability),
            ("yes", 0.5)
        );
        let asked = scorer.asked.lock().unwrap();
        let texts: Vec<&str> = asked.iter().map(|q| &q[..q.find('\n').unwrap()]).collect();
        assert_eq!(texts, ["It rained.", "N/A", "It rained.", "N/A"]);
    }

    #[test]
    fn a_schema_that_is_not_a_string_enum_is_an_error() {
        let schema = SchemaSet::new(
            "Named",
            json!({"type": "object", "properties": {"name": {"type": "string"}}}),
        );
        let scorer = table(vec![], 0.0);
        let err = run(Chooser::new(&scorer, "x").choose_value(&schema, "x")).unwrap_err();
        assert!(matches!(err, ChooseError::NotAnEnum { .. }), "{err}");
        assert!(err.to_string().contains("Named"), "{err}");
    }

    #[test]
    fn enum_values_follow_references_and_need_two() {
        let root =
            json!({"$ref": "#/$defs/K", "$defs": {"K": {"type": "string", "enum": ["a_b", "c"]}}});
        assert_eq!(
            enum_values(&root),
            Some(vec!["a_b".to_string(), "c".to_string()])
        );
        assert_eq!(enum_values(&json!({"enum": ["only"]})), None);
        assert_eq!(enum_values(&json!({"enum": [1, 2]})), None);
        assert_eq!(with_article(&as_words("open_source")), "an open source");
        assert_eq!(either(&["a x", "a y"]), "a x or a y");
    }

    /// Scores "person" high for any subject (a taste the model has), and "company" a little higher
    /// than its own taste for the subject "AMD".
    struct Taste;

    impl Likelihood for Taste {
        fn log_likelihoods<'a>(
            &'a self,
            request: &'a ChatRequest,
            options: &'a [String],
        ) -> BoxFuture<'a, Result<Vec<f64>, LlmError>> {
            let amd = request.messages[0].content.contains("Is \"AMD\"");
            let scores = options
                .iter()
                .map(|option| match option.trim() {
                    "a person" => -0.5,
                    "a company" if amd => -1.0,
                    "a company" => -3.0,
                    _ => -6.0,
                })
                .collect();
            Box::pin(async move { Ok(scores) })
        }
    }

    #[test]
    fn calibration_measures_each_option_against_a_subject_that_says_nothing() {
        let plain = run(Chooser::new(Taste, "Lisa Su leads AMD.").choose_value(&kind(), "AMD"));
        assert_eq!(plain.unwrap().value, "person");
        let calibrated = run(Chooser::new(Taste, "Lisa Su leads AMD.")
            .calibrated()
            .choose_value(&kind(), "AMD"))
        .unwrap();
        assert_eq!(calibrated.value, "company");
        // "company" gains 2 against its content-free score, "person" and "other" nothing.
        let expected = 1.0 / (1.0 + 2.0 * (-2.0_f64).exp());
        assert!(
            (calibrated.probability - expected).abs() < 1e-9,
            "{calibrated:?}"
        );
    }
}
