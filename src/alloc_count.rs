//! A count of the allocations each thread makes through the crate's global
//! allocator (`module::server_alloc`, which calls [`count`] with the test
//! hooks).
//!
//! The count exists for one test (`tests/core_allocations.rs`), which proves
//! that a decision allocates nothing: a crate can have only one global
//! allocator, and `redis_module!` installs it, so the counter has to live
//! here. It costs one thread-local increment per allocation, and the request
//! path makes none.

use std::cell::Cell;

thread_local! {
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

/// Counts one allocation (or reallocation) by the calling thread.
#[inline]
pub(crate) fn count() {
    // `try_with`: during thread teardown the counter may be gone already.
    let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
}

/// Allocations (and reallocations) made by the calling thread so far.
pub fn allocations() -> u64 {
    ALLOCATIONS.try_with(Cell::get).unwrap_or(0)
}
