//! Where a sliding log's entries live: [`LogRing`], a ring in a block of
//! words the caller owns (the module's value), and [`LogBuf`], the
//! reference store for tests and benchmarks. Both are [`LogStore`]s; the
//! log's rules are in `log`.

use std::ops::{Deref, DerefMut};

use super::log::{LogEntry, LogHeader, LogRead, LogStore};

/// A log in a `VecDeque`: the reference [`LogStore`], for tests and
/// benchmarks (and any caller without storage of its own). Once it has held
/// `limit` entries it allocates nothing more.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogBuf {
    header: LogHeader,
    entries: std::collections::VecDeque<LogEntry>,
}

impl LogBuf {
    pub fn new(header: LogHeader) -> Self {
        Self { header, entries: std::collections::VecDeque::new() }
    }

    pub fn entries(&self) -> impl Iterator<Item = LogEntry> + '_ {
        self.entries.iter().copied()
    }
}

impl LogRead for LogBuf {
    fn len(&self) -> usize {
        self.entries.len()
    }
    fn get(&self, i: usize) -> LogEntry {
        self.entries[i]
    }
    fn header(&self) -> LogHeader {
        self.header
    }
}

impl LogStore for LogBuf {
    fn set_header(&mut self, header: LogHeader) {
        self.header = header;
    }
    fn pop_front(&mut self, k: usize) {
        self.entries.drain(..k.min(self.entries.len()));
    }
    fn truncate(&mut self, len: usize) {
        self.entries.truncate(len);
    }
    fn set_cost(&mut self, i: usize, cost: u64) {
        self.entries[i].cost = cost;
    }
    fn push_back(&mut self, entry: LogEntry) {
        self.entries.push_back(entry);
    }
}

/// A log in a block of words the caller owns (the module's value block):
/// `[window_ms, total, head, len, entries..]`, the entries a ring of
/// `(t_ns, cost)` pairs starting at pair `head`. Dropping from the front
/// moves nothing (`head` advances), so a call costs what it drops; the
/// caller grows the block (by doubling, say) with [`grow_into`](Self::grow_into)
/// before a change needs more room ([`LogChange::len_after`]).
///
/// `W` is the block: `&[u64]` to read it (a [`LogRead`], what
/// [`SlidingLog::check`] takes), `&mut [u64]` to change it too (a
/// [`LogStore`]).
#[derive(Debug, Clone, Copy)]
pub struct LogRing<W> {
    words: W,
}

/// The words of a [`LogRing`] before its entries.
pub const LOG_RING_HEADER_WORDS: usize = 4;

impl<'a> LogRing<&'a mut [u64]> {
    /// An empty log with `header` in `words` (at least the header words).
    pub fn init(words: &'a mut [u64], header: LogHeader) -> Self {
        words[..LOG_RING_HEADER_WORDS].copy_from_slice(&[header.window_ms, header.total, 0, 0]);
        Self { words }
    }
}

impl LogRing<()> {
    /// The words needed for a ring of `capacity` entries.
    pub const fn words_for(capacity: usize) -> usize {
        LOG_RING_HEADER_WORDS + 2 * capacity
    }
}

impl<W: Deref<Target = [u64]>> LogRing<W> {
    /// The log already in `words` (written by [`init`](LogRing::init) and
    /// this type; check it with [`SlidingLog::valid`] if it came from
    /// outside). `None` if its head or length do not fit the block.
    pub fn open(words: W) -> Option<Self> {
        let ring = Self { words };
        let cap = ring.capacity();
        let fits = ring.words.len() >= LOG_RING_HEADER_WORDS
            && usize::try_from(ring.words[2]).is_ok_and(|h| h < cap.max(1))
            && usize::try_from(ring.words[3]).is_ok_and(|n| n <= cap);
        fits.then_some(ring)
    }

    /// Entries the block has room for.
    pub fn capacity(&self) -> usize {
        self.words.len().saturating_sub(LOG_RING_HEADER_WORDS) / 2
    }

    /// Copies the log into `dst` (a block of any size that holds it), its
    /// entries from pair 0. Returns false (copying nothing) if `dst` has
    /// too little room.
    pub fn grow_into(&self, dst: &mut [u64]) -> bool {
        let n = self.len();
        if dst.len() < LogRing::words_for(n) {
            return false;
        }
        let h = self.header();
        dst[..LOG_RING_HEADER_WORDS].copy_from_slice(&[h.window_ms, h.total, 0, n as u64]);
        for i in 0..n {
            let e = self.get(i);
            let at = LOG_RING_HEADER_WORDS + 2 * i;
            dst[at] = e.t_ns;
            dst[at + 1] = e.cost;
        }
        true
    }

    fn head(&self) -> usize {
        self.words[2] as usize
    }

    /// The first word of entry `i`.
    fn at(&self, i: usize) -> usize {
        LOG_RING_HEADER_WORDS + 2 * ((self.head() + i) % self.capacity())
    }
}

impl<W: Deref<Target = [u64]>> LogRead for LogRing<W> {
    fn len(&self) -> usize {
        self.words[3] as usize
    }
    fn get(&self, i: usize) -> LogEntry {
        let at = self.at(i);
        LogEntry { t_ns: self.words[at], cost: self.words[at + 1] }
    }
    fn header(&self) -> LogHeader {
        LogHeader { window_ms: self.words[0], total: self.words[1] }
    }
}

impl<W: DerefMut<Target = [u64]>> LogStore for LogRing<W> {
    fn set_header(&mut self, header: LogHeader) {
        self.words[0] = header.window_ms;
        self.words[1] = header.total;
    }
    fn pop_front(&mut self, k: usize) {
        let k = k.min(self.len());
        if k > 0 {
            self.words[2] = ((self.head() + k) % self.capacity()) as u64;
            self.words[3] -= k as u64;
        }
    }
    fn truncate(&mut self, len: usize) {
        self.words[3] = self.words[3].min(len as u64);
    }
    fn set_cost(&mut self, i: usize, cost: u64) {
        let at = self.at(i);
        self.words[at + 1] = cost;
    }
    /// The caller has made room ([`LogChange::len_after`]); an entry past
    /// the capacity is dropped, never written out of bounds.
    fn push_back(&mut self, entry: LogEntry) {
        let n = self.len();
        if n >= self.capacity() {
            debug_assert!(false, "push_back past the ring's capacity");
            return;
        }
        let at = self.at(n);
        self.words[at] = entry.t_ns;
        self.words[at + 1] = entry.cost;
        self.words[3] += 1;
    }
}
