//! Test hooks, compiled only with the `test-hooks` feature (never into the
//! release module): `RL.PANICTEST`, registered when the module is loaded
//! with the argument `enable-panic-test-command`, shows that a panic at any
//! entry point becomes an error reply or a logged no-op, never an abort.
//!
//! - `RL.PANICTEST`: panics in the command.
//! - `RL.PANICTEST INFO`: answers OK, and the next `INFO` callback panics.
//! - `RL.PANICTEST HOLD n`: holds a `Vec` of `n` bytes (written, so the
//!   pages are real) from this call to the next HOLD, which frees it; shows
//!   that the module's own allocations count in `used_memory`
//!   (`server_alloc`).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use super::ffi::{reply_error, reply_ok, Argv, Ctx};

/// What `RL.PANICTEST HOLD` holds.
static HELD: Mutex<Vec<u8>> = Mutex::new(Vec::new());

/// Armed by `RL.PANICTEST INFO`, taken by the next INFO callback.
static PANIC_IN_INFO: AtomicBool = AtomicBool::new(false);

pub fn panic_test(ctx: Ctx<'_>, args: Argv<'_>) {
    if args.len() == 2 && args.bytes(1).eq_ignore_ascii_case(b"INFO") {
        PANIC_IN_INFO.store(true, Ordering::Relaxed);
        return reply_ok(ctx);
    }
    if args.len() == 3 && args.bytes(1).eq_ignore_ascii_case(b"HOLD") {
        let Some(n) = std::str::from_utf8(args.bytes(2)).ok().and_then(|n| n.parse::<usize>().ok()) else {
            return reply_error(ctx, "ERR HOLD takes a byte count");
        };
        let mut held = HELD.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        *held = Vec::new();
        *held = vec![1u8; n];
        return reply_ok(ctx);
    }
    panic!("RL.PANICTEST: a deliberate panic")
}

/// Panics if `RL.PANICTEST INFO` armed a panic (called by the INFO callback).
pub fn info_panic_point() {
    if PANIC_IN_INFO.swap(false, Ordering::Relaxed) {
        panic!("RL.PANICTEST INFO: a deliberate panic in the INFO callback");
    }
}
