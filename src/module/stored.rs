//! How a kind's state is kept: in a module value, in RDB (and DUMP), in the
//! AOF, in DEBUG DIGEST-VALUE, in MEMORY USAGE, and as the payload of
//! `RL.APPLY` (the effect replicas and the AOF replay). [`Stored`] is the
//! one interface; each encoding of a state lives beside its others, so they
//! cannot drift apart:
//!
//! - `fixed`: the fixed-size states (GCRA, the token bucket, the sliding
//!   window, quotas). A write is the whole new state.
//! - `var_value`: the variable-size states, the sliding log (`log_value`)
//!   and the lease set (`lease_value`): a bounded number of entries in one
//!   block from the server's allocator, kept by one storage policy. A write
//!   is the change to the stored state, of constant size: what the effect
//!   carries, never the whole state (the AOF rewrite alone writes it whole).
//!
//! Every kind's data type writes RDB encoding version 1 today; each
//! `rdb_load` matches the versions it knows explicitly.

use std::ffi::{c_void, CStr};
use std::os::raw::c_int;

use redis_module::raw::{RedisModuleDigest, RedisModuleIO, RedisModuleString, RedisModuleType};

use crate::core::time::Millis;

use super::ffi::{api, OpenKey, Slot};
use super::names;

/// Why a load refuses a payload of a version this build does not know.
pub const UNKNOWN_VERSION: &str = "an encoding version this build does not know (a newer redis-rl wrote it?)";
/// Why a load refuses a payload that ends early (or a read error).
pub const ENDS_EARLY: &str = "the payload ends early or could not be read";

/// The command that carries an effect.
pub const APPLY: &CStr = c"RL.APPLY";

/// The longest effect payload of any write (a lease set's change: a tag
/// and its words, with room for a 128-byte id).
pub const MAX_PAYLOAD: usize = 1 + 8 * crate::core::lease::LEASE_CHANGE_WORDS;

/// A kind's write, and everything about the module value it is written to.
/// Implemented by each kind's [`Algorithm::Write`](crate::core::Algorithm::Write).
///
/// The `unsafe` methods take a value of this kind's data type: one made by
/// [`create`](Self::create), [`rdb_load`](Self::rdb_load) or
/// [`copy`](Self::copy), still live.
pub trait Stored: Copy + 'static {
    /// Whether an effect payload starting with `tag` is this kind's.
    fn owns_tag(tag: u8) -> bool;
    /// The value of a missing key after the write `w` (ownership passes to
    /// the caller); `None` if `w` cannot apply to an empty state.
    fn create(w: &Self) -> Option<*mut c_void>;
    /// Makes the write `w` to `value`, which `key` (open for writing) holds
    /// as type `ty`. The value the key holds after it (it may be a new
    /// one), `None` if the write was refused (nothing changed).
    ///
    /// # Safety
    /// `value` is a live value of this kind's type, held by `key`.
    unsafe fn update(key: &OpenKey<'_>, ty: *mut RedisModuleType, value: *mut c_void, w: &Self) -> Option<*mut c_void>;
    /// Whether a change from the master (or the AOF) leaves, applied to
    /// `value` (NULL: the key holds none), a state this kind's loader
    /// accepts; a change that does not is refused and the key keeps what it
    /// held. (A kind whose changes always do answers true.)
    ///
    /// # Safety
    /// `value` is NULL or a live value of this kind's type.
    unsafe fn admits(_value: *mut c_void, _w: &Self) -> bool {
        true
    }
    /// The effect payload of the write `w`, with the key's absolute expiry.
    fn encode<'b>(w: &Self, expire_at: Millis, buf: &'b mut [u8; MAX_PAYLOAD]) -> &'b [u8];
    /// Stores an effect payload in `key` (open for writing; it may hold
    /// anything, as before a SET or RESTORE): `RL.APPLY`. False if the
    /// payload is malformed or cannot apply to what the key holds.
    ///
    /// # Safety
    /// `ty` is this kind's registered type.
    unsafe fn apply(key: &OpenKey<'_>, ty: *mut RedisModuleType, payload: &[u8], now: Millis) -> bool;
    /// The keyspace event an applied payload fires on a replica, when it is
    /// not the kind's own (a lease set's release or renewal).
    #[inline]
    fn event_of(_payload: &[u8]) -> Option<&'static CStr> {
        None
    }

    /// Whether the kind keeps node-wide state in the RDB beside its keys
    /// (an aux field, written before them): then [`aux_save`](Self::aux_save)
    /// writes it and [`aux_load`](Self::aux_load) reads it back.
    const AUX: bool = false;
    ///
    /// # Safety
    /// `rdb` is the IO the server passed to the running aux_save callback.
    unsafe fn aux_save(_rdb: *mut RedisModuleIO) {}
    /// Why not, if the field is malformed or of a version this build does
    /// not know (the caller logs it).
    ///
    /// # Safety
    /// `rdb` is the IO the server passed to the running aux_load callback.
    unsafe fn aux_load(_rdb: *mut RedisModuleIO, _encver: c_int) -> Result<(), &'static str> {
        Ok(())
    }

    /// What a value of the kind holds, as a load failure names it ("state",
    /// "log", "lease set").
    const STATE: &'static str;
    /// The value in an RDB (or DUMP payload) of encoding version `encver`
    /// (ownership passes to the caller); why not, if it is malformed or of a
    /// version this build does not know (the caller logs it).
    ///
    /// # Safety
    /// `rdb` is the IO the server passed to the running rdb_load callback.
    unsafe fn rdb_load(rdb: *mut RedisModuleIO, encver: c_int) -> Result<*mut c_void, &'static str>;
    /// # Safety
    /// See the trait; `rdb` is the IO the server passed to the running
    /// rdb_save callback.
    unsafe fn rdb_save(rdb: *mut RedisModuleIO, value: *mut c_void);
    /// Emits the commands that rebuild the value: `RL.APPLY key <payload>`
    /// (the server adds `PEXPIREAT` itself).
    ///
    /// # Safety
    /// See the trait; `aof` and `key` are the ones the server passed to the
    /// running aof_rewrite callback.
    unsafe fn aof_rewrite(aof: *mut RedisModuleIO, key: *mut RedisModuleString, value: *mut c_void);
    /// # Safety
    /// See the trait; `md` is the one the server passed to the running
    /// digest callback.
    unsafe fn digest(md: *mut RedisModuleDigest, value: *mut c_void);
    /// The value's own memory, beyond the server's per-key overhead.
    ///
    /// # Safety
    /// See the trait.
    unsafe fn mem_usage(value: *const c_void) -> usize;
    /// # Safety
    /// See the trait.
    unsafe fn copy(value: *const c_void) -> *mut c_void;
    /// # Safety
    /// See the trait; the value is not used again.
    unsafe fn free(value: *mut c_void);
}

/// Emits `RL.APPLY key payload` (under the module's command prefix) into
/// an AOF rewrite: every kind's `aof_rewrite` writes its whole state so.
///
/// # Safety
/// `aof` and `key` are the running aof_rewrite callback's.
pub unsafe fn emit_apply(aof: *mut RedisModuleIO, key: *mut RedisModuleString, payload: &[u8]) {
    // SAFETY: `aof` and `key` are the running aof_rewrite's (the contract); the
    // payload, a "b" argument, is live for the call.
    unsafe {
        api!(RedisModule_EmitAOF(aof, names::apply().as_ptr(), c"sb".as_ptr(), key, payload.as_ptr(), payload.len()))
    };
}

/// Applies a propagated change of a variable-size state (`RL.APPLY`) to the
/// value `key` holds, or makes one if it holds none, and sets the expiry
/// the change carries. False if the key holds something else or the change
/// does not fit its state.
///
/// # Safety
/// `ty` is `S`'s registered type.
pub unsafe fn apply_change<S: Stored>(
    key: &OpenKey<'_>,
    ty: *mut RedisModuleType,
    change: &S,
    expire_at: Millis,
    now: Millis,
) -> bool {
    let stored = match key.slot() {
        // SAFETY: a value of this type is one of S's.
        Slot::Module(t, value) if t == ty => unsafe {
            S::admits(value, change) && S::update(key, ty, value, change).is_some()
        },
        // SAFETY: NULL: no value.
        Slot::Empty if !unsafe { S::admits(std::ptr::null_mut(), change) } => false,
        Slot::Empty => match S::create(change) {
            // SAFETY: a value of `ty` (the contract), just made, owned here.
            Some(value) if unsafe { key.set_value(ty, value) } => true,
            // SAFETY: just made, never handed to the server.
            Some(value) => {
                unsafe { S::free(value) };
                false
            }
            None => false,
        },
        _ => false,
    };
    stored && key.set_expire_at(expire_at, now)
}
