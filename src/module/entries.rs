//! Variable-size states, for the kinds that hold a bounded, variable number
//! of entries (an exact sliding log, a set of concurrency leases; SPEC
//! invariant 7): a fixed header and up to `max` entries of a fixed number of
//! words each, in one block from the server's allocator, so `used_memory`,
//! `maxmemory` and MEMORY USAGE see it. No kind uses it yet; the encodings
//! are here, unit-tested, for the first that does.
//!
//! - Value: one block of words, `[capacity, count, header.., entries..]`;
//!   the capacity (in entries) grows by doubling, never past `max`.
//! - RDB (and DIGEST): `header.., count, entries..`. A kind's `rdb_load`
//!   matches its encoding version and reads this with [`Entries::from_words`],
//!   which refuses a count above `max` before it allocates anything.
//! - Effect payload: `tag, version, op, expire_at_ms:u64, ...` where op `W`
//!   carries the whole state (AOF rewrite), `A` one appended entry and `R`
//!   the index of one removed entry, each with the new header: an effect
//!   carries the change, not the whole state.

// No kind uses it yet (see the README's "Adding a kind"): the first
// variable-size kind removes this.
#![allow(dead_code)]

use std::marker::PhantomData;
use std::ptr::NonNull;

/// The shape of one kind's variable state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    /// Words of the fixed header.
    pub header: usize,
    /// Words per entry (at least 1).
    pub entry: usize,
    /// The most entries a state may hold (its limit).
    pub max: usize,
}

/// Where blocks come from: the server's allocator in the module, the
/// system's in unit tests.
pub trait Memory {
    /// A block of `words` u64s; never NULL.
    fn alloc(words: usize) -> NonNull<u64>;
    /// # Safety
    /// `p` came from [`alloc`](Self::alloc) with `words`, and is not used again.
    unsafe fn free(p: NonNull<u64>, words: usize);
}

/// RedisModule_Alloc / RedisModule_Free: what the server accounts for.
pub struct ServerMemory;

impl Memory for ServerMemory {
    fn alloc(words: usize) -> NonNull<u64> {
        let p = super::ffi::api!(RedisModule_Alloc(words * 8)).cast::<u64>();
        // RedisModule_Alloc aborts on OOM and never returns NULL.
        NonNull::new(p).unwrap_or_else(|| unreachable!("RedisModule_Alloc returned NULL"))
    }
    unsafe fn free(p: NonNull<u64>, _words: usize) {
        super::ffi::api!(RedisModule_Free(p.as_ptr().cast()));
    }
}

/// A state of fixed header and a bounded number of entries, in one block.
pub struct Entries<M: Memory> {
    block: NonNull<u64>,
    layout: Layout,
    memory: PhantomData<M>,
}

/// The state already holds `max` entries.
#[derive(Debug, PartialEq, Eq)]
pub struct Full;

const CAPACITY: usize = 0;
const COUNT: usize = 1;
const HEADER: usize = 2;

impl<M: Memory> Entries<M> {
    /// An empty state with `header` (of `layout.header` words).
    pub fn new(layout: Layout, header: &[u64]) -> Self {
        let mut e = Self::with_capacity(layout, 1.min(layout.max));
        e.words_mut()[HEADER..HEADER + layout.header].copy_from_slice(&header[..layout.header]);
        e
    }

    fn block_words(layout: &Layout, capacity: usize) -> usize {
        HEADER + layout.header + capacity * layout.entry
    }

    fn with_capacity(layout: Layout, capacity: usize) -> Self {
        let words = Self::block_words(&layout, capacity);
        let block = M::alloc(words);
        // SAFETY: a fresh block of `words` u64s.
        unsafe { block.as_ptr().write_bytes(0, words) };
        let mut e = Self { block, layout, memory: PhantomData };
        e.words_mut()[CAPACITY] = capacity as u64;
        e
    }

    fn capacity(&self) -> usize {
        // SAFETY: the block always holds its capacity word.
        unsafe { self.block.as_ptr().read() as usize }
    }

    fn words(&self) -> &[u64] {
        let n = Self::block_words(&self.layout, self.capacity());
        // SAFETY: the block holds `n` initialised words, owned by self.
        unsafe { std::slice::from_raw_parts(self.block.as_ptr(), n) }
    }

    fn words_mut(&mut self) -> &mut [u64] {
        let n = Self::block_words(&self.layout, self.capacity());
        // SAFETY: as in `words`, borrowed mutably through `self`.
        unsafe { std::slice::from_raw_parts_mut(self.block.as_ptr(), n) }
    }

    pub fn len(&self) -> usize {
        self.words()[COUNT] as usize
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn header(&self) -> &[u64] {
        &self.words()[HEADER..HEADER + self.layout.header]
    }

    pub fn set_header(&mut self, header: &[u64]) {
        let h = self.layout.header;
        self.words_mut()[HEADER..HEADER + h].copy_from_slice(&header[..h]);
    }

    /// Entry `i`'s words.
    pub fn entry(&self, i: usize) -> &[u64] {
        let at = HEADER + self.layout.header + i * self.layout.entry;
        &self.words()[at..at + self.layout.entry]
    }

    /// Appends an entry, growing the block (doubling, at most to `max`).
    pub fn push(&mut self, entry: &[u64]) -> Result<(), Full> {
        let n = self.len();
        if n >= self.layout.max {
            return Err(Full);
        }
        if n == self.capacity() {
            let mut grown = Self::with_capacity(self.layout, (n * 2).clamp(1, self.layout.max));
            let used = HEADER + self.layout.header + n * self.layout.entry;
            grown.words_mut()[COUNT..used].copy_from_slice(&self.words()[COUNT..used]);
            *self = grown;
        }
        let at = HEADER + self.layout.header + n * self.layout.entry;
        let e = self.layout.entry;
        let w = self.words_mut();
        w[at..at + e].copy_from_slice(&entry[..e]);
        w[COUNT] = n as u64 + 1;
        Ok(())
    }

    /// Removes entry `i` (the last takes its place). False if there is none.
    pub fn remove(&mut self, i: usize) -> bool {
        let n = self.len();
        if i >= n {
            return false;
        }
        let (base, e) = (HEADER + self.layout.header, self.layout.entry);
        let w = self.words_mut();
        w.copy_within(base + (n - 1) * e..base + n * e, base + i * e);
        w[COUNT] = n as u64 - 1;
        true
    }

    /// The block's size in bytes: what MEMORY USAGE adds for the value.
    pub fn mem_usage(&self) -> usize {
        self.words().len() * 8
    }

    /// The RDB (and DIGEST) words: header, count, entries.
    pub fn to_words(&self) -> impl Iterator<Item = u64> + '_ {
        let n = self.len();
        let entries = &self.words()[HEADER + self.layout.header..HEADER + self.layout.header + n * self.layout.entry];
        self.header().iter().copied().chain(std::iter::once(n as u64)).chain(entries.iter().copied())
    }

    /// A state read back from [`to_words`](Self::to_words); `next` gives
    /// the words in order (`None`: the input ended). A count above `max` is
    /// refused before anything is allocated for the entries.
    pub fn from_words(layout: Layout, mut next: impl FnMut() -> Option<u64>) -> Option<Self> {
        let mut header = [0u64; 8];
        let header = header.get_mut(..layout.header)?;
        for h in header.iter_mut() {
            *h = next()?;
        }
        let n = usize::try_from(next()?).ok().filter(|&n| n <= layout.max)?;
        let mut e = Self::new(layout, header);
        let mut entry = [0u64; 8];
        let entry = entry.get_mut(..layout.entry)?;
        for _ in 0..n {
            for w in entry.iter_mut() {
                *w = next()?;
            }
            e.push(entry).ok()?;
        }
        Some(e)
    }
}

impl<M: Memory> Drop for Entries<M> {
    fn drop(&mut self) {
        let words = Self::block_words(&self.layout, self.capacity());
        // SAFETY: the block came from M::alloc with this size and dies here.
        unsafe { M::free(self.block, words) };
    }
}

/// What an effect carries for a variable state.
pub enum Delta<'a> {
    /// The whole state (AOF rewrite).
    Whole(&'a [u64]),
    /// One entry appended, and the new header.
    Append { header: &'a [u64], entry: &'a [u64] },
    /// Entry `index` removed, and the new header.
    Remove { header: &'a [u64], index: u64 },
}

/// The effect payload: `tag, version, op, expire_at_ms, words..` (little-endian).
pub fn encode(tag: u8, version: u8, delta: &Delta<'_>, expire_at_ms: u64) -> Vec<u8> {
    let (op, words): (u8, Vec<u64>) = match delta {
        Delta::Whole(words) => (b'W', words.to_vec()),
        Delta::Append { header, entry } => (b'A', header.iter().chain(entry.iter()).copied().collect()),
        Delta::Remove { header, index } => (b'R', header.iter().copied().chain(std::iter::once(*index)).collect()),
    };
    let mut out = Vec::with_capacity(3 + 8 + 8 * words.len());
    out.extend_from_slice(&[tag, version, op]);
    out.extend_from_slice(&expire_at_ms.to_le_bytes());
    for w in words {
        out.extend_from_slice(&w.to_le_bytes());
    }
    out
}

/// Applies a payload of `tag` and `version` to `state` (`None`: the key is
/// empty). Returns the new state and the expiry, or `None` for a malformed
/// payload or a change that does not fit the state.
pub fn apply<M: Memory>(
    layout: Layout,
    tag: u8,
    version: u8,
    state: Option<Entries<M>>,
    payload: &[u8],
) -> Option<(Entries<M>, u64)> {
    let (head, rest) = payload.split_first_chunk::<11>()?;
    if head[0] != tag || head[1] != version || rest.len() % 8 != 0 {
        return None;
    }
    let expire_at_ms = u64::from_le_bytes(head[3..11].try_into().ok()?);
    let mut words = rest.chunks_exact(8).map(|c| u64::from_le_bytes(c.try_into().unwrap_or([0; 8])));
    let h = layout.header;
    let state = match head[2] {
        b'W' => {
            let s = Entries::from_words(layout, || words.next())?;
            words.next().is_none().then_some(s)?
        }
        b'A' if rest.len() == 8 * (h + layout.entry) => {
            let all: Vec<u64> = words.collect();
            let mut s = state.unwrap_or_else(|| Entries::new(layout, &all[..h]));
            s.set_header(&all[..h]);
            s.push(&all[h..]).ok()?;
            s
        }
        b'R' if rest.len() == 8 * (h + 1) => {
            let all: Vec<u64> = words.collect();
            let mut s = state?;
            if !s.remove(usize::try_from(all[h]).ok()?) {
                return None;
            }
            s.set_header(&all[..h]);
            s
        }
        _ => return None,
    };
    Some((state, expire_at_ms))
}

#[cfg(test)]
mod tests {
    use super::*;

    use std::alloc::{alloc_zeroed, dealloc, Layout as AllocLayout};

    /// The system allocator, for tests without a server.
    struct SystemMemory;

    impl Memory for SystemMemory {
        fn alloc(words: usize) -> NonNull<u64> {
            let l = AllocLayout::array::<u64>(words).unwrap();
            // SAFETY: a non-zero size (at least the capacity and count words).
            NonNull::new(unsafe { alloc_zeroed(l) }.cast()).unwrap()
        }
        unsafe fn free(p: NonNull<u64>, words: usize) {
            // SAFETY: allocated above with this layout.
            unsafe { dealloc(p.as_ptr().cast(), AllocLayout::array::<u64>(words).unwrap()) }
        }
    }

    type E = Entries<SystemMemory>;
    /// A log: header = [window_ms], entry = [timestamp, cost], at most 5.
    const LOG: Layout = Layout { header: 1, entry: 2, max: 5 };

    fn log(entries: &[[u64; 2]]) -> E {
        let mut e = E::new(LOG, &[60_000]);
        for en in entries {
            e.push(en).unwrap();
        }
        e
    }

    fn contents(e: &E) -> Vec<Vec<u64>> {
        (0..e.len()).map(|i| e.entry(i).to_vec()).collect()
    }

    #[test]
    fn entries_grow_to_their_bound_and_no_further() {
        let mut e = log(&[]);
        let mut sizes = vec![e.mem_usage()];
        for t in 0..5 {
            e.push(&[t, 1]).unwrap();
            sizes.push(e.mem_usage());
        }
        assert_eq!(e.push(&[9, 1]), Err(Full));
        assert_eq!(e.len(), 5);
        // Capacity 1, 1, 2, 4, 4, 5 entries of 16 bytes, plus 3 words.
        assert_eq!(sizes, [40, 40, 56, 88, 88, 104]);
        assert!(e.remove(0));
        assert_eq!(contents(&e), [[4, 1], [1, 1], [2, 1], [3, 1]]);
        assert!(!e.remove(4));
    }

    #[test]
    fn rdb_words_round_trip_and_bound_the_count_before_allocating() {
        let e = log(&[[1, 2], [3, 4]]);
        let words: Vec<u64> = e.to_words().collect();
        assert_eq!(words, [60_000, 2, 1, 2, 3, 4]);
        let mut it = words.iter().copied();
        let back = E::from_words(LOG, || it.next()).unwrap();
        assert_eq!((back.header(), contents(&back)), (e.header(), contents(&e)));
        // A count above the bound, or words missing, is no state.
        let mut it = [60_000u64, 6].into_iter();
        assert!(E::from_words(LOG, || it.next()).is_none());
        let mut it = [60_000u64, u64::MAX].into_iter();
        assert!(E::from_words(LOG, || it.next()).is_none());
        let mut it = [60_000u64, 2, 1, 2, 3].into_iter();
        assert!(E::from_words(LOG, || it.next()).is_none());
    }

    #[test]
    fn effects_carry_the_change_and_apply_to_the_state() {
        let words: Vec<u64> = log(&[[1, 2]]).to_words().collect();
        let whole = encode(b'L', 1, &Delta::Whole(&words), 777);
        assert_eq!(whole.len(), 11 + 8 * words.len());
        let (s, at) = apply::<SystemMemory>(LOG, b'L', 1, None, &whole).unwrap();
        assert_eq!((at, contents(&s)), (777, vec![vec![1, 2]]));

        let append = encode(b'L', 1, &Delta::Append { header: &[30_000], entry: &[5, 6] }, 888);
        assert_eq!(append.len(), 11 + 8 * 3, "one entry, not the whole state");
        let (s, at) = apply(LOG, b'L', 1, Some(s), &append).unwrap();
        assert_eq!((at, s.header(), contents(&s)), (888, &[30_000][..], vec![vec![1, 2], vec![5, 6]]));

        let remove = encode(b'L', 1, &Delta::Remove { header: &[30_000], index: 0 }, 999);
        let (s, _) = apply(LOG, b'L', 1, Some(s), &remove).unwrap();
        assert_eq!(contents(&s), [[5, 6]]);
    }

    #[test]
    fn malformed_effects_are_refused() {
        let append = encode(b'L', 1, &Delta::Append { header: &[1], entry: &[5, 6] }, 1);
        assert!(apply::<SystemMemory>(LOG, b'X', 1, None, &append).is_none(), "another kind's tag");
        assert!(apply::<SystemMemory>(LOG, b'L', 2, None, &append).is_none(), "another version");
        assert!(apply::<SystemMemory>(LOG, b'L', 1, None, &append[..append.len() - 1]).is_none());
        let remove = encode(b'L', 1, &Delta::Remove { header: &[1], index: 3 }, 1);
        assert!(apply(LOG, b'L', 1, Some(log(&[[1, 1]])), &remove).is_none(), "no entry 3");
        assert!(apply::<SystemMemory>(LOG, b'L', 1, None, &remove).is_none(), "nothing to remove from");
        let full = log(&[[1, 1], [2, 1], [3, 1], [4, 1], [5, 1]]);
        assert!(apply(LOG, b'L', 1, Some(full), &append).is_none(), "past the bound");
        let mut words: Vec<u64> = log(&[[1, 2]]).to_words().collect();
        words.push(0);
        assert!(apply::<SystemMemory>(LOG, b'L', 1, None, &encode(b'L', 1, &Delta::Whole(&words), 1)).is_none());
    }
}
