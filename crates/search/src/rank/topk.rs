//! The `offset + limit` best hits of a ranking, without ordering the rest.

use super::Hit;
use super::score::Cand;

/// The `offset + limit` best hits, without ordering the rest: a buffer of
/// up to twice the window is cut back to the window by partial selection,
/// and anything not better than the window's worst is skipped at once.
#[derive(Debug, Default)]
pub(super) struct TopK {
    pub(super) window: usize,
    /// `(tier and score key, source and tool key, score)`.
    buf: Vec<(u64, u64, f32)>,
    threshold: Option<(u64, u64)>,
}

impl TopK {
    pub(super) fn reset(&mut self, window: usize) {
        self.window = window;
        self.buf.clear();
        self.threshold = None;
    }

    pub(super) fn push(&mut self, c: &Cand) {
        self.push_key(order_key(c.tier, c.score), c.source, c.tool, c.score);
    }

    /// Push with the tier-and-score key already computed.
    #[inline]
    pub(super) fn push_key(&mut self, order: u64, source: u32, tool: u32, score: f32) {
        if self.window == 0 {
            return;
        }
        let key = (order, u64::from(source) << 32 | u64::from(tool));
        if self.threshold.is_some_and(|th| key >= th) {
            return;
        }
        self.insert(key, score);
    }

    #[inline(never)]
    fn insert(&mut self, key: (u64, u64), score: f32) {
        self.buf.push((key.0, key.1, score));
        if self.buf.len() >= self.window.saturating_mul(2).max(64) {
            let w = self.window;
            self.buf.select_nth_unstable_by_key(w - 1, |e| (e.0, e.1));
            self.buf.truncate(w);
            self.threshold = Some((self.buf[w - 1].0, self.buf[w - 1].1));
        }
    }

    pub(super) fn finish(&mut self) -> Vec<Hit> {
        self.buf.sort_unstable_by_key(|e| (e.0, e.1));
        self.buf.truncate(self.window);
        self.buf
            .iter()
            .map(|&(k1, k2, score)| Hit {
                source: (k2 >> 32) as usize,
                tool: k2 as u32,
                tier: (k1 >> 32) as u8,
                score,
            })
            .collect()
    }
}

/// Ascending in tier, then descending in score under `f32::total_cmp`.
pub(super) fn order_key(tier: u8, score: f32) -> u64 {
    let b = score.to_bits();
    let ascending = if b >> 31 == 1 { !b } else { b | 0x8000_0000 };
    u64::from(tier) << 32 | u64::from(!ascending)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rank::order;

    #[test]
    fn order_key_sorts_like_total_cmp_descending() {
        let scores = [
            f32::NEG_INFINITY,
            -3.5,
            -0.0,
            0.0,
            1e-30,
            0.25,
            0.5,
            7.0,
            f32::INFINITY,
        ];
        for &a in &scores {
            for &b in &scores {
                for (ta, tb) in [(1, 1), (1, 2), (2, 1)] {
                    let want = ta.cmp(&tb).then(b.total_cmp(&a));
                    assert_eq!(order_key(ta, a).cmp(&order_key(tb, b)), want, "{a} {b}");
                }
            }
        }
    }

    #[test]
    fn top_k_keeps_the_best_window_in_order() {
        let mut top = TopK::default();
        top.reset(3);
        let cands: Vec<Cand> = (0..500u32)
            .map(|i| Cand {
                source: i % 7,
                tool: i,
                tier: (1 + i % 2) as u8,
                all_terms: false,
                score: ((i * 37) % 101) as f32,
                base: 0.0,
                coverage: 0.0,
                mask: 0,
                own: 0,
                spelled: false,
            })
            .collect();
        for c in &cands {
            top.push(c);
        }
        let mut sorted = cands.clone();
        sorted.sort_unstable_by(order);
        let want: Vec<Hit> = sorted.iter().take(3).map(Cand::hit).collect();
        assert_eq!(top.finish(), want);
    }
}
