//! The elements of the arrays and objects of one answer, at any depth, as they stream: each container
//! offers its children (an array's elements, an object's member values) to its own [`ItemWindow`], so
//! the same element written again and again inside one value is seen as the items of a list are.
//!
//! Each child is known by a hash of its canonical text (whitespace between tokens left out; a nested
//! container counts as the hash of its own text), built as its bytes arrive: every byte is hashed once,
//! and a container that closes hands one hash to its parent, so the work is linear in the answer and
//! the state is one frame per open container.
//!
//! A child that repeats a recent one is a copy only past the number of times the input text holds it
//! ([`Occurrences::value_in_text`], by its leaves): each child's leaves (strings and scalars, a nested
//! container's handed up when it closes) are collected as they stream, a bounded number of bounded
//! size, and looked up in the text only when the child repeats a recent one.

use super::guard::LoopGuard;
use super::occurrences::{Occurrences, MAX_LEAF_BYTES, MAX_LEAVES};
use super::window::{ItemVerdict, ItemWindow};
use crate::report::{Loop, LoopKind};
use crate::stable_hash::StableHasher;

/// The longest key kept for the path of a loop (longer keys are cut).
const MAX_KEY: usize = 256;

/// One open array or object.
#[derive(Debug, Clone)]
struct Frame {
    array: bool,
    /// The current child: its hash and canonical length in bytes.
    child: StableHasher,
    child_len: usize,
    /// The whole container so far: its hash and canonical length.
    whole: StableHasher,
    whole_len: usize,
    /// Objects: the next string is a key (after `{` or `,`, until `:`).
    at_key: bool,
    /// Objects: the current member's key (as written, cut at [`MAX_KEY`] bytes); arrays: unused.
    key: Vec<u8>,
    /// Arrays: the current element's index.
    index: usize,
    /// The end of the last child that did not repeat a recent one (where a loop starts).
    last_new_end: usize,
    window: ItemWindow,
    /// The current child's leaves, and the whole container's (handed to its parent), at most
    /// [`MAX_LEAVES`] each.
    leaves: Vec<String>,
    all_leaves: Vec<String>,
}

impl Frame {
    fn new(array: bool, guard: LoopGuard, opened_at: usize) -> Self {
        Frame {
            array,
            child: StableHasher::new(),
            child_len: 0,
            whole: StableHasher::new(),
            whole_len: 0,
            at_key: !array,
            key: Vec::new(),
            index: 0,
            last_new_end: opened_at + 1,
            // The window of items, held to the elements' limit.
            window: ItemWindow::new(guard.item_copies(guard.element_copies)),
            leaves: Vec::new(),
            all_leaves: Vec::new(),
        }
    }

    fn push(&mut self, byte: u8) {
        if self.at_key {
            // A key belongs to the container, not to the member value.
            self.whole.byte(byte);
            self.whole_len += 1;
            if byte != b'"' && self.key.len() < MAX_KEY {
                self.key.push(byte);
            }
        } else {
            self.child.byte(byte);
            self.child_len += 1;
        }
    }
}

/// Adds `more` to `leaves`, up to [`MAX_LEAVES`].
fn add_leaves(leaves: &mut Vec<String>, more: impl IntoIterator<Item = String>) {
    let room = MAX_LEAVES.saturating_sub(leaves.len());
    leaves.extend(more.into_iter().take(room));
}

/// The containers open at the current byte of an answer, innermost last.
#[derive(Debug, Clone)]
pub(super) struct Elements {
    guard: LoopGuard,
    frames: Vec<Frame>,
    /// The leaf being read (a string's bytes as written, without its quotes, or a scalar's), at most
    /// [`MAX_LEAF_BYTES`]; `None` between leaves.
    leaf: Option<Vec<u8>>,
    /// Whether the leaf being read is a string.
    leaf_string: bool,
    /// The input text, to tell real repeats from copies.
    count: Occurrences,
}

impl Elements {
    pub(super) fn new(guard: LoopGuard) -> Self {
        Elements {
            guard,
            frames: Vec::new(),
            leaf: None,
            leaf_string: false,
            count: Occurrences::default(),
        }
    }

    /// Judges repeats against the text `count` counts in.
    pub(super) fn set_count(&mut self, count: Occurrences) {
        self.count = count;
    }

    /// Starts a leaf at the current byte (a member value or an element, never a key).
    fn open_leaf(&mut self, string: bool) {
        if self.frames.last().is_some_and(|f| !f.at_key) {
            self.leaf = Some(Vec::new());
            self.leaf_string = string;
        }
    }

    /// Ends the leaf being read, if any: it joins the current child's leaves.
    fn close_leaf(&mut self) {
        let Some(bytes) = self.leaf.take() else {
            return;
        };
        let text = if self.leaf_string && bytes.contains(&b'\\') {
            let mut quoted = Vec::with_capacity(bytes.len() + 2);
            quoted.push(b'"');
            quoted.extend_from_slice(&bytes);
            quoted.push(b'"');
            serde_json::from_slice::<String>(&quoted).ok()
        } else {
            None
        };
        let text = text.unwrap_or_else(|| match std::str::from_utf8(&bytes) {
            Ok(text) => text.to_owned(),
            // Cut inside a character at the bound: up to it.
            Err(err) => String::from_utf8_lossy(&bytes[..err.valid_up_to()]).into_owned(),
        });
        if let Some(frame) = self.frames.last_mut() {
            add_leaves(&mut frame.leaves, [text]);
        }
    }

    fn leaf_byte(&mut self, byte: u8) {
        if let Some(leaf) = self.leaf.as_mut().filter(|l| l.len() < MAX_LEAF_BYTES) {
            leaf.push(byte);
        }
    }

    /// Whether the check is on.
    pub(super) fn is_on(&self) -> bool {
        self.guard.element_copies > 0
    }

    /// Takes the byte at offset `at`; `(was, now)` say whether the lexer was in a string before it
    /// and is after it (a string's quotes are part of it). Returns a loop when a child completed by
    /// this byte is one copy too many.
    pub(super) fn step(&mut self, byte: u8, at: usize, (was, now): (bool, bool)) -> Option<Loop> {
        if was || now {
            if let Some(frame) = self.frames.last_mut() {
                frame.push(byte);
            }
            match (was, now) {
                (false, _) => {
                    self.close_leaf();
                    self.open_leaf(true);
                }
                (true, true) => self.leaf_byte(byte),
                (true, false) => self.close_leaf(),
            }
            return None;
        }
        if !matches!(byte, b'[' | b'{' | b']' | b'}' | b',' | b':') && !byte.is_ascii_whitespace() {
            // A number or a literal.
            if self.leaf.is_none() {
                self.open_leaf(false);
            }
            self.leaf_byte(byte);
        } else {
            self.close_leaf();
        }
        match byte {
            b'[' | b'{' => {
                self.frames.push(Frame::new(byte == b'[', self.guard, at));
                None
            }
            b']' | b'}' => {
                let found = self.child_done(at);
                if let Some(closed) = self.frames.pop() {
                    if let Some(parent) = self.frames.last_mut() {
                        parent
                            .child
                            .write_u64(closed.whole.finish() ^ u64::from(closed.array));
                        parent.child_len += closed.whole_len + 2;
                        add_leaves(&mut parent.leaves, closed.all_leaves);
                    }
                }
                found
            }
            b',' => {
                let found = self.child_done(at);
                if let Some(frame) = self.frames.last_mut() {
                    frame.index += 1;
                    if !frame.array {
                        frame.at_key = true;
                        frame.key.clear();
                    }
                }
                found
            }
            b':' => {
                if let Some(frame) = self.frames.last_mut().filter(|f| !f.array) {
                    frame.at_key = false;
                }
                None
            }
            byte if byte.is_ascii_whitespace() => None,
            byte => {
                if let Some(frame) = self.frames.last_mut() {
                    frame.push(byte);
                }
                None
            }
        }
    }

    /// The innermost container's current child ends at `at` (a `,` or the closing bracket): it goes
    /// into the container's hash, and one of at least [`LoopGuard::min_element`] bytes to its window.
    fn child_done(&mut self, at: usize) -> Option<Loop> {
        let min = self.guard.min_element.max(1);
        let on = self.is_on();
        let count = &mut self.count;
        let frame = self.frames.last_mut()?;
        let (hash, len) = (frame.child.finish(), frame.child_len);
        frame.child = StableHasher::new();
        frame.child_len = 0;
        let leaves = std::mem::take(&mut frame.leaves);
        if len == 0 {
            return None;
        }
        frame.whole.write_u64(hash);
        frame.whole_len += len + 1;
        if len < min || !on {
            add_leaves(&mut frame.all_leaves, leaves);
            return None;
        }
        let verdict = frame
            .window
            .offer_held(hash, || count.value_in_text(&leaves));
        add_leaves(&mut frame.all_leaves, leaves);
        match verdict {
            ItemVerdict::New => {
                frame.last_new_end = at;
                None
            }
            ItemVerdict::Copy => None,
            ItemVerdict::Loop => {
                let start = frame.last_new_end;
                Some(Loop {
                    kind: LoopKind::Elements,
                    start,
                    detected_at: at + 1,
                    path: Some(self.path()),
                })
            }
        }
    }

    /// The JSON pointer of the innermost container: the key or index each enclosing one is at.
    fn path(&self) -> String {
        let mut path = String::new();
        let enclosing = self.frames.len().saturating_sub(1);
        for frame in self.frames.iter().take(enclosing) {
            path.push('/');
            if frame.array {
                path.push_str(&frame.index.to_string());
            } else {
                let key = String::from_utf8_lossy(&frame.key);
                path.push_str(&key.replace('~', "~0").replace('/', "~1"));
            }
        }
        path
    }
}
