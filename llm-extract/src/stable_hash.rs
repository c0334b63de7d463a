//! A hash whose value never changes: 64-bit FNV-1a, fixed by its specification. It names what must be
//! found again by a later run (a batch request's `custom_id`, which a resumed run looks up in its
//! manifest), where the standard library's `DefaultHasher` may give other values in another Rust
//! release, and it is cheap enough to feed byte by byte as an answer streams (the loop detector's
//! element hashes). Public for the same use in a program built on the crate (the command line names
//! its resume directories with it). Not a cryptographic hash: nothing secret goes into it.
//!
//! The lowest layer of the crate: it uses nothing of it, so every module may use it.
//!
//! ```
//! use llm_extract::stable_hash::{hash, StableHasher};
//!
//! let mut hasher = StableHasher::new();
//! hasher.write(b"foo");
//! hasher.write(b"bar");
//! assert_eq!(hasher.finish(), hash(b"foobar"));
//! assert_eq!(hash(b"a"), 0xaf63_dc4c_8601_ec8c);
//! ```

/// FNV-1a's 64-bit offset basis: the hash of nothing.
const OFFSET_BASIS: u64 = 0xcbf2_9ce4_8422_2325;
/// FNV-1a's 64-bit prime.
const PRIME: u64 = 0x0000_0100_0000_01b3;

/// FNV-1a (64 bits), fed piece by piece.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StableHasher {
    state: u64,
}

impl StableHasher {
    /// A hasher that has seen nothing.
    pub const fn new() -> Self {
        StableHasher {
            state: OFFSET_BASIS,
        }
    }

    /// Adds one byte.
    #[inline]
    pub fn byte(&mut self, byte: u8) {
        self.state = (self.state ^ u64::from(byte)).wrapping_mul(PRIME);
    }

    /// Adds `bytes`.
    #[inline]
    pub fn write(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.byte(byte);
        }
    }

    /// Adds the eight bytes of `word`, least significant first (the same on every machine).
    #[inline]
    pub fn write_u64(&mut self, word: u64) {
        self.write(&word.to_le_bytes());
    }

    /// Adds `bytes` after their length, so that the pieces `ab`, `c` and `a`, `bc` hash apart.
    pub fn write_part(&mut self, bytes: &[u8]) {
        self.write_u64(bytes.len() as u64);
        self.write(bytes);
    }

    /// The hash of everything added.
    #[inline]
    pub fn finish(&self) -> u64 {
        self.state
    }
}

impl Default for StableHasher {
    fn default() -> Self {
        Self::new()
    }
}

/// The hash of `bytes`.
pub fn hash(bytes: &[u8]) -> u64 {
    let mut hasher = StableHasher::new();
    hasher.write(bytes);
    hasher.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hash_is_fnv_1a_as_published() {
        // The reference values of the FNV specification (draft-eastlake-fnv, test vectors).
        assert_eq!(hash(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(hash(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(hash(b"foobar"), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn pieces_hash_as_their_concatenation() {
        let mut pieces = StableHasher::new();
        pieces.write(b"foo");
        pieces.byte(b'b');
        pieces.write(b"ar");
        assert_eq!(pieces.finish(), hash(b"foobar"));
        assert_eq!(StableHasher::new().finish(), hash(b""));
    }

    #[test]
    fn a_word_is_its_little_endian_bytes() {
        let mut word = StableHasher::new();
        word.write_u64(0x0102_0304_0506_0708);
        assert_eq!(word.finish(), hash(&[8, 7, 6, 5, 4, 3, 2, 1]));
    }

    #[test]
    fn parts_are_told_apart_by_their_lengths() {
        let parts = |list: &[&[u8]]| {
            let mut hasher = StableHasher::default();
            for part in list {
                hasher.write_part(part);
            }
            hasher.finish()
        };
        assert_ne!(parts(&[b"ab", b"c"]), parts(&[b"a", b"bc"]));
        assert_eq!(parts(&[b"ab", b"c"]), parts(&[b"ab", b"c"]));
    }
}
