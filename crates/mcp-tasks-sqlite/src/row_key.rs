//! A task's rowid, taken from its id, so `tasks/get` walks one B-tree
//! instead of two.
//!
//! A lookup by id walks the id index (text keys) to find the rowid, then
//! the table by that rowid. Over a store of 1 M tasks polled at random,
//! each walk ends in a leaf page no cache holds; the id index's walk is
//! also the dearer of the two in instructions (comparisons of text keys).
//! A task minted here is a UUID v7 — milliseconds, then random bits — so
//! [`rowid_of`] reads a rowid straight out of the id: creation stores the
//! row under it, and a read probes the table by it first, checking the
//! id. Ids sort by time, so rowids still grow with creation (inserts
//! append, as before).
//!
//! The rowid is a hint, never an identity: two ids minted in the same
//! millisecond may share one (18 random bits: at 35 creations a
//! millisecond, about one creation in 15 000 meets an earlier one), and an id
//! of another form (a v4, a row from before this, one a migration
//! renumbered) has none. Such a row gets an ordinary rowid and is found
//! through the id index, as every row was before.

use mcp_tasks_core::TaskId;

/// Milliseconds keep their low 45 bits (the rowid's top bits): until the
/// year 3085 they are the whole instant, so rowids grow with time.
const MILLIS_BITS: u32 = 45;
/// Random bits below the milliseconds: `rand_a`'s 12, then 6 of `rand_b`
/// (45 + 18 = 63, so a rowid is never negative).
const RANDOM_BITS: u32 = 18;

/// The rowid a task with `id` is stored under, when `id` has the shape of
/// a lowercase UUID v7 as [`TaskId::minted_at`] writes it (its dashes, its
/// version digit, and hex digits where the rowid reads them); `None`
/// otherwise.
///
/// Layout: the id's milliseconds (mod 2^45), then its 12 `rand_a` bits,
/// then the 2 random bits of the variant's hex digit and the 4 of the
/// digit after it. Every poll runs this, so it reads the bytes it needs in
/// place (≈ 110 instructions; an iterator over all 32 digits cost 620).
pub(crate) fn rowid_of(id: &TaskId) -> Option<i64> {
    let text = id.as_str().as_bytes();
    if text.len() != 36 || [8, 13, 18, 23].iter().any(|&i| text[i] != b'-') || text[14] != b'7' {
        return None;
    }
    let hex = |i: usize| -> Option<u64> {
        match text[i] {
            c @ b'0'..=b'9' => Some(u64::from(c - b'0')),
            c @ b'a'..=b'f' => Some(u64::from(c - b'a' + 10)),
            _ => None,
        }
    };
    // 12 digits of milliseconds around a dash, then `rand_a` after the version.
    let mut time_and_rand_a = 0u64;
    for i in [0, 1, 2, 3, 4, 5, 6, 7, 9, 10, 11, 12, 15, 16, 17] {
        time_and_rand_a = time_and_rand_a << 4 | hex(i)?;
    }
    let (variant, next) = (hex(19)?, hex(20)?);
    if variant >> 2 != 0b10 {
        return None;
    }
    let millis = (time_and_rand_a >> 12) & ((1 << MILLIS_BITS) - 1);
    let random = (time_and_rand_a & 0xfff) << 6 | (variant & 0b11) << 4 | next;
    i64::try_from(millis << RANDOM_BITS | random).ok()
}

#[cfg(test)]
mod tests {
    use mcp_tasks_core::Timestamp;

    use super::*;

    #[test]
    fn a_minted_id_has_a_rowid_that_grows_with_its_instant() {
        let early = TaskId::minted_at(Timestamp::from_secs(1_800_000_000));
        let later = TaskId::minted_at(Timestamp::from_secs(1_800_000_001));
        let (a, b) = (rowid_of(&early).expect("a v7 id"), rowid_of(&later).expect("a v7 id"));
        assert!(0 <= a && a < b, "{a} then {b}");
        assert_eq!(a >> RANDOM_BITS, 1_800_000_000_000, "the milliseconds are the top bits");
        assert_eq!(b >> RANDOM_BITS, 1_800_000_001_000);
    }

    #[test]
    fn the_random_bits_come_from_rand_a_and_the_start_of_rand_b() {
        // ms 0x0123456789ab, rand_a 0xcde, variant digit 0xb (random 0b11), next 0x5.
        let id = TaskId::from("01234567-89ab-7cde-b5ff-ffffffffffff");
        let expected = (0x0123_4567_89ab_i64 & ((1 << MILLIS_BITS) - 1)) << RANDOM_BITS | 0xcde << 6 | 0b11 << 4 | 0x5;
        assert_eq!(rowid_of(&id), Some(expected));
        // What follows those digits does not count: the same rowid.
        assert_eq!(rowid_of(&TaskId::from("01234567-89ab-7cde-b500-000000000000")), Some(expected));
        // The largest instant and random bits stay a positive i64.
        assert_eq!(rowid_of(&TaskId::from("ffffffff-ffff-7fff-bfff-ffffffffffff")), Some(i64::MAX));
    }

    #[test]
    fn an_id_of_another_form_has_none() {
        for id in [
            "0a8b2c4e-1d3f-4a5b-9c6d-7e8f9a0b1c2d", // a v4
            "01234567-89AB-7CDE-B5FF-FFFFFFFFFFFF", // uppercase: not as minted
            "01234567-89ab-7cde-c5ff-ffffffffffff", // not the RFC variant
            "0123456789ab-7cde-b5ff-ffffffffffff0", // the dashes elsewhere
            "01234567-89ab-7cde-b5ff-fffffffffff",  // too short
            "0123456g-89ab-7cde-b5ff-ffffffffffff", // not hex where the rowid reads
            "tenant-a/job-42",
            "",
        ] {
            assert_eq!(rowid_of(&TaskId::from(id)), None, "{id}");
        }
    }
}
