//! `RL.APPLY key payload`: stores a propagated effect. Internal: refused
//! unless it comes over the master link or from AOF loading, so no client
//! can forge limiter state. The payload's first byte names the kind (see
//! `stored`); the write goes through the one key-state path.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use redis_module::raw;

use crate::module::clock;
use crate::module::command_info::{Arg, Info, Keys, V0_1_0};
use crate::module::declaration::{Declaration, Docs};
use crate::module::entry::entry_point;
use crate::module::ffi::{
    api, context_flags, has, log_warning, reply_error, reply_ok, reply_wrong_arity, Argv, Ctx, KeyName,
};
use crate::module::kinds::{self, Kind, WithKind};
use crate::module::state::KeyState;
use crate::module::stored;

/// Internal: carries a propagated effect (see `effect`). Not deny-oom: a
/// replica must apply what its master did.
pub const COMMAND: Declaration =
    Declaration::command(stored::APPLY, c"write fast", entry_point!(command), Docs::Fixed(&DOCS));

const DOCS: Info = Info {
    since: V0_1_0,
    summary: c"Internal: stores a limiter state propagated from the master or the AOF",
    complexity: c"O(1)",
    arity: 3,
    // Replaces the value whatever it held, as SET or RESTORE.
    keys: Keys::One { flags: raw::REDISMODULE_CMD_KEY_OW | raw::REDISMODULE_CMD_KEY_UPDATE },
    args: &[Arg::key(c"key"), Arg::string(c"payload")],
    acl_categories: c"write fast",
    tips: None,
};

pub fn command(ctx: Ctx<'_>, args: Argv<'_>) {
    let flags = context_flags(ctx);
    if flags & (raw::REDISMODULE_CTX_FLAGS_REPLICATED | raw::REDISMODULE_CTX_FLAGS_LOADING) == 0 {
        reply_error(ctx, "ERR RL.APPLY is internal: it is accepted only from the master link or while loading the AOF");
        return;
    }
    if args.len() != 3 {
        reply_wrong_arity(ctx);
        return;
    }
    let payload = args.bytes(2);
    let apply = Apply { ctx, name: args.key(1), payload };
    let applied = payload.first().is_some_and(|&tag| kinds::by_tag(tag, apply).unwrap_or(false));
    if applied {
        // The server propagates no module command by itself, so without this
        // a replica's own AOF would never hold the effects it applied, and
        // the replica would restart from that AOF (after a failover, say)
        // with every limiter full again. Propagating the effect verbatim
        // feeds the replica's AOF; it reaches nothing else: a replica passes
        // its master's stream on to its own replicas unchanged, and nothing
        // is propagated while the AOF is loading.
        if has!(RedisModule_ReplicateVerbatim) {
            // SAFETY: the command's context (a `Ctx`); checked with `has!` above.
            unsafe { api!(RedisModule_ReplicateVerbatim(ctx.raw())) };
        }
        reply_ok(ctx);
    } else {
        // A replica whose state differs from its master's (a local write on
        // a writable replica, a forged stream) keeps what it holds rather
        // than a state its own loader would refuse. Said in the log, at most
        // once a second (every write to such a key would say it again).
        static LAST_MS: AtomicU64 = AtomicU64::new(0);
        let now_ms = clock::now().floor_ms().0;
        if now_ms.abs_diff(LAST_MS.load(Relaxed)) >= 1000 {
            LAST_MS.store(now_ms, Relaxed);
            log_warning(&format!(
                "RL.APPLY on key {:?} refused: a malformed payload, or a change that does not apply to the \
                 state this node holds (the key keeps it)",
                String::from_utf8_lossy(args.bytes(1))
            ));
        }
        reply_error(ctx, "ERR RL.APPLY: malformed payload, or a change that does not apply to the key's state");
    }
}

/// Stores a payload of the kind its tag names.
struct Apply<'c, 'a> {
    ctx: Ctx<'c>,
    name: KeyName<'c>,
    payload: &'a [u8],
}

impl WithKind for Apply<'_, '_> {
    type Out = bool;
    fn run<K: Kind>(self) -> bool {
        // The kind's own encoding: a fixed-size state replaces whatever the
        // key held, as SET or RESTORE would; a variable-size state's change
        // applies to the state the key holds.
        let mut key = KeyState::<K>::open_any(self.ctx, self.name);
        if !key.apply(self.payload, clock::now()) {
            return false;
        }
        // The same event the write fired on the master, as replicas of
        // built-in commands fire theirs: clients reading from a replica see
        // it too. Not propagated again here: see above.
        key.announce();
        true
    }
}
