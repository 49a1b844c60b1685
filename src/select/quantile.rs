//! PLACEHOLDER: interface only, replaced by the real implementation.
use crate::error::Result;

/// The quantile definitions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum QuantileMethod {
    /// Linear (type 7).
    #[default]
    Linear,
    /// Lower.
    Lower,
}

/// One quantile: the ranks it reads and how it combines their values.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Term {
    pub lower: usize,
    pub upper: usize,
    gamma: f64,
}

impl Term {
    pub(crate) fn evaluate(&self, a: f64, b: f64) -> f64 {
        a + (b - a) * self.gamma
    }
}

pub(crate) fn plan(n: usize, qs: &[f64], method: QuantileMethod) -> Result<Vec<Term>> {
    Ok(qs
        .iter()
        .map(|&q| {
            let v = (n - 1) as f64 * q;
            let lower = v.floor() as usize;
            let gamma = if method == QuantileMethod::Lower { 0.0 } else { v - lower as f64 };
            Term { lower, upper: (lower + 1).min(n - 1), gamma }
        })
        .collect())
}
