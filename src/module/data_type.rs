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
use super::ffi::{api, log_warning, Ctx};
use super::kinds::Kind;
use super::stored::Stored;

/// The RDB encoding version every type writes today: 1 (times in ns).
pub const ENCODING_VERSION: c_int = 1;

unsafe extern "C" fn rdb_load<K: Kind>(rdb: *mut RedisModuleIO, encver: c_int) -> *mut c_void {
    // SAFETY: the IO the server passed to this callback.
    guard("rdb_load", std::ptr::null_mut(), || match unsafe { K::Write::rdb_load(rdb, encver) } {
        Ok(value) => value,
        Err(why) => {
            refused::<K>(K::Write::STATE, encver, why);
            std::ptr::null_mut()
        }
    })
}

/// Says in the server log why a load (an RDB, a RESTORE) refused a value or
/// an aux field of kind `K`: the server itself says only that it failed.
fn refused<K: Kind>(what: &str, encver: c_int, why: &str) {
    let command = K::COMMAND.to_str().unwrap_or("RL.?");
    log_warning(&format!("refusing an {command} {what} (encoding {encver}): {why}"));
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

/// When the aux field is written and read: before the keys.
const AUX_BEFORE_RDB: c_int = 1 << 0;

unsafe extern "C" fn aux_save<K: Kind>(rdb: *mut RedisModuleIO, when: c_int) {
    guard("aux_save", (), || {
        if when == AUX_BEFORE_RDB {
            // SAFETY: the IO the server passed to this callback.
            unsafe { K::Write::aux_save(rdb) }
        }
    })
}

unsafe extern "C" fn aux_load<K: Kind>(rdb: *mut RedisModuleIO, encver: c_int, when: c_int) -> c_int {
    let ok = guard("aux_load", false, || {
        when == AUX_BEFORE_RDB
            // SAFETY: the IO the server passed to this callback.
            && unsafe { K::Write::aux_load(rdb, encver) }.map_err(|why| refused::<K>("aux field", encver, why)).is_ok()
    });
    if ok {
        raw::REDISMODULE_OK as c_int
    } else {
        raw::REDISMODULE_ERR as c_int
    }
}

/// Whether the server reads version 5 type methods (aux_save2): Redis 7.2+
/// and Valkey, told by an API of the same release, CachedMicroseconds.
fn type_methods_v5() -> bool {
    // SAFETY: copying a function pointer out of the module API table.
    unsafe { raw::RedisModule_CachedMicroseconds }.is_some()
}

/// Registers the data type of kind `K`. Call once, from the module's load.
pub fn register<K: Kind>(ctx: Ctx<'_>) -> Result<(), &'static CStr> {
    // Version 4 is what Redis 7.0 knows. A kind with an aux field uses
    // version 5's aux_save2 where the server has it (Redis 7.2+, Valkey:
    // the field is left out of an RDB when nothing was written to it), and
    // aux_save on Redis 7.0 (which writes the field into every RDB).
    let v5 = type_methods_v5();
    let aux = K::Write::AUX;
    let mut methods = raw::RedisModuleTypeMethods {
        version: if aux && v5 { 5 } else { 4 },
        rdb_load: Some(rdb_load::<K>),
        rdb_save: Some(rdb_save::<K>),
        aof_rewrite: Some(aof_rewrite::<K>),
        mem_usage: Some(mem_usage::<K>),
        digest: Some(digest::<K>),
        free: Some(free::<K>),
        aux_load: if aux { Some(aux_load::<K>) } else { None },
        aux_save: if aux && !v5 { Some(aux_save::<K>) } else { None },
        aux_save_triggers: if aux { AUX_BEFORE_RDB } else { 0 },
        free_effort: None,
        unlink: None,
        copy: Some(copy::<K>),
        defrag: None,
        mem_usage2: None,
        free_effort2: None,
        unlink2: None,
        copy2: None,
        aux_save2: if aux && v5 { Some(aux_save::<K>) } else { None },
    };
    // SAFETY: the load's context; the type name is a static C string, `methods`
    // lives through the call (the server copies it).
    let ty =
        unsafe { api!(RedisModule_CreateDataType(ctx.raw(), K::TYPE_NAME.as_ptr(), ENCODING_VERSION, &mut methods)) };
    if ty.is_null() {
        return Err(K::TYPE_NAME);
    }
    K::registered().store(ty, Ordering::Relaxed);
    Ok(())
}
