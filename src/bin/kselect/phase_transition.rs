//! `kselect phase-transition`: the success rates of recovery algorithms over a grid of
//! `delta = m / n` and `rho = k / m`, with a progress bar while the trials run; the table of
//! the 50% curve, the diagram as JSON and its picture.

use std::fmt::Write as _;
use std::path::Path;
use std::time::Instant;

use kselect::plot::plot_phase_diagram;
use kselect::recovery::{Ensemble, PhaseDiagram, PhaseTransition};
use kselect::{Device, Error, Result};

use crate::cli::{Backend, Dtype, PhaseTransitionArgs};
use crate::output::aligned;
use crate::output_files::{write_replacing, FileKind};
use crate::progress::FitBar;

/// Runs the experiment, writes the files asked for and returns what it prints: the table, or
/// the JSON itself for `--json -`.
pub fn run(args: &PhaseTransitionArgs) -> Result<String> {
    let device = device(args.backend)?;
    check(args)?;
    let mut experiment = PhaseTransition::new(args.ensemble, args.n)
        .deltas(args.deltas.0.clone())
        .rhos(args.rhos.0.clone());
    if !args.algorithms.is_empty() {
        experiment = experiment.algorithms(args.algorithms.clone());
    }
    if let Some(trials) = args.trials {
        experiment = experiment.trials(trials);
    }
    if let Some(signal) = args.signal {
        experiment = experiment.signal(signal);
    }
    if let Some(seed) = args.seed {
        experiment = experiment.seed(seed);
    }
    if let Some(iterations) = args.max_iter {
        experiment = experiment.max_iterations(iterations);
    }

    let bar = FitBar::new("phase transition");
    let progress = bar.counter("problems");
    let start = Instant::now();
    let diagram = match (args.dtype, &device) {
        (Dtype::F32, Device::Cpu) => experiment.run::<f32>(&progress),
        (Dtype::F64, Device::Cpu) => experiment.run::<f64>(&progress),
        (Dtype::F32, Device::Cuda(_)) => experiment.run_on::<f32>(&device, &progress),
        (Dtype::F64, Device::Cuda(_)) => experiment.run_on::<f64>(&device, &progress),
    }?;
    let seconds = start.elapsed().as_secs_f64();
    drop(bar);

    let json = serde_json::to_string_pretty(&diagram).map_err(|e| {
        Error::InvalidArgument(format!("the diagram cannot be written as JSON: {e}"))
    })? + "\n";
    let to_stdout = args.json.as_deref() == Some(Path::new("-"));
    if let Some(file) = args.json.as_deref().filter(|_| !to_stdout) {
        write_replacing(file, FileKind::Json, |path| {
            std::fs::write(path, &json).map_err(|source| Error::Io {
                path: path.to_path_buf(),
                source,
            })
        })?;
    }
    if let Some(file) = &args.plot {
        write_replacing(file, FileKind::Plot, |path| {
            plot_phase_diagram(path, &diagram)
        })?;
    }
    if to_stdout {
        return Ok(json);
    }
    let mut s = table(&diagram, experiment.problems());
    for (label, file) in [("json:", &args.json), ("plot:", &args.plot)] {
        if let Some(file) = file {
            let _ = writeln!(s, "{label:<13}{}", file.display());
        }
    }
    let _ = writeln!(
        s,
        "{:<13}{}, {seconds:.2} s",
        "backend:",
        device.description()
    );
    Ok(s)
}

/// The device of the experiment: the CPU for `--backend cpu` and `auto` (the trials solved in
/// parallel, each with its own operator), GPU 0 for `cuda` (each cell's trials solved together,
/// a stack of their operators).
fn device(backend: Backend) -> Result<Device> {
    match backend {
        Backend::Auto | Backend::Cpu => Ok(Device::Cpu),
        Backend::Cuda => crate::recover::device(Backend::Cuda),
    }
}

/// The checks the experiment cannot make before it runs: algorithms named twice, a sparse
/// ensemble with more nonzeros a column than the fewest measurements have rows, the
/// directories of the files to write.
fn check(args: &PhaseTransitionArgs) -> Result<()> {
    for (i, algorithm) in args.algorithms.iter().enumerate() {
        if args.algorithms[..i].contains(algorithm) {
            return Err(Error::InvalidArgument(format!(
                "--algorithms names {algorithm} twice: name each algorithm once"
            )));
        }
    }
    if let (Ensemble::Sparse { d }, Some(&delta)) = (args.ensemble, args.deltas.0.first()) {
        // The fewest measurements, as the experiment rounds them.
        let m = ((delta * args.n as f64).round() as usize).clamp(1, args.n);
        if d > m {
            return Err(Error::InvalidArgument(format!(
                "--ensemble {} puts {d} nonzeros in each column, but delta = {delta} gives m = \
                 {m} measurements of n = {}: every m needs d <= m (raise the smallest delta or \
                 --n, or lower d)",
                args.ensemble, args.n
            )));
        }
    }
    for (option, file) in args.outputs() {
        let directory = match file.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => parent,
            _ => Path::new("."),
        };
        if !directory.is_dir() {
            return Err(Error::InvalidArgument(format!(
                "{option} {}: the directory {} does not exist",
                file.display(),
                directory.display()
            )));
        }
    }
    Ok(())
}

/// The experiment and its 50% curve: `delta`, then `rho*` for each algorithm (`-` where that
/// `delta` has no transition).
fn table(diagram: &PhaseDiagram, problems: usize) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{:<13}{} operators, n = {}, {} nonzeros, {}",
        "experiment:", diagram.ensemble, diagram.n, diagram.signal, diagram.dtype
    );
    let names: Vec<&str> = diagram
        .algorithms
        .iter()
        .map(|a| a.algorithm.as_str())
        .collect();
    let _ = writeln!(
        s,
        "{:<13}{} delta x {} rho, {} trial{} a cell, seed {}: {problems} problem{} for each of \
         {}",
        "grid:",
        diagram.deltas.len(),
        diagram.rhos.len(),
        diagram.trials,
        if diagram.trials == 1 { "" } else { "s" },
        diagram.seed,
        if problems == 1 { "" } else { "s" },
        names.join(", ")
    );
    let _ = writeln!(
        s,
        "\n50% recovery: rho* = k / m recovered in half the trials (- where every trial at that \
         delta succeeded or every one failed)"
    );
    let rows: Vec<Vec<String>> = diagram
        .deltas
        .iter()
        .map(|&delta| {
            let mut row = vec![format!("{delta}")];
            row.extend(diagram.algorithms.iter().map(|a| {
                a.curve
                    .iter()
                    .find(|p| p.delta == delta)
                    .map_or("-".to_string(), |p| format!("{:.3}", p.rho))
            }));
            row
        })
        .collect();
    let mut header = vec!["delta"];
    header.extend(&names);
    aligned(&mut s, &header, &rows);
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use kselect::recovery::{AlgorithmDiagram, CurvePoint};

    #[test]
    fn the_table_marks_missing_points() {
        let diagram = PhaseDiagram {
            ensemble: "gaussian".into(),
            n: 64,
            signal: "gaussian".into(),
            dtype: "f64".into(),
            trials: 1,
            success: 1e-3,
            seed: 1,
            deltas: vec![0.25, 0.5],
            rhos: vec![0.1, 0.2],
            algorithms: ["niht", "htp"]
                .into_iter()
                .map(|name| AlgorithmDiagram {
                    algorithm: name.into(),
                    cells: Vec::new(),
                    curve: if name == "niht" {
                        vec![CurvePoint {
                            delta: 0.5,
                            rho: 0.31234,
                        }]
                    } else {
                        Vec::new()
                    },
                })
                .collect(),
        };
        let text = table(&diagram, 4);
        assert!(text.contains("1 trial a cell"), "{text}");
        let lines: Vec<&str> = text.lines().collect();
        let at = lines
            .iter()
            .position(|l| l.split_whitespace().eq(["delta", "niht", "htp"]))
            .unwrap();
        assert_eq!(
            lines[at + 1].split_whitespace().collect::<Vec<_>>(),
            ["0.25", "-", "-"]
        );
        assert_eq!(
            lines[at + 2].split_whitespace().collect::<Vec<_>>(),
            ["0.5", "0.312", "-"]
        );
    }
}
