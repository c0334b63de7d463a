//! The first request of an extraction: the system prompt with format instructions, the worked examples,
//! the filled template with the input's media, and in constrained mode the schema rendered for the
//! backend's dialect.

use super::Engine;
use crate::extract::engine::tokens;
use crate::extract::error::{ExtractError, ExtractErrorKind};
use crate::extract::loops;
use crate::extract::prompts::{template, wording};
use crate::extract::setup::config::{Input, Mode};
use crate::extract::setup::example_turns;
use crate::extract::setup::target::Target;
use crate::llm::{ChatRequest, Message};
use crate::report::Report;
use crate::schema::Shape;
use serde_json::Value;
use std::sync::Arc;

impl Engine<'_> {
    /// The first request: system prompt with format instructions, the filled template, and in
    /// constrained mode the schema rendered for the backend's dialect; with the shape of the answer, the
    /// bounds every answer is watched against (from the input, `loops::Bounds`), and what the
    /// backend will not enforce of the schema sent (for [`Report::unenforced`]).
    pub(super) fn first_request(
        &self,
        target: &impl Target,
        input: Input,
        many: bool,
    ) -> Result<(ChatRequest, Shape, loops::Bounds, Option<String>), ExtractError> {
        let fail = |kind| ExtractError::new(kind, Report::default());
        let config = self.config;
        let (vars, media) = input.into_parts();
        let vars = vars.map_err(|e| fail(ExtractErrorKind::Template(e)))?;
        let user = template::render(&config.template, &vars)
            .map_err(|e| fail(ExtractErrorKind::Template(e)))?;
        let set = target.schema();
        let constrained = matches!(config.mode, Mode::Constrained | Mode::Tool);
        let shape = match (many, constrained) {
            (false, _) => Shape::One,
            (true, true) if !self.llm.constrains_json_lines() => Shape::List,
            (true, _) => Shape::Line,
        };
        let definitions = if many {
            set.line_format_instructions()
        } else {
            set.format_instructions()
        };
        let max_items = if many { config.max_items } else { None };
        let examples = example_turns::turns(config, target, shape, &vars).map_err(fail)?;
        let mut system =
            wording::system_prompt(&config.instructions, shape, definitions, max_items);
        example_turns::note(&mut system, examples.len() / 2);
        // The template's text before the input's text is the same in every request of a run (every
        // chunk of a document): with the prefix before it, what a provider's prompt cache keeps.
        let stable_input = template::stable_head(&config.template)
            .filter(|head| user.starts_with(head))
            .map_or(0, str::len);
        // The input's media go with its text, in the one user message every attempt resends.
        let mut request = ChatRequest::default()
            .with_message(Message::user(user).with_media(media))
            .with_system(system);
        // The worked examples are the same in every request of a run: with the system prompt, the
        // prefix a provider's prompt cache keeps.
        request.stable_messages = examples.len();
        request.stable_input = stable_input;
        request.messages = examples.into_iter().chain(request.messages).collect();
        let mut unenforced = None;
        if constrained {
            unenforced = self
                .constrain(&mut request, target, shape, max_items)
                .map_err(fail)?;
        }
        request.max_tokens = Some(config.max_tokens.unwrap_or_else(|| {
            if many {
                tokens::for_list(set.generic(), max_items)
            } else {
                tokens::for_one(set.generic())
            }
        }));
        // Greedy and seeded unless the caller says otherwise: the same request gets the same answer on
        // every backend, and a loop is recovered from deliberately (`loops::recover`).
        request.temperature = Some(config.temperature.unwrap_or(0.0));
        request.seed = Some(config.seed.unwrap_or(0));
        request.logprobs = config.confidence.is_some();
        let bounds = loops::Bounds::of(&config.loop_guard, &vars, set.generic());
        Ok((request, shape, bounds, unenforced))
    }

    /// Whether the schema of one value goes out wrapped in an object (its root is not one, and the
    /// backend's dialect takes object roots only): the answers are then read unwrapped (`unwrap.rs`).
    pub(super) fn wrapped(&self, target: &impl Target) -> bool {
        matches!(self.config.mode, Mode::Constrained | Mode::Tool)
            && target
                .schema()
                .lowering(self.llm.dialect(), Shape::One)
                .is_ok_and(crate::schema::dialect::Lowering::is_wrapped)
    }

    /// Adds the schema, rendered for the backend's dialect in `shape`, to `request` (constrained and
    /// tool modes): with the source of a grounded target when the backend grounds while decoding, and a
    /// list's `max_items` where the dialect carries it. Returns the notice of what the backend will not
    /// enforce of the schema sent, if anything.
    fn constrain(
        &self,
        request: &mut ChatRequest,
        target: &impl Target,
        shape: Shape,
        max_items: Option<usize>,
    ) -> Result<Option<String>, ExtractErrorKind> {
        let config = self.config;
        let set = target.schema();
        let dialect = self.llm.dialect();
        // A backend that grounds while decoding gets the source and the schema with its marks.
        let grounding = target
            .grounding()
            .filter(|_| self.llm.constrains_grounding() && config.mode == Mode::Constrained);
        let lowering = match grounding {
            Some(_) => set.lowering_grounded(dialect, shape),
            None => set.lowering(dialect, shape),
        }
        .map_err(ExtractErrorKind::Schema)?;
        let mut schema = lowering.schema().clone();
        request.grounding = grounding.map(Arc::from);
        if let (Shape::List, Some(n), true) = (shape, max_items, dialect.carries_max_items()) {
            if let Some(items) = schema
                .pointer_mut("/properties/items")
                .and_then(Value::as_object_mut)
            {
                items.insert("maxItems".into(), Value::from(n));
            }
        }
        request.schema_name = Some(set.name().into());
        request.schema = Some(schema);
        request.schema_relaxed = !lowering.strict();
        request.json_lines = shape == Shape::Line;
        request.tool_call = config.mode == Mode::Tool;
        Ok(lowering.notice(dialect))
    }
}
