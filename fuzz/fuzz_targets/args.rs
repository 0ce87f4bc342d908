//! Every command's argument parser and RL.ALL's spec grammar, on an argv split at newlines.
//! See `redis_rl::fuzzing::args`.
fn main() {
    afl::fuzz!(|data: &[u8]| {
        let _ = redis_rl::fuzzing::args(data);
    });
}
