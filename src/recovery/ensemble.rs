//! [`Ensemble`]: random measurement operators drawn from a seed, and [`Operator`], the
//! operator of any of them.

use std::fmt;
use std::str::FromStr;

use crate::error::{Error, Result};
use crate::recovery::random::Rng;
use crate::recovery::{
    DenseMatrix, LinearOperator, Real, RecoveryError, SparseBinary, SubsampledDct,
};

/// A family of random `m x n` measurement operators, each drawn from a 64-bit seed.
///
/// Every draw comes from SplitMix64 whose state starts at the seed (each output: `state +=
/// 0x9E3779B97F4A7C15`, `z = state`, `z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9`, `z = (z ^
/// (z >> 27)) * 0x94D049BB133111EB`, `z ^ (z >> 31)`, all wrapping), so an operator is the
/// same on every platform:
///
/// - [`Gaussian`](Ensemble::Gaussian): the entries, row by row, are `z / sqrt(m)` computed in
///   `f64` and rounded to `T`, the `z` standard normals by Box–Muller from two outputs `a`,
///   `b`: `u1 = ((a >> 11) + 0.5) 2^-53`, `u2 = (b >> 11) 2^-53`, `r = sqrt(-2 ln u1)`, the
///   pair `r cos(2 pi u2)`, `r sin(2 pi u2)` used in that order. (These values go through the
///   platform's `ln`, `cos` and `sin`; where two math libraries round those differently, an
///   entry may differ in its last bit.)
/// - [`Sign`](Ensemble::Sign): the entries, row by row, are `+1/sqrt(m)` when the top bit of
///   an output is 0 and `-1/sqrt(m)` when it is 1 (`1/sqrt(m)` computed in `f64`, rounded to
///   `T`).
/// - [`Dct`](Ensemble::Dct): `m` distinct rows of the `n`-point orthonormal DCT
///   ([`SubsampledDct`]), every set of `m` rows equally likely, by Floyd's algorithm: for `j`
///   from `n - m` to `n - 1`, `t = below(j + 1)` is taken unless already taken, `j` otherwise;
///   where `below(b) = (u b) >> 64` of an output `u` (128-bit product). Needs `m <= n`.
/// - [`Sparse { d }`](Ensemble::Sparse): a [`SparseBinary`] matrix whose columns, one after
///   the other, each take `d` distinct rows of `m` by the same Floyd's algorithm (sorted
///   ascending within the column). Needs `1 <= d <= m`.
///
/// Names parse as `gaussian`, `sign`, `dct`, `sparse` (with `d` =
/// [`DEFAULT_SPARSE_NONZEROS`](Ensemble::DEFAULT_SPARSE_NONZEROS)) and `sparse:d`.
///
/// ```
/// use kselect::recovery::{Ensemble, LinearOperator};
///
/// let ensemble: Ensemble = "sparse:4".parse()?;
/// assert_eq!(ensemble, Ensemble::Sparse { d: 4 });
/// let a = ensemble.generate::<f32>(32, 128, 7)?;
/// assert_eq!(a.shape(), (32, 128));
/// assert_eq!(a, ensemble.generate::<f32>(32, 128, 7)?); // the same seed, the same operator
/// # Ok::<(), kselect::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Ensemble {
    /// Independent entries `N(0, 1/m)`: a dense matrix whose columns have unit norm on
    /// average.
    Gaussian,
    /// Independent entries `+1/sqrt(m)` or `-1/sqrt(m)`, equally likely (Rademacher): a dense
    /// matrix whose columns have unit norm.
    Sign,
    /// `m` rows of the orthonormal DCT of length `n`, chosen uniformly: a fast operator with
    /// orthonormal rows.
    Dct,
    /// `d` nonzeros `1/sqrt(d)` in each column, at rows chosen uniformly: a sparse matrix
    /// whose columns have unit norm.
    Sparse {
        /// The nonzeros in each column.
        d: usize,
    },
}

/// Every ensemble name, for messages.
const NAMES: [&str; 4] = [
    "gaussian",
    "sign",
    "dct",
    "sparse (or sparse:d, d nonzeros per column)",
];

impl Ensemble {
    /// The nonzeros per column of `sparse` given without a count.
    ///
    /// ```
    /// use kselect::recovery::Ensemble;
    /// let d = Ensemble::DEFAULT_SPARSE_NONZEROS;
    /// assert_eq!("sparse".parse::<Ensemble>()?, Ensemble::Sparse { d });
    /// # Ok::<(), kselect::Error>(())
    /// ```
    pub const DEFAULT_SPARSE_NONZEROS: usize = 7;

    /// The family's name, without a sparse operator's count (see `Display` for it).
    ///
    /// ```
    /// use kselect::recovery::Ensemble;
    /// assert_eq!(Ensemble::Sparse { d: 3 }.name(), "sparse");
    /// assert_eq!(Ensemble::Sparse { d: 3 }.to_string(), "sparse:3");
    /// assert_eq!(Ensemble::Gaussian.to_string(), "gaussian");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            Ensemble::Gaussian => "gaussian",
            Ensemble::Sign => "sign",
            Ensemble::Dct => "dct",
            Ensemble::Sparse { .. } => "sparse",
        }
    }

    /// The `m x n` operator of this ensemble drawn from `seed`, as described on [`Ensemble`].
    /// An error when `m` or `n` is 0, when `m > n` for [`Dct`](Ensemble::Dct), or when `d` is
    /// 0 or `d > m` for [`Sparse`](Ensemble::Sparse).
    ///
    /// ```
    /// use kselect::recovery::{Ensemble, Operator};
    ///
    /// let a = Ensemble::Sign.generate::<f64>(4, 10, 1)?;
    /// let Operator::Dense(matrix) = &a else { unreachable!() };
    /// assert!(matrix.as_slice().iter().all(|&v| v.abs() == 0.5));
    /// assert!(Ensemble::Dct.generate::<f64>(11, 10, 1).is_err());
    /// # Ok::<(), kselect::Error>(())
    /// ```
    pub fn generate<T: Real>(self, m: usize, n: usize, seed: u64) -> Result<Operator<T>> {
        if m == 0 || n == 0 {
            return Err(RecoveryError::EmptyOperator {
                what: "a random operator",
                m,
                n,
            }
            .into());
        }
        let mut rng = Rng::new(seed);
        match self {
            Ensemble::Gaussian => {
                let root_m = (m as f64).sqrt();
                let data = dense_entries(m, n, || T::of(rng.normal() / root_m))?;
                Ok(Operator::Dense(DenseMatrix::new(data, m, n)?))
            }
            Ensemble::Sign => {
                let plus = T::of(1.0 / (m as f64).sqrt());
                let data = dense_entries(m, n, || {
                    if rng.next_u64() >> 63 == 0 {
                        plus
                    } else {
                        -plus
                    }
                })?;
                Ok(Operator::Dense(DenseMatrix::new(data, m, n)?))
            }
            Ensemble::Dct => {
                if m > n {
                    return Err(RecoveryError::DctRows { m, n }.into());
                }
                let rows = rng.distinct_below(m, n);
                Ok(Operator::Dct(SubsampledDct::new(n, rows)?))
            }
            Ensemble::Sparse { d } => {
                if d == 0 || d > m {
                    return Err(RecoveryError::NonzerosPerColumn { d, m }.into());
                }
                let total = n.checked_mul(d).ok_or_else(|| too_large(m, n))?;
                let mut rows = Vec::new();
                rows.try_reserve_exact(total).map_err(|_| too_large(m, n))?;
                for _ in 0..n {
                    rows.extend(rng.distinct_below(d, m));
                }
                Ok(Operator::Sparse(SparseBinary::new(m, n, d, rows)?))
            }
        }
    }
}

/// `m n` entries from `next`, row by row; an error when they do not fit in memory.
fn dense_entries<T>(m: usize, n: usize, mut next: impl FnMut() -> T) -> Result<Vec<T>> {
    let total = m.checked_mul(n).ok_or_else(|| too_large(m, n))?;
    let mut data = Vec::new();
    data.try_reserve_exact(total).map_err(|_| too_large(m, n))?;
    data.extend((0..total).map(|_| next()));
    Ok(data)
}

/// The error for an operator too large to allocate.
fn too_large(m: usize, n: usize) -> RecoveryError {
    RecoveryError::OperatorTooLarge { m, n }
}

impl fmt::Display for Ensemble {
    /// The name as [`FromStr`] reads it: `sparse:d` for a sparse ensemble.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Ensemble::Sparse { d } => write!(f, "sparse:{d}"),
            other => f.write_str(other.name()),
        }
    }
}

impl FromStr for Ensemble {
    type Err = Error;

    /// An ensemble from its name: `gaussian`, `sign`, `dct`, `sparse` or `sparse:d` (`d` a
    /// positive count); any case, surrounding spaces ignored.
    fn from_str(s: &str) -> Result<Ensemble> {
        let name = s.trim().to_ascii_lowercase();
        let ensemble = match name.as_str() {
            "gaussian" => Ensemble::Gaussian,
            "sign" => Ensemble::Sign,
            "dct" => Ensemble::Dct,
            "sparse" => Ensemble::Sparse {
                d: Ensemble::DEFAULT_SPARSE_NONZEROS,
            },
            other => match other.strip_prefix("sparse:") {
                Some(count) => match count.trim().parse::<usize>() {
                    Ok(d) if d > 0 => Ensemble::Sparse { d },
                    _ => {
                        return Err(RecoveryError::SparseNonzeros {
                            given: s.to_string(),
                            default: Ensemble::DEFAULT_SPARSE_NONZEROS,
                        }
                        .into())
                    }
                },
                None => {
                    return Err(Error::UnknownName {
                        kind: "ensemble",
                        given: s.to_string(),
                        known: NAMES.to_vec(),
                    })
                }
            },
        };
        Ok(ensemble)
    }
}

/// A measurement operator of any of the module's kinds, as [`Ensemble::generate`] draws
/// them; a [`LinearOperator`] by its variant's products.
///
/// ```
/// use kselect::recovery::{LinearOperator, Operator, SubsampledDct};
///
/// let a = Operator::Dct(SubsampledDct::<f64>::new(2, vec![0, 1])?);
/// let mut y = [0.0; 2];
/// a.apply(&[1.0, 1.0], &mut y);
/// assert!((y[0] - 2f64.sqrt()).abs() < 1e-15 && y[1].abs() < 1e-15);
/// # Ok::<(), kselect::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub enum Operator<T: Real> {
    /// An explicit dense matrix.
    Dense(DenseMatrix<T>),
    /// Rows of the orthonormal DCT.
    Dct(SubsampledDct<T>),
    /// A sparse matrix with `d` equal nonzeros in each column.
    Sparse(SparseBinary<T>),
}

impl<T: Real> Operator<T> {
    /// The operator of the variant, whose products are this one's.
    fn variant(&self) -> &dyn LinearOperator<T> {
        match self {
            Operator::Dense(a) => a,
            Operator::Dct(a) => a,
            Operator::Sparse(a) => a,
        }
    }
}

impl<T: Real> LinearOperator<T> for Operator<T> {
    fn shape(&self) -> (usize, usize) {
        self.variant().shape()
    }

    fn apply(&self, x: &[T], y: &mut [T]) {
        self.variant().apply(x, y)
    }

    fn adjoint(&self, y: &[T], x: &mut [T]) {
        self.variant().adjoint(y, x)
    }

    fn apply_many(&self, xs: &[T], ys: &mut [T]) {
        self.variant().apply_many(xs, ys)
    }

    fn adjoint_many(&self, ys: &[T], xs: &mut [T]) {
        self.variant().adjoint_many(ys, xs)
    }

    fn apply_columns(&self, entries: &[(usize, T)], y: &mut [T]) -> bool {
        match self {
            Operator::Dense(a) => a.apply_columns(entries, y),
            Operator::Dct(a) => a.apply_columns(entries, y),
            Operator::Sparse(a) => a.apply_columns(entries, y),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for e in [
            Ensemble::Gaussian,
            Ensemble::Sign,
            Ensemble::Dct,
            Ensemble::Sparse { d: 1 },
            Ensemble::Sparse { d: 12 },
        ] {
            assert_eq!(e.to_string().parse::<Ensemble>().unwrap(), e);
        }
        assert_eq!(" DCT ".parse::<Ensemble>().unwrap(), Ensemble::Dct);
        for bad in [
            "",
            "gauss",
            "sparse:",
            "sparse:0",
            "sparse:-1",
            "sparse:x",
            "dct:3",
        ] {
            let e = bad.parse::<Ensemble>().unwrap_err().to_string();
            assert!(e.contains("sparse"), "{bad}: {e}");
        }
        assert!(matches!(
            "sparse:0".parse::<Ensemble>(),
            Err(Error::Recovery(RecoveryError::SparseNonzeros { default, .. }))
                if default == Ensemble::DEFAULT_SPARSE_NONZEROS
        ));
    }

    #[test]
    fn gaussian_entries_are_the_documented_draws() {
        let a = Ensemble::Gaussian.generate::<f64>(4, 3, 99).unwrap();
        let Operator::Dense(a) = a else {
            panic!("a Gaussian ensemble is dense")
        };
        let mut rng = Rng::new(99);
        for &v in a.as_slice() {
            assert_eq!(v, rng.normal() * 0.5);
        }
    }

    #[test]
    fn sizes_out_of_range_are_errors_with_their_numbers() {
        let err = |e: Ensemble, m, n| match e.generate::<f32>(m, n, 0) {
            Err(Error::Recovery(e)) => e,
            other => panic!("unexpected {other:?}"),
        };
        let e = err(Ensemble::Gaussian, usize::MAX, 2);
        assert_eq!(
            e,
            RecoveryError::OperatorTooLarge {
                m: usize::MAX,
                n: 2
            }
        );
        assert!(e.to_string().contains("memory"), "{e}");
        let e = err(Ensemble::Sparse { d: 3 }, 10, usize::MAX);
        assert_eq!(
            e,
            RecoveryError::OperatorTooLarge {
                m: 10,
                n: usize::MAX
            }
        );
        assert_eq!(
            err(Ensemble::Dct, 11, 10),
            RecoveryError::DctRows { m: 11, n: 10 }
        );
        let e = err(Ensemble::Sparse { d: 4 }, 3, 10);
        assert_eq!(e, RecoveryError::NonzerosPerColumn { d: 4, m: 3 });
        let e = err(Ensemble::Sign, 0, 10);
        assert!(
            matches!(e, RecoveryError::EmptyOperator { m: 0, n: 10, .. }),
            "{e}"
        );
    }
}
