//! The one key-state path: open, read, decide, write (with its expiry and
//! its effect for replicas and the AOF), signal, notify. The single commands, `RL.ALL`, `RL.PEEK` and
//! `RL.APPLY` all read and write a limiter key through [`KeyState`], so the
//! order of those steps, and what is counted, is written once.
//!
//! A write is a [`Change`]: `Consume`, `Repair` and `Refund` store a state
//! and its expiry (a repair is counted in `INFO rl` as one), `Delete` and a
//! refund that fills the limiter remove the key. The effect is queued
//! with the write (the server sends it after the command); the key is
//! closed before the keyspace event, as a built-in command does.

use std::ffi::{c_void, CStr};
use std::marker::PhantomData;

use redis_module::raw;

use crate::core::time::Nanos;
use crate::core::{Change, Write};

use super::effect::{self, Propagated};
use super::ffi::{api, log_warning, Ctx, KeyName, OpenKey, Slot};
use super::kinds::Kind;
use super::stats;
use super::stored::{self, Stored};

pub const WRONGTYPE: &str = "WRONGTYPE Operation against a key holding the wrong kind of value";

/// The reply when the server refused a value the module wrote (it never
/// does for a valid state; the write changed nothing).
pub const NOT_STORED: &str = "ERR could not store the limiter state";

/// The key holds another Redis type, or another kind's state (`held`: that
/// kind's command, so the error can say which).
pub struct WrongType {
    pub held: Option<&'static CStr>,
}

impl WrongType {
    /// The error reply: Redis's own WRONGTYPE text for another Redis type,
    /// and which limiter the key holds for another kind's state, as in
    /// `WRONGTYPE the key holds an RL.LOG limiter, not an RL.GCRA one`.
    pub fn message<K: Kind>(&self) -> String {
        match self.held {
            Some(held) => format!(
                "WRONGTYPE the key holds an {} limiter, not an {} one",
                held.to_string_lossy(),
                K::COMMAND.to_string_lossy()
            ),
            None => WRONGTYPE.to_string(),
        }
    }
}

/// What was written, for [`KeyState::announce`].
#[derive(Clone, Copy)]
enum Written {
    Nothing,
    /// A state and its expiry were stored.
    State,
    /// A propagated effect was stored (`RL.APPLY`).
    Applied,
    /// The key was removed; `refund`: by a refund that filled the limiter
    /// (which fires the kind's event before `del`, as SREM does before `del`
    /// when it empties a set).
    Deleted {
        refund: bool,
    },
}

/// The value of a missing key after the write `w`, set in `key`.
fn create<K: Kind>(key: &OpenKey<'_>, w: &K::Write) -> Option<*mut c_void> {
    let created = K::Write::create(w)?;
    // SAFETY: a value of K's type, just made, owned here.
    if !unsafe { key.set_value(K::redis_type(), created) } {
        // SAFETY: just made, never handed to the server.
        unsafe { K::Write::free(created) };
        return None;
    }
    stats::count(&stats::KEYS_CREATED);
    Some(created)
}

/// One limiter key of kind `K`, from open to announce.
pub struct KeyState<'c, K: Kind> {
    ctx: Ctx<'c>,
    name: KeyName<'c>,
    /// Open until [`close`](Self::close).
    key: Option<OpenKey<'c>>,
    /// The value the key holds (found at open, or written since).
    held: Option<*mut c_void>,
    written: Written,
    kind: PhantomData<K>,
    /// The keyspace event a write fires: the kind's, unless
    /// [`set_event`](Self::set_event) named another.
    event: &'static CStr,
}

impl<'c, K: Kind> KeyState<'c, K> {
    /// Opens `name` for reading and writing and reads its state: `None` for
    /// an empty key. Another type in the key is [`WrongType`].
    #[inline]
    pub fn open(ctx: Ctx<'c>, name: KeyName<'c>) -> Result<Self, WrongType> {
        Self::open_with(ctx, name, OpenKey::write(ctx, name))
    }

    /// Opens `name` for reading only (`RL.PEEK`): the state can be read,
    /// never written.
    #[inline]
    pub fn open_read(ctx: Ctx<'c>, name: KeyName<'c>) -> Result<Self, WrongType> {
        Self::open_with(ctx, name, OpenKey::read(ctx, name))
    }

    /// Opens `name` for writing whatever it holds (`RL.APPLY`, which
    /// replaces the value as SET or RESTORE would): see [`apply`](Self::apply).
    pub fn open_any(ctx: Ctx<'c>, name: KeyName<'c>) -> Self {
        Self {
            ctx,
            name,
            key: Some(OpenKey::write(ctx, name)),
            held: None,
            written: Written::Nothing,
            event: K::EVENT,
            kind: PhantomData,
        }
    }

    #[inline]
    fn open_with(ctx: Ctx<'c>, name: KeyName<'c>, key: OpenKey<'c>) -> Result<Self, WrongType> {
        let held = match key.slot() {
            Slot::Empty => None,
            Slot::Module(ty, value) if ty == K::redis_type() => Some(value),
            Slot::Module(ty, _) => return Err(WrongType { held: super::kinds::command_of_type(ty) }),
            _ => return Err(WrongType { held: None }),
        };
        Ok(Self { ctx, name, key: Some(key), held, written: Written::Nothing, event: K::EVENT, kind: PhantomData })
    }

    /// The key's state, as K's algorithm reads it (borrowed: no write
    /// while it lives).
    #[inline]
    pub fn state(&self) -> Option<K::State<'_>> {
        // SAFETY: `held` is a live value of K's registered type (found at
        // open or written since), and `&self` keeps every write out while
        // the state borrows it.
        self.held.map(|value| unsafe { K::read(value) })
    }

    /// The keyspace event the next write fires, in place of the kind's
    /// (`RL.RELEASE`, `RL.RENEW` on `RL.ACQUIRE`'s keys).
    pub fn set_event(&mut self, event: &'static CStr) {
        self.event = event;
    }

    /// Makes `change`, setting the key's expiry (`now`: the time the
    /// command runs at), and hands its effect to the server for replicas
    /// and the AOF (`flags`: the command's context flags, which say whether
    /// anything consumes effects). False if the server refused the value
    /// (or the key is already closed).
    ///
    /// The effect is queued here, with the change at hand, so nothing has
    /// to keep it for [`announce`](Self::announce): the server sends what
    /// a command propagates only after the command, whatever the order of
    /// its calls, and a keyspace event's subscriber that writes in turn
    /// then propagates after this write, not before it.
    #[inline]
    pub fn write(&mut self, change: &Change<K::Write>, now: Nanos, flags: u32) -> bool {
        let done = match change {
            Change::Consume(w) | Change::Refund(Some(w)) => self.store(w, now),
            Change::Refund(None) => self.delete(true),
            Change::Repair(w) => {
                let stored = self.store(w, now);
                if stored {
                    stats::count(&stats::REPAIRS);
                }
                stored
            }
            // Counts a window change mapped away.
            Change::Delete => {
                let deleted = self.delete(false);
                if deleted && matches!(self.written, Written::Deleted { .. }) {
                    stats::count(&stats::REPAIRS);
                }
                deleted
            }
        };
        if done {
            self.propagate(change, flags);
        }
        done
    }

    /// One key's commit: makes `change` as [`write`](Self::write) does,
    /// closes the key, and announces the write. False if the server refused
    /// the value (the reply is then [`NOT_STORED`]; nothing is announced).
    #[inline]
    pub fn commit(&mut self, change: &Change<K::Write>, now: Nanos, flags: u32) -> bool {
        let stored = self.write(change, now, flags);
        self.close();
        if stored {
            self.announce();
        }
        stored
    }

    /// The effect of `change`, just made: `RL.APPLY` of the stored state,
    /// or `DEL` (which reads no clock: safe for any consumer); or, when
    /// nothing consumes effects, only the count of a change to the dataset,
    /// for RDB save points (no command to build: `RedisModule_Replicate`'s
    /// lookup of the command name alone was about 2,000 instructions).
    fn propagate(&self, change: &Change<K::Write>, flags: u32) {
        let sent = match (&self.written, change.write()) {
            (Written::Nothing | Written::Applied, _) => return,
            _ if !effect::needed(flags) => return effect::count_change(self.ctx),
            (Written::State, Some(w)) => {
                let mut buf = [0u8; stored::MAX_PAYLOAD];
                effect::replicate(self.ctx, self.name, K::Write::encode(&w.state, w.expire_at, &mut buf))
            }
            (Written::Deleted { .. }, _) => effect::replicate_delete(self.ctx, self.name),
            // A state stored by a change that stores none: never made.
            (Written::State, None) => return,
        };
        match sent {
            Propagated::Sent => stats::count(&stats::EFFECTS),
            Propagated::Refused => {
                log_warning("RL.APPLY could not be propagated; replicas and the AOF may miss a write")
            }
        }
    }

    #[inline]
    fn store(&mut self, w: &Write<K::Write>, now: Nanos) -> bool {
        let Some(key) = &self.key else { return false };
        let ty = K::redis_type();
        let held = match self.held {
            // SAFETY: `value` is a live value of K's type, held by the key,
            // which is open for writing.
            Some(value) => unsafe { K::Write::update(key, ty, value, &w.state) },
            None => create::<K>(key, &w.state),
        };
        let stored = held.is_some();
        if stored {
            self.held = held;
        }
        // An expiry the server refused is a failed store: PTTL must equal reset.
        let stored = stored && key.set_expire_at(w.expire_at, now.floor_ms());
        if stored {
            self.written = Written::State;
        }
        stored
    }

    fn delete(&mut self, refund: bool) -> bool {
        let Some(key) = &self.key else { return false };
        if self.held.is_none() {
            return true;
        }
        let deleted = key.delete();
        if deleted {
            self.held = None;
            self.written = Written::Deleted { refund };
        }
        deleted
    }

    /// Stores a propagated effect (`RL.APPLY`), whatever the key held.
    /// Counts nothing: the master counted it.
    pub fn apply(&mut self, payload: &[u8], now: Nanos) -> bool {
        let Some(key) = &self.key else { return false };
        // SAFETY: K's own type.
        let stored = unsafe { K::Write::apply(key, K::redis_type(), payload, now.floor_ms()) };
        if stored {
            self.written = Written::Applied;
            if let Some(event) = K::Write::event_of(payload) {
                self.event = event;
            }
        }
        stored
    }

    /// Closes the key (the server is told about writes only after this).
    #[inline]
    pub fn close(&mut self) {
        self.key = None;
    }

    /// Tells the server about what was written: WATCH and the keyspace
    /// event (the effect went with the [`write`](Self::write); what
    /// [`apply`](Self::apply) stored is not propagated again). Closes the
    /// key first if still open.
    #[inline(always)]
    pub fn announce(&mut self) {
        self.close();
        if !matches!(self.written, Written::Nothing) {
            self.announce_written();
        }
    }

    fn announce_written(&mut self) {
        let (ctx, name) = (self.ctx.raw(), self.name.raw());
        // SAFETY (both): the command's context and key name, live for the call (their
        // types say so); the event names are static.
        let signal = || unsafe { api!(RedisModule_SignalModifiedKey(ctx, name)) };
        let notify =
            |class, event: &CStr| unsafe { api!(RedisModule_NotifyKeyspaceEvent(ctx, class, event.as_ptr(), name)) };
        let event = self.event;
        match &self.written {
            Written::Nothing => {}
            Written::Applied | Written::State => {
                signal();
                notify(raw::REDISMODULE_NOTIFY_MODULE, event);
            }
            Written::Deleted { refund } => {
                signal();
                if *refund {
                    notify(raw::REDISMODULE_NOTIFY_MODULE, event);
                }
                // Its own deletion: the key's waiters are granted, not told it is gone.
                super::waiters::own_delete(|| notify(raw::REDISMODULE_NOTIFY_GENERIC, c"del"));
            }
        }
    }
}
