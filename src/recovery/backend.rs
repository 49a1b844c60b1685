//! What the solvers compute with: the vectors of a problem, the operator's two products, and
//! hard thresholding, on the CPU ([`Host`]) or a CUDA device. Every algorithm is written once
//! against [`Backend`], so that a name runs the same steps on every device.

use crate::error::Result;
use crate::recovery::threshold::largest;
use crate::recovery::vector;
use crate::recovery::{LinearOperator, Real};
use crate::select::Selector;

/// `K` vectors of `len` zeros, allocated one after the other.
pub(crate) fn zeros_each<T: Real, B: Backend<T>, const K: usize>(
    b: &B,
    len: usize,
) -> Result<[B::Vector; K]> {
    let mut all = Vec::with_capacity(K);
    for _ in 0..K {
        all.push(b.zeros(len)?);
    }
    Ok(all
        .try_into()
        .unwrap_or_else(|_| unreachable!("K vectors were made")))
}

/// A copy of the measurements `y`: the residual of `x = 0`.
pub(crate) fn measured<T: Real, B: Backend<T>>(b: &B) -> Result<B::Vector> {
    let mut r = b.zeros(b.shape().0)?;
    b.copy(b.measurements(), &mut r)?;
    Ok(r)
}

/// The arithmetic of one problem: `m`-long and `n`-long vectors, supports (ascending index
/// sets), the operator `A` and the measurements `y`. Scalars come back as `f64`.
pub(crate) trait Backend<T: Real> {
    /// A vector of the problem (a signal or a measurement vector).
    type Vector;
    /// A support: indices, ascending.
    type Support;

    /// `(m, n)`.
    fn shape(&self) -> (usize, usize);
    /// The measurements `y`.
    fn measurements(&self) -> &Self::Vector;
    /// A vector of `len` zeros.
    fn zeros(&self, len: usize) -> Result<Self::Vector>;
    /// A vector of the values `v`.
    fn upload(&self, v: &[T]) -> Result<Self::Vector>;
    /// `dst = src`.
    fn copy(&self, src: &Self::Vector, dst: &mut Self::Vector) -> Result<()>;
    /// `y = A x`.
    fn apply(&self, x: &Self::Vector, y: &mut Self::Vector) -> Result<()>;
    /// `x = A^T y`.
    fn adjoint(&self, y: &Self::Vector, x: &mut Self::Vector) -> Result<()>;
    /// `<a, b>`.
    fn dot(&self, a: &Self::Vector, b: &Self::Vector) -> Result<f64>;
    /// `<a_S, b_S>`.
    fn dot_on(&self, s: &Self::Support, a: &Self::Vector, b: &Self::Vector) -> Result<f64>;
    /// `out = a + s b`.
    fn add_scaled(
        &self,
        a: &Self::Vector,
        s: f64,
        b: &Self::Vector,
        out: &mut Self::Vector,
    ) -> Result<()>;
    /// `y = y + s b`.
    fn axpy(&self, s: f64, b: &Self::Vector, y: &mut Self::Vector) -> Result<()>;
    /// `y = a + s y`.
    fn xpay(&self, a: &Self::Vector, s: f64, y: &mut Self::Vector) -> Result<()>;
    /// `out = v` on `s`, zero elsewhere.
    fn restrict(&self, v: &Self::Vector, s: &Self::Support, out: &mut Self::Vector) -> Result<()>;
    /// `out = a - b`.
    fn difference(&self, a: &Self::Vector, b: &Self::Vector, out: &mut Self::Vector) -> Result<()>;
    /// The `k` entries of largest magnitude (ties to the lower index), or all when `k >= n`.
    fn largest(&self, v: &Self::Vector, k: usize) -> Result<Self::Support>;
    /// The empty support.
    fn empty(&self) -> Result<Self::Support>;
    /// `a` joined to `b`.
    fn union(&self, a: &Self::Support, b: &Self::Support) -> Result<Self::Support>;
    /// Whether `a` and `b` hold the same indices.
    fn same(&self, a: &Self::Support, b: &Self::Support) -> Result<bool>;
    /// A hash of the support's indices, for the stopping rules.
    fn fingerprint(&self, s: &Self::Support) -> Result<u64>;
    /// The vector's values on the host.
    fn to_host(&self, v: &Self::Vector) -> Result<Vec<T>>;
    /// The support's indices on the host.
    fn indices(&self, s: &Self::Support) -> Result<Vec<usize>>;

    /// NIHT's `A d` for the step from `x` (on `from`) to `next = H_to(v)`, `v = x + mu g`,
    /// when the operator can take a few of its columns: `ad = mu A g_S + A w` with `ag = A g_S`
    /// and `w` the support's change (`v` on the indices of `to` not in `from`, `-v` on those of
    /// `from` not in `to`). `false` (and `ad` untouched) when the change is not small or the
    /// operator has no such product; the caller then applies `A` to `d`.
    fn change_product(
        &self,
        (mu, ag): (f64, &Self::Vector),
        (from, to): (&Self::Support, &Self::Support),
        v: &Self::Vector,
        ad: &mut Self::Vector,
    ) -> Result<bool> {
        let _ = (mu, ag, from, to, v, ad);
        Ok(false)
    }

    /// `|a|^2`.
    fn norm2(&self, a: &Self::Vector) -> Result<f64> {
        self.dot(a, a)
    }

    /// `(|a|^2, |b|^2)`, at once where the device can.
    fn norms2(&self, a: &Self::Vector, b: &Self::Vector) -> Result<(f64, f64)> {
        Ok((self.norm2(a)?, self.norm2(b)?))
    }
}

/// The CPU: slices, the operator's own products and the crate's top-k.
pub(crate) struct Host<'a, T: Real> {
    op: &'a dyn LinearOperator<T>,
    y: Vec<T>,
    selector: Selector,
}

impl<'a, T: Real> Host<'a, T> {
    /// The problem `y = A x` on the CPU.
    pub fn new(op: &'a dyn LinearOperator<T>, y: &[T]) -> Host<'a, T> {
        Host {
            op,
            y: y.to_vec(),
            selector: Selector::new(),
        }
    }
}

impl<T: Real> Backend<T> for Host<'_, T> {
    type Vector = Vec<T>;
    type Support = Vec<usize>;

    fn shape(&self) -> (usize, usize) {
        self.op.shape()
    }
    fn measurements(&self) -> &Vec<T> {
        &self.y
    }
    fn zeros(&self, len: usize) -> Result<Vec<T>> {
        Ok(vec![T::zero(); len])
    }
    fn upload(&self, v: &[T]) -> Result<Vec<T>> {
        Ok(v.to_vec())
    }
    fn copy(&self, src: &Vec<T>, dst: &mut Vec<T>) -> Result<()> {
        dst.copy_from_slice(src);
        Ok(())
    }
    fn apply(&self, x: &Vec<T>, y: &mut Vec<T>) -> Result<()> {
        self.op.apply(x, y);
        Ok(())
    }
    fn adjoint(&self, y: &Vec<T>, x: &mut Vec<T>) -> Result<()> {
        self.op.adjoint(y, x);
        Ok(())
    }
    fn dot(&self, a: &Vec<T>, b: &Vec<T>) -> Result<f64> {
        Ok(vector::dot(a, b))
    }
    fn dot_on(&self, s: &Vec<usize>, a: &Vec<T>, b: &Vec<T>) -> Result<f64> {
        Ok(vector::dot_on(s, a, b))
    }
    fn add_scaled(&self, a: &Vec<T>, s: f64, b: &Vec<T>, out: &mut Vec<T>) -> Result<()> {
        vector::add_scaled(a, s, b, out);
        Ok(())
    }
    fn axpy(&self, s: f64, b: &Vec<T>, y: &mut Vec<T>) -> Result<()> {
        vector::axpy(s, b, y);
        Ok(())
    }
    fn xpay(&self, a: &Vec<T>, s: f64, y: &mut Vec<T>) -> Result<()> {
        let s = T::of(s);
        for (y, &a) in y.iter_mut().zip(a) {
            *y = a + s * *y;
        }
        Ok(())
    }
    fn restrict(&self, v: &Vec<T>, s: &Vec<usize>, out: &mut Vec<T>) -> Result<()> {
        vector::restrict(v, s, out);
        Ok(())
    }
    fn difference(&self, a: &Vec<T>, b: &Vec<T>, out: &mut Vec<T>) -> Result<()> {
        vector::difference(a, b, out);
        Ok(())
    }
    fn largest(&self, v: &Vec<T>, k: usize) -> Result<Vec<usize>> {
        largest(&self.selector, v, k)
    }
    fn empty(&self) -> Result<Vec<usize>> {
        Ok(Vec::new())
    }
    fn union(&self, a: &Vec<usize>, b: &Vec<usize>) -> Result<Vec<usize>> {
        Ok(vector::union(a, b))
    }
    fn same(&self, a: &Vec<usize>, b: &Vec<usize>) -> Result<bool> {
        Ok(a == b)
    }
    fn fingerprint(&self, s: &Vec<usize>) -> Result<u64> {
        Ok(fingerprint(s.iter().copied()))
    }
    fn to_host(&self, v: &Vec<T>) -> Result<Vec<T>> {
        Ok(v.clone())
    }
    fn indices(&self, s: &Vec<usize>) -> Result<Vec<usize>> {
        Ok(s.clone())
    }
    fn change_product(
        &self,
        (mu, ag): (f64, &Vec<T>),
        (from, to): (&Vec<usize>, &Vec<usize>),
        v: &Vec<T>,
        ad: &mut Vec<T>,
    ) -> Result<bool> {
        let entering = to.iter().filter(|i| from.binary_search(i).is_err());
        let leaving = from.iter().filter(|i| to.binary_search(i).is_err());
        let entries: Vec<(usize, T)> = entering
            .map(|&j| (j, v[j]))
            .chain(leaving.map(|&j| (j, -v[j])))
            .collect();
        // Worth it while the change reads far fewer entries than the whole product.
        let n = v.len();
        if entries.len() * CHANGE_SHARE > n || !self.op.apply_columns(&entries, ad) {
            return Ok(false);
        }
        let mu = T::of(mu);
        for (a, &g) in ad.iter_mut().zip(ag) {
            *a = mu * g + *a;
        }
        Ok(true)
    }
}

/// A change of support is applied column by column while it has at most `n / CHANGE_SHARE`
/// entries.
const CHANGE_SHARE: usize = 16;

/// A hash of a set of indices: the wrapping sum of SplitMix64's finaliser of each index plus
/// one (the same on every device, whatever the order of the sum).
pub(crate) fn fingerprint(indices: impl Iterator<Item = usize>) -> u64 {
    indices.fold(0u64, |sum, i| {
        sum.wrapping_add(crate::random::mix(i as u64 + 1))
    })
}
