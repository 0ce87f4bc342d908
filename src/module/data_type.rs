//! The module data types: one per kind, so that a key of one kind is
//! WRONGTYPE to the others and MEMORY USAGE is exact per kind. Every
//! callback is generic over the [`Kind`] and runs through the guarded door
//! (`entry::guard`): a panic is a logged no-op, never an abort.
//!
//! How a state is encoded is in `stored`:
//!
//! - RDB (encoding version 1): the state's words as RDB unsigneds, times
//!   in ns. `rdb_load` matches the encoding version explicitly: version 0
//!   (0.1.0, GCRA and token-bucket times in µs) still loads, converted.
//! - AOF rewrite: `RL.APPLY key <payload>`, the same command that
//!   replicates writes; the server adds `PEXPIREAT` itself.
//! - DEBUG DIGEST-VALUE: the words, in order.

use std::ffi::{c_void, CStr};
use std::os::raw::c_int;
use std::sync::atomic::Ordering;

use redis_module::raw::{self, RedisModuleDigest, RedisModuleIO, RedisModuleString};

use crate::core::Algorithm;

use super::entry::guard;
use super::ffi::{api, Ctx};
use super::kinds::Kind;
use super::stored::{self, Stored, MAX_PAYLOAD, MAX_WORDS};

/// The state type of kind `K`.
type StateOf<K> = <K as Algorithm>::State;

/// The RDB encoding version every type writes today: 1, times in ns.
pub const ENCODING_VERSION: c_int = 1;

unsafe extern "C" fn rdb_load<K: Kind>(rdb: *mut RedisModuleIO, encver: c_int) -> *mut c_void {
    guard("rdb_load", std::ptr::null_mut(), || match encver {
        // 0.1.0: the same words, GCRA and token-bucket times in µs.
        0 => load_words::<StateOf<K>>(rdb, StateOf::<K>::from_v0_words),
        1 => load_words::<StateOf<K>>(rdb, StateOf::<K>::from_words),
        _ => std::ptr::null_mut(),
    })
}

/// The state's words, as RDB unsigneds, read with `from_words` (the
/// encoding version's).
fn load_words<S: Stored>(rdb: *mut RedisModuleIO, from_words: fn([u64; MAX_WORDS]) -> Option<S>) -> *mut c_void {
    let mut words = [0u64; MAX_WORDS];
    for w in words.iter_mut().take(S::WORDS) {
        *w = api!(RedisModule_LoadUnsigned(rdb));
    }
    if api!(RedisModule_IsIOError(rdb)) != 0 {
        return std::ptr::null_mut();
    }
    match from_words(words) {
        Some(state) => stored::new_value(state),
        None => std::ptr::null_mut(),
    }
}

unsafe extern "C" fn rdb_save<K: Kind>(rdb: *mut RedisModuleIO, value: *mut c_void) {
    guard("rdb_save", (), || {
        // SAFETY: the server passes a value of this type.
        let state: StateOf<K> = unsafe { stored::read(value) };
        for &w in state.to_words().iter().take(StateOf::<K>::WORDS) {
            api!(RedisModule_SaveUnsigned(rdb, w));
        }
    })
}

unsafe extern "C" fn aof_rewrite<K: Kind>(aof: *mut RedisModuleIO, key: *mut RedisModuleString, value: *mut c_void) {
    guard("aof_rewrite", (), || {
        // SAFETY: the server passes a value of this type.
        let state: StateOf<K> = unsafe { stored::read(value) };
        let mut buf = [0u8; MAX_PAYLOAD];
        let payload = stored::encode(&state, 0, &mut buf);
        api!(RedisModule_EmitAOF(aof, stored::APPLY.as_ptr(), c"sb".as_ptr(), key, payload.as_ptr(), payload.len()));
    })
}

unsafe extern "C" fn mem_usage<K: Kind>(_value: *const c_void) -> usize {
    stored::value_size::<StateOf<K>>()
}

unsafe extern "C" fn digest<K: Kind>(md: *mut RedisModuleDigest, value: *mut c_void) {
    guard("digest", (), || {
        // SAFETY: the server passes a value of this type.
        let state: StateOf<K> = unsafe { stored::read(value) };
        for &w in state.to_words().iter().take(StateOf::<K>::WORDS) {
            api!(RedisModule_DigestAddLongLong(md, w as i64));
        }
        api!(RedisModule_DigestEndSequence(md));
    })
}

unsafe extern "C" fn free<K: Kind>(value: *mut c_void) {
    // SAFETY: the server passes a value of this type, once, for good.
    guard("free", (), || unsafe { stored::free_value::<StateOf<K>>(value) })
}

unsafe extern "C" fn copy<K: Kind>(
    _from: *mut RedisModuleString,
    _to: *mut RedisModuleString,
    value: *const c_void,
) -> *mut c_void {
    guard("copy", std::ptr::null_mut(), || {
        // SAFETY: the server passes a value of this type.
        stored::new_value::<StateOf<K>>(unsafe { stored::read(value as *mut c_void) })
    })
}

/// Registers the data type of kind `K`. Call once, from the module's load.
pub fn register<K: Kind>(ctx: Ctx<'_>) -> Result<(), &'static CStr> {
    let mut methods = raw::RedisModuleTypeMethods {
        // Version 4 is what Redis 7.0 knows; we use nothing newer.
        version: 4,
        rdb_load: Some(rdb_load::<K>),
        rdb_save: Some(rdb_save::<K>),
        aof_rewrite: Some(aof_rewrite::<K>),
        mem_usage: Some(mem_usage::<K>),
        digest: Some(digest::<K>),
        free: Some(free::<K>),
        aux_load: None,
        aux_save: None,
        aux_save_triggers: 0,
        free_effort: None,
        unlink: None,
        copy: Some(copy::<K>),
        defrag: None,
        mem_usage2: None,
        free_effort2: None,
        unlink2: None,
        copy2: None,
        aux_save2: None,
    };
    let ty = api!(RedisModule_CreateDataType(ctx.raw(), K::TYPE_NAME.as_ptr(), ENCODING_VERSION, &mut methods));
    if ty.is_null() {
        return Err(K::TYPE_NAME);
    }
    K::registered().store(ty, Ordering::Relaxed);
    Ok(())
}
