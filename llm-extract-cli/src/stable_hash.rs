//! A hash whose value never changes: what names files that outlive one run of the command (the resume
//! directories of `doc`, the raw answers of long document ids). The standard library's `DefaultHasher`
//! may give other values in another Rust release, which would orphan every cache directory; this is
//! 64-bit FNV-1a, fixed by its specification. Not a cryptographic hash: nothing secret goes into it.

/// FNV-1a (64 bits), fed piece by piece.
#[derive(Debug, Clone)]
pub struct StableHasher {
    state: u64,
}

/// FNV-1a's 64-bit offset basis.
const OFFSET_BASIS: u64 = 0xcbf2_9ce4_8422_2325;
/// FNV-1a's 64-bit prime.
const PRIME: u64 = 0x0000_0100_0000_01b3;

impl StableHasher {
    /// A hasher that has seen nothing.
    pub fn new() -> Self {
        StableHasher {
            state: OFFSET_BASIS,
        }
    }

    /// Adds `bytes`.
    pub fn write(&mut self, bytes: &[u8]) {
        for byte in bytes {
            self.state = (self.state ^ u64::from(*byte)).wrapping_mul(PRIME);
        }
    }

    /// Adds `bytes` after their length, so that the pieces `ab`, `c` and `a`, `bc` hash apart.
    pub fn write_part(&mut self, bytes: &[u8]) {
        self.write(&(bytes.len() as u64).to_le_bytes());
        self.write(bytes);
    }

    /// The hash of everything added.
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
        let mut pieces = StableHasher::new();
        pieces.write(b"foo");
        pieces.write(b"bar");
        assert_eq!(pieces.finish(), hash(b"foobar"));
    }

    #[test]
    fn parts_are_told_apart_by_their_lengths() {
        let parts = |list: &[&[u8]]| {
            let mut hasher = StableHasher::new();
            for part in list {
                hasher.write_part(part);
            }
            hasher.finish()
        };
        assert_ne!(parts(&[b"ab", b"c"]), parts(&[b"a", b"bc"]));
        assert_eq!(parts(&[b"ab", b"c"]), parts(&[b"ab", b"c"]));
    }
}
