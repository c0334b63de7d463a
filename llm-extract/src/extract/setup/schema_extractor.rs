//! [`SchemaExtractor`] ([`Extractor::with_schema`]): the extractions of an [`Extractor`] for a runtime schema, by the same names as
//! the typed ones, returning validated JSON. Each method calls the same generic code as its typed twin,
//! with the runtime target ([`Runtime`]) in place of the derived one.

use crate::check::Checks;
use crate::document::ReadError;
use crate::extract::document::document_source::DocumentSource;
use crate::extract::document::items::{Document, DocumentEvent};
use crate::extract::document::one_value::DocumentValue;
use crate::extract::engine::partial_events::PartialEvent;
use crate::extract::engine::stream::ExtractStream;
use crate::extract::error::ExtractError;
use crate::extract::setup::config::Input;
use crate::extract::setup::target::Runtime;
use crate::extract::Extractor;
use crate::ground::Grounded;
use crate::llm::Llm;
use crate::report::Extraction;
use crate::schema::SchemaSet;
use futures_util::stream::BoxStream;
use serde_json::Value;

/// An [`Extractor`] given a runtime schema, from [`Extractor::with_schema`]: its methods are the
/// typed ones ([`Extractor::extract`], [`Extractor::extract_all`], ...) for the schema, returning the
/// validated JSON. The extractor's [`checks`](Extractor::check) run on every value and item.
///
/// For [`extract_all`](SchemaExtractor::extract_all) and the streams, the schema is that of one item;
/// its properties marked `"x-key": true` name an item (copies are merged on them), strings marked
/// `"x-grounded": true` are found in the text by the grounded and document extractions.
///
/// ```
/// use futures_util::StreamExt;
/// use llm_extract::llm::{from_fn, ChatResponse};
/// use llm_extract::{DynamicSchema, Extractor};
/// use serde_json::json;
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let llm = from_fn(|_request| async { Ok(ChatResponse::new("{\"n\": 1}\n{\"n\": 2}\n")) });
/// let schema = DynamicSchema::from_json(json!({
///     "type": "object", "properties": {"n": {"type": "integer"}},
///     "required": ["n"], "additionalProperties": false
/// }))?;
/// let extractor = Extractor::new(llm);
/// let numbers = extractor.with_schema(&schema);
/// let all = numbers.extract_all("two numbers").await?;
/// assert_eq!(all.value, [json!({"n": 1}), json!({"n": 2})]);
/// let mut stream = numbers.extract_stream("two numbers");
/// while let Some(item) = stream.next().await {
///     println!("{}", item?);
/// }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
#[derive(Debug)]
pub struct SchemaExtractor<'a, L> {
    extractor: &'a Extractor<L>,
    schema: &'a SchemaSet,
}

impl<L> Clone for SchemaExtractor<'_, L> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<L> Copy for SchemaExtractor<'_, L> {}

impl<L: Llm> Extractor<L> {
    /// The extractions of this extractor for a runtime schema (a [`SchemaSet`] or a
    /// [`DynamicSchema`](crate::DynamicSchema)): the same methods, by the same names, returning the
    /// validated JSON. See [`SchemaExtractor`].
    pub fn with_schema<'a, S: AsRef<SchemaSet> + ?Sized>(
        &'a self,
        schema: &'a S,
    ) -> SchemaExtractor<'a, L> {
        SchemaExtractor {
            extractor: self,
            schema: schema.as_ref(),
        }
    }
}

impl<'a, L: Llm> SchemaExtractor<'a, L> {
    /// The schema.
    pub fn schema(&self) -> &'a SchemaSet {
        self.schema
    }

    /// The extractor's checks, for values extracted from `input`.
    fn checks(&self, input: &Input) -> Checks {
        let checks = self.extractor.checks.clone();
        checks.in_context(|| input.vars().cloned())
    }

    /// The schema's values from `input`, with the extractor's checks.
    fn target(&self, input: &Input) -> Runtime<'a> {
        Runtime::checked(self.schema, self.checks(input))
    }

    /// One value of the schema: [`Extractor::extract`].
    pub async fn extract(
        &self,
        input: impl Into<Input>,
    ) -> Result<Extraction<Value>, ExtractError> {
        let input = input.into();
        let checks = self.checks(&input);
        let target = || Runtime::checked(self.schema, checks.clone());
        self.extractor.one(target, input).await
    }

    /// Every item of the schema, merged on its key properties: [`Extractor::extract_all`]. On failure
    /// the error holds the items kept ([`ExtractError::kept`]).
    pub async fn extract_all(
        &self,
        input: impl Into<Input>,
    ) -> Result<Extraction<Vec<Value>>, ExtractError> {
        let input = input.into();
        let checks = self.checks(&input);
        let target = || Runtime::checked(self.schema, checks.clone());
        self.extractor.all(target, input).await
    }

    /// The items of the schema as a stream: [`Extractor::extract_stream`].
    pub fn extract_stream(&self, input: impl Into<Input>) -> ExtractStream<'a, Value> {
        let input = input.into();
        self.extractor.stream(self.target(&input), input)
    }

    /// One value of the schema as it is written: [`Extractor::extract_partial`], the snapshots being
    /// the JSON written so far (strings as far as written, numbers and literals once complete), the
    /// final value the validated JSON.
    pub fn extract_partial(
        &self,
        input: impl Into<Input>,
    ) -> ExtractStream<'a, PartialEvent<Value>> {
        let input = input.into();
        self.extractor.partial(self.target(&input), input)
    }

    /// Every item of the schema in `text`, with the spans of its grounded strings:
    /// [`Extractor::extract_grounded`].
    pub async fn extract_grounded(
        &self,
        text: &str,
    ) -> Result<Extraction<Vec<Grounded<Value>>>, ExtractError> {
        self.extractor
            .grounded(self.target(&Input::text(text)), text)
            .await
    }

    /// Every item of the schema in a document of any length: [`Extractor::extract_document`].
    pub async fn extract_document<'d>(
        &self,
        source: impl Into<DocumentSource<'d>>,
    ) -> Result<Document<Value>, ReadError> {
        let checks = self.extractor.checks.clone();
        self.extractor
            .document(self.schema, checks, source.into())
            .await
    }

    /// One value of the schema from a document of any length: [`OneValue::extract_document`](crate::extract::OneValue::extract_document).
    pub async fn extract_document_one<'d>(
        &self,
        source: impl Into<DocumentSource<'d>>,
    ) -> Result<DocumentValue<Value>, ReadError> {
        let checks = self.extractor.checks.clone();
        self.extractor
            .document_one(self.schema, checks, source.into())
            .await
    }

    /// [`SchemaExtractor::extract_document`] as a stream: [`Extractor::extract_document_stream`].
    pub fn extract_document_stream(
        &self,
        source: impl Into<DocumentSource<'a>>,
    ) -> BoxStream<'a, Result<DocumentEvent<Value>, ReadError>> {
        let checks = self.extractor.checks.clone();
        self.extractor
            .document_stream(self.schema, checks, source.into())
    }
}
