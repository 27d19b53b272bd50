//! Term interning: one vocabulary shared by every index of the process, and
//! per index a small table from shared term ids to the index's own ids.
//!
//! A query term is hashed and looked up once in the shared vocabulary
//! ([`shared_find`]); each catalog's index is then probed with the shared
//! id alone ([`IdMap`]: one `u64` slot per probe, no string comparison), so
//! a search over 1,000 connectors costs one string lookup per query term
//! plus 1,000 integer probes. Each index keeps its own dense term ids
//! (postings, names and flags are laid out by them); the shared vocabulary
//! only names terms. It grows with the distinct terms ever indexed by the
//! process (a term costs its bytes plus about 16 bytes) and is never shrunk.
//!
//! Hashing uses one process-wide keyed hash, computed once per term.

use std::collections::hash_map::RandomState;
use std::hash::BuildHasher;
use std::sync::{LazyLock, PoisonError, RwLock};

/// Two random 64-bit keys drawn once per process (from std's randomly
/// keyed SipHash), so hash values differ from run to run.
static SEEDS: LazyLock<(u64, u64)> = LazyLock::new(|| {
    let s = RandomState::new();
    (s.hash_one(0x5eed_u64), s.hash_one(0x5eed_u64 + 1) | 1)
});

const K: u64 = 0x9e37_79b9_7f4a_7c15;

/// The high and low halves of a 128-bit product, folded: the mixing step
/// of foldhash and aHash's fallback.
#[inline]
fn fold(x: u64, y: u64) -> u64 {
    let full = u128::from(x) * u128::from(y);
    (full as u64) ^ ((full >> 64) as u64)
}

/// A fast keyed hash of bytes (term strings are a few bytes long; SipHash
/// costs more than the rest of interning a term). With per-process random
/// keys, a catalog cannot be tuned offline to collide; a collision only
/// costs a longer probe, never a wrong answer.
#[inline]
fn hash_bytes(bytes: &[u8]) -> u64 {
    let (seed, key) = *SEEDS;
    let n = bytes.len();
    let h = seed ^ (n as u64).wrapping_mul(K);
    let (lo, hi) = if n <= 16 {
        // Short input (nearly every term): two overlapping reads, as
        // wyhash and foldhash do; the length is mixed in above.
        if n >= 8 {
            (read64(bytes, 0), read64(bytes, n - 8))
        } else if n >= 4 {
            (u64::from(read32(bytes, 0)), u64::from(read32(bytes, n - 4)))
        } else if n > 0 {
            let b = |i: usize| u64::from(bytes[i]);
            (b(0) << 16 | b(n / 2) << 8 | b(n - 1), 0)
        } else {
            (0, 0)
        }
    } else {
        let mut acc = h;
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            acc = fold(acc ^ read64(c, 0), key);
        }
        (acc, read64(bytes, n - 8))
    };
    fold(fold(h ^ lo, key ^ hi), K)
}

#[inline]
fn read64(b: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(w)
}

#[inline]
fn read32(b: &[u8], at: usize) -> u32 {
    let mut w = [0u8; 4];
    w.copy_from_slice(&b[at..at + 4]);
    u32::from_le_bytes(w)
}

/// The hash every vocabulary uses for `term`.
pub(crate) fn term_hash(term: &str) -> u64 {
    hash_bytes(term.as_bytes())
}

/// The hash of a name's term-id sequence (exact-name lookups), truncated:
/// matches are always verified against the sequence itself.
pub(crate) fn seq_hash(ids: &[u32]) -> u32 {
    let (seed, key) = *SEEDS;
    let mut h = seed ^ (ids.len() as u64).wrapping_mul(K);
    for pair in ids.chunks(2) {
        let word = u64::from(pair[0]) | pair.get(1).map_or(0, |&b| u64::from(b) << 32);
        h = fold(h ^ word, key);
    }
    (fold(h, K) >> 32) as u32
}

const EMPTY: u32 = u32::MAX;

#[derive(Debug)]
pub(crate) struct Vocab {
    /// Every term, concatenated.
    text: Vec<u8>,
    /// `text[starts[i]..starts[i + 1]]` is term `i`.
    starts: Vec<u32>,
    /// Term ids by hash, linear probing, at most half full; `EMPTY` is free.
    slots: Vec<u32>,
}

impl Default for Vocab {
    fn default() -> Vocab {
        Vocab {
            text: Vec::new(),
            starts: vec![0],
            slots: Vec::new(),
        }
    }
}

impl Vocab {
    pub fn len(&self) -> usize {
        self.starts.len() - 1
    }

    fn bytes(&self, id: u32) -> &[u8] {
        let i = id as usize;
        &self.text[self.starts[i] as usize..self.starts[i + 1] as usize]
    }

    #[cfg(test)]
    pub fn term(&self, id: u32) -> &str {
        std::str::from_utf8(self.bytes(id)).unwrap_or("")
    }

    /// The id of `term`, whose [`term_hash`] is `hash`.
    #[inline]
    pub fn find(&self, term: &str, hash: u64) -> Option<u32> {
        self.find_bytes(term.as_bytes(), hash)
    }

    #[inline]
    fn find_bytes(&self, term: &[u8], hash: u64) -> Option<u32> {
        if self.slots.is_empty() {
            return None;
        }
        let mask = self.slots.len() - 1;
        let mut slot = hash as usize & mask;
        loop {
            let id = self.slots[slot];
            if id == EMPTY {
                return None;
            }
            if short_eq(self.bytes(id), term) {
                return Some(id);
            }
            slot = (slot + 1) & mask;
        }
    }
}

/// Byte equality tuned for terms (a few bytes long): two overlapping word
/// comparisons instead of a `memcmp` call.
#[inline]
fn short_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let n = a.len();
    match n {
        0 => true,
        1..=3 => a == b,
        4..=8 => read32(a, 0) == read32(b, 0) && read32(a, n - 4) == read32(b, n - 4),
        9..=16 => read64(a, 0) == read64(b, 0) && read64(a, n - 8) == read64(b, n - 8),
        _ => a == b,
    }
}

/// Builds a [`Vocab`], keeping each term's full hash until the table is
/// final so that growing never rehashes a string.
#[derive(Debug, Default)]
pub(crate) struct VocabBuilder {
    vocab: Vocab,
    hashes: Vec<u64>,
}

impl VocabBuilder {
    /// A builder with room for about `terms` terms of `bytes` bytes in all.
    pub fn with_capacity(terms: usize, bytes: usize) -> VocabBuilder {
        let mut b = VocabBuilder::default();
        b.vocab.text.reserve(bytes);
        b.vocab.starts.reserve(terms);
        b.hashes.reserve(terms);
        b.vocab.slots = vec![EMPTY; (terms * 2).next_power_of_two().max(32)];
        b
    }

    pub fn len(&self) -> usize {
        self.vocab.len()
    }

    /// The id of `term`, added if new.
    #[inline]
    pub fn intern(&mut self, term: &str) -> u32 {
        self.intern_hashed(term.as_bytes(), term_hash(term))
    }

    fn place(&mut self, id: u32, hash: u64) {
        let mask = self.vocab.slots.len() - 1;
        let mut slot = hash as usize & mask;
        while self.vocab.slots[slot] != EMPTY {
            slot = (slot + 1) & mask;
        }
        self.vocab.slots[slot] = id;
    }

    #[cold]
    fn grow(&mut self) {
        let size = (self.vocab.slots.len() * 2).max(32);
        self.vocab.slots.clear();
        self.vocab.slots.resize(size, EMPTY);
        for id in 0..self.hashes.len() {
            self.place(id as u32, self.hashes[id]);
        }
    }

    /// The id of `term` (whose [`term_hash`] is `hash`), if interned.
    #[inline]
    pub fn find(&self, term: &str, hash: u64) -> Option<u32> {
        self.vocab.find(term, hash)
    }

    /// Intern `term` whose [`term_hash`] is `hash`.
    #[inline]
    fn intern_hashed(&mut self, term: &[u8], hash: u64) -> u32 {
        if let Some(id) = self.vocab.find_bytes(term, hash) {
            return id;
        }
        if (self.vocab.len() + 1) * 2 > self.vocab.slots.len() {
            self.grow();
        }
        let id = self.vocab.len() as u32;
        self.vocab.text.extend_from_slice(term);
        self.vocab.starts.push(self.vocab.text.len() as u32);
        self.hashes.push(hash);
        self.place(id, hash);
        id
    }

    /// The table from shared ids to this builder's ids, interning every
    /// term of this builder in the shared vocabulary (one lock for all).
    pub fn share(&self) -> IdMap {
        let mut map = IdMap::with_capacity(self.len());
        let mut shared = SHARED.write().unwrap_or_else(PoisonError::into_inner);
        for (id, &hash) in self.hashes.iter().enumerate() {
            let global = shared.intern_hashed(self.vocab.bytes(id as u32), hash);
            map.insert(global, id as u32);
        }
        map
    }
}

/// The vocabulary shared by every index of the process.
static SHARED: LazyLock<RwLock<VocabBuilder>> =
    LazyLock::new(|| RwLock::new(VocabBuilder::with_capacity(4096, 32 * 1024)));

/// The shared id of `term`, whose [`term_hash`] is `hash`: `None` when no
/// index of this process has ever held it.
pub(crate) fn shared_find(term: &str, hash: u64) -> Option<u32> {
    SHARED
        .read()
        .unwrap_or_else(PoisonError::into_inner)
        .find(term, hash)
}

const FREE: u64 = u64::MAX;

/// One index's terms by shared id: `shared << 32 | local` in an
/// open-addressing table (Fibonacci hashing of the shared id, linear
/// probing, at most half full).
#[derive(Debug)]
pub(crate) struct IdMap {
    slots: Box<[u64]>,
    shift: u32,
}

impl IdMap {
    fn with_capacity(terms: usize) -> IdMap {
        let size = (terms * 2).next_power_of_two().max(16);
        IdMap {
            slots: vec![FREE; size].into_boxed_slice(),
            shift: 64 - size.trailing_zeros(),
        }
    }

    #[inline]
    fn home(&self, shared: u32) -> usize {
        (u64::from(shared).wrapping_mul(K) >> self.shift) as usize
    }

    fn insert(&mut self, shared: u32, local: u32) {
        let mask = self.slots.len() - 1;
        let mut slot = self.home(shared);
        while self.slots[slot] != FREE {
            slot = (slot + 1) & mask;
        }
        self.slots[slot] = u64::from(shared) << 32 | u64::from(local);
    }

    /// This index's id for the term whose shared id is `shared`.
    #[inline]
    pub fn get(&self, shared: u32) -> Option<u32> {
        let mask = self.slots.len() - 1;
        let mut slot = self.home(shared);
        loop {
            let s = self.slots[slot];
            if s == FREE {
                return None;
            }
            if (s >> 32) as u32 == shared {
                return Some(s as u32);
            }
            slot = (slot + 1) & mask;
        }
    }

    pub fn heap_bytes(&self) -> usize {
        8 * self.slots.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interned_terms_are_found_by_hash_and_unknown_ones_are_not() {
        let mut b = VocabBuilder::default();
        let words: Vec<String> = (0..1000).map(|i| format!("w{i}")).collect();
        let ids: Vec<u32> = words.iter().map(|w| b.intern(w)).collect();
        assert_eq!(b.intern("w7"), ids[7], "interning twice keeps the id");
        let map = b.share();
        for (w, &id) in words.iter().zip(&ids) {
            let shared = shared_find(w, term_hash(w)).expect("shared");
            assert_eq!(map.get(shared), Some(id), "{w}");
        }
        let v = &b.vocab;
        assert_eq!(v.len(), 1000);
        for (w, &id) in words.iter().zip(&ids) {
            assert_eq!(v.find(w, term_hash(w)), Some(id));
            assert_eq!(v.term(id), w);
        }
        assert_eq!(v.find("w1000", term_hash("w1000")), None);
        for (a, b) in [
            ("abcdefghij", "abcdefghiX"),
            ("abcde", "Xbcde"),
            ("ab", "ax"),
        ] {
            assert!(short_eq(a.as_bytes(), a.as_bytes()));
            assert!(!short_eq(a.as_bytes(), b.as_bytes()));
        }
        let long = "x".repeat(40);
        assert!(short_eq(long.as_bytes(), long.as_bytes()));
        assert_eq!(v.find("", term_hash("")), None);
        assert_eq!(Vocab::default().find("x", term_hash("x")), None);
        assert!(v.slots.len() >= 2 * v.len());
    }

    #[test]
    fn id_maps_answer_only_their_own_terms() {
        let mut a = VocabBuilder::default();
        let mut b = VocabBuilder::default();
        for w in ["idmap_alpha", "idmap_beta", "idmap_gamma"] {
            a.intern(w);
        }
        for w in ["idmap_gamma", "idmap_delta"] {
            b.intern(w);
        }
        let (ma, mb) = (a.share(), b.share());
        let id = |w: &str| shared_find(w, term_hash(w)).expect("shared");
        assert_eq!(ma.get(id("idmap_beta")), Some(1));
        assert_eq!(mb.get(id("idmap_beta")), None);
        assert_eq!(ma.get(id("idmap_gamma")), Some(2));
        assert_eq!(mb.get(id("idmap_gamma")), Some(0));
        assert_eq!(ma.get(id("idmap_delta")), None);
        assert_eq!(shared_find("idmap_never", term_hash("idmap_never")), None);
        assert!(ma.heap_bytes() >= 16 * 8);
    }
}
