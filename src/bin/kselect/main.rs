//! `kselect`: exact order statistics of a data file from the command line.
//!
//! ```text
//! kselect select FILE --k K [--k K ...] [--largest] [--median] [--quantile Q ...]
//!                [--method NAME] [--column NAME] [--backend auto|cpu|cuda]
//!                [--algorithm NAME] [--nan error|omit|last] [--json]
//! ```
//!
//! Errors are printed as `error: <message>` on stderr; the exit status is 0 on success, 1 when
//! the input or the selection fails, and 2 for a usage error.

mod cli;
mod output;
mod select;

use std::io::Write;
use std::process::ExitCode;

use clap::Parser;
use kselect::io::{file_format, read_column, read_csv_column, FileFormat};
use kselect::{Device, Error, Result, Selector};

use cli::{Backend, Cli, Command, SelectArgs};
use output::Context;
use select::Request;

fn main() -> ExitCode {
    // Usage errors exit with status 2, --help and --version with 0.
    let cli = Cli::parse();
    let result = match &cli.command {
        Command::Select(args) => run_select(args),
    };
    match result {
        Ok(text) => {
            let mut stdout = std::io::stdout().lock();
            match stdout
                .write_all(text.as_bytes())
                .and_then(|()| stdout.flush())
            {
                Ok(()) => ExitCode::SUCCESS,
                // A reader that stopped early (`| head`) is not an error.
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
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

/// Prints `error: message` on stderr and returns exit status 1.
fn fail(message: &str) -> ExitCode {
    let _ = writeln!(std::io::stderr(), "error: {message}");
    ExitCode::from(1)
}

/// Runs `kselect select` and returns what it prints.
fn run_select(args: &SelectArgs) -> Result<String> {
    let device = match args.backend {
        Backend::Auto => Device::auto(),
        Backend::Cpu => Device::Cpu,
        Backend::Cuda => Device::cuda(0)?,
    };
    let format = file_format(&args.file)?;
    let (values, column_name) = match format {
        FileFormat::Csv => {
            let column = read_csv_column(&args.file, args.column.as_deref())?;
            (column.values, Some(column.name))
        }
        // An error when a column is named: a .npy array has none.
        FileFormat::Npy => (read_column(&args.file, args.column.as_deref())?, None),
    };

    let selector = Selector::on(device)
        .algorithm(args.algorithm)
        .nan_policy(args.nan);
    let outcome = values.visit(Request {
        selector: &selector,
        nan_policy: args.nan,
        k: &args.k,
        largest: args.largest,
        quantiles: &args.quantile,
        median: args.median,
        method: args.method,
    })?;

    let file = args.file.display().to_string();
    let device = selector.device().description();
    let ctx = Context {
        file: &file,
        format: format.name(),
        column: column_name.as_deref(),
        nan_policy: args.nan.name(),
        largest: args.largest,
        k: &args.k,
        quantiles: &args.quantile,
        method: args.method.name(),
        backend: selector.device().backend_name(),
        device: &device,
    };
    Ok(if args.json {
        output::json(&ctx, &outcome)
    } else {
        output::table(&ctx, &outcome)
    })
}
