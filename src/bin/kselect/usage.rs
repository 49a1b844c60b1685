//! Usage errors (exit status 2): the command line parsed by clap, one clear sentence for an
//! option given to a command that does not have it while another command does, and the
//! refusals of what clap cannot check (an output file that is the input file).

use std::ffi::OsString;
use std::fmt::Display;

use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::{Command, CommandFactory, Parser};

use crate::cli::Cli;

/// The command line of this process. Exits with clap's message and status 2 when it is not
/// valid (0 after --help and --version).
pub fn parse() -> Cli {
    let args: Vec<OsString> = std::env::args_os().collect();
    match Cli::try_parse_from(&args) {
        Ok(cli) => cli,
        Err(e) => match misplaced_option(&e, &args) {
            Some((command, message)) => refuse(&command, ErrorKind::UnknownArgument, message),
            None => e.exit(),
        },
    }
}

/// Prints `error: message` with the usage of `kselect COMMAND` on stderr and exits with status
/// 2, a usage error.
pub fn refuse(command: &str, kind: ErrorKind, message: impl Display) -> ! {
    let mut cli = Cli::command();
    cli.build();
    match cli.find_subcommand_mut(command) {
        Some(subcommand) => subcommand.error(kind, message).exit(),
        None => cli.error(kind, message).exit(),
    }
}

/// For clap's "unexpected argument" of an option that the command given lacks but other
/// commands have: the command and one sentence that says where the option belongs (clap's own
/// tip, to pass it as a value after `--`, misleads there).
fn misplaced_option(e: &clap::Error, args: &[OsString]) -> Option<(String, String)> {
    if e.kind() != ErrorKind::UnknownArgument {
        return None;
    }
    let Some(ContextValue::String(given)) = e.get(ContextKind::InvalidArg) else {
        return None;
    };
    let option = given.split('=').next().unwrap_or(given);
    let cli = Cli::command();
    let command = cli.find_subcommand(args.get(1)?.to_str()?)?;
    let others: Vec<String> = cli
        .get_subcommands()
        .filter(|other| other.get_name() != command.get_name() && has_option(other, option))
        .map(|other| format!("`{}`", other.get_name()))
        .collect();
    if others.is_empty() {
        return None;
    }
    let name = command.get_name();
    let message = format!(
        "`kselect {name}` has no {option} option; it is an option of {}",
        in_words(&others)
    );
    Some((name.to_string(), message))
}

/// Whether `command` has the option `--long` or `-s`.
fn has_option(command: &Command, option: &str) -> bool {
    command.get_arguments().any(|arg| {
        if let Some(long) = option.strip_prefix("--") {
            arg.get_long() == Some(long)
                || arg
                    .get_all_aliases()
                    .is_some_and(|aliases| aliases.contains(&long))
        } else {
            let mut short = option.strip_prefix('-').unwrap_or(option).chars();
            match (short.next(), short.next()) {
                (Some(c), None) => arg.get_short() == Some(c),
                _ => false,
            }
        }
    })
}

/// `a`, `a and b`, `a, b and c`.
fn in_words(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}
