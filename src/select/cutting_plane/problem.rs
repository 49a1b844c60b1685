//! The optimisation problem: the check loss of rank `k` over a data set, with its cost and
//! subgradient at a point from one fused reduction.
//!
//! With `n` finite values and `τ = (k + ½) / n`, the element of rank `k` is the unique
//! minimiser of `f(y) = Σ ρ_τ(t(x_i) − t(y))`, `ρ_τ(r) = τ·r` for `r ≥ 0` and `(τ − 1)·r` below,
//! for any increasing transform `t` ([`Transform`]). In the frame `u = frame(y)` its one-sided
//! slopes count values: `f'(u−) = #(x < y) − (k + ½)` and `f'(u+) = #(x ≤ y) − (k + ½)`. One
//! pass gives both counts and the sums of `frame(x)` below and above `y`, hence `f` and a
//! subgradient.

use std::cell::Cell;

use argmin::core::{CostFunction, Gradient};

use super::error::CuttingPlaneError;
use super::transform::{Frame, Transform};
use crate::element::{Element, RadixKey};
use crate::error::{Error, Result};
use crate::select::host::{max_number_key, min_number_key};

/// One fused pass over the finite values at a point `y`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Reduction {
    /// Finite values `< y`.
    pub lt: u64,
    /// Finite values `<= y`.
    pub le: u64,
    /// The sum of `frame(x)` over the finite `x < y`.
    pub below: f64,
    /// The sum of `frame(x)` over the finite `x > y`.
    pub above: f64,
}

pub use crate::select::census::Census;

/// A data set the objective can be evaluated on: host memory or a device buffer.
///
/// Values are compared as `f64` ([`Element::to_f64`], monotone), so every count describes a
/// prefix of the key order.
pub trait Data {
    /// The element type.
    type Elem: Element;
    /// The number of values.
    fn len(&self) -> usize;
    /// Whether there is no value.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Counts the non-finite values and finds the finite key range (one pass).
    fn census(&self) -> Result<Census<<Self::Elem as Element>::Key>>;
    /// The fused reduction at `y` (finite) in `frame` (one pass).
    fn reduce(&self, y: f64, frame: &Frame) -> Result<Reduction>;
}

/// Exact selection among the values of a range, to finish the search. `below` is the number
/// of finite values under the range, so the answer has rank `below + r` among the finite ones.
pub(crate) trait Exact: Data {
    /// The element of rank `r` among the `count` finite values whose `f64` lies strictly
    /// between `lo` and `hi`.
    fn between(&self, lo: f64, hi: f64, below: usize, r: usize, count: usize)
        -> Result<Self::Elem>;
    /// The element of rank `r` among the `count` finite values whose `f64` is `y`.
    fn at(&self, y: f64, below: usize, r: usize, count: usize) -> Result<Self::Elem> {
        self.between(next_down(y), next_up(y), below, r, count)
    }
}

impl<D: Data + ?Sized> Data for &D {
    type Elem = D::Elem;
    fn len(&self) -> usize {
        (**self).len()
    }
    fn census(&self) -> Result<Census<<Self::Elem as Element>::Key>> {
        (**self).census()
    }
    fn reduce(&self, y: f64, frame: &Frame) -> Result<Reduction> {
        (**self).reduce(y, frame)
    }
}

impl<D: Exact + ?Sized> Exact for &D {
    fn between(
        &self,
        lo: f64,
        hi: f64,
        below: usize,
        r: usize,
        count: usize,
    ) -> Result<Self::Elem> {
        (**self).between(lo, hi, below, r, count)
    }
    fn at(&self, y: f64, below: usize, r: usize, count: usize) -> Result<Self::Elem> {
        (**self).at(y, below, r, count)
    }
}

/// The objective and its subgradient at one point.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Evaluation {
    /// The point.
    pub y: f64,
    /// The point in the frame.
    pub u: f64,
    /// The objective (frame units).
    pub f: f64,
    /// The slope of the side facing the minimiser (`0` at the minimiser).
    pub slope: f64,
    /// Finite values `< y`.
    pub lt: usize,
    /// Finite values `<= y`.
    pub le: usize,
    /// Whether `y` is the minimiser: `lt <= k < le`, the answer's `f64` is `y`.
    pub minimiser: bool,
}

/// The check-loss problem of rank `k` over `data`, for argmin's solvers.
///
/// Implements [`CostFunction`] and [`Gradient`] (each one reduction) and
/// [`evaluate`](Self::evaluate) (both from one reduction, as [`Kelley`](super::Kelley) uses).
/// Every reduction is counted ([`reductions`](Self::reductions)).
///
/// ```
/// use kselect::select::cutting_plane::{CheckLoss, HostData};
/// let data = [5.0f64, 1.0, 4.0, 2.0, 3.0];
/// let p = CheckLoss::new(HostData::new(&data), 2).unwrap();
/// assert!(p.evaluate(3.0).unwrap().minimiser);
/// assert!(p.evaluate(2.5).unwrap().slope < 0.0);
/// assert_eq!(p.reductions(), 2);
/// ```
#[derive(Debug)]
pub struct CheckLoss<D: Data> {
    /// The data.
    data: D,
    /// The rank among the finite values.
    k: usize,
    /// The number of finite values.
    n: usize,
    /// What the first pass learnt.
    census: Census<<D::Elem as Element>::Key>,
    /// The smallest finite value.
    lo: f64,
    /// The largest finite value.
    hi: f64,
    /// The frame of the sums.
    frame: Frame,
    /// Reductions made so far.
    reductions: Cell<u64>,
}

/// How a rank is answered once the first pass is known.
pub(crate) enum Prepared<D: Data> {
    /// The answer needs no search (a non-finite value, or one finite key).
    Answer(D::Elem),
    /// Every finite value has the `f64` `y`: select among them by key.
    Single {
        /// The data.
        data: D,
        /// The common `f64`.
        y: f64,
        /// The rank among the finite values.
        k: usize,
        /// The number of finite values.
        n: usize,
    },
    /// The search problem.
    Search(Box<CheckLoss<D>>),
}

impl<D: Data> CheckLoss<D> {
    /// The problem of rank `k` (`< data.len()`), with the transform [`Transform::for_range`]
    /// picks. Fails when that element is not finite or all finite values share one `f64`
    /// (there is nothing to minimise).
    pub fn new(data: D, k: usize) -> Result<Self> {
        match Self::prepare(data, k)? {
            Prepared::Search(p) => Ok(*p),
            _ => Err(CuttingPlaneError::NoSearch { k }.into()),
        }
    }

    /// Reads the data once and sets up the search of rank `k` (`< data.len()`).
    pub(crate) fn prepare(data: D, k: usize) -> Result<Prepared<D>> {
        let len = data.len();
        if k >= len {
            return Err(Error::RankOutOfRange { k, n: len });
        }
        let census = data.census()?;
        let n = len - census.neg_inf - census.pos_inf - census.nan;
        type K<D> = <<D as Data>::Elem as Element>::Key;
        let answer = |key: K<D>| Ok(Prepared::Answer(D::Elem::from_key(key)));
        if k < census.neg_inf {
            return answer(min_number_key::<D::Elem>());
        }
        let kf = k - census.neg_inf;
        if kf >= n {
            return if kf < n + census.pos_inf {
                answer(max_number_key::<D::Elem>())
            } else {
                answer(K::<D>::MAX)
            };
        }
        if census.min == census.max {
            return answer(census.min);
        }
        let lo = D::Elem::from_key(census.min).to_f64();
        let hi = D::Elem::from_key(census.max).to_f64();
        if lo == hi {
            return Ok(Prepared::Single {
                data,
                y: lo,
                k: kf,
                n,
            });
        }
        let transform = Transform::for_range(lo, hi);
        Ok(Prepared::Search(Box::new(CheckLoss {
            data,
            k: kf,
            n,
            census,
            lo,
            hi,
            frame: Frame::new(transform, lo, hi),
            reductions: Cell::new(0),
        })))
    }

    /// The same problem summed under another transform.
    ///
    /// ```
    /// use kselect::select::cutting_plane::{CheckLoss, HostData, Transform};
    /// let data = [1.0, 2.0, 1e300];
    /// let p = CheckLoss::new(HostData::new(&data), 1).unwrap();
    /// assert_eq!(p.transform(), Transform::SignLog);
    /// assert_eq!(p.with_transform(Transform::Identity).transform(), Transform::Identity);
    /// ```
    pub fn with_transform(mut self, transform: Transform) -> Self {
        self.frame = Frame::new(transform, self.lo, self.hi);
        self
    }

    /// The transform of the sums.
    pub fn transform(&self) -> Transform {
        self.frame.transform
    }

    /// The smallest finite value (as `f64`).
    pub fn lower(&self) -> f64 {
        self.lo
    }

    /// The largest finite value (as `f64`).
    pub fn upper(&self) -> f64 {
        self.hi
    }

    /// The frame of the sums.
    pub fn frame(&self) -> Frame {
        self.frame
    }

    /// The rank among the finite values.
    pub fn rank(&self) -> usize {
        self.k
    }

    /// The number of finite values.
    pub fn finite_len(&self) -> usize {
        self.n
    }

    /// The NaN count of the data.
    pub fn nan_count(&self) -> usize {
        self.census.nan
    }

    /// The number of `-inf` values (ranks below them are shifted by it).
    pub fn neg_inf_count(&self) -> usize {
        self.census.neg_inf
    }

    /// The reductions made so far (by every solver that used this problem).
    pub fn reductions(&self) -> u64 {
        self.reductions.get()
    }

    /// The data.
    pub fn data(&self) -> &D {
        &self.data
    }

    /// The objective and its subgradient at `y` from one reduction (counted).
    pub fn evaluate(&self, y: f64) -> Result<Evaluation> {
        self.reductions.set(self.reductions.get() + 1);
        self.evaluate_uncounted(y)
    }

    /// How far the rank of the point `y` is from `k`: `0` when `y` is the minimiser (the
    /// answer's `f64`), else the number of finite values between them. Not counted.
    ///
    /// ```
    /// use kselect::select::cutting_plane::{CheckLoss, HostData};
    /// let data = [5.0f64, 1.0, 4.0, 2.0, 3.0];
    /// let p = CheckLoss::new(HostData::new(&data), 2).unwrap();
    /// assert_eq!((p.rank_gap(3.0).unwrap(), p.rank_gap(1.5).unwrap()), (0, 2));
    /// ```
    pub fn rank_gap(&self, y: f64) -> Result<usize> {
        if y.is_nan() {
            return Ok(self.n);
        }
        let y = y.clamp(self.lo, self.hi);
        let e = self.evaluate_uncounted(y)?;
        Ok(if self.k < e.lt {
            e.lt - self.k
        } else if self.k >= e.le {
            self.k + 1 - e.le
        } else {
            0
        })
    }

    /// [`evaluate`](Self::evaluate) without counting.
    fn evaluate_uncounted(&self, y: f64) -> Result<Evaluation> {
        if !y.is_finite() {
            return Err(CuttingPlaneError::NonFinitePoint { y }.into());
        }
        let r = self.data.reduce(y, &self.frame)?;
        Ok(self.evaluation(y, &r))
    }

    /// The objective and slope at `y` from its reduction.
    pub(crate) fn evaluation(&self, y: f64, r: &Reduction) -> Evaluation {
        let (lt, le) = (r.lt as usize, r.le as usize);
        let target = self.k as f64 + 0.5;
        let tau = target / self.n as f64;
        let u = self.frame.value(y);
        let gt = self.n.saturating_sub(le) as f64;
        let f = tau * (r.above - gt * u) + (1.0 - tau) * (lt as f64 * u - r.below);
        let minimiser = lt <= self.k && self.k < le;
        let slope = if minimiser {
            0.0
        } else if le <= self.k {
            le as f64 - target
        } else {
            lt as f64 - target
        };
        Evaluation {
            y,
            u,
            f,
            slope,
            lt,
            le,
            minimiser,
        }
    }

    /// Takes the problem apart: the data.
    pub(crate) fn into_data(self) -> D {
        self.data
    }
}

/// A `kselect` error as an argmin error (and back with [`from_argmin`]).
pub(crate) fn to_argmin(e: Error) -> argmin::core::Error {
    argmin::core::Error::new(e)
}

/// An argmin error as a `kselect` error (the original one when it was one).
pub fn from_argmin(e: argmin::core::Error) -> Error {
    match e.downcast::<Error>() {
        Ok(e) => e,
        Err(e) => CuttingPlaneError::Solver {
            message: e.to_string(),
        }
        .into(),
    }
}

impl<D: Data> CostFunction for CheckLoss<D> {
    type Param = f64;
    type Output = f64;

    /// The objective at `y` (one reduction); `+inf` without a reduction at a non-finite `y`
    /// (where a solver's arithmetic may lead on huge ranges).
    fn cost(&self, y: &f64) -> std::result::Result<f64, argmin::core::Error> {
        if !y.is_finite() {
            return Ok(f64::INFINITY);
        }
        self.evaluate(*y).map(|e| e.f).map_err(to_argmin)
    }
}

impl<D: Data> Gradient for CheckLoss<D> {
    type Param = f64;
    type Gradient = f64;

    /// A subgradient at `y`, `0` at the minimiser (one reduction).
    fn gradient(&self, y: &f64) -> std::result::Result<f64, argmin::core::Error> {
        self.evaluate(*y).map(|e| e.slope).map_err(to_argmin)
    }
}

/// The next `f64` above `y` (`+inf` above the largest).
pub(crate) fn next_up(y: f64) -> f64 {
    if y.is_nan() || y == f64::INFINITY {
        return y;
    }
    if y == 0.0 {
        return f64::from_bits(1);
    }
    let bits = y.to_bits();
    f64::from_bits(if y > 0.0 { bits + 1 } else { bits - 1 })
}

/// The next `f64` below `y` (`-inf` below the smallest).
pub(crate) fn next_down(y: f64) -> f64 {
    -next_up(-y)
}
