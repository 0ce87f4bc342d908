//! The crate's global allocator: the server's (RedisModule_Alloc and its
//! kin) once the module API is initialised, so every `Vec` and `String` the
//! module makes (RL.ALL's parts, AOF payloads, RL.TOP's summaries, a
//! digest's buffer) counts in `used_memory`, `maxmemory` and the
//! allocator's INFO stats, as the module's values already do; the system's
//! where there is no server (the unit tests, the core tests and benchmarks,
//! which link the same crate).
//!
//! Which one serves is decided once per process, not per call: the module
//! API's function pointers are set by `RedisModule_Init`, first thing in
//! `RedisModule_OnLoad`, before any code of this crate runs (the load hook
//! allocates nothing before it), and never unset; without a server they
//! are never set. So a block is always freed by the allocator that made it.
//! (A block whose alignment the server's allocator does not promise is
//! over-allocated, and the pointer it returned is kept just below the
//! aligned block.)
//!
//! With the test hooks every allocation is counted too (`alloc_count`).

use std::alloc::{GlobalAlloc, Layout, System};
use std::ffi::c_void;

use redis_module::raw;

/// The alignment every RedisModule_Alloc block has: zmalloc's, 8 bytes or
/// more whatever allocator the server was built with (16 with jemalloc and
/// glibc malloc, 8 where zmalloc keeps a size prefix).
const SERVER_ALIGN: usize = 8;

/// The server's allocator when there is one, else the system's.
pub struct ServerAlloc;

type AllocFn = unsafe extern "C" fn(usize) -> *mut c_void;
type FreeFn = unsafe extern "C" fn(*mut c_void);
type ReallocFn = unsafe extern "C" fn(*mut c_void, usize) -> *mut c_void;

/// The server's alloc, free and realloc, if the module API is initialised.
#[inline]
fn server() -> Option<(AllocFn, FreeFn, ReallocFn)> {
    // SAFETY: copies function pointers out of the table RedisModule_Init
    // fills in once, on the main thread, before anything here runs.
    unsafe {
        match (raw::RedisModule_Alloc, raw::RedisModule_Free, raw::RedisModule_Realloc) {
            (Some(a), Some(f), Some(r)) => Some((a, f, r)),
            _ => None,
        }
    }
}

#[inline]
fn count() {
    #[cfg(feature = "test-hooks")]
    crate::alloc_count::count();
}

/// A block of `layout` from `alloc`: directly when the server's alignment
/// suffices, else over-allocated and aligned by hand, the server's pointer
/// kept in the word below the block.
///
/// # Safety
/// `layout` has a non-zero size (GlobalAlloc's contract).
#[inline]
unsafe fn server_alloc(alloc: AllocFn, layout: Layout) -> *mut u8 {
    if layout.align() <= SERVER_ALIGN {
        // SAFETY: the server's allocator takes any size (it aborts on OOM).
        return unsafe { alloc(layout.size()) }.cast();
    }
    let Some(size) = layout.size().checked_add(layout.align()) else { return std::ptr::null_mut() };
    // SAFETY: as above.
    let base = unsafe { alloc(size) }.cast::<u8>();
    if base.is_null() {
        return base;
    }
    // At least one word (the alignment is above 8) and at most `align`
    // bytes past `base`, so the block and the word below it are inside.
    let offset = layout.align() - (base.addr() & (layout.align() - 1));
    // SAFETY: `offset` is within the allocation (see above); the word below
    // the aligned block is 8-aligned and ours.
    unsafe {
        let block = base.add(offset);
        block.cast::<*mut u8>().sub(1).write(base);
        block
    }
}

/// Frees a block [`server_alloc`] made with `layout`.
///
/// # Safety
/// `ptr` was returned by `server_alloc(_, layout)` and not freed since.
#[inline]
unsafe fn server_free(free: FreeFn, ptr: *mut u8, layout: Layout) {
    let base = if layout.align() <= SERVER_ALIGN {
        ptr
    } else {
        // SAFETY: per the contract, the word below holds the server's pointer.
        unsafe { ptr.cast::<*mut u8>().sub(1).read() }
    };
    // SAFETY: `base` came from the server's allocator.
    unsafe { free(base.cast()) }
}

// SAFETY: each call goes to one allocator, the same for the whole process
// (see the module comment), which upholds GlobalAlloc's contract: the
// system's, or the server's with the alignment handled above.
unsafe impl GlobalAlloc for ServerAlloc {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        match server() {
            // SAFETY: the caller's contract (a non-zero size).
            Some((alloc, _, _)) => unsafe { server_alloc(alloc, layout) },
            // SAFETY: the caller's contract is the one System requires.
            None => unsafe { System.alloc(layout) },
        }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        match server() {
            // SAFETY: made by `alloc` above with the same layout, so by the
            // server's allocator.
            Some((_, free, _)) => unsafe { server_free(free, ptr, layout) },
            // SAFETY: as above, by System.
            None => unsafe { System.dealloc(ptr, layout) },
        }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count();
        match server() {
            Some((alloc, _, _)) => {
                // SAFETY: as for `alloc`; the block is `layout.size()` bytes.
                unsafe {
                    let p = server_alloc(alloc, layout);
                    if !p.is_null() {
                        std::ptr::write_bytes(p, 0, layout.size());
                    }
                    p
                }
            }
            // SAFETY: as for `alloc`.
            None => unsafe { System.alloc_zeroed(layout) },
        }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        match server() {
            // SAFETY: `ptr` came from the server's allocator unshifted (the
            // alignment is the server's); `new_size` is non-zero.
            Some((_, _, realloc)) if layout.align() <= SERVER_ALIGN => unsafe { realloc(ptr.cast(), new_size) }.cast(),
            Some((alloc, free, _)) => {
                // SAFETY: GlobalAlloc's contract makes the new layout valid;
                // the old block has `layout.size()` bytes, the new
                // `new_size`, and they do not overlap.
                unsafe {
                    let new_layout = Layout::from_size_align_unchecked(new_size, layout.align());
                    let new = server_alloc(alloc, new_layout);
                    if !new.is_null() {
                        std::ptr::copy_nonoverlapping(ptr, new, layout.size().min(new_size));
                        server_free(free, ptr, layout);
                    }
                    new
                }
            }
            // SAFETY: as for `alloc`.
            None => unsafe { System.realloc(ptr, layout, new_size) },
        }
    }
}
