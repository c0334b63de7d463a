//! The incremental decoder: feed bytes as they arrive, get items as they complete.
//!
//! One decoder, [`LineDecoder<T>`], generic over what each item becomes, as serde_json's
//! `StreamDeserializer<R, T>` is: a Rust type that implements [`Schema`], or a `serde_json::Value`
//! validated against a schema given at run time (a [`SchemaSet`], e.g. a
//! [`DynamicSchema`](crate::DynamicSchema)'s). Underneath, one untyped core frames the bytes and
//! runs each frame through the pipeline; the [`Reader`] of `T` turns what it accepts into `T`. Bytes
//! are kept only from the start of the frame being collected; the framer's state carries over
//! between chunks, so no byte is scanned twice and a chunk may end anywhere, even inside a UTF-8
//! character.

use super::choice::Rejections;
use super::deserialize;
use super::envelope;
use super::frame::{Event, Frame, FrameKind, Framer, FramerConfig};
use super::pipeline::Pipeline;
use super::schema_check::{Accepted, Rejection};
use super::typed;
use super::{Fix, FixKind, ParseOptions, SkipReason, Skipped};
use crate::schema::node::resolve;
use crate::schema::plan::Plan;
use crate::schema::Schema;
use crate::schema::SchemaSet;
use crate::validate::Violation;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::borrow::Cow;
use std::sync::Arc;

/// Where the core hands what it decodes.
pub(crate) trait Sink {
    /// Offered every closed frame that is valid UTF-8, before the pipeline sees it: a sink that can
    /// take clean JSON straight to its own type does, and returns `true`; the frame is then done.
    fn clean(&mut self, _text: &str, _line: usize) -> bool {
        false
    }

    /// An item of validated JSON, or a skipped line.
    fn event(&mut self, event: LineEvent<Value>);
}

/// How much of a frame too large to keep is shown in its [`Skipped::raw`].
const RAW_PREVIEW: usize = 256;

/// The most bytes left unscanned while a value waits for its closing bracket.
const LAZY_BACKLOG: usize = 4096;

/// Whether `chunk` holds a `}`, a `]` or a newline (eight bytes at a time: chunks are small, and
/// this runs for every one). `}` and `]` differ in one bit (0x20), so one comparison finds either.
#[inline]
fn may_close(chunk: &[u8]) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let zero = |v: u64| v.wrapping_sub(ONES) & !v & HIGHS != 0;
    let holds = |w: u64| zero((w | (ONES * 0x20)) ^ (ONES * 0x7d)) || zero(w ^ (ONES * 0x0a));
    let mut words = chunk.chunks_exact(8);
    let found = words.by_ref().any(|word| {
        let w = word
            .first_chunk::<8>()
            .map_or(0, |w| u64::from_le_bytes(*w));
        holds(w)
    });
    let rest = words.remainder();
    if found {
        return true;
    }
    // Four to seven bytes: the first and the last four (overlapping) cover them.
    if let (Some(first), Some(last)) = (rest.first_chunk::<4>(), rest.last_chunk::<4>()) {
        let w = u64::from(u32::from_le_bytes(*first)) << 32 | u64::from(u32::from_le_bytes(*last));
        return holds(w);
    }
    rest.iter().any(|&b| matches!(b, b'}' | b']' | b'\n'))
}

enum SchemaRef<'s> {
    Borrowed(&'s SchemaSet),
    Shared(Arc<SchemaSet>),
}

impl SchemaRef<'_> {
    fn get(&self) -> &SchemaSet {
        match self {
            SchemaRef::Borrowed(s) => s,
            SchemaRef::Shared(s) => s,
        }
    }
}
/// The untyped core: frames the bytes and runs each frame through the pipeline.
struct Core<'s> {
    schema: SchemaRef<'s>,
    options: ParseOptions,
    framer: Framer,
    /// Bytes from absolute offset `base` on.
    buf: Vec<u8>,
    base: usize,
    /// The absolute offset of the next byte to scan.
    pos: usize,
}

impl std::fmt::Debug for Core<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LineDecoder")
            .field("schema", &self.schema.get().name())
            .field("options", &self.options)
            .field("buffered", &self.buf.len())
            .field("position", &self.pos)
            .finish()
    }
}

impl<'s> Core<'s> {
    fn new(schema: SchemaRef<'s>, options: ParseOptions) -> Self {
        let generic = schema.get().generic();
        let generic = resolve(generic, generic);
        let item_is_array = match generic.get("type") {
            Some(Value::String(t)) => t == "array",
            Some(Value::Array(ts)) => ts.iter().any(|t| t == "array"),
            _ => false,
        };
        let has_items_property = generic
            .get("properties")
            .and_then(|p| p.get("items"))
            .is_some();
        let config = FramerConfig {
            top_array_is_wrapper: !item_is_array,
            items_wrapper: !has_items_property,
            max_frame: options.max_frame_bytes,
        };
        Core {
            schema,
            options,
            framer: Framer::new(config),
            buf: Vec::new(),
            base: 0,
            pos: 0,
        }
    }

    /// Feeds a chunk, handing what it decodes to `sink`.
    fn feed_with(&mut self, chunk: &[u8], sink: &mut dyn Sink) {
        if !self.hold(chunk) {
            self.scan_with(sink);
        }
    }

    /// Buffers `chunk`, and says whether its bytes may wait to be scanned: inside a value that can
    /// only close at a bracket, a chunk with no bracket or newline completes nothing, so its bytes
    /// wait for the chunk that might (or for a bounded backlog). Scanning them then is scanning one
    /// larger chunk, which yields the same events. Inlined into [`LineDecoder::feed`]: most small
    /// chunks of a stream end here.
    #[inline]
    fn hold(&mut self, chunk: &[u8]) -> bool {
        self.buf.extend_from_slice(chunk);
        let unscanned = (self.base + self.buf.len()).saturating_sub(self.pos);
        self.framer.awaits_bracket()
            && unscanned < LAZY_BACKLOG.min(self.options.max_frame_bytes)
            && !may_close(chunk)
    }

    /// Scans the buffered bytes, handing what they complete to `sink`.
    fn scan_with(&mut self, sink: &mut dyn Sink) {
        let mut scratch = Vec::new();
        while let Some(event) = self.framer.next(&self.buf, self.base, &mut self.pos) {
            self.emit_all(event, &mut scratch, sink);
        }
        self.compact();
    }

    /// Ends the input, handing what remained to `sink`.
    fn finish_with(&mut self, sink: &mut dyn Sink) {
        // Bytes that waited for a bracket are scanned now: the first byte of a line can still
        // split the open value (a `{` or a fence after a newline), as it does in one whole text.
        let mut scratch = Vec::new();
        while let Some(event) = self.framer.next(&self.buf, self.base, &mut self.pos) {
            self.emit_all(event, &mut scratch, sink);
        }
        let end = self.base + self.buf.len();
        if let Some(event) = self.framer.finish(&self.buf, self.base, end) {
            self.emit_all(event, &mut Vec::new(), sink);
        }
    }

    fn emit_all(&self, event: Event, scratch: &mut Vec<LineEvent<Value>>, sink: &mut dyn Sink) {
        if let Event::Frame(frame) = event {
            let whole = matches!(frame.kind, FrameKind::Value | FrameKind::Element) && frame.closed;
            if whole {
                let text = std::str::from_utf8(self.bytes(frame.start, frame.end));
                if text.is_ok_and(|text| sink.clean(text, frame.line)) {
                    return;
                }
            }
        }
        self.handle(event, scratch);
        for decoded in scratch.drain(..) {
            sink.event(decoded);
        }
    }

    /// Drops the bytes no frame needs any more, when they are at least half the buffer (so each
    /// byte is moved a bounded number of times however the input is chunked).
    fn compact(&mut self) {
        let keep = self.framer.keep_from().unwrap_or(self.pos);
        let drop = keep.saturating_sub(self.base).min(self.buf.len());
        if drop > 0 && drop * 2 >= self.buf.len() {
            self.buf.drain(..drop);
            self.base += drop;
        }
    }

    fn bytes(&self, start: usize, end: usize) -> &[u8] {
        let from = start.saturating_sub(self.base);
        let to = end.saturating_sub(self.base).min(self.buf.len());
        self.buf.get(from..to).unwrap_or_default()
    }

    fn handle(&self, event: Event, out: &mut Vec<LineEvent<Value>>) {
        let frame = match event {
            Event::TooLarge { start, line } => {
                // The first bytes that are buffered however the input was chunked (the framer
                // reports a frame as soon as it holds more than the limit).
                let shown = RAW_PREVIEW.min(self.options.max_frame_bytes);
                let preview = self.bytes(start, start + shown);
                out.push(LineEvent::Skipped(Skipped {
                    line,
                    raw: String::from_utf8_lossy(preview).into_owned(),
                    reason: SkipReason::TooLarge {
                        limit: self.options.max_frame_bytes,
                    },
                }));
                return;
            }
            Event::Frame(frame) => frame,
        };
        let bytes = self.bytes(frame.start, frame.end);
        let skip = |raw: &str, reason| {
            LineEvent::Skipped(Skipped {
                line: frame.line,
                raw: raw.trim_end_matches(['\r', '\n']).to_owned(),
                reason,
            })
        };
        let pipeline = match Pipeline::new(self.schema.get(), self.options) {
            Ok(pipeline) => pipeline,
            Err(e) => {
                let violation = Violation {
                    path: String::new(),
                    message: format!("the schema cannot be used for validation: {e}"),
                };
                let raw = String::from_utf8_lossy(bytes);
                out.push(skip(&raw, SkipReason::Schema(vec![violation])));
                return;
            }
        };
        let (text, utf8_fix) = match decode(bytes, frame, self.options.strict) {
            Ok(decoded) => decoded,
            Err(reason) => {
                out.push(skip(&String::from_utf8_lossy(bytes), reason));
                return;
            }
        };
        let item = |accepted: Accepted| {
            let mut fixes: Vec<Fix> = utf8_fix.iter().cloned().collect();
            fixes.extend(accepted.fixes);
            LineEvent::Item(Item {
                value: accepted.value,
                line: frame.line,
                fixes,
            })
        };
        match frame.kind {
            FrameKind::Value | FrameKind::Element => {
                // A value the framer saw unclosed before a new one began on the next line may
                // be one the lenient parser closes without salvage (a stray quote: `{"a": 1"}`).
                let result = if frame.closed || self.options.salvage || !frame.at_end {
                    pipeline.frame(&text, frame.start)
                } else {
                    Err(Rejection::Truncated { offset: frame.end })
                };
                out.push(match result {
                    Ok(accepted) => item(accepted),
                    Err(_) if !frame.closed && !frame.at_end => skip(
                        &text,
                        SkipReason::Syntax(
                            "this value is not closed before a new one starts on the next line"
                                .into(),
                        ),
                    ),
                    Err(Rejection::Syntax { .. }) if !frame.closed => {
                        skip(&text, SkipReason::Truncated)
                    }
                    Err(rejection) => skip(&text, rejection.into_reason()),
                });
            }
            FrameKind::Line => line_items(&pipeline, frame, &text, &item, &skip, out),
        }
    }
}

/// The items of a line of prose (a frame of [`FrameKind::Line`]): a scalar the whole line, or the
/// values the envelope finds in it, each through the pipeline; the line is skipped, with the most
/// telling reason, when none passes. `item` and `skip` make the events of the frame.
fn line_items(
    pipeline: &Pipeline<'_>,
    frame: Frame,
    text: &str,
    item: &impl Fn(Accepted) -> LineEvent<Value>,
    skip: &impl Fn(&str, SkipReason) -> LineEvent<Value>,
    out: &mut Vec<LineEvent<Value>>,
) {
    let line = text.trim_end_matches(['\r', ' ', '\t', '\0']);
    if !pipeline.wants_container() {
        let trimmed = line.trim_start();
        let at = frame.start + (line.len() - trimmed.len());
        out.push(match pipeline.frame(trimmed, at) {
            Ok(accepted) => item(accepted),
            Err(Rejection::Syntax { .. }) => skip(line, SkipReason::NotJson),
            Err(rejection) => skip(line, rejection.into_reason()),
        });
        return;
    }
    let mut failed = Rejections::default();
    let mut any = false;
    let candidates = envelope::candidates(line, 0);
    pipeline.each_candidate(line, candidates, frame.start, |read| match read.result {
        Ok(mut accepted) => {
            let (start, end) = read.span;
            accepted
                .fixes
                .insert(0, Fix::extracted(frame.start + start, frame.start + end));
            out.push(item(accepted));
            any = true;
        }
        Err(rejection) => failed.add(line, read.span, rejection),
    });
    if !any {
        let reason = match failed.best() {
            // An unclosed bracket in a line of prose is prose, unless the answer
            // ends there.
            Rejection::Truncated { .. } if !frame.at_end => SkipReason::NotJson,
            rejection => rejection.into_reason(),
        };
        out.push(skip(line, reason));
    }
}

/// The frame's text: invalid UTF-8 is replaced (and recorded) unless strict; a character cut by the
/// end of the input is dropped with the rest of the cut value.
fn decode(
    bytes: &[u8],
    frame: Frame,
    strict: bool,
) -> Result<(Cow<'_, str>, Option<Fix>), SkipReason> {
    match std::str::from_utf8(bytes) {
        Ok(text) => Ok((Cow::Borrowed(text), None)),
        Err(e) if e.error_len().is_none() && frame.at_end => {
            let valid = bytes.get(..e.valid_up_to()).unwrap_or_default();
            Ok((
                Cow::Borrowed(std::str::from_utf8(valid).unwrap_or_default()),
                None,
            ))
        }
        Err(e) if strict => Err(SkipReason::Syntax(format!(
            "invalid UTF-8 at byte {}",
            frame.start + e.valid_up_to()
        ))),
        Err(e) => Ok((
            String::from_utf8_lossy(bytes),
            Some(Fix::new(
                FixKind::InvalidUtf8,
                frame.start + e.valid_up_to(),
                "replaced invalid UTF-8 with U+FFFD",
            )),
        )),
    }
}

/// One event of the incremental decoder: an item, or a frame that produced none.
#[derive(Debug, Clone)]
pub enum LineEvent<T> {
    /// A complete, valid item.
    Item(Item<T>),
    /// A frame that produced no item.
    Skipped(Skipped),
}

/// A decoded, validated item.
///
/// A typed item carries no `serde_json::Value`: a clean line goes from its text straight to `T`.
/// For the validated JSON of each item, decode into `Value` ([`LineDecoder::with_schema`]).
#[derive(Debug, Clone)]
pub struct Item<T> {
    /// The value: a `T`, or the validated JSON (after fixes) for a runtime schema.
    pub value: T,
    /// 1-based line where the item starts.
    pub line: usize,
    /// Fixes made to this item.
    pub fixes: Vec<Fix>,
}

/// Reads a clean frame straight from its text to `T`, checking it against the plan as it reads.
type ReadClean<T> = fn(&str, &'static Plan) -> Option<T>;

/// How a decoder turns frames into `T`: the one typed path of the parse layer.
pub(crate) struct Reader<T> {
    /// Clean frames straight from their text to `T`, checked against the schema's plan as they are
    /// read (`None`: every frame goes through the pipeline).
    clean: Option<(&'static Plan, ReadClean<T>)>,
    /// The pipeline's validated JSON as a `T`, or the item skipped with serde's path and message.
    from_json: fn(Value, usize) -> Result<T, Skipped>,
}

impl<T> Reader<T> {
    /// The plan clean frames go through, if any.
    pub(crate) fn plan(&self) -> Option<&'static Plan> {
        self.clean.map(|(plan, _)| plan)
    }
}

impl<T> Clone for Reader<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for Reader<T> {}

impl<T: Schema> Reader<T> {
    /// `T` of a derived (or hand-written) [`Schema`]: clean frames through its plan when the
    /// options ask for validation.
    pub(crate) fn typed(options: &ParseOptions) -> Self {
        let plan = if options.validate {
            T::schema().plan()
        } else {
            None
        };
        Reader {
            clean: plan.map(|plan| {
                let read: ReadClean<T> = |text, plan| typed::read::<T>(text, Some(plan));
                (plan, read)
            }),
            from_json: |json, line| deserialize::typed_item::<T>(&json, line),
        }
    }
}

impl Reader<Value> {
    /// The validated JSON itself.
    fn json() -> Self {
        Reader {
            clean: None,
            from_json: |json, _| Ok(json),
        }
    }
}

/// An item together with the validated JSON it came from: what the extraction loop decodes, as it
/// needs the JSON to drop duplicates, to see a model looping and to quote kept items back.
#[derive(Debug, Clone)]
pub(crate) struct WithJson<T> {
    /// The item.
    pub(crate) value: T,
    /// Its validated JSON.
    pub(crate) json: Value,
}

impl<T: DeserializeOwned> Reader<WithJson<T>> {
    /// `T` and its JSON, both from the pipeline (never the clean shortcut, which builds no JSON).
    pub(crate) fn with_json() -> Self {
        Reader {
            clean: None,
            from_json: |json, line| {
                deserialize::typed_item::<T>(&json, line).map(|value| WithJson { value, json })
            },
        }
    }
}

/// Collects the core's output as events of `T`.
struct Items<T> {
    reader: Reader<T>,
    events: Vec<LineEvent<T>>,
}

impl<T> Items<T> {
    fn new(reader: Reader<T>) -> Self {
        Items {
            reader,
            events: Vec::new(),
        }
    }
}

impl<T> Sink for Items<T> {
    fn clean(&mut self, text: &str, line: usize) -> bool {
        let Some(value) = self.reader.clean.and_then(|(plan, read)| read(text, plan)) else {
            return false;
        };
        self.events.push(LineEvent::Item(Item {
            value,
            line,
            fixes: Vec::new(),
        }));
        true
    }

    fn event(&mut self, event: LineEvent<Value>) {
        self.events.push(match event {
            LineEvent::Skipped(skipped) => LineEvent::Skipped(skipped),
            LineEvent::Item(item) => match (self.reader.from_json)(item.value, item.line) {
                Ok(value) => LineEvent::Item(Item {
                    value,
                    line: item.line,
                    fixes: item.fixes,
                }),
                Err(skipped) => LineEvent::Skipped(skipped),
            },
        });
    }
}

/// Incremental decoder of many values of `T`: feed bytes as they arrive, get items as they complete.
///
/// `T` is a type implementing [`Schema`] ([`LineDecoder::new`]), or `serde_json::Value` validated
/// against a schema given at run time ([`LineDecoder::with_schema`], [`LineDecoder::shared`]); both
/// yield the same items for the same bytes, however those are chunked.
///
/// ```
/// use llm_extract::{Schema, parse::LineDecoder, schema::SchemaSet};
/// use llm_extract::parse::LineEvent;
/// use serde_json::json;
/// use std::sync::OnceLock;
///
/// #[derive(serde::Deserialize)]
/// struct A { a: i32 }
/// impl Schema for A {
///     fn schema() -> &'static SchemaSet {
///         static S: OnceLock<SchemaSet> = OnceLock::new();
///         S.get_or_init(|| SchemaSet::new("A", json!({"type": "object",
///             "properties": {"a": {"type": "integer"}}, "required": ["a"], "additionalProperties": false})))
///     }
/// }
///
/// let mut decoder = LineDecoder::<A>::new();
/// let mut values = Vec::new();
/// for chunk in [&b"{\"a\":1}\n{\"a"[..], b"\":2}\n{\"a\":"] {
///     for event in decoder.feed(chunk) {
///         if let LineEvent::Item(item) = event { values.push(item.value.a) }
///     }
/// }
/// let rest = decoder.finish(); // the cut-off third line
/// assert_eq!(values, [1, 2]);
/// assert!(matches!(rest[..], [LineEvent::Skipped(_)]));
/// ```
///
/// Against a runtime schema, the items are its validated JSON:
///
/// ```
/// use llm_extract::parse::{LineEvent, ParseOptions};
/// use llm_extract::{parse::LineDecoder, schema::SchemaSet};
/// use serde_json::json;
///
/// let schema = SchemaSet::new("A", json!({"type": "object", "properties": {"a": {"type": "integer"}},
///     "required": ["a"], "additionalProperties": false}));
/// let mut decoder = LineDecoder::with_schema(&schema, ParseOptions::default());
/// let mut events = decoder.feed(b"{\"a\":1}\n{\"a\"");
/// events.extend(decoder.feed(b":2}\n"));
/// events.extend(decoder.finish());
/// let items: Vec<_> = events.into_iter().filter_map(|e| match e {
///     LineEvent::Item(item) => Some(item.value),
///     LineEvent::Skipped(_) => None,
/// }).collect();
/// assert_eq!(items, [json!({"a": 1}), json!({"a": 2})]);
/// ```
pub struct LineDecoder<'s, T> {
    core: Core<'s>,
    reader: Reader<T>,
}

impl<T> std::fmt::Debug for LineDecoder<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.core.fmt(f)
    }
}

impl<T: Schema> Default for LineDecoder<'static, T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Schema> LineDecoder<'static, T> {
    /// A decoder of `T` with default options.
    pub fn new() -> Self {
        Self::with_options(ParseOptions::default())
    }

    /// A decoder of `T` with `options`.
    pub fn with_options(options: ParseOptions) -> Self {
        LineDecoder::with_reader(
            SchemaRef::Borrowed(T::schema()),
            options,
            Reader::typed(&options),
        )
    }
}

impl<'s> LineDecoder<'s, Value> {
    /// A decoder of validated JSON against a borrowed runtime schema.
    pub fn with_schema(schema: &'s SchemaSet, options: ParseOptions) -> Self {
        LineDecoder::with_reader(SchemaRef::Borrowed(schema), options, Reader::json())
    }
}

impl LineDecoder<'static, Value> {
    /// A decoder of validated JSON that shares ownership of its runtime schema.
    pub fn shared(schema: Arc<SchemaSet>, options: ParseOptions) -> Self {
        LineDecoder::with_reader(SchemaRef::Shared(schema), options, Reader::json())
    }
}

impl<'s, T: DeserializeOwned> LineDecoder<'s, WithJson<T>> {
    /// A decoder of `T` with the validated JSON of each item, against a borrowed schema.
    pub(crate) fn with_json(schema: &'s SchemaSet, options: ParseOptions) -> Self {
        LineDecoder::with_reader(SchemaRef::Borrowed(schema), options, Reader::with_json())
    }
}

impl<'s, T> LineDecoder<'s, T> {
    /// A decoder reading items with `reader`.
    fn with_reader(schema: SchemaRef<'s>, options: ParseOptions, reader: Reader<T>) -> Self {
        LineDecoder {
            core: Core::new(schema, options),
            reader,
        }
    }

    /// Feeds a chunk (which may end anywhere, even inside a UTF-8 character); returns what it completed.
    #[inline]
    pub fn feed(&mut self, chunk: &[u8]) -> Vec<LineEvent<T>> {
        if self.core.hold(chunk) {
            return Vec::new();
        }
        let mut sink = Items::new(self.reader);
        self.core.scan_with(&mut sink);
        sink.events
    }

    /// Ends the input; returns what remained (a cut-off last item is reported as truncated).
    pub fn finish(mut self) -> Vec<LineEvent<T>> {
        let mut sink = Items::new(self.reader);
        self.core.finish_with(&mut sink);
        sink.events
    }

    /// Everything the decoder yields for the whole input `bytes`.
    pub(crate) fn decode_all(mut self, bytes: &[u8]) -> Vec<LineEvent<T>> {
        let mut sink = Items::new(self.reader);
        self.core.feed_with(bytes, &mut sink);
        self.core.finish_with(&mut sink);
        sink.events
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> SchemaSet {
        SchemaSet::new(
            "A",
            json!({"type": "object", "properties": {"a": {"type": "integer"}},
                   "required": ["a"], "additionalProperties": false}),
        )
    }

    #[test]
    fn memory_stays_bounded_on_a_huge_frame() {
        let schema = schema();
        let limit = 64 * 1024;
        let options = ParseOptions::default().with_max_frame_bytes(limit);
        let mut decoder = LineDecoder::with_schema(&schema, options);
        let chunk = vec![b'x'; 4096];
        let mut events = decoder.feed(b"{\"a\":1}\n{\"a\":\"");
        for _ in 0..1000 {
            events.extend(decoder.feed(&chunk));
            assert!(
                decoder.core.buf.len() <= limit + 2 * chunk.len(),
                "{}",
                decoder.core.buf.len()
            );
        }
        events.extend(decoder.feed(b"\"}\n{\"a\":2}\n"));
        assert!(decoder.core.buf.len() < 64, "{}", decoder.core.buf.len());
        let lines: Vec<usize> = events
            .iter()
            .map(|e| match e {
                LineEvent::Item(i) => i.line,
                LineEvent::Skipped(s) => {
                    assert_eq!(s.reason, SkipReason::TooLarge { limit });
                    assert!(s.raw.len() <= RAW_PREVIEW);
                    s.line
                }
            })
            .collect();
        assert_eq!(lines, [1, 2, 3]);
    }

    #[test]
    fn may_close_finds_a_bracket_or_newline_anywhere() {
        let plain = b"abcdefghijklmnopqrstuvwxyz \"{[,:0123456789".to_vec();
        for len in 0..plain.len() {
            assert!(!may_close(&plain[..len]));
            for at in 0..len {
                for b in [b'}', b']', b'\n'] {
                    let mut chunk = plain[..len].to_vec();
                    chunk[at] = b;
                    assert!(may_close(&chunk), "{len} {at} {b}");
                }
            }
        }
        // No other byte, one bit away from `}` or `]` or not, in any place of any length.
        for other in (0..=255u8).filter(|b| !matches!(b, b'}' | b']' | b'\n')) {
            for len in 0..20 {
                assert!(!may_close(&vec![other; len]), "{other} x {len}");
            }
        }
    }

    /// Bytes may wait to be scanned, but never past the chunk that closes an item: fed one byte
    /// at a time, each item comes out of the feed of its closing brace.
    #[test]
    fn each_item_comes_out_of_the_chunk_that_closes_it() {
        let schema = schema();
        let text = b"{\"a\": 1}\n{\"a\":\n 2}{\"a\": [\"}\"]}\n";
        let mut decoder = LineDecoder::with_schema(&schema, ParseOptions::default());
        let mut yielded_at = Vec::new();
        for (at, byte) in text.iter().enumerate() {
            for event in decoder.feed(std::slice::from_ref(byte)) {
                yielded_at.push((at, matches!(event, LineEvent::Item(_))));
            }
        }
        assert!(decoder.finish().is_empty());
        let closes: Vec<usize> = text
            .iter()
            .enumerate()
            .filter(|&(at, &b)| b == b'}' && text.get(at + 1) != Some(&b'"'))
            .map(|(at, _)| at)
            .collect();
        assert_eq!(closes.len(), 3);
        assert_eq!(
            yielded_at,
            [(closes[0], true), (closes[1], true), (closes[2], false)]
        );
    }

    /// A value with no closing bracket in sight is still scanned once its backlog reaches the
    /// frame limit, so a frame too large is reported while the stream goes on.
    #[test]
    fn a_frame_too_large_is_reported_before_it_ends() {
        let schema = schema();
        let options = ParseOptions::default().with_max_frame_bytes(100);
        let mut decoder = LineDecoder::with_schema(&schema, options);
        let mut events = decoder.feed(b"{\"a\": \"");
        for _ in 0..300 {
            events.extend(decoder.feed(b"x"));
        }
        assert!(
            matches!(
                events.as_slice(),
                [LineEvent::Skipped(Skipped {
                    reason: SkipReason::TooLarge { limit: 100 },
                    ..
                })]
            ),
            "{events:?}"
        );
        assert!(decoder.core.buf.len() <= 200, "{}", decoder.core.buf.len());
    }

    #[test]
    fn consumed_bytes_are_dropped_as_items_complete() {
        let schema = schema();
        let mut decoder = LineDecoder::with_schema(&schema, ParseOptions::default());
        let line = b"{\"a\":1}\n";
        for _ in 0..10_000 {
            for byte in line.chunks(3) {
                decoder.feed(byte);
            }
        }
        assert!(
            decoder.core.buf.len() <= 2 * line.len(),
            "{}",
            decoder.core.buf.len()
        );
        assert_eq!(
            decoder.core.base,
            10_000 * line.len() - decoder.core.buf.len()
        );
    }

    #[test]
    fn a_schema_that_does_not_compile_skips_with_a_reason() {
        let broken = SchemaSet::new("B", json!({"type": 12}));
        let mut decoder = LineDecoder::with_schema(&broken, ParseOptions::default());
        let events = decoder.feed(b"{\"a\":1}\n");
        assert!(
            matches!(&events[..], [LineEvent::Skipped(Skipped { reason: SkipReason::Schema(v), .. })]
            if v[0].message.contains("schema"))
        );
    }
}
