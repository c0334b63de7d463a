//! Which examples a request shows, and the turns they become: for each, the prompt template filled with
//! the example's text, then its answer in the shape asked for. They go before the real input.

use crate::extract::error::ExtractErrorKind;
use crate::extract::prompts::{template, wording};
use crate::extract::setup::config::Config;
use crate::extract::setup::example::Example;
use crate::extract::setup::target::Target;
use crate::llm::Message;
use crate::schema::Shape;
use serde_json::{Map, Value};

/// The example turns for `target` answered in `shape`: the extractor's examples made for this schema,
/// or else (when allowed) the target's own. `vars` are the real input's variables; each example's text
/// replaces `text` among them, so a template with other variables renders the same way.
pub(crate) fn turns(
    config: &Config,
    target: &impl Target,
    shape: Shape,
    vars: &Map<String, Value>,
) -> Result<Vec<Message>, ExtractErrorKind> {
    let set = target.schema();
    let own: Vec<&Example> = config.examples.iter().filter(|e| e.fits(set)).collect();
    let defaults;
    let chosen: Vec<&Example> = if !own.is_empty() {
        own
    } else if config.default_examples {
        defaults = target.examples().map_err(ExtractErrorKind::Example)?;
        defaults.iter().collect()
    } else {
        Vec::new()
    };
    let mut out = Vec::new();
    for example in chosen.into_iter().filter(|e| e.usable_for(shape)) {
        let mut vars = vars.clone();
        vars.insert("text".into(), Value::String(example.text().to_owned()));
        let user = template::render(&config.template, &vars).map_err(ExtractErrorKind::Template)?;
        out.push(Message::user(user));
        out.push(Message::assistant(example.answer_turn(shape)));
    }
    Ok(out)
}

/// Appends to the system prompt the sentence saying the first `count` exchanges are examples.
pub(crate) fn note(system: &mut String, count: usize) {
    if count > 0 {
        system.push_str("\n\n");
        system.push_str(wording::EXAMPLES_NOTE);
    }
}
