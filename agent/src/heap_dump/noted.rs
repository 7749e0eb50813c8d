//! The noted addresses of the objects followed by weak reference, packed:
//! one `u64` each, `(address - base) / 8` above the 22 bits of its
//! allocation counter's index (`memory` has at most 2^22 counters), so the
//! keys sort by address and take 8 bytes an object (16 while sorted).
//! Objects are 8-byte aligned; the base sits 2^44 below the first address
//! noted, so every address within 16 TB of it fits. Sorted by a radix
//! sort, linear; looked up from the last match forward.

/// Bits of a key that hold the counter's index.
const COUNTER_BITS: u32 = 22;
const COUNTER_MASK: u64 = (1 << COUNTER_BITS) - 1;
/// Bits left for the address's offset from the base, in 8-byte words.
const OFFSET_LIMIT: u64 = 1 << (64 - COUNTER_BITS);

/// Where each weakly followed object is, with its counter.
#[derive(Default, Debug, Clone)]
pub struct Addresses {
    base: Option<u64>,
    keys: Vec<u64>,
    /// An address or counter that did not fit: the noting is unusable.
    lost: bool,
}

impl Addresses {
    /// Notes that the object at `address` counts on counter `counter`.
    pub fn push(&mut self, address: u64, counter: u32) {
        let base = *self
            .base
            .get_or_insert_with(|| address.saturating_sub(1 << 44) & !7);
        let offset = address.wrapping_sub(base);
        if address < base
            || !offset.is_multiple_of(8)
            || offset / 8 >= OFFSET_LIMIT
            || counter as u64 > COUNTER_MASK
        {
            self.lost = true;
            return;
        }
        self.keys
            .push((offset / 8) << COUNTER_BITS | counter as u64);
    }

    /// None of it can be used (an address out of range).
    pub fn is_lost(&self) -> bool {
        self.lost
    }

    /// Sorts by address: a least-significant-digit radix sort, 11 bits a
    /// pass, over the bits the keys differ in.
    pub fn sort(&mut self) {
        const BITS: u32 = 11;
        let keys = &mut self.keys;
        let (Some(&min), Some(&max)) = (keys.iter().min(), keys.iter().max()) else {
            return;
        };
        // Only the bits above the counter's matter for the order of
        // addresses (an address has one counter).
        let low = COUNTER_BITS;
        let high = 64 - (min ^ max).leading_zeros();
        if keys.len() < 4096 || high <= low {
            keys.sort_unstable();
            return;
        }
        let mut to = vec![0u64; keys.len()];
        let mut shift = low;
        while shift < high {
            let digit = |k: u64| ((k >> shift) & ((1 << BITS) - 1)) as usize;
            let mut starts = vec![0usize; 1 << BITS];
            for &k in keys.iter() {
                starts[digit(k)] += 1;
            }
            let mut at = 0;
            for s in starts.iter_mut() {
                let n = *s;
                *s = at;
                at += n;
            }
            for &k in keys.iter() {
                let d = digit(k);
                to[starts[d]] = k;
                starts[d] += 1;
            }
            std::mem::swap(keys, &mut to);
            shift += BITS;
        }
    }

    /// `address`'s counter, searching from `cursor` (the last match's
    /// place): HotSpot writes the heap mostly in address order, so the
    /// search gallops forward from there, and a lower address searches the
    /// part before it. Returns the new cursor too. Needs [`Self::sort`].
    pub fn find(&self, cursor: usize, address: u64) -> (Option<u32>, usize) {
        let Some(base) = self.base.filter(|_| !self.lost) else {
            return (None, cursor);
        };
        let offset = address.wrapping_sub(base);
        if address < base || !offset.is_multiple_of(8) || offset / 8 >= OFFSET_LIMIT {
            return (None, cursor);
        }
        let word = offset / 8;
        let least = word << COUNTER_BITS;
        let all = &self.keys;
        let from = cursor.min(all.len());
        let i = match all.get(from) {
            Some(&k) if k < least => {
                let (mut lo, mut step) = (from, 1);
                let mut hi = from + 1;
                while hi < all.len() && all[hi] < least {
                    lo = hi;
                    step *= 2;
                    hi = from + step;
                }
                let hi = hi.min(all.len());
                lo + all[lo..hi].partition_point(|&k| k < least)
            }
            _ => all[..from].partition_point(|&k| k < least),
        };
        match all.get(i) {
            Some(&k) if k >> COUNTER_BITS == word => (Some((k & COUNTER_MASK) as u32), i),
            _ => (None, i),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Addresses;

    fn noted(pairs: &[(u64, u32)]) -> Addresses {
        let mut a = Addresses::default();
        for &(at, c) in pairs {
            a.push(at, c);
        }
        a.sort();
        a
    }

    #[test]
    fn addresses_are_found_in_any_order_from_any_cursor() {
        let pairs: Vec<(u64, u32)> = (0..1000u64)
            .rev()
            .map(|i| (0x7f00_0000_0000 + i * 16 + 8, i as u32))
            .collect();
        let a = noted(&pairs);
        let mut cursor = 0;
        for i in (0..1000u64).chain((0..1000).rev()).chain([500, 3, 999, 0]) {
            let at = 0x7f00_0000_0000 + i * 16 + 8;
            let (found, c) = a.find(cursor, at);
            assert_eq!(found, Some(i as u32), "address of {i} from {cursor}");
            cursor = c;
            assert_eq!(a.find(cursor, at + 8).0, None);
            assert_eq!(a.find(cursor, at - 8).0, None);
            assert_eq!(a.find(cursor, at + 1).0, None, "unaligned");
        }
        assert_eq!(a.find(2000, 1 << 40).0, None);
        assert_eq!(Addresses::default().find(0, 8), (None, 0));
    }

    #[test]
    fn the_radix_sort_sorts_what_a_heap_gives() {
        let mut x: u64 = 88172645463325252;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for (n, span) in [
            (10, 1u64 << 30),
            (50_000, 1 << 34),
            (100_000, 1 << 20),
            (6000, 64),
        ] {
            let pairs: Vec<(u64, u32)> = (0..n)
                .map(|i| {
                    (
                        0x8_0000_0000 + (next() % span) / 8 * 8,
                        (i % (1 << 22)) as u32,
                    )
                })
                .collect();
            let a = noted(&pairs);
            let mut got: Vec<(u64, u32)> = Vec::new();
            let mut last = 0;
            for &(at, _) in &pairs {
                let (c, _) = a.find(0, at);
                assert!(c.is_some(), "{at:#x} not found ({n} over {span})");
                got.push((at, c.unwrap()));
                last = last.max(at);
            }
            // Keys come out in address order.
            assert!(a.keys.windows(2).all(|w| w[0] <= w[1]), "{n} over {span}");
        }
    }

    #[test]
    fn what_does_not_fit_is_said() {
        let mut a = Addresses::default();
        a.push(0x7f00_0000_0000, 1);
        a.push(0x7f00_0000_0008, 1 << 22);
        assert!(a.is_lost());
        let mut b = Addresses::default();
        b.push(1 << 46, 1);
        b.push((1 << 46) + (1 << 45), 1);
        assert!(b.is_lost());
    }
}
