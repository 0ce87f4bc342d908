//! The first byte of every `RL.APPLY` payload (the effects replicas and the
//! AOF receive, and the AOF rewrite's whole states): which kind's decoder
//! reads it, and in which form. One list, so no two kinds can claim a byte
//! (`kinds::by_tag` takes the first kind that owns a tag; the test below
//! checks that every byte has at most one owner).
//!
//! A tag is part of the data format: never reuse one for something else.

/// RL.GCRA's state, times in ns (0.2.0).
pub const GCRA: u8 = b'g';
/// RL.GCRA's state as 0.1.0 wrote it (times in µs).
pub const GCRA_V0: u8 = b'G';
/// RL.TOKENBUCKET's state, times in ns (0.2.0).
pub const TOKENBUCKET: u8 = b't';
/// RL.TOKENBUCKET's state as 0.1.0 wrote it (times in µs).
pub const TOKENBUCKET_V0: u8 = b'T';
/// RL.SLIDE's state (unchanged since 0.1.0: times in ms).
pub const SLIDE: u8 = b'S';
/// RL.QUOTA's state (no 0.1.0 form).
pub const QUOTA: u8 = b'Q';
/// A change to an RL.LOG log.
pub const LOG_CHANGE: u8 = b'l';
/// A whole RL.LOG log (AOF rewrite).
pub const LOG_WHOLE: u8 = b'L';
/// A change to an RL.ACQUIRE lease set.
pub const LEASE_CHANGE: u8 = b'c';
/// A whole RL.ACQUIRE lease set (AOF rewrite).
pub const LEASE_WHOLE: u8 = b'C';

#[cfg(test)]
mod tests {
    use crate::core::Algorithm;
    use crate::module::kinds::{each, EachKind, Kind};
    use crate::module::stored::Stored;

    /// How many kinds own each byte.
    struct Owners([usize; 256]);
    impl EachKind for Owners {
        fn kind<K: Kind>(&mut self) {
            for tag in 0..=255u8 {
                if <<K as Algorithm>::Write as Stored>::owns_tag(tag) {
                    self.0[tag as usize] += 1;
                }
            }
        }
    }

    #[test]
    fn no_two_kinds_own_a_tag_and_every_listed_tag_has_an_owner() {
        let mut owners = Owners([0; 256]);
        each(&mut owners);
        for (tag, &n) in owners.0.iter().enumerate() {
            assert!(n <= 1, "tag {:?} is owned by {n} kinds", tag as u8 as char);
        }
        use super::*;
        for tag in
            [GCRA, GCRA_V0, TOKENBUCKET, TOKENBUCKET_V0, SLIDE, QUOTA, LOG_CHANGE, LOG_WHOLE, LEASE_CHANGE, LEASE_WHOLE]
        {
            assert_eq!(owners.0[tag as usize], 1, "tag {:?}", tag as char);
        }
        assert_eq!(owners.0.iter().sum::<usize>(), 10, "a tag owned but not listed here");
    }
}
