//! One version and one licence everywhere a release shows them: the crate
//! (the module's `INFO rl` and `MODULE LIST` derive from it), the Python and
//! Node.js client libraries, and the LICENSE file.

use std::path::Path;

fn read(rel: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// The value of the first `key = "value"` (TOML) or `"key": "value"` (JSON) line.
fn field(text: &str, key: &str) -> String {
    text.lines()
        .map(str::trim)
        .find_map(|l| {
            let rest = l.strip_prefix(&format!("{key} = \"")).or_else(|| l.strip_prefix(&format!("\"{key}\": \"")))?;
            Some(rest[..rest.find('"')?].to_string())
        })
        .unwrap_or_else(|| panic!("no {key} in {text:.200}"))
}

#[test]
fn the_client_libraries_carry_the_modules_version() {
    let version = env!("CARGO_PKG_VERSION");
    assert_eq!(field(&read("clients/python/pyproject.toml"), "version"), version);
    assert_eq!(field(&read("clients/node/package.json"), "version"), version);
    // The exporter (its build_info metric, --version, the Debian package).
    assert!(
        read("exporter/rl_exporter.py").contains(&format!("\nVERSION = \"{version}\"\n")),
        "exporter/rl_exporter.py VERSION"
    );
}

#[test]
fn every_package_has_the_licence_of_the_license_file() {
    assert!(read("LICENSE").starts_with("BSD 3-Clause License"));
    assert_eq!(field(&read("Cargo.toml"), "license"), "BSD-3-Clause");
    assert_eq!(field(&read("clients/node/package.json"), "license"), "BSD-3-Clause");
    assert!(read("clients/python/pyproject.toml").contains("license = { text = \"BSD-3-Clause\" }"));
}

#[test]
fn the_changelog_has_a_section_for_this_version() {
    let version = env!("CARGO_PKG_VERSION");
    assert!(
        read("CHANGELOG.md").lines().any(|l| l.starts_with(&format!("## {version}"))),
        "CHANGELOG.md: no ## {version}"
    );
}
