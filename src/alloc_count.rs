//! The crate's global allocator: the system allocator, counting the
//! allocations each thread makes.
//!
//! The count exists for one test (`tests/core_allocations.rs`), which proves
//! that a decision allocates nothing: a crate can have only one global
//! allocator, and `redis_module!` installs it, so the counter has to live
//! here. It costs one thread-local increment per allocation, and the request
//! path makes none. (Module *values* are allocated with RedisModule_Alloc, not
//! through this allocator, so Redis accounts for them.)

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

/// The system allocator, counting allocations per thread.
pub struct CountingSystem;

thread_local! {
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

fn count() {
    // `try_with`: during thread teardown the counter may be gone already.
    let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
}

/// Allocations (and reallocations) made by the calling thread so far.
pub fn allocations() -> u64 {
    ALLOCATIONS.try_with(Cell::get).unwrap_or(0)
}

// SAFETY: every call is forwarded unchanged to the system allocator, which
// upholds the GlobalAlloc contract; counting touches no allocation.
unsafe impl GlobalAlloc for CountingSystem {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: the caller's contract is the one System requires.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: as above.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        // SAFETY: as above.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}
