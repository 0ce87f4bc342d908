//! Each kind's calls on a master and, through their effects, a replica; lease sets and logs against their models.
//! See `redis_rl::fuzzing::model`.
fn main() {
    afl::fuzz!(|data: &[u8]| {
        let _ = redis_rl::fuzzing::model(data);
    });
}
