//! The module's arguments (`MODULE LOAD path ARG...`, `loadmodule path
//! ARG...`): RL.TOP's `top-capacity` and `top-sample`, and the test hook.

use redis_module::RedisString;

use super::{args, names, top_summary as top};

/// Module arguments (`MODULE LOAD path ARG...`, `loadmodule path ARG...`).
pub struct LoadOptions {
    /// Registers `RL.PANICTEST` (see `hooks`), which panics on purpose, so
    /// tests can show that a panic becomes an error reply and the server
    /// stays up. Only a module built with the `test-hooks` feature has it.
    pub panic_test_command: bool,
    /// `top-capacity n`: keys per RL.TOP summary (0 turns tracking off).
    pub top_capacity: usize,
    /// `top-sample k`: consumption is sampled about every k units.
    pub top_sample: u64,
    /// `command-prefix P`: the commands are `P.GCRA`, ... (default `RL`).
    pub command_prefix: String,
    /// `cl-throttle no`: `CL.THROTTLE` is not registered.
    pub cl_throttle: bool,
}

impl Default for LoadOptions {
    fn default() -> Self {
        Self {
            panic_test_command: false,
            top_capacity: top::DEFAULT_CAPACITY,
            top_sample: top::DEFAULT_SAMPLE,
            command_prefix: names::DEFAULT_PREFIX.to_string(),
            cl_throttle: true,
        }
    }
}

/// What `load` says after an unknown or bad module argument.
pub const LOAD_OPTIONS: &str = "the module arguments are top-capacity <0 to 1000000>, top-sample <1 to 1048576>, \
                            command-prefix <1 to 16 letters, digits or _>, cl-throttle <yes|no> and \
                            enable-panic-test-command (for tests)";

impl LoadOptions {
    pub fn parse(args: &[RedisString]) -> Result<Self, String> {
        Self::parse_words(&args.iter().map(|a| a.as_slice()).collect::<Vec<_>>())
    }

    pub(crate) fn parse_words(args: &[&[u8]]) -> Result<Self, String> {
        let mut opts = Self::default();
        let mut words = args.iter().copied();
        // Each argument at most once, as options of a command are.
        let mut seen: Vec<&[u8]> = Vec::new();
        while let Some(word) = words.next() {
            let name = word.to_ascii_lowercase();
            if seen.iter().any(|s| s.eq_ignore_ascii_case(word)) {
                return Err(format!("module argument {} given twice", String::from_utf8_lossy(&name)));
            }
            seen.push(word);
            let mut value = |name: &'static str, max: u64| -> Result<u64, String> {
                let v = words.next().ok_or_else(|| format!("{name} needs a value"))?;
                let min = u64::from(name != "top-capacity");
                args::int_in(v, name, min, max).map_err(|_| format!("{name} must be an integer from {min} to {max}"))
            };
            match word {
                a if a.eq_ignore_ascii_case(b"top-capacity") => {
                    opts.top_capacity = value("top-capacity", crate::heavy_hitters::MAX_CAPACITY as u64)? as usize
                }
                a if a.eq_ignore_ascii_case(b"top-sample") => opts.top_sample = value("top-sample", top::MAX_SAMPLE)?,
                a if a.eq_ignore_ascii_case(b"command-prefix") => {
                    let p = words.next().ok_or("command-prefix needs a value")?;
                    if !names::valid_prefix(p) {
                        return Err("command-prefix must be 1 to 16 ASCII letters, digits or _".to_string());
                    }
                    opts.command_prefix = String::from_utf8_lossy(p).into_owned();
                }
                a if a.eq_ignore_ascii_case(b"cl-throttle") => {
                    let v = words.next().ok_or("cl-throttle needs a value")?;
                    opts.cl_throttle = if v.eq_ignore_ascii_case(b"yes") {
                        true
                    } else if v.eq_ignore_ascii_case(b"no") {
                        false
                    } else {
                        return Err("cl-throttle must be yes or no".to_string());
                    };
                }
                a if a.eq_ignore_ascii_case(b"enable-panic-test-command") => {
                    if !cfg!(feature = "test-hooks") {
                        return Err("enable-panic-test-command needs a module built with the test-hooks feature \
                                    (make build-hooks)"
                            .to_string());
                    }
                    opts.panic_test_command = true
                }
                other => return Err(format!("unknown module argument {:?}", String::from_utf8_lossy(other))),
            }
        }
        Ok(opts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_argument_is_taken_once() {
        let o = LoadOptions::parse_words(&[b"top-capacity", b"5", b"TOP-SAMPLE", b"3"]).unwrap();
        assert_eq!((o.top_capacity, o.top_sample), (5, 3));
        for twice in
            [&[&b"top-capacity"[..], b"5", b"top-capacity", b"6"][..], &[b"top-sample", b"2", b"Top-Sample", b"2"]]
        {
            let e = LoadOptions::parse_words(twice).err().expect("refused");
            assert!(e.contains("given twice"), "{e}");
        }
        assert!(LoadOptions::parse_words(&[b"top-capacity", b"5", b"nope"]).is_err());
        let o = LoadOptions::parse_words(&[b"command-prefix", b"RRL", b"CL-THROTTLE", b"no"]).unwrap();
        assert_eq!((o.command_prefix.as_str(), o.cl_throttle), ("RRL", false));
        for bad in [
            &[&b"command-prefix"[..], b"R.L"][..],
            &[b"command-prefix"],
            &[b"cl-throttle", b"maybe"],
            &[b"cl-throttle"],
        ] {
            assert!(LoadOptions::parse_words(bad).is_err());
        }
    }
}
