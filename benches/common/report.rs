//! What the benchmarks report: the median of timed runs, and the JSON document of the results.
//! A benchmark includes it with `#[path = "common/report.rs"] mod report;`.

#[path = "date.rs"]
mod date;

/// The median of `times` (of an even number, the upper of the middle two).
pub fn median(mut times: Vec<f64>) -> f64 {
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

/// Ends a run: where `--json` gave a `path`, writes the JSON document there, the object
/// `document` returns (where it ran, how it was timed) with the date, the command line and the
/// results it returns added; then exits with status 1 where the run `failed` or the file could
/// not be written.
pub fn finish(
    path: Option<&str>,
    failed: bool,
    document: impl FnOnce() -> (serde_json::Value, Vec<serde_json::Value>),
) {
    let written = match path {
        Some(path) => {
            let (fields, results) = document();
            write_json(path, fields, results)
        }
        None => true,
    };
    if failed || !written {
        std::process::exit(1);
    }
}

/// Writes the JSON document of a run to `path`: the object `fields` with the date, the command
/// line and `results` added. Returns false, after saying why on stderr, where the file cannot
/// be written.
fn write_json(path: &str, mut fields: serde_json::Value, results: Vec<serde_json::Value>) -> bool {
    fields["date"] = date::today().into();
    fields["command"] = std::env::args().collect::<Vec<_>>().join(" ").into();
    fields["results"] = results.into();
    match std::fs::write(
        path,
        serde_json::to_string_pretty(&fields).unwrap_or_default(),
    ) {
        Ok(()) => true,
        Err(e) => {
            eprintln!("writing {path}: {e}");
            false
        }
    }
}
