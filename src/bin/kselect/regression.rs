//! `kselect lts` and `kselect lms`: the model's columns from a data file (with their
//! logarithms where asked), and the fit on the chosen device, timed.

use std::time::Instant;

use kselect::regression::{
    h_alpha, Lms, LmsCoverage, Lts, Method, RegressionError, RegressionFit, DEFAULT_SEED,
};
use kselect::Matrix;
use kselect::{Device, Error, Result};

use crate::cli::{Backend, HArg, RegressionArgs};
use crate::progress::FitBar;
use crate::table::{row_major, Table};

/// The name of the intercept among the terms.
pub const INTERCEPT: &str = "(Intercept)";

/// The device `--backend` names for a fit: `auto` is CUDA device 0 when a GPU is usable and the
/// CPU otherwise, `cpu` the CPU, `cuda` CUDA device 0 (an error without a usable GPU).
pub fn device(backend: Backend) -> Result<Device> {
    Ok(match backend {
        Backend::Auto => Device::auto(),
        Backend::Cpu => Device::Cpu,
        Backend::Cuda => Device::cuda(0)?,
    })
}

/// The columns of the model, checked against the file.
pub struct Model {
    /// The response's column.
    pub response: String,
    /// The predictors' columns, in order.
    pub predictors: Vec<String>,
    /// The columns whose logarithm is taken.
    pub log: Vec<String>,
    /// Whether the first coefficient is an intercept.
    pub intercept: bool,
}

impl Model {
    /// The model `args` describe on `table`: the response, the predictors (by default every
    /// other column of numbers) and the columns to log, each named once.
    pub fn of(table: &Table, args: &RegressionArgs) -> Result<Model> {
        let response = args.response.trim().to_string();
        let predictors = predictors(table, &response, &args.predictors)?;
        let log: Vec<String> = args.log.iter().map(|c| c.trim().to_string()).collect();
        if let Some(twice) = first_repeat(&log) {
            return Err(Error::InvalidArgument(format!(
                "--log names `{twice}` twice"
            )));
        }
        if let Some(other) = log
            .iter()
            .find(|c| **c != response && !predictors.contains(c))
        {
            return Err(Error::InvalidArgument(format!(
                "--log names `{other}`, which is neither the response ({response}) nor a \
                 predictor ({})",
                predictors.join(", ")
            )));
        }
        Ok(Model {
            response,
            predictors,
            log,
            intercept: !args.no_intercept,
        })
    }

    /// How a column enters the model: its name, or `log(name)`.
    pub fn label(&self, column: &str) -> String {
        if self.log.iter().any(|c| c == column) {
            format!("log({column})")
        } else {
            column.to_string()
        }
    }

    /// The names of the coefficients, in order: the intercept first when there is one, then
    /// the predictors (as [`label`](Self::label) writes them).
    pub fn terms(&self) -> Vec<String> {
        let intercept = self.intercept.then(|| INTERCEPT.to_string());
        intercept
            .into_iter()
            .chain(self.predictors.iter().map(|p| self.label(p)))
            .collect()
    }

    /// The response and the predictors from `table`, logged where asked, checked to be finite
    /// (and positive before a logarithm), with errors that name the column and the row. The
    /// fit checks the rest (a constant predictor, collinear ones), and [`Request::fit`] names
    /// the predictors in its errors.
    pub fn data(&self, table: &Table) -> Result<Data> {
        let y = self.column(table, &self.response)?;
        let columns: Vec<Vec<f64>> = self
            .predictors
            .iter()
            .map(|name| self.column(table, name))
            .collect::<Result<_>>()?;
        let (n, k) = (y.len(), columns.len());
        // Row-major: x[i * k + j] is row i, predictor j.
        let x = row_major(&columns);
        Ok(Data { x, y, n, k })
    }

    /// The values of `name`, logged when asked, every one finite.
    fn column(&self, table: &Table, name: &str) -> Result<Vec<f64>> {
        finite_column(table, name, self.log.iter().any(|c| c == name))
    }
}

/// The predictors of a model of `response`: the columns `given` (trimmed), or every other
/// column of numbers of `table` when none is given; each named once, the response not among
/// them.
pub fn predictors(table: &Table, response: &str, given: &[String]) -> Result<Vec<String>> {
    let predictors: Vec<String> = if given.is_empty() {
        table
            .numeric_names()
            .into_iter()
            .filter(|name| name != response)
            .collect()
    } else {
        given.iter().map(|p| p.trim().to_string()).collect()
    };
    if predictors.iter().any(|p| p == response) {
        return Err(Error::InvalidArgument(format!(
            "`{response}` is the response: it cannot also be a predictor"
        )));
    }
    if let Some(twice) = first_repeat(&predictors) {
        return Err(Error::InvalidArgument(format!(
            "--predictors names `{twice}` twice"
        )));
    }
    Ok(predictors)
}

/// The values of the column `name` of `table`, their natural logarithms when `logged`, every
/// one a finite number; an error naming the column and the data row otherwise.
pub fn finite_column(table: &Table, name: &str, logged: bool) -> Result<Vec<f64>> {
    let mut values = table.column(name)?;
    for (row, v) in values.iter_mut().enumerate() {
        if v.is_nan() {
            return Err(Error::InvalidArgument(format!(
                "column `{name}` has a missing value at data row {row} (0-based): remove \
                 or impute missing values before the fit"
            )));
        }
        if logged {
            if *v <= 0.0 {
                return Err(Error::InvalidArgument(format!(
                    "--log {name}: data row {row} (0-based) holds {v:?}, and the logarithm \
                     needs positive values"
                )));
            }
            *v = v.ln();
        }
        if !v.is_finite() {
            return Err(Error::InvalidArgument(format!(
                "column `{name}` holds {v} at data row {row} (0-based): every value must \
                 be a finite number"
            )));
        }
    }
    Ok(values)
}

/// The first name that appears twice in `names`.
pub fn first_repeat(names: &[String]) -> Option<&String> {
    names
        .iter()
        .enumerate()
        .find(|(i, name)| names[..*i].contains(name))
        .map(|(_, name)| name)
}

/// The numbers of a fit.
pub struct Data {
    /// `n x k` predictors, row-major.
    pub x: Vec<f64>,
    /// The response.
    pub y: Vec<f64>,
    /// Rows.
    pub n: usize,
    /// Predictors (without the intercept).
    pub k: usize,
}

/// How the coverage is given.
#[derive(Clone, Copy, Debug)]
pub enum Coverage {
    /// As a fraction (`--alpha`).
    Alpha(f64),
    /// As a number of rows or a rule (`--h`).
    H(HArg),
}

impl Coverage {
    /// `--alpha` or `--h`, or `None` for the estimator's default.
    pub fn of(args: &RegressionArgs) -> Option<Coverage> {
        match (args.alpha, args.h) {
            (Some(alpha), _) => Some(Coverage::Alpha(alpha)),
            (None, Some(h)) => Some(Coverage::H(h)),
            (None, None) => None,
        }
    }
}

/// A fit to run.
pub struct Request {
    /// LTS or LMS.
    pub method: Method,
    /// Whether to fit an intercept.
    pub intercept: bool,
    /// The coverage, or the estimator's default.
    pub coverage: Option<Coverage>,
    /// The number of random starts, or the estimator's default.
    pub nsamp: Option<usize>,
    /// The seed of the random starts.
    pub seed: u64,
    /// Where the fit runs.
    pub device: Device,
}

impl Request {
    /// The fit `args` ask for by `method`, on `device`.
    pub fn new(method: Method, args: &RegressionArgs, device: Device) -> Request {
        Request {
            method,
            intercept: !args.no_intercept,
            coverage: Coverage::of(args),
            nsamp: args.nsamp,
            seed: args.seed.unwrap_or(DEFAULT_SEED),
            device,
        }
    }

    /// Fits `data` and times the fit. A constant predictor is named; an error about a
    /// predictor by its position (`x column j`) is completed with the names of the positions,
    /// and an LMS coverage out of range with the `h` that `--alpha` gave.
    pub fn fit(&self, data: &Data, model: &Model) -> Result<Outcome> {
        let start = Instant::now();
        let fit = match self.method {
            Method::Lts => {
                let bar = FitBar::new("LTS fit");
                self.lts()?
                    .progress(bar.callback())
                    .fit(Matrix::new(&data.x, data.n, data.k), &data.y)
            }
            Method::Lms => {
                let bar = FitBar::new("LMS fit");
                self.lms(data.n, data.k)
                    .progress(bar.callback())
                    .fit(Matrix::new(&data.x, data.n, data.k), &data.y)
            }
        };
        let seconds = start.elapsed().as_secs_f64();
        let err = match fit {
            Ok(fit) => return Ok(Outcome { fit, seconds }),
            Err(Error::Regression(err)) => err,
            Err(e) => return Err(e),
        };
        match err {
            RegressionError::ConstantColumn {
                column,
                value,
                intercept,
            } => {
                let remedy = if intercept {
                    "it duplicates the intercept: leave it out of --predictors"
                } else {
                    "leave it out of --predictors and fit with an intercept instead"
                };
                Err(Error::InvalidArgument(format!(
                    "predictor `{}` is constant ({value:?}): {remedy}",
                    model.label(&model.predictors[column])
                )))
            }
            RegressionError::Unscalable { .. }
            | RegressionError::Collinear {
                column: Some(_), ..
            } => {
                let names: Vec<String> = model
                    .predictors
                    .iter()
                    .enumerate()
                    .map(|(j, p)| format!("{j} = {}", model.label(p)))
                    .collect();
                Err(Error::InvalidArgument(format!(
                    "{err} (x columns: {})",
                    names.join(", ")
                )))
            }
            RegressionError::Coverage {
                method: Method::Lms,
                ..
            } => match self.coverage {
                Some(Coverage::Alpha(alpha)) => {
                    let h = self.lms_h(alpha, data.n, data.k);
                    Err(Error::InvalidArgument(format!(
                        "{err} (--alpha {alpha} gives h = {h})"
                    )))
                }
                _ => Err(err.into()),
            },
            err => Err(err.into()),
        }
    }

    /// The LTS estimator of the request, or an error for an LMS coverage rule.
    fn lts(&self) -> Result<Lts> {
        let mut lts = Lts::new()
            .intercept(self.intercept)
            .seed(self.seed)
            .device(self.device.clone());
        lts = match self.coverage {
            Some(Coverage::Alpha(alpha)) => lts.alpha(alpha),
            Some(Coverage::H(HArg::Rows(h))) => lts.h(h),
            Some(Coverage::H(rule)) => {
                return Err(Error::InvalidArgument(format!(
                    "--h {} is a coverage rule of LMS (MASS lqs); lts takes a number of rows \
                     or --alpha",
                    if rule == HArg::LqsLms { "lms" } else { "lqs" }
                )))
            }
            None => lts,
        };
        Ok(match self.nsamp {
            Some(nsamp) => lts.nsamp(nsamp),
            None => lts,
        })
    }

    /// The LMS estimator of the request for `n` rows and `k` predictors: `--alpha` gives `h`
    /// by robustbase's rule, as for LTS.
    fn lms(&self, n: usize, k: usize) -> Lms {
        let mut lms = Lms::new()
            .intercept(self.intercept)
            .seed(self.seed)
            .device(self.device.clone());
        lms = match self.coverage {
            Some(Coverage::Alpha(alpha)) => lms.h(self.lms_h(alpha, n, k)),
            Some(Coverage::H(HArg::Rows(h))) => lms.h(h),
            Some(Coverage::H(HArg::LqsLms)) => lms.coverage(LmsCoverage::Median),
            Some(Coverage::H(HArg::LqsLqs)) => lms.coverage(LmsCoverage::Lqs),
            None => lms,
        };
        match self.nsamp {
            Some(nsamp) => lms.nsamp(nsamp),
            None => lms,
        }
    }

    /// The LMS coverage `--alpha` gives for `n` rows and `k` predictors: robustbase's rule.
    fn lms_h(&self, alpha: f64, n: usize, k: usize) -> usize {
        h_alpha(alpha, n, k + usize::from(self.intercept))
    }
}

/// A fit and its time.
pub struct Outcome {
    /// The fit.
    pub fit: RegressionFit,
    /// Wall time of the fit alone (not of reading the file).
    pub seconds: f64,
}
