//! The selection itself, generic over the element type of the file.

use std::time::Instant;

use kselect::io::ColumnVisitor;
use kselect::{Element, Error, NanPolicy, QuantileMethod, Result, Selector};

use crate::output::Num;
use crate::summary::{Contents, Measured};

/// What to select.
pub struct Request<'a> {
    pub selector: &'a Selector,
    pub nan_policy: NanPolicy,
    /// The ranks as given (from the largest when `largest`).
    pub k: &'a [usize],
    pub largest: bool,
    pub quantiles: &'a [f64],
    /// numpy.median (`Selector::median_mean`), whatever `method`.
    pub median: bool,
    /// The definition of the quantiles.
    pub method: QuantileMethod,
}

/// What was selected.
pub struct Outcome {
    /// The values of the file, the algorithm and its time.
    pub measured: Measured,
    /// The ascending ranks selected, one per `k`.
    pub ranks: Vec<usize>,
    pub values: Vec<Num>,
    /// One per quantile asked for.
    pub quantile_values: Vec<Num>,
    /// numpy.median, when asked for.
    pub median: Option<Num>,
}

impl ColumnVisitor for Request<'_> {
    type Output = Result<Outcome>;

    fn visit<T: Element>(self, data: &[T]) -> Result<Outcome> {
        let contents = Contents::of(data);
        let (n, nan_count) = (contents.n, contents.nan_count);
        let first_nan = if nan_count > 0 {
            data.iter().position(|x| x.is_nan())
        } else {
            None
        };
        if let (NanPolicy::Error, Some(first_index)) = (self.nan_policy, first_nan) {
            return Err(Error::NanInInput {
                count: nan_count,
                first_index,
            });
        }
        // The number of values ranks refer to.
        let space = match self.nan_policy {
            NanPolicy::Omit => n - nan_count,
            _ => n,
        };
        if space == 0 {
            return Err(Error::EmptyInput);
        }
        let ranks = if self.largest {
            self.k
                .iter()
                .map(|&k| {
                    if k < space {
                        Ok(space - 1 - k)
                    } else {
                        Err(Error::RankOutOfRange { k, n: space })
                    }
                })
                .collect::<Result<Vec<usize>>>()?
        } else {
            self.k.to_vec()
        };
        let qs = self.quantiles;
        // The algorithm of the rank selection (of the quantiles when there is none, of the
        // median's two middle values when there is neither).
        let rank_count = if !ranks.is_empty() {
            ranks.len()
        } else if !qs.is_empty() {
            2 * qs.len()
        } else {
            2
        };
        let algorithm = if ranks.is_empty() {
            self.selector.resolved_algorithm::<T>(n, rank_count)?
        } else {
            self.selector.resolved_algorithm_for_ranks::<T>(n, &ranks)?
        }
        .name()
        .to_string();

        let start = Instant::now();
        let values = if ranks.is_empty() {
            Vec::new()
        } else {
            self.selector.multiselect(data, &ranks)?
        };
        let quantile_values = if qs.is_empty() {
            Vec::new()
        } else {
            self.selector.quantiles(data, qs, self.method)?
        };
        let median = if self.median {
            Some(self.selector.median_mean(data)?)
        } else {
            None
        };
        let seconds = start.elapsed().as_secs_f64();

        Ok(Outcome {
            measured: Measured {
                contents,
                algorithm,
                seconds,
            },
            ranks,
            values: values.into_iter().map(Num::of).collect(),
            quantile_values: quantile_values.into_iter().map(Num::of_f64).collect(),
            median: median.map(Num::of_f64),
        })
    }
}
