//! The command line: clap's derive definitions and the parsers of option values.

use std::path::PathBuf;

use clap::{ArgGroup, Args, Parser, Subcommand, ValueEnum};
use kselect::{Algorithm, NanPolicy, QuantileMethod};

/// Exact order statistics of a column of numbers: the k-th smallest or largest values, the
/// median and quantiles, on the CPU or a CUDA GPU.
#[derive(Debug, Parser)]
#[command(
    name = "kselect",
    version,
    long_about = "Exact order statistics of a column of numbers: the k-th smallest or largest \
                  values, the median and quantiles, on the CPU or a CUDA GPU.\n\n\
                  Input files are 1-D NumPy .npy arrays or CSV files with a header row, either \
                  possibly gzip-compressed. Every algorithm and backend returns exactly the \
                  value a full sort would put at the rank asked for.",
    after_help = "Examples:\n  \
        kselect select data.npy --k 0 --k 999\n  \
        kselect select flights.csv.gz --column dep_delay --nan omit --median --quantile 0.99\n  \
        kselect select values.npy --largest --k 0,1,2 --json\n\n\
        Exit status: 0 on success, 1 when the input or the selection fails, 2 for a usage error."
)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Select values by rank, the median or quantiles of the values of a file.
    #[command(
        long_about = "Select values by rank, the median or quantiles of the values of a file.\n\n\
            Ranks are 0-based in ascending order: --k 0 is the minimum, --k N-1 the maximum of N \
            values (--largest counts from the maximum instead). Values are ordered as a sort \
            orders them: NaN after +inf (under --nan last), -0.0 just below +0.0.\n\n\
            Give at least one of --k, --median, --quantile; they may be combined, and each of \
            --k and --quantile may be repeated or take a comma-separated list.",
        after_help = "Output: without --json, a summary of the input and the run, then a table \
            of rank and value (and of q and value for quantiles). With --json, one JSON object \
            (see --json). Integers are printed exactly; floats with the fewest digits that read \
            back as the same f32 or f64; infinities and NaN as inf, -inf and nan (JSON strings).\n\n\
            Examples:\n  \
            kselect select data.npy --k 0 --k 999\n  \
            kselect select flights.csv.gz --column dep_delay --nan omit --median --quantile 0.9,0.99\n  \
            kselect select values.npy --largest --k 0,1,2 --json",
        group(
            ArgGroup::new("what")
                .required(true)
                .multiple(true)
                .args(["k", "median", "quantile"])
        )
    )]
    Select(SelectArgs),
}

/// The options of `kselect select`.
#[derive(Debug, Args)]
pub struct SelectArgs {
    /// The data file: a 1-D NumPy .npy array of dtype f4, f8, i4, i8, u4 or u8 (recognised by
    /// the .npy extension or by its content), or otherwise a CSV file with a header row. Either
    /// may be gzip-compressed (.gz). In CSV files, empty fields, NA and NaN are missing values,
    /// read as NaN; a column of integers is read exactly as i64 (u64 above i64::MAX), unless it
    /// has missing values or non-integers, when it is read as f64.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,

    /// A 0-based rank to select, in ascending order (0 = the minimum). Repeat the option or
    /// give a comma-separated list for several ranks (any order, repeats allowed); values are
    /// printed in the order given.
    #[arg(short = 'k', long = "k", value_name = "K", value_delimiter = ',')]
    pub k: Vec<usize>,

    /// Count --k from the largest value instead: --k 0 --largest is the maximum, --k 1 the
    /// second largest. The output shows each K and the ascending rank it selects.
    #[arg(long)]
    pub largest: bool,

    /// Also compute the median: the quantile 0.5 by --method. With the default method (linear)
    /// it is numpy.median: the mean of the two middle values when their number is even;
    /// --method lower gives the lower median, a value of the data.
    #[arg(long)]
    pub median: bool,

    /// A quantile probability Q in [0, 1], computed by --method (as numpy.quantile does).
    /// Repeat the option or give a comma-separated list for several. Quantile values are
    /// computed and printed as f64.
    #[arg(
        short = 'q',
        long,
        value_name = "Q",
        value_delimiter = ',',
        value_parser = parse_probability
    )]
    pub quantile: Vec<f64>,

    /// The quantile definition for --quantile and --median, by numpy's names: inverted_cdf,
    /// averaged_inverted_cdf, closest_observation, interpolated_inverted_cdf, hazen, weibull,
    /// linear (numpy's default), median_unbiased, normal_unbiased (Hyndman-Fan types 1 to 9),
    /// lower, higher, midpoint, nearest.
    #[arg(long, value_name = "NAME", default_value = "linear", value_parser = parse_method)]
    pub method: QuantileMethod,

    /// The CSV column to read, by its name in the header row. Needed when the CSV file has more
    /// than one column; not allowed with a .npy file.
    #[arg(short = 'c', long, value_name = "NAME")]
    pub column: Option<String>,

    /// Where the selection runs: auto (CUDA device 0 when a GPU and its driver are present,
    /// the CPU otherwise), cpu (all CPU threads), or cuda (CUDA device 0; an error when there is
    /// no usable GPU).
    #[arg(long, value_enum, value_name = "BACKEND", default_value_t = Backend::Auto)]
    pub backend: Backend,

    /// The selection algorithm: auto (the backend's fastest for the input), sort-choose,
    /// introselect, floyd-rivest, radix, radix-inplace, bucket, sample, cutting-plane,
    /// quick-multiselect, randomized, quick, bucket-multiselect,
    /// iterative-bucket-multiselect. The CUDA backend has auto, sort-choose, radix,
    /// radix-inplace (no workspace), bucket, randomized, sample, quick, cutting-plane, and for
    /// many ranks at once bucket-multiselect and iterative-bucket-multiselect; the CPU all but
    /// radix-inplace and the two bucket multiselections. Every algorithm returns the same
    /// values; they differ only in speed and workspace.
    #[arg(long, value_name = "NAME", default_value = "auto", value_parser = parse_algorithm)]
    pub algorithm: Algorithm,

    /// What to do with NaN values (missing CSV values count as NaN): error (refuse the input;
    /// the default), omit (leave them out: ranks and quantiles refer to the other values, as
    /// numpy's nan* functions do), last (order them after +inf, as numpy.sort does: ranks count
    /// them, and the largest ranks are NaN).
    #[arg(long, value_name = "POLICY", default_value = "error", value_parser = parse_nan)]
    pub nan: NanPolicy,

    /// Print one JSON object instead of a table, with the keys: file, format, column (CSV
    /// only), dtype, n (the number of values in the file, NaNs included), nan_count,
    /// nan_policy, largest, k (as given), ranks (the ascending ranks selected: equal to k
    /// without --largest), values, method (the quantile method, with --quantile or
    /// --median), quantiles ({"q": [...], "values": [...]}, with --quantile), median (with
    /// --median), backend ("cpu" or "cuda"), device, algorithm (the one that
    /// ran), seconds (wall time of the selection alone, on cuda including the copy to the GPU;
    /// not of reading the file).
    #[arg(long)]
    pub json: bool,
}

/// `--backend`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Backend {
    /// CUDA device 0 when available, the CPU otherwise.
    Auto,
    /// The CPU.
    Cpu,
    /// CUDA device 0.
    Cuda,
}

fn parse_probability(s: &str) -> Result<f64, String> {
    let q: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("`{s}` is not a number"))?;
    if (0.0..=1.0).contains(&q) {
        Ok(q)
    } else {
        Err(format!("quantile probability {s} is not in [0, 1]"))
    }
}

fn parse_method(s: &str) -> Result<QuantileMethod, String> {
    s.parse().map_err(|e: kselect::Error| strip_prefix(e))
}

fn parse_algorithm(s: &str) -> Result<Algorithm, String> {
    s.parse().map_err(|e: kselect::Error| strip_prefix(e))
}

fn parse_nan(s: &str) -> Result<NanPolicy, String> {
    s.parse().map_err(|e: kselect::Error| strip_prefix(e))
}

/// The message of an `InvalidArgument` error without its "invalid argument: " prefix (clap
/// says that already).
fn strip_prefix(e: kselect::Error) -> String {
    match e {
        kselect::Error::InvalidArgument(message) => message,
        other => other.to_string(),
    }
}
