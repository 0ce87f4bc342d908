//! Test hooks, compiled only with the `test-hooks` feature (never into the
//! release module): `RL.PANICTEST`, registered when the module is loaded
//! with the argument `enable-panic-test-command`, shows that a panic at any
//! entry point becomes an error reply or a logged no-op, never an abort.
//!
//! - `RL.PANICTEST`: panics in the command.
//! - `RL.PANICTEST INFO`: answers OK, and the next `INFO` callback panics.

use std::sync::atomic::{AtomicBool, Ordering};

use super::ffi::{reply_ok, Argv, Ctx};

/// Armed by `RL.PANICTEST INFO`, taken by the next INFO callback.
static PANIC_IN_INFO: AtomicBool = AtomicBool::new(false);

pub fn panic_test(ctx: Ctx<'_>, args: Argv<'_>) {
    if args.len() == 2 && args.bytes(1).eq_ignore_ascii_case(b"INFO") {
        PANIC_IN_INFO.store(true, Ordering::Relaxed);
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
