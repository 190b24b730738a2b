//! Reproducible random draws: SplitMix64 from a seed, so the bootstrap, the block schedule's
//! orders and a scenario file's deck draw the same on every machine and every run (the standard
//! library's hashers are randomized per process, and a crate's generator may change its stream
//! between versions).

/// A seed from a text (FNV-1a): a run's orders from its id, so they can be told again.
pub fn seed_of(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ b as u64).wrapping_mul(0x0100_0000_01b3))
}

/// A small, well-known generator (SplitMix64; passes BigCrush): reproducible draws, not secrecy.
#[derive(Debug, Clone)]
pub struct SplitMix64(pub u64);

impl SplitMix64 {
    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A uniform index below `n` (n > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    /// `0..n` in a random order (Fisher-Yates).
    pub fn permutation(&mut self, n: usize) -> Vec<usize> {
        let mut order: Vec<usize> = (0..n).collect();
        for i in (1..n).rev() {
            order.swap(i, self.below(i + 1));
        }
        order
    }

    /// A number in `lo..=hi`.
    pub fn between(&mut self, lo: i64, hi: i64) -> i64 {
        let span = (hi as i128 - lo as i128 + 1) as u128;
        if span > u64::MAX as u128 {
            return self.next_u64() as i64;
        }
        (lo as i128 + (self.next_u64() % span as u64) as i128) as i64
    }

    /// Shuffles `items` in place (Fisher-Yates).
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            items.swap(i, self.below(i + 1));
        }
    }
}

/// A standard normal draw (Box-Muller from two uniforms in (0, 1]): what the statistics'
/// simulations draw their noise from.
pub fn standard_normal(rng: &mut SplitMix64) -> f64 {
    let mut uniform = || ((rng.next_u64() >> 11) as f64 + 1.0) / (1u64 << 53) as f64;
    let (a, b) = (uniform(), uniform());
    (-2.0 * a.ln()).sqrt() * (std::f64::consts::TAU * b).cos()
}

#[cfg(test)]
mod tests {
    use super::SplitMix64;

    #[test]
    fn one_seed_draws_one_stream_and_ranges_hold() {
        let (mut a, mut b) = (SplitMix64(7), SplitMix64(7));
        let xs: Vec<u64> = (0..5).map(|_| a.next_u64()).collect();
        assert_eq!(xs, (0..5).map(|_| b.next_u64()).collect::<Vec<_>>());
        assert_ne!(xs, (0..5).map(|_| SplitMix64(8).next_u64()).collect::<Vec<_>>());
        let mut r = SplitMix64(1);
        let mut seen = [0u32; 3];
        for _ in 0..3000 {
            seen[(r.between(-1, 1) + 1) as usize] += 1;
        }
        assert!(seen.iter().all(|&n| (800..1200).contains(&n)), "{seen:?}");
        // The whole i64 range does not overflow the span.
        SplitMix64(3).between(i64::MIN, i64::MAX);
    }
}
