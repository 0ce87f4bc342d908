//! The module's version, from Cargo.toml: what `MODULE LIST` and `INFO rl`
//! report.

use std::ffi::CStr;
use std::os::raw::c_int;

/// The crate version, `major.minor.patch` from Cargo.toml.
const PKG_VERSION: &str = env!("CARGO_PKG_VERSION");

/// The module version as Redis reports it (`MODULE LIST`): major*10000 + minor*100 + patch.
pub const MODULE_VERSION: c_int = module_version(PKG_VERSION.as_bytes());
/// The same, as `INFO rl` shows it.
pub const VERSION_TEXT: &CStr = match CStr::from_bytes_with_nul(concat!(env!("CARGO_PKG_VERSION"), "\0").as_bytes()) {
    Ok(text) => text,
    Err(_) => panic!("CARGO_PKG_VERSION holds a NUL"),
};

/// `major*10000 + minor*100 + patch` of a `major.minor.patch[-pre]`
/// version, at compile time (a malformed version fails the build).
const fn module_version(v: &[u8]) -> c_int {
    let mut parts = [0 as c_int; 3];
    let (mut part, mut i) = (0, 0);
    while i < v.len() && v[i] != b'-' && v[i] != b'+' {
        match v[i] {
            b'.' if part < 2 => part += 1,
            d @ b'0'..=b'9' => parts[part] = parts[part] * 10 + (d - b'0') as c_int,
            _ => panic!("CARGO_PKG_VERSION is not major.minor.patch"),
        }
        i += 1;
    }
    assert!(part == 2 && parts[1] < 100 && parts[2] < 100, "CARGO_PKG_VERSION is not major.minor.patch");
    parts[0] * 10000 + parts[1] * 100 + parts[2]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_module_version_comes_from_cargo_toml() {
        assert_eq!(module_version(b"0.1.0"), 100);
        assert_eq!(module_version(b"1.2.3"), 10203);
        assert_eq!(module_version(b"12.34.56-rc.1"), 123456);
        assert_eq!(VERSION_TEXT.to_str(), Ok(env!("CARGO_PKG_VERSION")));
        assert_eq!(MODULE_VERSION, module_version(env!("CARGO_PKG_VERSION").as_bytes()));
    }
}
