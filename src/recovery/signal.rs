//! Random `k`-sparse test signals: [`sparse_signal`] and the distribution of their
//! nonzeros, [`SignalKind`].

use crate::error::Result;
use crate::recovery::random::Rng;
use crate::recovery::{Real, RecoveryError};

/// The distribution of a test signal's nonzeros.
///
/// ```
/// use kselect::recovery::SignalKind;
/// assert_eq!("sign".parse::<SignalKind>()?, SignalKind::Sign);
/// assert_eq!(SignalKind::Gaussian.to_string(), "gaussian");
/// # Ok::<(), kselect::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SignalKind {
    /// Standard normal values `N(0, 1)` (never exactly 0).
    Gaussian,
    /// `+1` or `-1`, equally likely: the hardest case for recovery at a given `k`, every
    /// nonzero as small as the largest.
    Sign,
}

impl SignalKind {
    /// The name, as [`FromStr`] reads it.
    ///
    /// ```
    /// assert_eq!(kselect::recovery::SignalKind::Sign.name(), "sign");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            SignalKind::Gaussian => "gaussian",
            SignalKind::Sign => "sign",
        }
    }
}

crate::names::named!(
    SignalKind,
    "signal kind",
    [SignalKind::Gaussian, SignalKind::Sign]
);

/// A signal of `n` entries with exactly `k` nonzeros, drawn from `seed`. An error when
/// `n` is 0 or `k > n`.
///
/// The draws come from SplitMix64 whose state starts at `seed` (the generator of
/// [`Ensemble`](crate::recovery::Ensemble), so give a signal and an operator different
/// seeds): first the `k` positions, every set equally likely, by Floyd's algorithm (for `j`
/// from `n - k` to `n - 1`, `t = below(j + 1)` is taken unless already taken, `j` otherwise;
/// `below(b) = (u b) >> 64` of an output `u`); then the values, at the positions in ascending
/// order: for [`SignalKind::Sign`] `+1` when an output's top bit is 0 and `-1` when it is 1;
/// for [`SignalKind::Gaussian`] Box–Muller normals (as for
/// [`Ensemble::Gaussian`](crate::recovery::Ensemble::Gaussian)) rounded to `T`, a value that
/// rounds to 0 drawn again.
///
/// ```
/// use kselect::recovery::{sparse_signal, SignalKind};
///
/// let x = sparse_signal::<f64>(100, 5, SignalKind::Sign, 42)?;
/// assert_eq!(x.len(), 100);
/// assert_eq!(x.iter().filter(|v| **v != 0.0).count(), 5);
/// assert!(x.iter().all(|v| [-1.0, 0.0, 1.0].contains(v)));
/// assert_eq!(x, sparse_signal::<f64>(100, 5, SignalKind::Sign, 42)?);
/// assert!(sparse_signal::<f64>(4, 5, SignalKind::Sign, 42).is_err());
/// # Ok::<(), kselect::Error>(())
/// ```
pub fn sparse_signal<T: Real>(n: usize, k: usize, kind: SignalKind, seed: u64) -> Result<Vec<T>> {
    if n == 0 {
        return Err(RecoveryError::Empty {
            what: "a signal",
            item: "entry",
        }
        .into());
    }
    if k > n {
        return Err(RecoveryError::Sparsity { k, n }.into());
    }
    let mut x = Vec::new();
    x.try_reserve_exact(n)
        .map_err(|_| RecoveryError::SignalTooLarge { n })?;
    x.resize(n, T::zero());
    let mut rng = Rng::new(seed);
    for j in rng.distinct_below(k, n) {
        x[j] = match kind {
            SignalKind::Sign => {
                if rng.next_u64() >> 63 == 0 {
                    T::one()
                } else {
                    -T::one()
                }
            }
            SignalKind::Gaussian => loop {
                let v = T::of(rng.normal());
                if v != T::zero() {
                    break v;
                }
            },
        };
    }
    Ok(x)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;

    #[test]
    fn positions_are_spread_uniformly() {
        let mut hits = [0usize; 8];
        for seed in 0..8000 {
            let x = sparse_signal::<f32>(8, 2, SignalKind::Gaussian, seed).unwrap();
            assert_eq!(x.iter().filter(|v| **v != 0.0).count(), 2);
            for (h, v) in hits.iter_mut().zip(&x) {
                *h += usize::from(*v != 0.0);
            }
        }
        // Each position is taken with probability 2/8: 2000 of 8000 signals.
        for h in hits {
            assert!((1800..2200).contains(&h), "{hits:?}");
        }
    }

    #[test]
    fn every_entry_or_none() {
        let x = sparse_signal::<f64>(50, 50, SignalKind::Gaussian, 1).unwrap();
        assert!(x.iter().all(|v| *v != 0.0));
        let x = sparse_signal::<f64>(50, 0, SignalKind::Sign, 1).unwrap();
        assert!(x.iter().all(|v| *v == 0.0));
        let e = sparse_signal::<f64>(0, 0, SignalKind::Sign, 1).unwrap_err();
        let want = RecoveryError::Empty {
            what: "a signal",
            item: "entry",
        };
        assert!(matches!(&e, Error::Recovery(got) if *got == want), "{e}");
        assert!(
            e.to_string().contains("a signal needs at least one entry"),
            "{e}"
        );
        let e = sparse_signal::<f32>(usize::MAX, 1, SignalKind::Sign, 1).unwrap_err();
        let want = RecoveryError::SignalTooLarge { n: usize::MAX };
        assert!(matches!(&e, Error::Recovery(got) if *got == want), "{e}");
        let e = "laplace".parse::<SignalKind>().unwrap_err();
        assert!(e.to_string().contains("(known: gaussian, sign)"), "{e}");
    }
}
