//! The RDB / DUMP loader of every kind, on a DUMP payload.
//! See `redis_rl::fuzzing::rdb`.
fn main() {
    afl::fuzz!(|data: &[u8]| {
        let _ = redis_rl::fuzzing::rdb(data);
    });
}
