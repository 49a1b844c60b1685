//! `kselect`: exact order statistics of a data file from the command line.
//!
//! ```text
//! kselect select FILE --k K [--k K ...] [--largest] [--median] [--quantile Q ...]
//!                [--method NAME] [--column NAME] [--backend auto|cpu|cuda]
//!                [--algorithm NAME] [--nan error|omit|last] [--json]
//! kselect quantiles FILE (--probs P,P,... | --count M) [--method NAME] [--column NAME]
//!                [--backend auto|cpu|cuda] [--algorithm NAME] [--nan error|omit|last]
//!                [--plot PDF.png|.svg] [--cdf-plot CDF.png|.svg] [--plot-range LO,HI]
//!                [--bins N] [--bandwidth H] [--json]
//! kselect topk FILE --k K [--smallest] [--cols C] [--sorted] [--nan error|omit|last]
//!                [--backend auto|cpu|cuda] [--json]
//! kselect threshold FILE --k K --out OUT.npy [--nan error|omit|last]
//!                [--backend auto|cpu|cuda] [--json]
//! kselect lts FILE --response COL [--predictors A,B,...] [--log COL,...] [--no-intercept]
//!                [--alpha A | --h H] [--nsamp N] [--seed S] [--backend auto|cpu|cuda] [--json]
//! kselect lms FILE --response COL [--predictors A,B,...] [--log COL,...] [--no-intercept]
//!                [--alpha A | --h H] [--nsamp N] [--seed S] [--backend auto|cpu|cuda] [--json]
//! kselect neighbors BASE (--query Q | --self) --k K [--out-indices I.npy]
//!                [--out-distances D.npy] [--metric NAME] [--backend auto|cpu|cuda] [--json]
//! kselect knn TRAIN --response COL [--predictors A,B,...] [--query FILE] --k K[,K,...]
//!                [--classify] [--weights uniform|distance] [--metric NAME] [--standardize]
//!                [--backend auto|cpu|cuda] [--out FILE] [--json]
//! kselect recover (--matrix A.npy | --ensemble NAME --n N --m M [--seed S]
//!                [--operators shared|each]) --y Y.npy --k K
//!                [--algorithm niht|iht|htp|cosamp|sp|cgiht] [--tol T] [--max-iter I]
//!                [--backend auto|cpu|cuda] [--out X.npy] [--json]
//! kselect phase-transition --ensemble gaussian|sign|dct|sparse[:d] --n N [--deltas LIST]
//!                [--rhos LIST] [--trials T] [--algorithms LIST] [--signal gaussian|sign]
//!                [--seed S] [--dtype f32|f64] [--max-iter I] [--plot FILE.png|.svg]
//!                [--json FILE] [--backend auto|cpu|cuda]
//! ```
//!
//! `FILE` is `-` for standard input, in every command. Every input is opened once and read
//! once (a pipe or a FIFO reads like a file); long reads show their progress on stderr when it
//! is a terminal.
//!
//! Errors are printed as `error: <message>` on stderr; the exit status is 0 on success, 1 when
//! the input or the selection fails, and 2 for a usage error. `kselect recover` exits with 3
//! when a solver stopped without converging (after its report, with a warning on stderr).

mod cli;
mod distributed;
mod knn;
mod knn_output;
mod neighbors;
mod open;
mod output;
mod output_files;
mod phase_transition;
mod points;
mod progress;
mod quantiles;
mod quantiles_output;
mod recover;
mod regression;
mod regression_output;
mod select;
mod summary;
mod table;
mod threshold;
mod topk;
mod usage;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::error::ErrorKind;
use kselect::io::{Column, FileFormat};
use kselect::regression::Method;
use kselect::{Algorithm, Device, Error, NanPolicy, Result, Selector, TopKOptions, TopKOrder};

use cli::{
    Backend, Command, KnnArgs, NeighborsArgs, QuantilesArgs, RecoverArgs, RegressionArgs,
    SelectArgs, ThresholdArgs, TopkArgs,
};
use output::Context;
use select::Request;
use summary::Input;

fn main() -> ExitCode {
    // Usage errors exit with status 2, --help and --version with 0.
    let cli = usage::parse();
    let result: Result<Printed> = match &cli.command {
        Command::Select(args) => run_select(args).map(Printed::from),
        Command::Quantiles(args) => {
            if let Some(problem) = args.probabilities_problem() {
                usage::refuse("quantiles", ErrorKind::ValueValidation, problem);
            }
            if args.distributed {
                if args.transport == cli::Transport::Nccl && args.backend == Backend::Cpu {
                    usage::refuse(
                        "quantiles",
                        ErrorKind::ArgumentConflict,
                        "--transport nccl runs every rank on a GPU of its own; it cannot be \
                         used with --backend cpu",
                    );
                }
                // Only rank 0 prints, errors included (they name a failing rank).
                return distributed::run(args, |result| print(result.map(Printed::from)));
            }
            if let Some(problem) = output_files::clash(&args.file, &args.outputs()) {
                usage::refuse("quantiles", ErrorKind::ArgumentConflict, problem);
            }
            run_quantiles(args).map(Printed::from)
        }
        Command::Topk(args) => run_topk(args).map(Printed::from),
        Command::Threshold(args) => {
            if let Some(problem) = output_files::clash(&args.file, &[("--out", &args.out)]) {
                usage::refuse("threshold", ErrorKind::ArgumentConflict, problem);
            }
            run_threshold(args).map(Printed::from)
        }
        Command::Lts(args) => run_regression(Method::Lts, args).map(Printed::from),
        Command::Lms(args) => run_regression(Method::Lms, args).map(Printed::from),
        Command::Neighbors(args) => {
            let query = args.query.as_deref().map(|q| ("--query", q));
            let inputs: Vec<_> = [("BASE", args.base.as_path())]
                .into_iter()
                .chain(query)
                .collect();
            refuse_clashes("neighbors", &inputs, &args.outputs());
            run_neighbors(args).map(Printed::from)
        }
        Command::Knn(args) => {
            if args.query.is_some() && args.k.len() > 1 {
                usage::refuse(
                    "knn",
                    ErrorKind::ArgumentConflict,
                    format!(
                        "--query predicts with one k, but --k gives {}: choose one (without \
                         --query, the leave-one-out errors of each k tell which)",
                        args.k.len()
                    ),
                );
            }
            let query = args.query.as_deref().map(|q| ("--query", q));
            let inputs: Vec<_> = [("TRAIN", args.file.as_path())]
                .into_iter()
                .chain(query)
                .collect();
            let out = args.out.as_deref().map(|o| ("--out", o));
            refuse_clashes("knn", &inputs, &Vec::from_iter(out));
            run_knn(args).map(Printed::from)
        }
        Command::Recover(args) => {
            let out = args.out.as_deref().map(|o| ("--out", o));
            refuse_clashes("recover", &args.inputs(), &Vec::from_iter(out));
            run_recover(args)
        }
        Command::PhaseTransition(args) => {
            if let Some(problem) = output_files::duplicate(&args.outputs()) {
                usage::refuse("phase-transition", ErrorKind::ArgumentConflict, problem);
            }
            phase_transition::run(args).map(Printed::from)
        }
    };
    print(result)
}

/// Prints a command's output (or its error) and gives the exit status.
fn print(result: Result<Printed>) -> ExitCode {
    match result {
        Ok(printed) => {
            let mut stdout = std::io::stdout().lock();
            let status = ExitCode::from(printed.status);
            let written = stdout
                .write_all(printed.text.as_bytes())
                .and_then(|()| stdout.flush());
            if let Some(warning) = &printed.warning {
                let _ = writeln!(std::io::stderr(), "warning: {warning}");
            }
            match written {
                Ok(()) => status,
                // A reader that stopped early (`| head`) is not an error.
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => status,
                Err(e) => fail(&format!("cannot write the output: {e}")),
            }
        }
        Err(e) => {
            let hint = match &e {
                Error::NanInInput { .. } => " (--nan omit or --nan last)",
                Error::CudaUnavailable(_) => " (--backend cpu runs on the CPU)",
                _ => "",
            };
            fail(&format!("{e}{hint}"))
        }
    }
}

/// What a command prints on standard output, the warning it adds on standard error, and the
/// exit status it ends with.
struct Printed {
    text: String,
    warning: Option<String>,
    status: u8,
}

impl From<String> for Printed {
    /// Output that ends a run with success.
    fn from(text: String) -> Printed {
        Printed {
            text,
            warning: None,
            status: 0,
        }
    }
}

/// Prints `error: message` on stderr and returns exit status 1.
fn fail(message: &str) -> ExitCode {
    let _ = writeln!(std::io::stderr(), "error: {message}");
    ExitCode::from(1)
}

/// The device `--backend` names.
fn device(backend: Backend) -> Result<Device> {
    Ok(match backend {
        Backend::Auto => Device::auto(),
        Backend::Cpu => Device::Cpu,
        Backend::Cuda => Device::cuda(0)?,
    })
}

/// The values a command read, and where they came from.
struct Values {
    values: Column,
    /// The file, or `<stdin>`.
    name: PathBuf,
    format: FileFormat,
    /// The CSV column read (none for a `.npy` array).
    column: Option<String>,
}

impl Values {
    /// The input as the output describes it, read with `selector`'s device.
    fn summary(self, nan_policy: NanPolicy, selector: &Selector) -> Input {
        Input::new(
            &self.name,
            self.format,
            self.column,
            nan_policy,
            selector.device(),
        )
    }
}

/// The values of `file` (`-`: standard input; of its `column` for a CSV file).
fn read_input(file: &Path, column: Option<&str>) -> Result<Values> {
    let source = open::open(file)?;
    let (name, format) = (source.name().to_path_buf(), source.format());
    let (values, column) = match format {
        FileFormat::Csv => {
            let column = source.read_csv_column(column)?;
            (column.values, Some(column.name))
        }
        // An error when a column is named: a .npy array has none.
        FileFormat::Npy => (source.read_column(column)?, None),
    };
    Ok(Values {
        values,
        name,
        format,
        column,
    })
}

/// A selector on `backend` with `algorithm` and the NaN policy `nan`.
fn selector(backend: Backend, algorithm: Algorithm, nan: NanPolicy) -> Result<Selector> {
    Ok(Selector::on(device(backend)?)
        .algorithm(algorithm)
        .nan_policy(nan))
}

/// What a command prints: `as_json` of its context and outcome with `--json`, else `as_table`.
fn report<C, O>(
    json: bool,
    ctx: &C,
    outcome: &O,
    as_json: impl FnOnce(&C, &O) -> Result<String>,
    as_table: impl FnOnce(&C, &O) -> String,
) -> Result<String> {
    if json {
        as_json(ctx, outcome)
    } else {
        Ok(as_table(ctx, outcome))
    }
}

/// Runs `kselect select` and returns what it prints.
fn run_select(args: &SelectArgs) -> Result<String> {
    let selector = selector(args.backend, args.algorithm, args.nan)?;
    let data = read_input(&args.file, args.column.as_deref())?;

    let outcome = data.values.visit(Request {
        selector: &selector,
        nan_policy: args.nan,
        k: &args.k,
        largest: args.largest,
        quantiles: &args.quantile,
        median: args.median,
        method: args.method,
    })?;

    let ctx = Context {
        input: data.summary(args.nan, &selector),
        largest: args.largest,
        k: &args.k,
        quantiles: &args.quantile,
        method: args.method.name(),
    };
    report(args.json, &ctx, &outcome, output::json, output::table)
}

/// Runs `kselect quantiles` and returns what it prints.
fn run_quantiles(args: &QuantilesArgs) -> Result<String> {
    let selector = selector(args.backend, args.algorithm, args.nan)?;
    let data = read_input(&args.file, args.column.as_deref())?;
    let probs = args.probabilities();
    let file_name = data
        .name
        .file_name()
        .map(|file_name| file_name.to_string_lossy().into_owned())
        .unwrap_or_else(|| data.name.display().to_string());
    let label = data.column.as_deref().unwrap_or(&file_name);
    let outcome = data.values.visit(quantiles::Request {
        selector: &selector,
        nan_policy: args.nan,
        probs: &probs,
        method: args.method,
        plots: quantiles::Plots {
            pdf: args.plot.as_ref(),
            cdf: args.cdf_plot.as_ref(),
            range: args.plot_range,
            bins: args.bins,
            bandwidth: args.bandwidth,
            label,
        },
    })?;

    let ctx = quantiles_output::Context {
        input: data.summary(args.nan, &selector),
        probs: &probs,
        method: args.method.name(),
        plot: args.plot.as_ref(),
        cdf_plot: args.cdf_plot.as_ref(),
    };
    report(
        args.json,
        &ctx,
        &outcome,
        quantiles_output::json,
        quantiles_output::table,
    )
}

/// Runs `kselect topk` and returns what it prints.
fn run_topk(args: &TopkArgs) -> Result<String> {
    let device = device(args.backend)?;
    let source = open::open(&args.file)?;
    let name = source.name().to_path_buf();
    let array = source.read_npy_array()?;
    let rows = topk::rows_of(&array, args.cols)?;
    let selector = Selector::on(device).nan_policy(args.nan);
    let order = if args.smallest {
        TopKOrder::Smallest
    } else {
        TopKOrder::Largest
    };
    let options = TopKOptions::from(order).sorted(args.sorted);
    let outcome = array.values.visit(topk::Request {
        selector: &selector,
        rows,
        k: args.k,
        options,
    })?;
    printed(
        &selector,
        args.json,
        |backend| topk::json(&outcome, backend),
        |device| topk::table(&name, &outcome, options, device),
    )
}

/// Runs `kselect threshold` and returns what it prints.
fn run_threshold(args: &ThresholdArgs) -> Result<String> {
    let device = device(args.backend)?;
    let source = open::open(&args.file)?;
    let name = source.name().to_path_buf();
    let values = source.read_npy()?;
    let selector = Selector::on(device).nan_policy(args.nan);
    let outcome = values.visit(threshold::Request {
        selector: &selector,
        k: args.k,
        out: &args.out,
    })?;
    printed(
        &selector,
        args.json,
        |backend| threshold::json(&outcome, backend),
        |device| threshold::summary(&name, &args.out, &outcome, device),
    )
}

/// Runs `kselect lts` or `kselect lms` and returns what it prints.
fn run_regression(method: Method, args: &RegressionArgs) -> Result<String> {
    let device = regression::device(args.backend)?;
    let table = table::Table::read(open::open(&args.file)?)?;
    let model = regression::Model::of(&table, args)?;
    let data = model.data(&table)?;
    let request = regression::Request::new(method, args, device);
    let outcome = request.fit(&data, &model)?;
    let ctx = regression_output::Context {
        file: table.name().display().to_string(),
        format: table.format().name(),
        model: &model,
        seed: request.seed,
        backend: request.device.backend_name(),
        device: request.device.description(),
    };
    report(
        args.json,
        &ctx,
        &outcome,
        regression_output::json,
        regression_output::table,
    )
}

/// Exits with a usage error when two of the `inputs` ((name, path) pairs) are both standard
/// input, which can be read once, or an output is an input file or another output.
fn refuse_clashes(command: &str, inputs: &[(&str, &Path)], outputs: &[(&str, &Path)]) {
    let stdin: Vec<&str> = inputs
        .iter()
        .filter(|(_, path)| *path == Path::new("-"))
        .map(|(name, _)| *name)
        .collect();
    if let [first, second, ..] = stdin[..] {
        usage::refuse(
            command,
            ErrorKind::ArgumentConflict,
            format!(
                "{first} and {second} are both - (standard input), which can be read once: \
                 give one of them as a file"
            ),
        );
    }
    if let Some(problem) = inputs
        .iter()
        .find_map(|(_, input)| output_files::clash(input, outputs))
    {
        usage::refuse(command, ErrorKind::ArgumentConflict, problem);
    }
}

/// Runs `kselect knn` and returns what it prints.
fn run_knn(args: &KnnArgs) -> Result<String> {
    let device = device(args.backend)?;
    let outcome = knn::run(args, device.clone())?;
    if let (Some(out), knn::Results::Predictions(predictions)) = (&args.out, &outcome.results) {
        knn_output::write_predictions(out, predictions)?;
    }
    Ok(match (&outcome.results, args.json, &args.out) {
        (knn::Results::Scores(_), true, _) => knn_output::scores_json(args, &outcome)?,
        (knn::Results::Scores(_), false, _) => knn_output::scores_table(args, &outcome, &device),
        (knn::Results::Predictions(_), true, _) => {
            knn_output::predictions_json(args, &outcome, &device)?
        }
        (knn::Results::Predictions(p), false, None) => knn_output::predictions_csv(p)?,
        (knn::Results::Predictions(_), false, Some(out)) => {
            knn_output::summary(args, &outcome, &device, out)
        }
    })
}

/// Runs `kselect recover` and returns what it prints, with exit status 3
/// ([`recover::NOT_CONVERGED`]) and a warning when a solver stopped without converging.
fn run_recover(args: &RecoverArgs) -> Result<Printed> {
    let device = recover::device(args.backend)?;
    let outcome = recover::run(args, &device)?;
    let out = args.out.as_deref();
    let text = if args.json {
        recover::json(&outcome, &device, out)?
    } else {
        recover::report(&outcome, &device, out)
    };
    Ok(Printed {
        text,
        warning: outcome.warning(),
        status: outcome.status(),
    })
}

/// Runs `kselect neighbors` and returns what it prints.
fn run_neighbors(args: &NeighborsArgs) -> Result<String> {
    let device = device(args.backend)?;
    let outcome = neighbors::run(args, device.clone())?;
    Ok(if args.json {
        neighbors::json(args, &outcome, &device)?
    } else if args.outputs().is_empty() {
        neighbors::csv(&outcome)
    } else {
        neighbors::summary(args, &outcome, &device)
    })
}

/// What `kselect topk` and `kselect threshold` print: with `--json`, `as_json` of the
/// selector's backend ("cpu" or "cuda"); otherwise `as_text` of the backend and its device.
fn printed(
    selector: &Selector,
    json: bool,
    as_json: impl FnOnce(&str) -> Result<String>,
    as_text: impl FnOnce(&str) -> String,
) -> Result<String> {
    let backend = selector.device().backend_name();
    if json {
        as_json(backend)
    } else {
        Ok(as_text(&format!(
            "{backend} ({})",
            selector.device().description()
        )))
    }
}
