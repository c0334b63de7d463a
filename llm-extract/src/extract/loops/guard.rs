//! [`LoopGuard`]: when a streamed answer counts as a loop, the thresholds every detector of this folder
//! reads (the byte runs and periods of [`LoopDetector`](super::LoopDetector), the items and elements of
//! [`ItemWindow`](super::ItemWindow), the longest string value), and their defaults.

/// When a streamed answer counts as a loop. [`LoopGuard::off`] turns every check off. What the next
/// attempt changes after a loop is the extraction loop's concern:
/// [`Extractor::recovery`](crate::extract::Extractor::recovery).
///
/// ```
/// use llm_extract::extract::LoopGuard;
///
/// let guard = LoopGuard::default().max_run(48).item_copies(3);
/// assert!(guard.is_on());
/// assert!(!LoopGuard::off().is_on());
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct LoopGuard {
    /// One byte repeated more than this many times in a row inside a string or a number is a loop
    /// (default 32; 0 turns the check off).
    pub max_run: usize,
    /// The longest period (in bytes) of a repeated substring that is checked (default 64; 0 turns the
    /// check off). Work per byte is proportional to it.
    pub max_period: usize,
    /// How many times a substring must occur back to back (default 3)...
    pub min_times: usize,
    /// ...and over how many bytes at least (default 40), to be a loop.
    pub min_span: usize,
    /// Whitespace between tokens longer than this many bytes is a loop (default 48; 0 turns the check
    /// off).
    pub max_whitespace: usize,
    /// A string value more than this many characters longer than the input is a loop (default
    /// `Some(0)`: no value restates more than the whole input; measured on the evaluation set in
    /// BENCHMARKS.md; `None` turns the check off). The extraction knows the input, so it sets the bound
    /// ([`LoopGuard::max_string`]); the bound is never below the largest `maxLength` of the schema, so a
    /// string the schema bounds is only stopped by its grammar, nor below [`LoopGuard::min_string`].
    pub string_margin: Option<usize>,
    /// The string bound is never below this many characters (default 32), so a value may be longer
    /// than a very short input (a name asked of a one-word note).
    pub min_string: usize,
    /// How many of the last completed items a new item is compared with (default 16).
    pub item_window: usize,
    /// This many items in a row that each copy one in the window are a loop (default 2: `A, A, A` or
    /// `A, B, A, B`; 0 turns the check off). An item is a copy only past the number of times the
    /// input holds it, when the extraction gives the input ([`ItemWindow::offer_held`](super::ItemWindow::offer_held)).
    pub item_copies: usize,
    /// An element of an array or a member value of an object (at any depth of one answer) counts for
    /// [`LoopGuard::element_copies`] only when its canonical JSON has at least this many bytes
    /// (default 16), so short values repeated on purpose (`[1, 1, 2]`, `["yes", "yes"]`) are no loop.
    pub min_element: usize,
    /// This many elements in a row that each equal one of the last [`LoopGuard::item_window`] elements
    /// of the same array (or member values of the same object) are a loop (default 3: the same element
    /// four times, or `A, B, A, B, A`; 0 turns the check off). As for items, an element is a copy
    /// only past the number of times the input holds it ([`LoopDetector::input_text`](super::LoopDetector::input_text)).
    pub element_copies: usize,
    /// What the deprecated [`LoopGuard::recovery`] set: penalty, temperature, seed.
    legacy_recovery: Option<(f32, f32, u64)>,
}

impl Default for LoopGuard {
    fn default() -> Self {
        LoopGuard {
            max_run: 32,
            max_period: 64,
            min_times: 3,
            min_span: 40,
            max_whitespace: 48,
            string_margin: Some(0),
            min_string: 32,
            item_window: 16,
            item_copies: 2,
            min_element: 16,
            element_copies: 3,
            legacy_recovery: None,
        }
    }
}

impl LoopGuard {
    /// Every check off: answers run to the token limit.
    pub fn off() -> Self {
        LoopGuard {
            max_run: 0,
            max_period: 0,
            max_whitespace: 0,
            string_margin: None,
            item_copies: 0,
            element_copies: 0,
            ..LoopGuard::default()
        }
    }

    /// Whether any check is on.
    pub fn is_on(&self) -> bool {
        self.bytes_on()
            || self.string_margin.is_some()
            || self.item_copies > 0
            || self.element_copies > 0
    }

    pub(super) fn bytes_on(&self) -> bool {
        self.max_run > 0 || self.max_period > 0 || self.max_whitespace > 0
    }

    /// Sets [`LoopGuard::max_run`].
    pub fn max_run(mut self, bytes: usize) -> Self {
        self.max_run = bytes;
        self
    }

    /// Sets [`LoopGuard::max_period`], [`LoopGuard::min_times`] and [`LoopGuard::min_span`].
    pub fn period(mut self, max_period: usize, min_times: usize, min_span: usize) -> Self {
        self.max_period = max_period;
        self.min_times = min_times;
        self.min_span = min_span;
        self
    }

    /// Sets [`LoopGuard::max_whitespace`].
    pub fn max_whitespace(mut self, bytes: usize) -> Self {
        self.max_whitespace = bytes;
        self
    }

    /// Sets [`LoopGuard::string_margin`].
    pub fn string_margin(mut self, chars: Option<usize>) -> Self {
        self.string_margin = chars;
        self
    }

    /// The longest string value (in characters) of an answer to an input of `input_chars` characters
    /// whose schema's largest `maxLength` is `max_length`: the input plus
    /// [`LoopGuard::string_margin`], at least `max_length` and [`LoopGuard::min_string`]. `None` when
    /// the check is off.
    ///
    /// ```
    /// use llm_extract::extract::LoopGuard;
    ///
    /// assert_eq!(LoopGuard::default().max_string(100, None), Some(100));
    /// assert_eq!(LoopGuard::default().max_string(100, Some(500)), Some(500));
    /// assert_eq!(LoopGuard::default().max_string(1, None), Some(32));
    /// assert_eq!(LoopGuard::off().max_string(100, None), None);
    /// ```
    pub fn max_string(&self, input_chars: usize, max_length: Option<usize>) -> Option<usize> {
        let bound = input_chars.saturating_add(self.string_margin?);
        Some(bound.max(max_length.unwrap_or(0)).max(self.min_string))
    }

    /// Sets [`LoopGuard::min_string`].
    pub fn min_string(mut self, chars: usize) -> Self {
        self.min_string = chars;
        self
    }

    /// Sets [`LoopGuard::item_window`].
    pub fn item_window(mut self, items: usize) -> Self {
        self.item_window = items;
        self
    }

    /// Sets [`LoopGuard::item_copies`].
    pub fn item_copies(mut self, copies: usize) -> Self {
        self.item_copies = copies;
        self
    }

    /// Sets [`LoopGuard::min_element`] and [`LoopGuard::element_copies`].
    ///
    /// ```
    /// use llm_extract::extract::LoopGuard;
    ///
    /// let guard = LoopGuard::default().elements(32, 5);
    /// assert_eq!((guard.min_element, guard.element_copies), (32, 5));
    /// ```
    pub fn elements(mut self, min_bytes: usize, copies: usize) -> Self {
        self.min_element = min_bytes;
        self.element_copies = copies;
        self
    }

    /// Sets what the attempt after a loop changes: the repeat penalty, then also the temperature (with
    /// `seed` when the caller set none). [`Extractor::loop_guard`](crate::extract::Extractor::loop_guard)
    /// carries them over to the extractor's recovery settings.
    #[deprecated(
        since = "0.1.0",
        note = "the recovery settings belong to the extraction loop: use \
                `Extractor::recovery(llm_extract::extract::Recovery)`"
    )]
    pub fn recovery(mut self, penalty: f32, temperature: f32, seed: u64) -> Self {
        self.legacy_recovery = Some((penalty, temperature, seed));
        self
    }

    /// The recovery settings given to the deprecated [`LoopGuard::recovery`], if any.
    pub(crate) fn recovery_settings(&self) -> Option<(f32, f32, u64)> {
        self.legacy_recovery
    }
}
