//! The one global `tracing` subscriber of this binary (a process has one): a layer keeping the
//! fields of every span opened, and a lock the tests take in turn, each starting from no spans.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::Layer;

/// One span's fields, as text, by name.
pub type Fields = BTreeMap<String, String>;

/// A span as opened: its id, its name, its fields.
type Opened = (Id, &'static str, Fields);

/// Every span, in the order the spans were opened.
#[derive(Clone, Default)]
pub struct Spans(Arc<Mutex<Vec<Opened>>>);

struct Visitor<'a>(&'a mut Fields);

impl Visit for Visitor<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }
}

impl<S: tracing::Subscriber> Layer<S> for Spans {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, _: Context<'_, S>) {
        let mut fields = BTreeMap::new();
        attrs.record(&mut Visitor(&mut fields));
        self.lock()
            .push((id.clone(), attrs.metadata().name(), fields));
    }
    fn on_record(&self, id: &Id, values: &Record<'_>, _: Context<'_, S>) {
        let mut spans = self.lock();
        if let Some((_, _, fields)) = spans.iter_mut().rev().find(|(i, _, _)| i == id) {
            values.record(&mut Visitor(fields));
        }
    }
}

impl Spans {
    fn lock(&self) -> MutexGuard<'_, Vec<Opened>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The fields of every span named `name`, in the order they were opened.
    pub fn named(&self, name: &str) -> Vec<Fields> {
        self.lock()
            .iter()
            .filter(|(_, n, _)| *n == name)
            .map(|(_, _, f)| f.clone())
            .collect()
    }

    /// Every span and its fields, as text.
    pub fn everything(&self) -> String {
        format!("{:?}", *self.lock())
    }
}

/// A field of `span`, which must have it.
pub fn field<'a>(span: &'a Fields, name: &str) -> &'a str {
    span.get(name)
        .map(String::as_str)
        .unwrap_or_else(|| panic!("no field {name} in {span:?}"))
}

static SPANS: OnceLock<Spans> = OnceLock::new();
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// The lock that keeps the other tests of this binary out while it is held.
pub type Serial = tokio::sync::MutexGuard<'static, ()>;

/// The spans of this binary, emptied, and the lock that keeps the other tests out until it drops.
pub async fn start() -> (Serial, Spans) {
    let serial = SERIAL.lock().await;
    (serial, emptied())
}

/// [`start`], for a test that runs its own runtime.
pub fn start_blocking() -> (Serial, Spans) {
    let serial = SERIAL.blocking_lock();
    (serial, emptied())
}

fn emptied() -> Spans {
    let spans = SPANS
        .get_or_init(|| {
            let spans = Spans::default();
            // The global default, not a thread-local one: the batch runs poll on threads of their own.
            tracing::subscriber::set_global_default(
                tracing_subscriber::registry().with(spans.clone()),
            )
            .expect("the only subscriber of this test binary");
            spans
        })
        .clone();
    spans.lock().clear();
    spans
}
