//! The one allocation of a variable-size state (a log, a lease set): a
//! block of words from the server's allocator, `[len, words..]`, so
//! `used_memory`, `maxmemory` and MEMORY USAGE see it. The block holds no
//! pointer, so a copy of its words is the same state.

use std::ffi::c_void;

use redis_module::raw::RedisModuleType;

use super::ffi::{api, has, OpenKey, Slot};

/// A new block of `len` zeroed words; ownership passes to the caller.
pub fn alloc(len: usize) -> *mut c_void {
    // SAFETY: any size (the server aborts on OOM, never returns NULL).
    let p = unsafe { api!(RedisModule_Alloc(8 * (1 + len))) }.cast::<u64>();
    // SAFETY: RedisModule_Alloc returns at least the requested size, aligned
    // for any type (it aborts on OOM, never returns NULL).
    unsafe {
        p.write(len as u64);
        std::ptr::write_bytes(p.add(1), 0, len);
    }
    p.cast()
}

/// The block's words.
///
/// # Safety
/// `value` is a live block made by [`alloc`] (or a copy), not written for `'v`.
pub unsafe fn words<'v>(value: *const c_void) -> &'v [u64] {
    let p = value.cast::<u64>();
    // SAFETY: per the contract: word 0 is the length of what follows.
    unsafe { std::slice::from_raw_parts(p.add(1), *p as usize) }
}

/// The same, to write.
///
/// # Safety
/// As for [`words`], and nothing else reads it for `'v`.
pub unsafe fn words_mut<'v>(value: *mut c_void) -> &'v mut [u64] {
    let p = value.cast::<u64>();
    // SAFETY: per the contract.
    unsafe { std::slice::from_raw_parts_mut(p.add(1), *p as usize) }
}

/// What a block costs: what the server's allocator holds for it (its words
/// and its length word, rounded up to the allocator's size class), so
/// MEMORY USAGE is what deleting the key frees; the words alone where the
/// server cannot say (RedisModule_MallocSize).
///
/// # Safety
/// As for [`words`].
pub unsafe fn bytes(value: *const c_void) -> usize {
    // SAFETY: per the contract.
    let asked = 8 * (1 + unsafe { words(value) }.len());
    if has!(RedisModule_MallocSize) {
        // SAFETY: a live block from RedisModule_Alloc (the contract).
        unsafe { api!(RedisModule_MallocSize(value.cast_mut())) }.max(asked)
    } else {
        asked
    }
}

/// A new block with the same words.
///
/// # Safety
/// As for [`words`].
pub unsafe fn copy(value: *const c_void) -> *mut c_void {
    // SAFETY: per the contract.
    let from = unsafe { words(value) };
    let block = alloc(from.len());
    // SAFETY: just made, owned here, of the same length.
    unsafe { words_mut(block) }.copy_from_slice(from);
    block
}

/// Frees a block.
///
/// # Safety
/// `value` is a block made by [`alloc`] (or [`copy`]) that no key holds
/// (never handed to the server, or taken back from it), not used again.
pub unsafe fn free(value: *mut c_void) {
    // SAFETY: a block from RedisModule_Alloc that no key holds (the contract).
    unsafe { api!(RedisModule_Free(value)) };
}

/// Makes `new` the value of `key` in place of `old` (both blocks of type
/// `ty`) and frees the one the key does not hold: `new` (returned), or
/// `None` if the server refused it (the key still holds `old`).
///
/// # Safety
/// `key` holds `old` as its value of type `ty`, whose values are blocks;
/// `new` is a block made here that no key holds. After the call the caller
/// uses neither `old` nor, on `None`, `new`.
pub unsafe fn replace(
    key: &OpenKey<'_>,
    ty: *mut RedisModuleType,
    old: *mut c_void,
    new: *mut c_void,
) -> Option<*mut c_void> {
    // SAFETY: per the contract, `new` is a value of type `ty`, owned here.
    if unsafe { key.replace_value(ty, new) } {
        // SAFETY: the key no longer holds `old` (the server hands it back
        // unfreed), and per the contract nothing else does.
        unsafe { free(old) };
        Some(new)
    } else {
        // SAFETY: refused: the server does not hold `new`.
        unsafe { free(new) };
        None
    }
}

/// Makes `block` (a whole state, just made) the value of `key`, as RESTORE
/// would, whatever the key held: a value of type `ty` is replaced (and
/// freed), anything else overwritten. False if the server refused it (then
/// `block` is freed).
///
/// # Safety
/// The values of type `ty` are blocks (a log's or a lease set's); `block`
/// is one made here that no key holds, not used by the caller again.
pub unsafe fn set_whole(key: &OpenKey<'_>, ty: *mut RedisModuleType, block: *mut c_void) -> bool {
    match key.slot() {
        // SAFETY: the key holds `old` as type `ty`: a block (the contract).
        Slot::Module(t, old) if t == ty => unsafe { replace(key, ty, old, block) }.is_some(),
        // SAFETY: a value of type `ty`, owned here (the contract).
        _ if unsafe { key.set_value(ty, block) } => true,
        _ => {
            // SAFETY: refused: the server does not hold it.
            unsafe { free(block) };
            false
        }
    }
}
