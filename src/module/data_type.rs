//! The module data types: one per kind, so that a key of one kind is
//! WRONGTYPE to the others and MEMORY USAGE is exact per kind. Every
//! callback is generic over the [`Kind`] and runs through the guarded door
//! (`entry::guard`): a panic is a logged no-op, never an abort.
//!
//! How each kind's state is encoded (RDB, AOF rewrite, DIGEST, MEMORY
//! USAGE, COPY) is its write's [`Stored`] implementation (see `stored`);
//! this file only registers the callbacks and guards them.

use std::ffi::{c_void, CStr};
use std::os::raw::c_int;
use std::sync::atomic::Ordering;

use redis_module::raw::{self, RedisModuleDigest, RedisModuleIO, RedisModuleString};

use super::entry::guard;
use super::ffi::{api, Ctx};
use super::kinds::Kind;
use super::stored::Stored;

/// The RDB encoding version every type writes today: 1 (times in ns).
pub const ENCODING_VERSION: c_int = 1;

unsafe extern "C" fn rdb_load<K: Kind>(rdb: *mut RedisModuleIO, encver: c_int) -> *mut c_void {
    guard("rdb_load", std::ptr::null_mut(), || K::Write::rdb_load(rdb, encver))
}

// SAFETY (every callback below): the server passes a live value of K's
// registered type.

unsafe extern "C" fn rdb_save<K: Kind>(rdb: *mut RedisModuleIO, value: *mut c_void) {
    guard("rdb_save", (), || unsafe { K::Write::rdb_save(rdb, value) })
}

unsafe extern "C" fn aof_rewrite<K: Kind>(aof: *mut RedisModuleIO, key: *mut RedisModuleString, value: *mut c_void) {
    guard("aof_rewrite", (), || unsafe { K::Write::aof_rewrite(aof, key, value) })
}

unsafe extern "C" fn mem_usage<K: Kind>(value: *const c_void) -> usize {
    guard("mem_usage", 0, || unsafe { K::Write::mem_usage(value) })
}

unsafe extern "C" fn digest<K: Kind>(md: *mut RedisModuleDigest, value: *mut c_void) {
    guard("digest", (), || unsafe { K::Write::digest(md, value) })
}

unsafe extern "C" fn free<K: Kind>(value: *mut c_void) {
    // Once, for good.
    guard("free", (), || unsafe { K::Write::free(value) })
}

unsafe extern "C" fn copy<K: Kind>(
    _from: *mut RedisModuleString,
    _to: *mut RedisModuleString,
    value: *const c_void,
) -> *mut c_void {
    guard("copy", std::ptr::null_mut(), || unsafe { K::Write::copy(value) })
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
