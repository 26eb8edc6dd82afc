//! Injectable random sources for jitter, and CPython's Mersenne Twister.
//!
//! Policies never call a global generator: they take a [`RandomSource`], so
//! the study can replay the paper's jittered cells bit for bit and tests can
//! pin a sequence; production seeds come from the caller (the runtime and
//! the client seed from the OS), never from here. [`PyRandom`] reproduces CPython's `random.Random(seed)`
//! (MT19937, `init_by_array` seeding, 53-bit `random()`).

/// A source of uniform doubles in `[0, 1)`.
pub trait RandomSource: Send + std::fmt::Debug {
    /// The next double in `[0, 1)`.
    fn next_f64(&mut self) -> f64;

    /// A double in `[lo, hi]`, computed as CPython's `uniform` does.
    fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.next_f64()
    }
}

const N: usize = 624;
const M: usize = 397;
const MATRIX_A: u32 = 0x9908_b0df;
const UPPER_MASK: u32 = 0x8000_0000;
const LOWER_MASK: u32 = 0x7fff_ffff;

/// MT19937 seeded exactly like CPython's `random.Random(seed)`.
#[derive(Clone)]
pub struct PyRandom {
    state: [u32; N],
    index: usize,
}

impl std::fmt::Debug for PyRandom {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PyRandom").field("index", &self.index).finish_non_exhaustive()
    }
}

impl PyRandom {
    /// `random.Random(seed)` for a non-negative integer seed.
    pub fn new(seed: u64) -> Self {
        // CPython splits |seed| into 32-bit words, least significant first;
        // zero becomes the single word [0].
        let mut key = Vec::new();
        let mut s = seed;
        while s > 0 {
            key.push(s as u32);
            s >>= 32;
        }
        if key.is_empty() {
            key.push(0);
        }
        let mut r = PyRandom { state: [0; N], index: N };
        r.init_by_array(&key);
        r
    }

    fn init_genrand(&mut self, s: u32) {
        self.state[0] = s;
        for i in 1..N {
            let prev = self.state[i - 1];
            self.state[i] = 1_812_433_253u32.wrapping_mul(prev ^ (prev >> 30)).wrapping_add(i as u32);
        }
        self.index = N;
    }

    fn init_by_array(&mut self, key: &[u32]) {
        self.init_genrand(19_650_218);
        let (mut i, mut j) = (1usize, 0usize);
        for _ in 0..N.max(key.len()) {
            let prev = self.state[i - 1];
            self.state[i] =
                (self.state[i] ^ (prev ^ (prev >> 30)).wrapping_mul(1_664_525)).wrapping_add(key[j]).wrapping_add(j as u32);
            i += 1;
            j += 1;
            if i >= N {
                self.state[0] = self.state[N - 1];
                i = 1;
            }
            if j >= key.len() {
                j = 0;
            }
        }
        for _ in 0..N - 1 {
            let prev = self.state[i - 1];
            self.state[i] = (self.state[i] ^ (prev ^ (prev >> 30)).wrapping_mul(1_566_083_941)).wrapping_sub(i as u32);
            i += 1;
            if i >= N {
                self.state[0] = self.state[N - 1];
                i = 1;
            }
        }
        self.state[0] = 0x8000_0000;
    }

    fn twist(&mut self) {
        for k in 0..N {
            let y = (self.state[k] & UPPER_MASK) | (self.state[(k + 1) % N] & LOWER_MASK);
            let mag = if y & 1 == 1 { MATRIX_A } else { 0 };
            self.state[k] = self.state[(k + M) % N] ^ (y >> 1) ^ mag;
        }
        self.index = 0;
    }

    /// The next 32-bit output (`genrand_uint32`).
    pub fn next_u32(&mut self) -> u32 {
        if self.index >= N {
            self.twist();
        }
        let mut y = self.state[self.index];
        self.index += 1;
        y ^= y >> 11;
        y ^= (y << 7) & 0x9d2c_5680;
        y ^= (y << 15) & 0xefc6_0000;
        y ^= y >> 18;
        y
    }
}

impl RandomSource for PyRandom {
    fn next_f64(&mut self) -> f64 {
        let a = (self.next_u32() >> 5) as f64;
        let b = (self.next_u32() >> 6) as f64;
        (a * 67_108_864.0 + b) / 9_007_199_254_740_992.0
    }
}

/// A source that replays a fixed list of values, cycling (for tests).
#[derive(Debug, Clone)]
pub struct Scripted {
    values: Vec<f64>,
    next: usize,
}

impl Scripted {
    /// Replays `values` in order, then starts over.
    pub fn new(values: Vec<f64>) -> Self {
        assert!(!values.is_empty(), "a scripted source needs at least one value");
        Scripted { values, next: 0 }
    }
}

impl RandomSource for Scripted {
    fn next_f64(&mut self) -> f64 {
        let v = self.values[self.next % self.values.len()];
        self.next += 1;
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpython_seed_0_words() {
        let mut r = PyRandom::new(0);
        let words: Vec<u32> = (0..4).map(|_| r.next_u32()).collect();
        assert_eq!(words, [3_626_764_237, 1_654_615_998, 3_255_389_356, 3_823_568_514]);
    }

    #[test]
    fn cpython_seed_7_doubles() {
        let mut r = PyRandom::new(7);
        assert_eq!(r.next_f64(), 0.32383276483316237);
        assert_eq!(r.next_f64(), 0.15084917392450192);
        assert_eq!(r.next_f64(), 0.6509344730398537);
    }

    #[test]
    fn cpython_seed_42_double() {
        assert_eq!(PyRandom::new(42).next_f64(), 0.6394267984578837);
    }

    #[test]
    fn values_stay_in_unit_interval() {
        let mut r = PyRandom::new(123);
        for _ in 0..10_000 {
            let v = r.next_f64();
            assert!((0.0..1.0).contains(&v));
        }
    }
}
