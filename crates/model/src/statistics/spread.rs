//! Whether one cell varies more than its peers by more than chance allows: the one-sided F test of
//! two variances, each with its degrees of freedom.

use statrs::distribution::{ContinuousCDF, FisherSnedecor};

/// A sample variance with the degrees of freedom it was estimated on.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Variance {
    /// The variance (sum of squared deviations over `df`).
    pub value: f64,
    /// Its degrees of freedom: values less the means they were taken around.
    pub df: f64,
}

impl Variance {
    /// The variance of several groups' values pooled around each group's own mean: deviations
    /// within a group count, differences between groups' means do not. None with no degree of
    /// freedom left.
    pub fn within(groups: impl IntoIterator<Item = Vec<f64>>) -> Option<Variance> {
        let (mut squares, mut df) = (0.0, 0.0);
        for values in groups.into_iter().filter(|v| !v.is_empty()) {
            let mean = values.iter().sum::<f64>() / values.len() as f64;
            squares += values.iter().map(|v| (v - mean).powi(2)).sum::<f64>();
            df += (values.len() - 1) as f64;
        }
        (df > 0.0).then(|| Variance { value: squares / df, df })
    }

    /// Several variances pooled, each weighted by its degrees of freedom.
    pub fn pooled(parts: &[Variance]) -> Option<Variance> {
        let df: f64 = parts.iter().map(|p| p.df).sum();
        (df > 0.0).then(|| Variance { value: parts.iter().map(|p| p.value * p.df).sum::<f64>() / df, df })
    }

    /// How many times `peer`'s variance this one is, when that is more than chance makes it at
    /// `confidence` (one-sided: the quotient over the F distribution's quantile on both degrees of
    /// freedom). None when it is not, or when the peer varies not at all.
    pub fn exceeds(&self, peer: &Variance, confidence: f64) -> Option<f64> {
        if peer.value <= 0.0 {
            return None;
        }
        let quotient = self.value / peer.value;
        let f = FisherSnedecor::new(self.df, peer.df).ok()?;
        (quotient > f.inverse_cdf(confidence)).then_some(quotient)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn within_groups_ignores_the_difference_between_their_means() {
        let v = Variance::within([vec![1.0, 3.0], vec![101.0, 103.0], vec![7.0]]).unwrap();
        assert_eq!((v.value, v.df), (2.0, 2.0));
        assert_eq!(Variance::within([vec![5.0], vec![]]), None);
        let p = Variance::pooled(&[Variance { value: 1.0, df: 3.0 }, Variance { value: 5.0, df: 1.0 }]).unwrap();
        assert_eq!((p.value, p.df), (2.0, 4.0));
    }

    #[test]
    fn a_quotient_chance_explains_on_few_values_is_not_an_excess() {
        // F(4, 4) at 99% is 15.98: two and a half times on 4 degrees each is chance.
        let (calm, wide) = (Variance { value: 1.0, df: 4.0 }, Variance { value: 2.5, df: 4.0 });
        assert_eq!(wide.exceeds(&calm, 0.99), None);
        let wider = Variance { value: 16.5, df: 4.0 };
        assert_eq!(wider.exceeds(&calm, 0.99), Some(16.5));
        // On 40 degrees each the same two and a half times is not chance (F(40, 40) at 99% is 2.11).
        let (calm, wide) = (Variance { value: 1.0, df: 40.0 }, Variance { value: 2.5, df: 40.0 });
        assert_eq!(wide.exceeds(&calm, 0.99), Some(2.5));
        assert_eq!(wide.exceeds(&Variance { value: 0.0, df: 40.0 }, 0.99), None);
    }
}
