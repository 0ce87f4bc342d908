//! The names the module's commands are registered under. By default the
//! documented ones (`RL.GCRA`, ..., `CL.THROTTLE`); the load arguments
//! `command-prefix P` (commands `P.GCRA`, ..., `P.APPLY`, `P.TOP`) and
//! `cl-throttle no` (no `CL.THROTTLE`, e.g. beside redis-cell) keep the
//! module out of the way of a server or another module that registers one
//! of these names. Replicas and AOF replays must load the module with the
//! same arguments: effects are propagated as `<prefix>.APPLY`.

use std::ffi::{c_char, CStr, CString};
use std::sync::atomic::{AtomicBool, AtomicPtr, Ordering};

/// The documented prefix.
pub const DEFAULT_PREFIX: &str = "RL";

/// `<prefix>.APPLY`, as a C string: what effects and the AOF rewrite are
/// written as. Set once at load; read on every propagated write (one load).
static APPLY: AtomicPtr<c_char> = AtomicPtr::new(c"RL.APPLY".as_ptr().cast_mut());
/// The prefix, once set at load (`None`: the default).
static PREFIX: AtomicPtr<c_char> = AtomicPtr::new(std::ptr::null_mut());
static CL_THROTTLE: AtomicBool = AtomicBool::new(true);

/// Whether `p` may be a prefix: 1 to 16 ASCII letters, digits or `_`.
pub fn valid_prefix(p: &[u8]) -> bool {
    (1..=16).contains(&p.len()) && p.iter().all(|&c| c.is_ascii_alphanumeric() || c == b'_')
}

/// Sets the names for this load (once, from the load hook, before any
/// command is registered). The strings live as long as the module.
pub fn configure(prefix: &str, cl_throttle: bool) {
    CL_THROTTLE.store(cl_throttle, Ordering::Relaxed);
    if prefix == DEFAULT_PREFIX {
        return;
    }
    let own = |s: String| CString::new(s).map(|c| Box::leak(c.into_boxed_c_str()).as_ptr().cast_mut());
    if let (Ok(p), Ok(apply)) = (own(prefix.to_string()), own(format!("{prefix}.APPLY"))) {
        PREFIX.store(p, Ordering::Relaxed);
        APPLY.store(apply, Ordering::Relaxed);
    }
}

/// `<prefix>.APPLY`.
pub fn apply() -> &'static CStr {
    // SAFETY: APPLY only ever holds a static C string or one leaked for good.
    unsafe { CStr::from_ptr(APPLY.load(Ordering::Relaxed)) }
}

/// Whether `CL.THROTTLE` is registered.
pub fn cl_throttle() -> bool {
    CL_THROTTLE.load(Ordering::Relaxed)
}

/// The name a documented command is registered under: `RL.X` becomes
/// `<prefix>.X`; any other name stays.
pub fn registered(name: &'static CStr) -> &'static CStr {
    let p = PREFIX.load(Ordering::Relaxed);
    let Some(rest) = name.to_bytes().strip_prefix(b"RL.") else { return name };
    if p.is_null() {
        return name;
    }
    // SAFETY: PREFIX holds a C string leaked for good.
    let prefix = unsafe { CStr::from_ptr(p) }.to_bytes();
    match CString::new([prefix, b".", rest].concat()) {
        // Once per command per load: kept for good, as the server keeps it.
        Ok(c) => Box::leak(c.into_boxed_c_str()),
        Err(_) => name,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_are_short_words() {
        for ok in ["RL", "X", "RRL", "rate_limit", "A1234567890123_5"] {
            assert!(valid_prefix(ok.as_bytes()), "{ok}");
        }
        for bad in ["", "R.L", "R L", "R-L", "ÄB", "A12345678901234567", "{x}"] {
            assert!(!valid_prefix(bad.as_bytes()), "{bad}");
        }
    }
}
