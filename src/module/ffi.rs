//! The few raw module-API calls the hot path makes, wrapped once.
//!
//! The function pointers are filled in by `RedisModule_Init` when the module
//! loads; `api_available` checks at load time that every one this module
//! calls unconditionally is present, so the `expect`s below cannot fire on a
//! server that loaded the module. (Were one to fire, the panic is caught at
//! the command entry point and answered as an error: it never reaches C.)

use crate::core::time::Millis;
use std::marker::PhantomData;
use std::os::raw::{c_char, c_int};
use std::slice;

use redis_module::raw::{self, RedisModuleCtx, RedisModuleKey, RedisModuleString, RedisModuleType};

/// Calls a module-API function pointer that `api_available` has verified
/// (or that the caller checked with `has!`). The call is `unsafe`: each use
/// sits in an `unsafe` block whose SAFETY comment says why its arguments
/// are what the function requires (the pointers live, the types right).
/// What the macro itself vouches for is only the function pointer: set by
/// RedisModule_Init from the server's own table, checked non-null at load,
/// and never written afterwards.
macro_rules! api {
    ($name:ident ( $($arg:expr),* $(,)? )) => {
        (redis_module::raw::$name.expect(concat!(stringify!($name), " missing")))($($arg),*)
    };
}
pub(crate) use api;

/// Whether the server provides a module-API function.
macro_rules! has {
    ($name:ident) => {{
        // SAFETY: copies a function pointer out of the table that
        // RedisModule_Init filled in; nothing writes it afterwards.
        #[allow(unused_unsafe)]
        let f = unsafe { redis_module::raw::$name };
        f.is_some()
    }};
}
pub(crate) use has;

/// Every module-API function called without an availability check. All of
/// them exist on Redis 7.0.
pub fn api_available() -> Result<(), &'static str> {
    let required: &[(&str, bool)] = &[
        ("OpenKey", has!(RedisModule_OpenKey)),
        ("CloseKey", has!(RedisModule_CloseKey)),
        ("KeyType", has!(RedisModule_KeyType)),
        ("ModuleTypeGetType", has!(RedisModule_ModuleTypeGetType)),
        ("ModuleTypeGetValue", has!(RedisModule_ModuleTypeGetValue)),
        ("ModuleTypeSetValue", has!(RedisModule_ModuleTypeSetValue)),
        ("ModuleTypeReplaceValue", has!(RedisModule_ModuleTypeReplaceValue)),
        ("SetExpire", has!(RedisModule_SetExpire)),
        ("StringPtrLen", has!(RedisModule_StringPtrLen)),
        ("ReplyWithLongLong", has!(RedisModule_ReplyWithLongLong)),
        ("ReplyWithArray", has!(RedisModule_ReplyWithArray)),
        ("ReplyWithError", has!(RedisModule_ReplyWithError)),
        ("ReplyWithSimpleString", has!(RedisModule_ReplyWithSimpleString)),
        ("WrongArity", has!(RedisModule_WrongArity)),
        ("GetContextFlags", has!(RedisModule_GetContextFlags)),
        ("Milliseconds", has!(RedisModule_Milliseconds)),
        ("Replicate", has!(RedisModule_Replicate)),
        ("ReplicateVerbatim", has!(RedisModule_ReplicateVerbatim)),
        ("DeleteKey", has!(RedisModule_DeleteKey)),
        ("SignalModifiedKey", has!(RedisModule_SignalModifiedKey)),
        ("NotifyKeyspaceEvent", has!(RedisModule_NotifyKeyspaceEvent)),
        ("Alloc", has!(RedisModule_Alloc)),
        ("Free", has!(RedisModule_Free)),
        ("SaveUnsigned", has!(RedisModule_SaveUnsigned)),
        ("LoadUnsigned", has!(RedisModule_LoadUnsigned)),
        ("IsIOError", has!(RedisModule_IsIOError)),
        ("EmitAOF", has!(RedisModule_EmitAOF)),
        ("DigestAddLongLong", has!(RedisModule_DigestAddLongLong)),
        ("DigestAddStringBuffer", has!(RedisModule_DigestAddStringBuffer)),
        ("DigestEndSequence", has!(RedisModule_DigestEndSequence)),
        ("CreateDataType", has!(RedisModule_CreateDataType)),
        ("CreateCommand", has!(RedisModule_CreateCommand)),
        // RL.TOP's subcommands (Redis 7.0+, as GetCommand).
        ("GetCommand", has!(RedisModule_GetCommand)),
        ("CreateSubcommand", has!(RedisModule_CreateSubcommand)),
        ("SetModuleOptions", has!(RedisModule_SetModuleOptions)),
        // RL.ACQUIRE ... WAIT (commands::wait).
        ("BlockClient", has!(RedisModule_BlockClient)),
        ("UnblockClient", has!(RedisModule_UnblockClient)),
        ("GetBlockedClientPrivateData", has!(RedisModule_GetBlockedClientPrivateData)),
        ("GetBlockedClientHandle", has!(RedisModule_GetBlockedClientHandle)),
        ("CreateTimer", has!(RedisModule_CreateTimer)),
        ("CreateString", has!(RedisModule_CreateString)),
        ("FreeString", has!(RedisModule_FreeString)),
        ("GetSelectedDb", has!(RedisModule_GetSelectedDb)),
        ("SelectDb", has!(RedisModule_SelectDb)),
    ];
    match required.iter().find(|(_, present)| !present) {
        Some((name, _)) => Err(name),
        None => Ok(()),
    }
}

/// The server's context for one call (a command, an event, a load), valid
/// only for that call: the lifetime `'c` is the callback's, so a `Ctx` can
/// be neither stored nor returned, and every function that hands the
/// pointer to the module API takes a `Ctx`, never a bare pointer. Made only
/// by `entry`, from the pointer the server passed.
#[derive(Clone, Copy)]
pub struct Ctx<'c> {
    raw: *mut RedisModuleCtx,
    call: PhantomData<&'c mut RedisModuleCtx>,
}

impl Ctx<'_> {
    /// # Safety
    /// `raw` must be the context the server passed to the running callback,
    /// and the result must not outlive that callback.
    #[inline]
    pub unsafe fn new(raw: *mut RedisModuleCtx) -> Self {
        Self { raw, call: PhantomData }
    }

    /// The pointer, for a module-API call made during this call.
    #[inline]
    pub fn raw(self) -> *mut RedisModuleCtx {
        self.raw
    }
}

/// The arguments of one command call, as the server passed them.
#[derive(Clone, Copy)]
pub struct Argv<'a> {
    strings: &'a [*mut RedisModuleString],
}

#[allow(clippy::len_without_is_empty)]
impl<'a> Argv<'a> {
    /// # Safety
    /// `argv` and `argc` must be the ones the server passed to a command
    /// handler; the result must not outlive that call.
    pub unsafe fn new(argv: *mut *mut RedisModuleString, argc: c_int) -> Self {
        let len = usize::try_from(argc).unwrap_or(0);
        let strings = if argv.is_null() || len == 0 {
            &[][..]
        } else {
            // SAFETY: the server passes `argc` valid string pointers.
            unsafe { slice::from_raw_parts(argv, len) }
        };
        Self { strings }
    }

    pub fn len(&self) -> usize {
        self.strings.len()
    }

    /// Argument `i` as a key name, for passing back to the server.
    pub fn key(&self, i: usize) -> KeyName<'a> {
        KeyName { raw: self.strings[i], call: PhantomData }
    }

    /// The bytes of argument `i` (binary-safe; not necessarily UTF-8).
    pub fn bytes(&self, i: usize) -> &'a [u8] {
        let mut len = 0usize;
        // SAFETY: one of the command's arguments (the contract of `new`).
        let ptr = unsafe { api!(RedisModule_StringPtrLen(self.strings[i], &mut len)) };
        if ptr.is_null() {
            return &[];
        }
        // SAFETY: StringPtrLen returns the string's buffer and length; the
        // string lives as long as the command's argv.
        unsafe { slice::from_raw_parts(ptr.cast::<u8>(), len) }
    }
}

/// A key name the server passed to the running command (one of its
/// arguments): live for `'a`, the command's call. Made only by
/// [`Argv::key`], so every function that hands a key name to the module API
/// takes one of these, never a bare pointer.
#[derive(Clone, Copy)]
pub struct KeyName<'a> {
    raw: *mut RedisModuleString,
    call: PhantomData<&'a RedisModuleString>,
}

impl KeyName<'_> {
    /// A key name from a raw string (the fuzzers' fake server).
    ///
    /// # Safety
    /// `raw` is a live string for as long as the result is used.
    #[cfg(feature = "fuzzing")]
    pub unsafe fn from_raw(raw: *mut RedisModuleString) -> Self {
        KeyName { raw, call: PhantomData }
    }

    /// The pointer, for a module-API call made during the command.
    #[inline]
    pub fn raw(self) -> *mut RedisModuleString {
        self.raw
    }
}

/// A string made for a module-API call (a key name the module keeps as
/// bytes, such as a waiter's queue), freed on drop, within the call.
pub struct OwnedString<'c> {
    ctx: Ctx<'c>,
    raw: *mut RedisModuleString,
}

impl<'c> OwnedString<'c> {
    pub fn new(ctx: Ctx<'c>, bytes: &[u8]) -> Self {
        // SAFETY: the context is live for this call; the server copies the
        // bytes.
        let raw = unsafe { api!(RedisModule_CreateString(ctx.raw(), bytes.as_ptr().cast(), bytes.len())) };
        Self { ctx, raw }
    }

    /// The string as a key name, live while it is.
    pub fn key(&self) -> KeyName<'_> {
        KeyName { raw: self.raw, call: PhantomData }
    }
}

impl Drop for OwnedString<'_> {
    fn drop(&mut self) {
        // SAFETY: made by `new` with this context, freed once, within its call.
        unsafe { api!(RedisModule_FreeString(self.ctx.raw(), self.raw)) };
    }
}

/// An open key, closed on drop; it cannot outlive the call it was opened in.
pub struct OpenKey<'c> {
    key: *mut RedisModuleKey,
    call: PhantomData<Ctx<'c>>,
}

/// What an open key holds.
pub enum Slot {
    Empty,
    /// A value of one of the given module types: its value pointer.
    Module(*mut RedisModuleType, *mut std::ffi::c_void),
    Other,
}

impl<'c> OpenKey<'c> {
    /// Opens `name` for reading and writing.
    #[inline]
    pub fn write(ctx: Ctx<'c>, name: KeyName<'_>) -> Self {
        Self::open(ctx, name, (raw::REDISMODULE_READ | raw::REDISMODULE_WRITE) as c_int)
    }

    /// Opens `name` for reading only: it is never created, and a read-only
    /// command (a replica, a read-only script) may open it.
    #[inline]
    pub fn read(ctx: Ctx<'c>, name: KeyName<'_>) -> Self {
        Self::open(ctx, name, raw::REDISMODULE_READ as c_int)
    }

    #[inline]
    fn open(ctx: Ctx<'c>, name: KeyName<'_>, mode: c_int) -> Self {
        // SAFETY: the context and the name are live for this call (their
        // types say so); the key is closed on drop, within the call.
        let key = unsafe { api!(RedisModule_OpenKey(ctx.raw(), name.raw(), mode)) }.cast::<RedisModuleKey>();
        Self { key, call: PhantomData }
    }

    pub fn slot(&self) -> Slot {
        // The type first: non-NULL only for a module value, the usual case
        // (one call fewer). A key opened for reading only that does not
        // exist is NULL, which both calls answer as no type / empty.
        // SAFETY (the three): `self.key` is open (or NULL, which they take),
        // in the call it was opened in (the lifetime says so).
        let ty = unsafe { api!(RedisModule_ModuleTypeGetType(self.key)) };
        if !ty.is_null() {
            return Slot::Module(ty, unsafe { api!(RedisModule_ModuleTypeGetValue(self.key)) });
        }
        if unsafe { api!(RedisModule_KeyType(self.key)) } == raw::REDISMODULE_KEYTYPE_EMPTY as c_int {
            Slot::Empty
        } else {
            Slot::Other
        }
    }

    /// Stores `value` (ownership passes to the server) as the key's value.
    ///
    /// # Safety
    /// `ty` is one of this module's registered types and `value` a live
    /// value of it that no key holds: the server frees it with `ty`'s
    /// callback. On false the caller still owns `value`.
    pub unsafe fn set_value(&self, ty: *mut RedisModuleType, value: *mut std::ffi::c_void) -> bool {
        // SAFETY: the key is open; `ty` and `value` per the contract.
        unsafe { api!(RedisModule_ModuleTypeSetValue(self.key, ty, value)) == raw::REDISMODULE_OK as c_int }
    }

    /// Replaces the value of a key that holds one of type `ty` (the old value
    /// is not freed: the caller owns it).
    ///
    /// # Safety
    /// As for [`set_value`](Self::set_value); the key holds a value of `ty`.
    pub unsafe fn replace_value(&self, ty: *mut RedisModuleType, value: *mut std::ffi::c_void) -> bool {
        let mut old = std::ptr::null_mut();
        // SAFETY: the key is open and holds a value of `ty`; `value` per
        // the contract.
        unsafe {
            api!(RedisModule_ModuleTypeReplaceValue(self.key, ty, value, &mut old)) == raw::REDISMODULE_OK as c_int
        }
    }

    /// Deletes the key (open for writing).
    pub fn delete(&self) -> bool {
        // SAFETY: the key is open (the server refuses it unless for writing).
        unsafe { api!(RedisModule_DeleteKey(self.key)) == raw::REDISMODULE_OK as c_int }
    }

    /// Sets the key's absolute expiry, ms since the epoch. `now` is the
    /// time the command runs at, used where the server has no absolute form.
    pub fn set_expire_at(&self, at: Millis, now: Millis) -> bool {
        let at = i64::try_from(at.0).unwrap_or(i64::MAX);
        // SAFETY: copying a function pointer out of the table.
        let set_abs = unsafe { raw::RedisModule_SetAbsExpire };
        if let Some(set_abs) = set_abs {
            // SAFETY: the key is open for writing and holds a value.
            return unsafe { set_abs(self.key, at) } == raw::REDISMODULE_OK as c_int;
        }
        // Redis 7.0 has only the relative form, which adds the server's
        // current time again: exact while the millisecond has not ticked
        // since `now` was read (at worst the key lives 1 ms longer).
        let rel = at.saturating_sub(i64::try_from(now.0).unwrap_or(0)).max(0);
        // SAFETY: the key is open (the server refuses it unless for writing).
        unsafe { api!(RedisModule_SetExpire(self.key, rel)) == raw::REDISMODULE_OK as c_int }
    }
}

impl Drop for OpenKey<'_> {
    fn drop(&mut self) {
        if !self.key.is_null() {
            // SAFETY: opened by `open`, closed once, within its call.
            unsafe { api!(RedisModule_CloseKey(self.key)) };
        }
    }
}

/// Context flags of the running command.
pub fn context_flags(ctx: Ctx<'_>) -> u32 {
    // SAFETY: a live context (a `Ctx`).
    unsafe { api!(RedisModule_GetContextFlags(ctx.raw())) as u32 }
}

pub fn reply_error(ctx: Ctx<'_>, msg: &str) {
    // Error texts are ours (never raw client bytes), but be safe about NULs.
    let c = std::ffi::CString::new(msg.replace('\0', "")).unwrap_or_default();
    // SAFETY: a live context (a `Ctx`); `c` is a C string, live for the call.
    unsafe { api!(RedisModule_ReplyWithError(ctx.raw(), c.as_ptr())) };
}

pub fn reply_wrong_arity(ctx: Ctx<'_>) {
    // SAFETY: a live context (a `Ctx`).
    unsafe { api!(RedisModule_WrongArity(ctx.raw())) };
}

pub fn reply_i64(ctx: Ctx<'_>, v: i64) {
    // SAFETY: a live context (a `Ctx`).
    unsafe { api!(RedisModule_ReplyWithLongLong(ctx.raw(), v)) };
}

pub fn reply_array(ctx: Ctx<'_>, len: usize) {
    // SAFETY: a live context (a `Ctx`).
    unsafe { api!(RedisModule_ReplyWithArray(ctx.raw(), len as _)) };
}

pub fn reply_ok(ctx: Ctx<'_>) {
    // SAFETY: a live context (a `Ctx`); a static C string.
    unsafe { api!(RedisModule_ReplyWithSimpleString(ctx.raw(), c"OK".as_ptr())) };
}

/// Writes a warning to the server log.
pub fn log_warning(msg: &str) {
    let text = std::ffi::CString::new(msg.replace('\0', "")).unwrap_or_default();
    // SAFETY: RedisModule_Log accepts a NULL context; "%s" with one C string.
    unsafe {
        let log = raw::RedisModule_Log;
        if let Some(log) = log {
            log(std::ptr::null_mut(), c"warning".as_ptr(), c"rl: %s".as_ptr(), text.as_ptr());
        }
    }
}

/// A NUL-terminated static string for the C API.
pub const fn cstr(s: &'static std::ffi::CStr) -> *const c_char {
    s.as_ptr()
}
