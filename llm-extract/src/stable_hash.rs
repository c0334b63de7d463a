//! A hash whose value never changes: 64-bit FNV-1a, fixed by its specification. It names what must be
//! found again by a later run (a batch request's `custom_id`, which a resumed run looks up in its
//! manifest), where the standard library's `DefaultHasher` may give other values in another Rust
//! release, and it is cheap enough to feed byte by byte as an answer streams (the loop detector's
//! element hashes). Not a cryptographic hash: nothing secret goes into it.
//!
//! The lowest layer of the crate: it uses nothing of it, so every module may use it.

/// FNV-1a's 64-bit offset basis: the hash of nothing.
const OFFSET_BASIS: u64 = 0xcbf2_9ce4_8422_2325;
/// FNV-1a's 64-bit prime.
const PRIME: u64 = 0x0000_0100_0000_01b3;

/// FNV-1a (64 bits), fed piece by piece.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct StableHasher {
    state: u64,
}

impl StableHasher {
    /// A hasher that has seen nothing.
    pub(crate) const fn new() -> Self {
        StableHasher {
            state: OFFSET_BASIS,
        }
    }

    /// Adds one byte.
    #[inline]
    pub(crate) fn byte(&mut self, byte: u8) {
        self.state = (self.state ^ u64::from(byte)).wrapping_mul(PRIME);
    }

    /// Adds `bytes`.
    #[inline]
    pub(crate) fn write(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.byte(byte);
        }
    }

    /// Adds the eight bytes of `word`, least significant first (the same on every machine).
    #[inline]
    pub(crate) fn write_u64(&mut self, word: u64) {
        self.write(&word.to_le_bytes());
    }

    /// The hash of everything added.
    #[inline]
    pub(crate) fn finish(&self) -> u64 {
        self.state
    }
}

/// The hash of `bytes`.
pub(crate) fn hash(bytes: &[u8]) -> u64 {
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
}
