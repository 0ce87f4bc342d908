//! RL.APPLY's effect payloads of every kind, in sequence on one key.
//! See `redis_rl::fuzzing::apply`.
fn main() {
    afl::fuzz!(|data: &[u8]| {
        let _ = redis_rl::fuzzing::apply(data);
    });
}
