//! One declaration per command: everything the server, `COMMAND INFO`,
//! `COMMAND DOCS`, the ACL and `INFO rl` learn about a command follows from
//! one [`Declaration`], written next to the command's handler (a kind's is
//! made from its `Kind` impl: `commands::of_kind`). The load hook registers
//! every declaration in `commands::TABLE`, the INFO callback prints the
//! counters of each in the same order, and nothing else names a command's
//! flags, keys or docs.
//!
//! Adding a command: a handler, its `Declaration` beside it, and one entry
//! in `commands::TABLE`.

use std::ffi::CStr;

use super::command_info::Info;
use super::entry::RawHandler;
use super::stats::Counters;

/// How one command is registered and described.
pub struct Declaration {
    /// The documented name: `RL.X` is registered as `<prefix>.X` (see
    /// `names`); a subcommand's is its own word (`DENIED`).
    pub name: &'static CStr,
    /// `RedisModule_CreateCommand`'s flags (a container has none).
    pub flags: &'static CStr,
    /// Arity, key specs, `since`, ACL categories, arguments and tips. The
    /// legacy key positions (`COMMAND`'s first/last/step) follow from the
    /// key spec ([`Keys::legacy_positions`](super::command_info::Keys::legacy_positions)).
    pub docs: Docs,
    /// The entry point, made with [`entry_point!`](super::entry::entry_point);
    /// `None` for a container, whose subcommands have one each.
    pub handler: Option<RawHandler>,
    /// Its `INFO rl` line, `rl_<name>:calls=..,allowed=..`, and the
    /// counters it shows; `None`: no line (the call is counted elsewhere,
    /// or not at all).
    pub info_line: Option<(&'static CStr, &'static Counters)>,
    /// A container's subcommands (registered as `name|subcommand`).
    pub subcommands: &'static [Declaration],
    /// Whether this load registers it (a module argument can leave it out).
    pub enabled: fn() -> bool,
}

/// Where a command's [`Info`] comes from.
#[derive(Clone, Copy)]
pub enum Docs {
    /// Written out with the declaration.
    Fixed(&'static Info),
    /// Made at load, from other declarations (RL.ALL's, from the kinds').
    AtLoad(fn() -> &'static Info),
}

impl Docs {
    /// The command's docs (an `AtLoad` one is made anew by each call).
    pub fn get(&self) -> &'static Info {
        match *self {
            Docs::Fixed(info) => info,
            Docs::AtLoad(make) => make(),
        }
    }
}

fn always() -> bool {
    true
}

impl Declaration {
    /// A command run by `handler`, registered with `flags`, described by `docs`.
    pub const fn command(name: &'static CStr, flags: &'static CStr, handler: RawHandler, docs: Docs) -> Self {
        Declaration { name, flags, docs, handler: Some(handler), info_line: None, subcommands: &[], enabled: always }
    }

    /// A container of `subcommands`, as `SLOWLOG` is: no handler and no
    /// flags of its own.
    pub const fn container(name: &'static CStr, docs: &'static Info, subcommands: &'static [Declaration]) -> Self {
        Declaration {
            name,
            flags: c"",
            docs: Docs::Fixed(docs),
            handler: None,
            info_line: None,
            subcommands,
            enabled: always,
        }
    }

    /// With an `INFO rl` line `rl_<name>:...` showing `counters`.
    pub const fn info_line(self, name: &'static CStr, counters: &'static Counters) -> Self {
        Declaration { info_line: Some((name, counters)), ..self }
    }

    /// Registered only in a load where `enabled` answers true.
    pub const fn enabled_if(self, enabled: fn() -> bool) -> Self {
        Declaration { enabled, ..self }
    }
}
