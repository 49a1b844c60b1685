//! The command line of the benchmark binaries: options as `--name value` pairs, lists separated
//! by commas. A benchmark includes it with `#[path = "common/options.rs"] mod options;`.

use std::str::FromStr;

/// Calls `apply(name, value)` for each word of the command line, with the word after it as the
/// value (empty after the last word). Where `apply` takes the option (returns true), the value
/// goes with it; where it does not (an option of another program, such as the `--bench` that
/// `cargo bench` adds, or a stray word), only the word itself is passed over.
pub fn for_each(mut apply: impl FnMut(&str, String) -> bool) {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut i = 0;
    while i < args.len() {
        let value = args.get(i + 1).cloned().unwrap_or_default();
        i += if apply(&args[i], value) { 2 } else { 1 };
    }
}

/// The comma-separated items of `s`, trimmed.
pub fn list(s: &str) -> Vec<String> {
    s.split(',').map(|x| x.trim().to_string()).collect()
}

/// The comma-separated items of `s` that parse as `T`; the others are left out.
pub fn parsed<T: FromStr>(s: &str) -> Vec<T> {
    list(s).iter().filter_map(|s| s.parse().ok()).collect()
}

/// The options of the benchmarks over element types: `--types` (comma separated), `--reps`
/// (timed runs a case; kept where the value does not parse) and `--json PATH`.
#[allow(dead_code)] // Not every benchmark takes these.
pub struct Common {
    pub types: Vec<String>,
    pub reps: usize,
    pub json: Option<String>,
}

#[allow(dead_code)]
impl Common {
    /// The types and runs given, no JSON output.
    pub fn new(types: &[&str], reps: usize) -> Common {
        Common {
            types: types.iter().map(|t| t.to_string()).collect(),
            reps,
            json: None,
        }
    }

    /// Takes the option `name` with its `value` where it is one of these; whether it was.
    pub fn take(&mut self, name: &str, value: String) -> bool {
        match name {
            "--types" => self.types = list(&value),
            "--reps" => self.reps = value.parse().unwrap_or(self.reps),
            "--json" => self.json = Some(value),
            _ => return false,
        }
        true
    }
}
