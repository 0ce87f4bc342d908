//! Entry points for the coverage-guided fuzzers in `fuzz/` (feature
//! `fuzzing`, never in the module). Each takes the fuzzer's bytes and runs
//! the module's own code on them, exactly as the server would call it,
//! against a stand-in for the few module-API functions that code calls
//! (allocation, RDB unsigneds, keys holding one value, digests, string
//! bytes): nothing here reimplements a parser or a decoder. A panic, or an
//! `assert!` below failing, is a finding.
//!
//! - [`args`]: every command's argument parser, and RL.ALL's spec grammar,
//!   on an argv split at `\n`: a refused call's error must be one line of
//!   printable ASCII starting `ERR `; a parsed one is decided once.
//! - [`rdb`]: a DUMP payload (RDB module encoding, as `DUMP key` gives it)
//!   handed to the `rdb_load` of the type its module id names: a value
//!   loaded must save, load again and save the same words, copy, digest,
//!   be decided on, and free everything it allocated.
//! - [`apply`]: a sequence of `RL.APPLY` payloads on one key: each payload
//!   accepted leaves a value its own type's loader accepts; nothing leaks.
//! - [`model`]: a sequence of calls of one kind on a "master" key, each
//!   write's effect payload applied to a "replica" key: both must hold the
//!   same state and expiry after every call; the lease set is checked
//!   against the core's `LeaseVec` and the log against `LogBuf`, the plain
//!   models, call by call.

use std::cell::Cell;
use std::ffi::c_void;
use std::os::raw::{c_char, c_int, c_longlong};
use std::ptr::null_mut;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Once;

use redis_module::raw::{
    self, mstime_t, RedisModuleCtx, RedisModuleDigest, RedisModuleIO, RedisModuleKey, RedisModuleString,
    RedisModuleType,
};

use crate::core::lease::{LeaseBlock, LeaseChange, LeaseId, LeaseRead, LeaseVec, Leases};
use crate::core::log::{LogBuf, LogOp, LogRead, LogRing, SlidingLog};
use crate::core::time::Nanos;
use crate::core::Change;

use super::acquire::{classify, Acquire};
use super::args::ArgError;
use super::commands::all_args::all_from;
use super::commands::throttle::Throttle;
use super::ffi::{Argv, Ctx, KeyName};
use super::kinds::{self, EachKind, Kind, WithKind};
use super::state::KeyState;
use super::stored::{Stored, MAX_PAYLOAD};
use super::{args, load_options::LoadOptions};

// ---------------------------------------------------------------------------
// The stand-in module API.

thread_local! {
    /// Blocks this thread allocated through `RedisModule_Alloc` and has not
    /// yet freed (per thread: `cargo test` runs tests side by side).
    static LIVE: Cell<isize> = const { Cell::new(0) };
    /// Writes counted as changes to the dataset (`RedisModule_ReplicateVerbatim`).
    static CHANGES: Cell<u64> = const { Cell::new(0) };
}

/// A key: the value it holds (of `ty`, NULL for none) and its expiry.
/// Its address is both the key's name and the open key.
pub struct FakeKey {
    ty: *mut RedisModuleType,
    value: *mut c_void,
    expire_ms: i64,
}

impl FakeKey {
    fn new() -> Box<Self> {
        Box::new(Self { ty: null_mut(), value: null_mut(), expire_ms: -1 })
    }
    fn name(&mut self) -> *mut RedisModuleString {
        (self as *mut Self).cast()
    }
    /// Frees what the key holds, as the server does on DEL.
    fn clear(&mut self) {
        if !self.value.is_null() {
            free_typed(self.ty, self.value);
        }
        self.ty = null_mut();
        self.value = null_mut();
        self.expire_ms = -1;
    }
}

impl Drop for FakeKey {
    fn drop(&mut self) {
        self.clear();
    }
}

/// What an `RedisModuleIO` reads from or writes to.
enum Io<'a> {
    /// A DUMP payload's bytes from `at`: every unsigned is the opcode
    /// `RDB_MODULE_OPCODE_UINT` then an RDB length (rdbLoadLen).
    Dump { bytes: &'a [u8], at: usize, error: bool },
    /// Saved words, read back.
    Words { words: &'a [u64], at: usize, error: bool },
    /// `rdb_save` and digests write here.
    Sink(Vec<u64>),
}

/// RDB_MODULE_OPCODE_UINT and RDB_MODULE_OPCODE_EOF.
const OPCODE_UINT: u64 = 2;
const OPCODE_EOF: u64 = 0;
/// RDB_TYPE_MODULE_2: a DUMP payload's first byte for a module value.
const RDB_TYPE_MODULE_2: u8 = 7;

impl Io<'_> {
    fn io(&mut self) -> *mut RedisModuleIO {
        (self as *mut Self).cast()
    }
    /// rdbLoadLen: an RDB length (6-, 14-, 32- or 64-bit), `None` past the
    /// end or for an encoded value.
    fn len(bytes: &[u8], at: &mut usize) -> Option<u64> {
        let b = *bytes.get(*at)?;
        *at += 1;
        let mut take = |n: usize| {
            let s = bytes.get(*at..*at + n)?;
            *at += n;
            Some(s.iter().fold(0u64, |acc, &x| acc << 8 | u64::from(x)))
        };
        match b >> 6 {
            0 => Some(u64::from(b & 0x3f)),
            1 => Some(u64::from(b & 0x3f) << 8 | take(1)?),
            2 if b == 0x80 => take(4),
            2 if b == 0x81 => take(8),
            _ => None,
        }
    }
    fn load(&mut self) -> u64 {
        match self {
            Io::Dump { bytes, at, error } => {
                if *error {
                    return 0;
                }
                let v = Self::len(bytes, at).filter(|&op| op == OPCODE_UINT).and_then(|_| Self::len(bytes, at));
                v.unwrap_or_else(|| {
                    *error = true;
                    0
                })
            }
            Io::Words { words, at, error } => {
                let v = words.get(*at).copied();
                *at += 1;
                v.unwrap_or_else(|| {
                    *error = true;
                    0
                })
            }
            Io::Sink(_) => panic!("a load from a save"),
        }
    }
}

unsafe fn io<'a>(io: *mut RedisModuleIO) -> &'a mut Io<'a> {
    // SAFETY: every RedisModuleIO handed to the module here is an `Io`.
    unsafe { &mut *io.cast::<Io<'a>>() }
}

unsafe extern "C" fn fake_alloc(bytes: usize) -> *mut c_void {
    LIVE.set(LIVE.get() + 1);
    // SAFETY: plain malloc; the module never asks for 0 bytes.
    let p = unsafe { libc::malloc(bytes.max(1)) };
    assert!(!p.is_null(), "out of memory");
    p
}
unsafe extern "C" fn fake_replicate_verbatim(_: *mut RedisModuleCtx) -> c_int {
    CHANGES.set(CHANGES.get() + 1);
    raw::REDISMODULE_OK as c_int
}
unsafe extern "C" fn fake_free(p: *mut c_void) {
    LIVE.set(LIVE.get() - 1);
    // SAFETY: made by fake_alloc.
    unsafe { libc::free(p) }
}
unsafe extern "C" fn fake_load_unsigned(rdb: *mut RedisModuleIO) -> u64 {
    unsafe { io(rdb) }.load()
}
unsafe extern "C" fn fake_is_io_error(rdb: *mut RedisModuleIO) -> c_int {
    match unsafe { io(rdb) } {
        Io::Dump { error, .. } | Io::Words { error, .. } => c_int::from(*error),
        Io::Sink(_) => 0,
    }
}
unsafe extern "C" fn fake_save_unsigned(rdb: *mut RedisModuleIO, v: u64) {
    match unsafe { io(rdb) } {
        Io::Sink(out) => out.push(v),
        _ => panic!("a save to a load"),
    }
}
unsafe extern "C" fn fake_digest_ll(md: *mut RedisModuleDigest, v: c_longlong) {
    unsafe { fake_save_unsigned(md.cast(), v as u64) }
}
unsafe extern "C" fn fake_digest_buf(md: *mut RedisModuleDigest, p: *const c_char, len: usize) {
    // SAFETY: the module passes its own buffer of `len` bytes.
    let bytes = unsafe { std::slice::from_raw_parts(p.cast::<u8>(), len) };
    for b in bytes {
        unsafe { fake_save_unsigned(md.cast(), u64::from(*b)) }
    }
}
unsafe extern "C" fn fake_digest_end(md: *mut RedisModuleDigest) {
    unsafe { fake_save_unsigned(md.cast(), u64::MAX) }
}

/// An argument: its bytes.
#[repr(C)]
struct FakeStr {
    ptr: *const u8,
    len: usize,
}
unsafe extern "C" fn fake_string_ptr_len(s: *const RedisModuleString, len: *mut usize) -> *const c_char {
    // SAFETY: every argument string handed to the module here is a FakeStr.
    let s = unsafe { &*s.cast::<FakeStr>() };
    unsafe { *len = s.len };
    s.ptr.cast()
}

unsafe fn key<'a>(k: *mut RedisModuleKey) -> &'a mut FakeKey {
    // SAFETY: every key opened here is a FakeKey (its name is its address).
    unsafe { &mut *k.cast::<FakeKey>() }
}
const OK: c_int = raw::REDISMODULE_OK as c_int;
const ERR: c_int = raw::REDISMODULE_ERR as c_int;
unsafe extern "C" fn fake_open_key(
    _: *mut RedisModuleCtx,
    name: *mut RedisModuleString,
    _: c_int,
) -> *mut RedisModuleKey {
    name.cast()
}
unsafe extern "C" fn fake_close_key(_: *mut RedisModuleKey) {}
unsafe extern "C" fn fake_get_type(k: *mut RedisModuleKey) -> *mut RedisModuleType {
    unsafe { key(k) }.ty
}
unsafe extern "C" fn fake_get_value(k: *mut RedisModuleKey) -> *mut c_void {
    unsafe { key(k) }.value
}
unsafe extern "C" fn fake_key_type(k: *mut RedisModuleKey) -> c_int {
    let k = unsafe { key(k) };
    (if k.value.is_null() { raw::REDISMODULE_KEYTYPE_EMPTY } else { raw::REDISMODULE_KEYTYPE_MODULE }) as c_int
}
/// As RM_ModuleTypeSetValue: the old value is deleted (freed, and the
/// expiry with it).
unsafe extern "C" fn fake_set_value(k: *mut RedisModuleKey, ty: *mut RedisModuleType, v: *mut c_void) -> c_int {
    let k = unsafe { key(k) };
    assert!(!v.is_null(), "a NULL value set");
    k.clear();
    (k.ty, k.value) = (ty, v);
    OK
}
/// As RM_ModuleTypeReplaceValue: only over a value of the same type; the
/// old value goes to the caller.
unsafe extern "C" fn fake_replace_value(
    k: *mut RedisModuleKey,
    ty: *mut RedisModuleType,
    v: *mut c_void,
    old: *mut *mut c_void,
) -> c_int {
    let k = unsafe { key(k) };
    if k.value.is_null() || k.ty != ty {
        return ERR;
    }
    if !old.is_null() {
        unsafe { *old = k.value };
    }
    k.value = v;
    OK
}
unsafe extern "C" fn fake_set_abs_expire(k: *mut RedisModuleKey, at: mstime_t) -> c_int {
    let k = unsafe { key(k) };
    if k.value.is_null() || at < 0 {
        return ERR;
    }
    k.expire_ms = at;
    OK
}
unsafe extern "C" fn fake_delete_key(k: *mut RedisModuleKey) -> c_int {
    unsafe { key(k) }.clear();
    OK
}

/// Frees `value` with the `free` callback of the kind whose type is `ty`.
fn free_typed(ty: *mut RedisModuleType, value: *mut c_void) {
    struct Free(*mut RedisModuleType, *mut c_void, bool);
    impl EachKind for Free {
        fn kind<K: Kind>(&mut self) {
            if !self.2 && K::redis_type() == self.0 {
                // SAFETY: a live value of K's type, never used again.
                unsafe { K::Write::free(self.1) };
                self.2 = true;
            }
        }
    }
    let mut f = Free(ty, value, false);
    kinds::each(&mut f);
    assert!(f.2, "a value of no kind's type");
}

/// Installs the stand-in API and a distinct type per kind, once.
fn install() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // SAFETY: written once, before any module code runs, on this thread.
        unsafe {
            raw::RedisModule_Alloc = Some(fake_alloc);
            raw::RedisModule_Free = Some(fake_free);
            raw::RedisModule_LoadUnsigned = Some(fake_load_unsigned);
            raw::RedisModule_IsIOError = Some(fake_is_io_error);
            raw::RedisModule_SaveUnsigned = Some(fake_save_unsigned);
            raw::RedisModule_DigestAddLongLong = Some(fake_digest_ll);
            raw::RedisModule_DigestAddStringBuffer = Some(fake_digest_buf);
            raw::RedisModule_DigestEndSequence = Some(fake_digest_end);
            raw::RedisModule_StringPtrLen = Some(fake_string_ptr_len);
            raw::RedisModule_OpenKey = Some(fake_open_key);
            raw::RedisModule_CloseKey = Some(fake_close_key);
            raw::RedisModule_ModuleTypeGetType = Some(fake_get_type);
            raw::RedisModule_ModuleTypeGetValue = Some(fake_get_value);
            raw::RedisModule_KeyType = Some(fake_key_type);
            raw::RedisModule_ModuleTypeSetValue = Some(fake_set_value);
            raw::RedisModule_ModuleTypeReplaceValue = Some(fake_replace_value);
            raw::RedisModule_SetAbsExpire = Some(fake_set_abs_expire);
            raw::RedisModule_DeleteKey = Some(fake_delete_key);
            raw::RedisModule_ReplicateVerbatim = Some(fake_replicate_verbatim);
        }
        // No replica, backlog or AOF here: a write counts a change to the
        // dataset (for save points) and propagates nothing; the harness
        // hands the effect to its replica itself.
        super::effect::assume_no_consumers();
        struct Register(usize);
        impl EachKind for Register {
            fn kind<K: Kind>(&mut self) {
                self.0 += 1;
                K::registered().store(std::ptr::without_provenance_mut(0x1000 * self.0), Relaxed);
            }
        }
        kinds::each(&mut Register(0));
    });
}

/// A context pointer: the stand-ins never read it.
fn ctx() -> Ctx<'static> {
    // SAFETY: no stand-in dereferences the context.
    unsafe { Ctx::new(std::ptr::without_provenance_mut(0x10)) }
}

/// Runs `f`, then checks that every block it allocated was freed.
fn no_leak(f: impl FnOnce()) {
    install();
    let before = LIVE.get();
    f();
    assert_eq!(LIVE.get(), before, "blocks allocated and never freed");
}

/// The words `rdb_save` writes for `value` of kind `K`.
fn saved<K: Kind>(value: *mut c_void) -> Vec<u64> {
    let mut sink = Io::Sink(Vec::new());
    // SAFETY: a live value of K's type.
    unsafe { K::Write::rdb_save(sink.io(), value) };
    match sink {
        Io::Sink(words) => words,
        _ => unreachable!(),
    }
}

/// Checks a live value of kind `K` as the server would use it: it saves
/// words that load again into a value saving the same words, its copy
/// saves them too, and it digests. Its saved words.
fn check_value<K: Kind>(value: *mut c_void) -> Vec<u64> {
    let words = saved::<K>(value);
    let mut src = Io::Words { words: &words, at: 0, error: false };
    // SAFETY: the fuzzer's own IO, read through the fake LoadUnsigned and
    // IsIOError installed in the module-API table, as a server's would be.
    let again = unsafe { K::Write::rdb_load(src.io(), 1) }.unwrap_or(std::ptr::null_mut());
    assert!(!again.is_null(), "a {} value saved words its own loader refuses: {words:?}", K::KEYWORD);
    assert!(matches!(src, Io::Words { at, error: false, .. } if at == words.len()), "the load read other words");
    assert_eq!(saved::<K>(again), words, "saved, loaded and saved again: not the same words");
    // SAFETY: loaded above, never used again.
    unsafe { K::Write::free(again) };
    // SAFETY: a live value of K's type.
    let copy = unsafe { K::Write::copy(value) };
    assert_eq!(saved::<K>(copy), words, "a copy saves other words");
    // SAFETY: copied above, never used again.
    unsafe { K::Write::free(copy) };
    let mut digest = Io::Sink(Vec::new());
    // SAFETY: a live value of K's type.
    unsafe {
        K::Write::digest(digest.io().cast(), value);
        let _ = K::Write::mem_usage(value);
    }
    words
}

/// The saved words of what `key` holds, by its type (`None`: empty).
fn state_of(key: &FakeKey) -> Option<Vec<u64>> {
    struct Check(*mut RedisModuleType, *mut c_void, Option<Vec<u64>>);
    impl EachKind for Check {
        fn kind<K: Kind>(&mut self) {
            if self.2.is_none() && K::redis_type() == self.0 {
                self.2 = Some(check_value::<K>(self.1));
            }
        }
    }
    if key.value.is_null() {
        return None;
    }
    let mut c = Check(key.ty, key.value, None);
    kinds::each(&mut c);
    assert!(c.2.is_some(), "a value of no kind's type");
    c.2
}

// ---------------------------------------------------------------------------
// Argument parsers.

/// A time to decide parsed calls at: 2027-01-15, ns.
const NOW_NS: u64 = 1_800_000_000_000_000_000;

/// A refused call's error reply: one line of printable ASCII, `ERR ...`.
fn check_error(e: &ArgError) {
    let text = e.to_string();
    assert!(text.starts_with("ERR "), "an error reply without a code: {text:?}");
    assert!(text.bytes().all(|b| (0x20..0x7f).contains(&b)), "an error reply with bytes a client sent: {text:?}");
}

fn check_parse<T>(r: Result<T, ArgError>) -> Option<T> {
    r.map_err(|e| check_error(&e)).ok()
}

/// Parses `words` (`words[0]` the command) as the module does, and decides a
/// parsed kind's call once on an empty key. Whether a parser accepted it.
pub fn args(data: &[u8]) -> bool {
    install();
    let words: Vec<&[u8]> = data.split(|&b| b == b'\n').collect();
    let strings: Vec<FakeStr> = words.iter().map(|w| FakeStr { ptr: w.as_ptr(), len: w.len() }).collect();
    let mut ptrs: Vec<*mut RedisModuleString> =
        strings.iter().map(|s| (s as *const FakeStr).cast_mut().cast()).collect();
    // SAFETY: `ptrs` holds `len` strings, alive for this call.
    let argv = unsafe { Argv::new(ptrs.as_mut_ptr(), ptrs.len() as c_int) };
    let len = words.len();
    let cmd = words[0];
    let is = |name: &str| cmd.eq_ignore_ascii_case(name.as_bytes());

    let mut parsed = false;
    struct Command<'a>(&'a [u8], Argv<'a>, &'a mut bool);
    impl EachKind for Command<'_> {
        fn kind<K: Kind>(&mut self) {
            if self.0.eq_ignore_ascii_case(K::COMMAND.to_bytes()) {
                if let Some((limiter, opts)) = check_parse(K::parse_command(&self.1)) {
                    *self.2 = true;
                    let v = match opts.refund {
                        Some(units) => limiter.settle(None, Nanos(NOW_NS), units),
                        None => limiter.decide(None, Nanos(NOW_NS), opts.cost),
                    };
                    assert!(v.decision.remaining <= v.decision.limit, "{:?}", v.decision);
                }
            }
        }
    }
    kinds::each(&mut Command(cmd, argv, &mut parsed));

    struct Peek<'a>(Argv<'a>);
    impl WithKind for Peek<'_> {
        type Out = bool;
        fn run<K: Kind>(self) -> bool {
            let argv = self.0;
            let parsed = args::Cursor::command(argv.len(), |i| argv.bytes(i), 3, K::POSITIONALS, false)
                .and_then(|mut c| K::grammar(&mut c));
            if let Some((limiter, opts)) = check_parse(parsed) {
                assert!(opts.refund.is_none() && !opts.peek && opts.wait_ms.is_none(), "{opts:?}");
                let _ = limiter.decide(None, Nanos(NOW_NS), opts.cost);
                return true;
            }
            false
        }
    }
    if is("RL.PEEK") && len >= 3 {
        parsed |= kinds::by_keyword(words[1], Peek(argv)).unwrap_or(false);
    }
    if is("RL.ALL") {
        if let Some(all) = check_parse(all_from(len, |i| words[i])) {
            assert!(!all.specs.is_empty() && all.specs.len() <= 16);
            parsed = true;
        }
    }
    if is("CL.THROTTLE") {
        parsed |= check_parse(Throttle::parse_from(len, |i| words[i])).is_some();
    }
    if is("RL.RELEASE") && len == 3 {
        parsed |= check_parse(args::id(words[2], "id")).is_some();
    }
    if is("RL.RENEW") && len == 4 {
        parsed |= check_parse(args::id(words[2], "id").and_then(|_| args::period(words[3], "lease_ms"))).is_some();
    }
    if is("RL.TOP") && len >= 2 {
        parsed |= check_parse(super::commands::top::parse_count(&argv, 1000)).is_some();
    }
    if is("MODULE-ARGS") {
        parsed |= LoadOptions::parse_words(&words[1..]).is_ok();
    }
    parsed
}

// ---------------------------------------------------------------------------
// RDB / DUMP payloads.

/// The 9-character type name and encoding version of a module id.
fn type_of_module_id(id: u64) -> ([u8; 9], u64) {
    const CHARS: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut name = [0u8; 9];
    for (j, c) in name.iter_mut().enumerate() {
        *c = CHARS[((id >> (10 + 6 * (8 - j))) & 63) as usize];
    }
    (name, id & 1023)
}

/// A DUMP payload loaded as the server loads it: its module id picks the
/// type and version; after `rdb_load` the EOF opcode must follow, else the
/// value is freed. The four bytes after the EOF opcode, if any, are the time
/// (in s) a loaded value is then decided at, with canned parameters.
/// Whether a value (or the aux field) loaded whole.
pub fn rdb(data: &[u8]) -> bool {
    let mut loaded = false;
    no_leak(|| {
        let Some((&first, _)) = data.split_first() else { return };
        let loaded = &mut loaded;
        // RDB_OPCODE_MODULE_AUX (247) then the id: the lease set's aux field.
        let aux = first == 247;
        if first != RDB_TYPE_MODULE_2 && !aux {
            return;
        }
        let mut at = 1;
        let Some(id) = Io::len(data, &mut at) else { return };
        let (name, encver) = type_of_module_id(id);
        if aux {
            // RDB_MODULE_OPCODE_UINT and the `when` the field was written for.
            let (Some(OPCODE_UINT), Some(_when)) = (Io::len(data, &mut at), Io::len(data, &mut at)) else { return };
        }
        let mut src = Io::Dump { bytes: data, at, error: false };
        struct Load<'a, 'b>([u8; 9], c_int, bool, &'b mut Io<'a>, &'b mut bool);
        impl EachKind for Load<'_, '_> {
            fn kind<K: Kind>(&mut self) {
                if K::TYPE_NAME.to_bytes() != self.0 {
                    return;
                }
                if self.2 {
                    // SAFETY: the fuzzer's own IO (see `check_value`).
                    *self.4 = unsafe { K::Write::aux_load(self.3.io(), self.1) }.is_ok();
                    return;
                }
                // SAFETY: the fuzzer's own IO (see `check_value`).
                let value = unsafe { K::Write::rdb_load(self.3.io(), self.1) }.unwrap_or(std::ptr::null_mut());
                if value.is_null() {
                    return;
                }
                let Io::Dump { bytes, at, .. } = &mut *self.3 else { unreachable!() };
                let bytes: &[u8] = bytes;
                let eof = Io::len(bytes, at);
                let mut t = [0u8; 4];
                for (d, s) in t.iter_mut().zip(bytes.get(*at..).unwrap_or(&[])) {
                    *d = *s;
                }
                if eof == Some(OPCODE_EOF) {
                    *self.4 = true;
                    check_value::<K>(value);
                    decide_on::<K>(value, u64::from(u32::from_le_bytes(t)));
                }
                // SAFETY: loaded above, never used again.
                unsafe { K::Write::free(value) };
            }
        }
        kinds::each(&mut Load(name, encver as c_int, aux, &mut src, loaded));
    });
    loaded
}

/// Canned parameters of each kind, its grammar's words after the key.
fn canned(keyword: &str) -> &'static [&'static [u8]] {
    match keyword {
        "GCRA" => &[b"10", b"1000"],
        "TOKENBUCKET" => &[b"10", b"1", b"1000"],
        "SLIDE" | "LOG" => &[b"10", b"60000"],
        "QUOTA" => &[b"10", b"DAY"],
        _ => &[b"10", b"60000"],
    }
}

/// Decides a call, a refund and a booking of kind `K` on `value` at `secs`
/// (with the canned parameters): no panic, whatever state a load accepted.
fn decide_on<K: Kind>(value: *mut c_void, secs: u64) {
    let words = canned(K::KEYWORD);
    let Ok((limiter, _)) = K::grammar(&mut args::Cursor::spec(|i| words[i], 0, words.len(), K::KEYWORD)) else {
        panic!("the canned {} parameters are refused", K::KEYWORD)
    };
    let now = Nanos(secs.saturating_mul(1_000_000_000));
    // SAFETY: a live value of K's type, not written meanwhile.
    let state = unsafe { K::read(value) };
    let _ = limiter.decide(Some(state), now, 1);
    let _ = limiter.settle(Some(state), now, 1);
    // A booking (MAXWAIT, at its longest) on whatever was loaded.
    let _ = limiter.decide_within(Some(state), now, 2, 1_000_000 * 1_000_000);
}

// ---------------------------------------------------------------------------
// RL.APPLY payloads.

/// Splits `data` into records `len:u16 LE, bytes[len]` (the last may be short).
fn records(mut data: &[u8]) -> impl Iterator<Item = &[u8]> {
    std::iter::from_fn(move || {
        let (len, rest) = data.split_first_chunk::<2>()?;
        let len = usize::from(u16::from_le_bytes(*len)).min(rest.len());
        let (record, rest) = rest.split_at(len);
        data = rest;
        Some(record)
    })
}

/// Applies one payload to `key` as RL.APPLY does.
fn apply_one(key: &mut FakeKey, payload: &[u8]) -> bool {
    struct Apply<'p>(*mut RedisModuleString, &'p [u8]);
    impl WithKind for Apply<'_> {
        type Out = bool;
        fn run<K: Kind>(self) -> bool {
            // SAFETY: the fake key's name, live through the call.
            KeyState::<K>::open_any(ctx(), unsafe { KeyName::from_raw(self.0) }).apply(self.1, Nanos(NOW_NS))
        }
    }
    let name = key.name();
    payload.first().is_some_and(|&tag| kinds::by_tag(tag, Apply(name, payload)).unwrap_or(false))
}

/// RL.APPLY payloads, in turn, on one key: whatever is accepted leaves a
/// value that saves, loads and copies; nothing leaks. How many of the
/// payloads were accepted.
pub fn apply(data: &[u8]) -> usize {
    let mut accepted = 0;
    no_leak(|| {
        let mut key = FakeKey::new();
        for payload in records(data) {
            if apply_one(&mut key, payload) {
                accepted += 1;
                state_of(&key);
            }
        }
    });
    accepted
}

// ---------------------------------------------------------------------------
// The kinds against their replicas and models.

/// The fuzzer's bytes, read as small numbers (0 past the end).
struct Bytes<'a>(&'a [u8]);
impl Bytes<'_> {
    fn u8(&mut self) -> u8 {
        let (b, rest) = self.0.split_first().map_or((0, &[][..]), |(b, r)| (*b, r));
        self.0 = rest;
        b
    }
    fn u16(&mut self) -> u64 {
        u64::from(self.u8()) | u64::from(self.u8()) << 8
    }
    fn more(&self) -> bool {
        !self.0.is_empty()
    }
}

/// Durations to pick parameters and clock moves from, ms.
const MS: [u64; 8] = [1, 3, 10, 250, 1000, 60_000, 86_400_000, 1_000_000_000_000];

/// The words of a kind's grammar, from two bytes.
fn params(kw: &str, a: u8, b: u8) -> Vec<Vec<u8>> {
    let limit = (1 + u64::from(a % 16)).to_string().into_bytes();
    let period = MS[usize::from(b % 8)].to_string().into_bytes();
    match kw {
        "TOKENBUCKET" => vec![limit, (1 + u64::from(a >> 4)).to_string().into_bytes(), period],
        "QUOTA" => {
            let units: [&[u8]; 6] = [b"HOUR", b"DAY", b"WEEK", b"MONTH", b"YEAR", b"1000"];
            vec![limit, units[usize::from(b % 6)].to_vec()]
        }
        "GCRA" if a & 0x80 != 0 => {
            vec![limit, period, b"BURST".to_vec(), (1 + u64::from(b >> 3)).to_string().into_bytes()]
        }
        _ => vec![limit, period],
    }
}

/// A sequence of calls of one kind on a master key, each write's effect
/// applied to a replica key: the two always hold the same state and
/// expiry; a lease set and a log also answer and hold what their plain
/// models (`LeaseVec`, `LogBuf`) answer and hold. How many calls it made.
pub fn model(data: &[u8]) -> usize {
    let mut calls = 0;
    no_leak(|| {
        let mut b = Bytes(data);
        let which = b.u8();
        struct Run<'a, 'b>(&'b mut Bytes<'a>, u8, &'b mut usize);
        impl EachKind for Run<'_, '_> {
            fn kind<K: Kind>(&mut self) {
                if self.1 == 0 {
                    *self.2 = run_model::<K>(self.0);
                }
                self.1 = self.1.wrapping_sub(1);
            }
        }
        kinds::each(&mut Run(&mut b, which % 6, &mut calls));
    });
    calls
}

/// The model's store beside the module's: none, or a lease set, or a log.
enum Model {
    None,
    Leases(Option<LeaseVec>),
    Log(Option<LogBuf>),
}

fn run_model<K: Kind>(b: &mut Bytes<'_>) -> usize {
    let mut master = FakeKey::new();
    let mut replica = FakeKey::new();
    let mut model = match K::KEYWORD {
        "CONCURRENCY" => Model::Leases(None),
        "LOG" => Model::Log(None),
        _ => Model::None,
    };
    // Two parameter sets a call may use (a changed limit or window).
    let sets = [params(K::KEYWORD, b.u8(), b.u8()), params(K::KEYWORD, b.u8(), b.u8())];
    let ids: [&[u8]; 4] = [b"a", b"1800000000000-3", &[b'x'; 128], b"worker-17"];
    let mut now = NOW_NS;
    let mut steps = 0;
    while b.more() && steps < 64 {
        steps += 1;
        let op = b.u8();
        // The clock: forward by a duration, or back (a jump) by a little.
        let d = MS[usize::from(op >> 5)] * 1_000_000 / (1 + b.u16() % 1000);
        // (Never past 2^62 ns, the year 2116: no clock gets there.)
        now = if op & 0x18 == 0x18 { now.saturating_sub(d) } else { now.saturating_add(d).min(1 << 62) };
        let mut words: Vec<Vec<u8>> = sets[usize::from(op & 1)].clone();
        let id = ids[usize::from((op >> 1) & 3)];
        let mode = b.u8();
        let cost = u64::from(mode % 5);
        if K::KEYWORD == "CONCURRENCY" && mode & 0x40 != 0 {
            words.extend([b"ID".to_vec(), id.to_vec()]);
        }
        let slices: Vec<&[u8]> = words.iter().map(Vec::as_slice).collect();
        let Ok((limiter, _)) = K::grammar(&mut args::Cursor::spec(|i| slices[i], 0, slices.len(), K::KEYWORD)) else {
            continue;
        };
        // Refunds, and on a lease set RL.RELEASE / RL.RENEW.
        let refund = mode & 0x80 != 0;
        // SAFETY: the fake key's name, live through the step.
        let name = unsafe { KeyName::from_raw(master.name()) };
        let mut key = KeyState::<K>::open(ctx(), name).unwrap_or_else(|_| panic!("wrong type"));
        let change = match (refund, K::KEYWORD) {
            (true, "CONCURRENCY") => {
                let id = LeaseId::new(id).expect("an id");
                let lease_ms = 1 + u64::from(mode >> 1) % 1000;
                let release = mode & 1 == 0;
                let state = key.state().map(|s| lease_block(&s));
                let reply = release_or_renew(state.as_ref(), now, &id, release, lease_ms);
                if let Model::Leases(m) = &model {
                    let want = release_or_renew(m.as_ref(), now, &id, release, lease_ms);
                    assert_eq!(reply, want, "the lease set answers otherwise than its model");
                }
                reply.change.map(classify).map(convert::<K>)
            }
            (true, _) if key.state().is_some() => limiter.settle(key.state(), Nanos(now), 1 + cost).change,
            _ => limiter.decide(key.state(), Nanos(now), cost).change,
        };
        compare_model::<K>(&model, &limiter, key.state(), now, cost, refund);
        if let Some(change) = &change {
            let counted = CHANGES.get();
            assert!(key.write(change, Nanos(now), 0), "the master's write was refused");
            // A write that changed the key counts once for the save points.
            assert!(CHANGES.get() - counted <= 1, "a write counted twice");
        }
        drop(key);
        // The replica: the effect, or DEL.
        match change.as_ref().and_then(Change::write) {
            Some(w) => {
                let mut buf = [0u8; MAX_PAYLOAD];
                let payload = K::Write::encode(&w.state, w.expire_at, &mut buf);
                assert!(apply_one(&mut replica, payload), "the replica refused its master's effect");
            }
            None if change.is_some() => replica.clear(),
            None => {}
        }
        step_model::<K>(&mut model, change.as_ref());
        let (m, r) = (state_of(&master), state_of(&replica));
        assert_eq!(m, r, "master and replica hold different states");
        if m.is_some() {
            assert_eq!(master.expire_ms, replica.expire_ms, "master and replica expire at different times");
        }
        check_against_model::<K>(&model, &master);
    }
    steps
}

/// RL.RELEASE (`release`) or RL.RENEW on a lease set of any store.
fn release_or_renew<S: LeaseRead>(
    s: Option<&S>,
    now: u64,
    id: &LeaseId,
    release: bool,
    lease_ms: u64,
) -> crate::core::lease::LeaseReply {
    if release {
        Leases::release(s, now, id)
    } else {
        Leases::renew(s, now, id, lease_ms).expect("lease_ms in range")
    }
}

/// A lease set's state as the core reads it (the kind's own state type).
fn lease_block<'s, S: Copy>(s: &S) -> LeaseBlock<&'s [u64]> {
    assert_eq!(std::mem::size_of::<S>(), std::mem::size_of::<LeaseBlock<&[u64]>>());
    // SAFETY: only called for the lease kind, whose state is this type.
    unsafe { std::mem::transmute_copy(s) }
}

/// A lease change as the kind's write (only called for the lease kind).
fn convert<K: Kind>(c: Change<LeaseChange>) -> Change<K::Write> {
    assert_eq!(std::mem::size_of::<Change<LeaseChange>>(), std::mem::size_of::<Change<K::Write>>());
    // SAFETY: only called for the lease kind, whose write is LeaseChange.
    unsafe { std::mem::transmute_copy(&c) }
}

/// The model answers the call as the module's store did.
fn compare_model<K: Kind>(model: &Model, limiter: &K, state: Option<K::State<'_>>, now: u64, cost: u64, refund: bool) {
    match model {
        Model::Log(m) => {
            let log: &SlidingLog = downcast(limiter);
            let ring = state.map(|s| log_ring(&s));
            let op = if refund && m.is_some() { LogOp::Refund(1 + cost) } else { LogOp::Consume(cost) };
            assert_eq!(
                log.check(ring.as_ref(), now, op),
                log.check(m.as_ref(), now, op),
                "the log answers otherwise than its model"
            );
        }
        Model::Leases(m) if !refund => {
            let acquire: &Acquire = downcast(limiter);
            let set = state.map(|s| lease_block(&s));
            let got = acquire_with(acquire, set.as_ref(), now, cost);
            let want = acquire_with(acquire, m.as_ref(), now, cost);
            assert_eq!(got, want, "the lease set answers otherwise than its model");
        }
        _ => {}
    }
}

fn acquire_with<S: LeaseRead>(a: &Acquire, s: Option<&S>, now: u64, cost: u64) -> crate::core::lease::AcquireOutcome {
    a.leases().acquire(s, now, cost, a.id(), super::lease_value::seq_floor())
}

fn log_ring<'s, S: Copy>(s: &S) -> LogRing<&'s [u64]> {
    assert_eq!(std::mem::size_of::<S>(), std::mem::size_of::<LogRing<&[u64]>>());
    // SAFETY: only called for the log kind, whose state is this type.
    unsafe { std::mem::transmute_copy(s) }
}

fn downcast<K: Kind, T: 'static>(k: &K) -> &T {
    (k as &dyn std::any::Any).downcast_ref::<T>().expect("the model's kind")
}

/// Applies the change to the model's store.
fn step_model<K: Kind>(model: &mut Model, change: Option<&Change<K::Write>>) {
    let Some(change) = change else { return };
    match model {
        Model::Leases(m) => {
            let Some(w) = change.write() else {
                *m = None;
                return;
            };
            let c: &LeaseChange = (&w.state as &dyn std::any::Any).downcast_ref().expect("a lease change");
            if c.delete {
                *m = None;
            } else {
                c.apply(m.get_or_insert_with(LeaseVec::new));
            }
        }
        Model::Log(m) => {
            let Some(w) = change.write() else {
                *m = None;
                return;
            };
            let c: &crate::core::LogChange = (&w.state as &dyn std::any::Any).downcast_ref().expect("a log change");
            if c.delete {
                *m = None;
            } else {
                c.apply(m.get_or_insert_with(|| LogBuf::new(c.header)));
            }
        }
        Model::None => {}
    }
}

/// The module's store holds what the model holds.
fn check_against_model<K: Kind>(model: &Model, key: &FakeKey) {
    match model {
        Model::Leases(m) => {
            assert_eq!(m.is_some(), !key.value.is_null(), "the model and the key disagree on whether it exists");
            if let Some(m) = m {
                // SAFETY: the key holds a live lease set.
                let b = unsafe { super::var_value::read::<crate::core::LeaseChange>(key.value) };
                assert!(b.valid(), "an invalid lease block");
                let got: Vec<_> = b.iter().collect();
                assert_eq!(got, m.leases(), "the lease set holds otherwise than its model");
                assert_eq!(b.header(), m.header());
            }
        }
        Model::Log(m) => {
            assert_eq!(m.is_some(), !key.value.is_null(), "the model and the key disagree on whether it exists");
            if let Some(m) = m {
                // SAFETY: the key holds a live log.
                let r = unsafe { super::var_value::read::<crate::core::LogChange>(key.value) };
                assert!(SlidingLog::valid(&r), "an invalid log");
                let got: Vec<_> = (0..r.len()).map(|i| r.get(i)).collect();
                let want: Vec<_> = m.entries().collect();
                assert_eq!(got, want, "the log holds otherwise than its model");
                assert_eq!(r.header(), m.header());
            }
        }
        Model::None => {}
    }
}
