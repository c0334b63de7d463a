//! [`ItemWindow`]: the item-level detector, a window over the hashes of the items a list (or the
//! elements an array) has completed; an item equal to a recent one is a copy, and
//! [`LoopGuard::item_copies`] copies in a row a loop, past the times the input text holds it.

use super::guard::LoopGuard;
use std::collections::{HashMap, VecDeque};

/// What [`ItemWindow::offer`] decided about one completed item.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ItemVerdict {
    /// Not among the recent items: the items held back so far were legitimate.
    New,
    /// A copy of a recent item: hold it back until the next new item shows whether it was a loop.
    Copy,
    /// [`LoopGuard::item_copies`] copies in a row: a loop.
    Loop,
}

/// The item-level detector: offer it a hash of each completed item's canonical text.
#[derive(Debug, Clone)]
pub struct ItemWindow {
    guard: LoopGuard,
    recent: VecDeque<u64>,
    copies: usize,
    /// How many times each item was offered.
    offered: HashMap<u64, usize>,
}

impl ItemWindow {
    /// A window with these settings.
    pub fn new(guard: LoopGuard) -> Self {
        ItemWindow {
            guard,
            recent: VecDeque::with_capacity(guard.item_window.min(1024)),
            copies: 0,
            offered: HashMap::new(),
        }
    }

    /// Offers the next completed item, with no text to hold it: every repeat is a copy.
    pub fn offer(&mut self, hash: u64) -> ItemVerdict {
        self.offer_held(hash, || 0)
    }

    /// Offers the next completed item, which the input text holds `in_text()` times (asked only when
    /// the item repeats a recent one, see [`Occurrences::value_in_text`](super::Occurrences::value_in_text)): the item's first `in_text`
    /// appearances are real data, new items; only an appearance past them is a copy, so a run the
    /// text does not hold is still a loop.
    ///
    /// ```
    /// use llm_extract::extract::{ItemVerdict, ItemWindow, LoopGuard};
    ///
    /// // Four identical lines on a receipt: four items, then the fifth is a copy, the sixth a loop.
    /// let mut items = ItemWindow::new(LoopGuard::default());
    /// let verdicts: Vec<_> = (0..6).map(|_| items.offer_held(7, || 4)).collect();
    /// assert_eq!(&verdicts[..4], &[ItemVerdict::New; 4]);
    /// assert_eq!(&verdicts[4..], &[ItemVerdict::Copy, ItemVerdict::Loop]);
    /// ```
    pub fn offer_held(&mut self, hash: u64, in_text: impl FnOnce() -> usize) -> ItemVerdict {
        if self.guard.item_copies == 0 {
            return ItemVerdict::New;
        }
        let offered = self.offered.entry(hash).or_insert(0);
        *offered += 1;
        let offered = *offered;
        let copy = self.recent.contains(&hash) && offered > in_text();
        if self.guard.item_window > 0 {
            if self.recent.len() >= self.guard.item_window {
                self.recent.pop_front();
            }
            self.recent.push_back(hash);
        }
        if !copy {
            self.copies = 0;
            return ItemVerdict::New;
        }
        self.copies += 1;
        if self.copies >= self.guard.item_copies {
            ItemVerdict::Loop
        } else {
            ItemVerdict::Copy
        }
    }
}
