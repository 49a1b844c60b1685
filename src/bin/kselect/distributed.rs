//! `kselect quantiles --distributed`: one rank of an MPI job. Each rank reads its own part of
//! the data; the quantiles of all parts together are found by distributed selection, and rank
//! 0 prints them with the traffic of every rank.

use std::ops::Range;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use kselect::distributed::{
    all_succeeded, same_on_every_rank, Communicator, DistributedReport, DistributedSelector,
    ReduceOp, Traffic,
};
use kselect::io::npy::read_npy_part;
use kselect::io::{Column, ColumnVisitor, FileFormat};
use kselect::{CudaDevice, Device, DeviceBuffer, Element, Error, Result};
use serde::Serialize;

use crate::cli::{Backend, QuantilesArgs};
use crate::output::{aligned, json_line, nums, Num};

/// Runs the command as one rank; the root hands its result (errors included, which name a
/// failing rank) to `report`, and only then may any rank exit, so that `mpirun`, which ends
/// the job at the first rank to exit with a failure, cannot cut the root's message off.
pub fn run(args: &QuantilesArgs, report: impl FnOnce(Result<String>) -> ExitCode) -> ExitCode {
    #[cfg(feature = "mpi")]
    {
        match kselect::distributed::Mpi::init() {
            Ok(mpi) => {
                let result = run_over(&mpi, args);
                let failed = result.is_err();
                let status = (mpi.rank() == 0).then(|| report(result));
                mpi.barrier();
                status.unwrap_or(ExitCode::from(failed as u8))
            }
            Err(e) => report(Err(e)),
        }
    }
    #[cfg(not(feature = "mpi"))]
    {
        let _ = (run_on, rank_device);
        report(Err(Error::InvalidArgument(format!(
            "--distributed needs a kselect built with MPI: `cargo build --release --features \
             cli,mpi` (with an MPI library installed), then `mpirun -np Q kselect quantiles {} \
             --distributed`",
            args.file.display()
        ))))
    }
}

/// Runs the command over MPI's ranks, messages going by `--transport`.
#[cfg(feature = "mpi")]
fn run_over(mpi: &kselect::distributed::Mpi, args: &QuantilesArgs) -> Result<String> {
    use crate::cli::Transport;
    match args.transport {
        Transport::Mpi => {
            let device = all_succeeded(mpi, rank_device(args.backend, mpi.local_rank()))?;
            run_on(mpi, &device, args)
        }
        Transport::Nccl => {
            let nccl = kselect::distributed::Nccl::over_mpi(mpi)?;
            run_on(&nccl, &Device::Cuda(nccl.device().clone()), args)
        }
    }
}

/// The device of the rank numbered `local_rank` among the ranks of its host: the GPU of that
/// number (GPUs shared round robin when the ranks outnumber them) or the CPU, by `--backend`
/// (auto: the GPU when the host has one).
fn rank_device(backend: Backend, local_rank: usize) -> Result<Device> {
    let gpu = || -> Result<Device> {
        match CudaDevice::count()? {
            0 => Err(Error::CudaUnavailable("no CUDA device is present".into())),
            gpus => Device::cuda(local_rank % gpus),
        }
    };
    match backend {
        Backend::Cpu => Ok(Device::Cpu),
        Backend::Cuda => gpu(),
        Backend::Auto => Ok(gpu().unwrap_or(Device::Cpu)),
    }
}

/// This rank's part of the data.
struct Part {
    values: Column,
    /// The values of `values` that are this rank's (all of them when `None`).
    range: Option<Range<usize>>,
    /// The file read.
    name: PathBuf,
    format: FileFormat,
}

/// The quantiles over `comm`, and at the root the text to print.
fn run_on(comm: &dyn Communicator, device: &Device, args: &QuantilesArgs) -> Result<String> {
    let (rank, ranks) = (comm.rank(), comm.size());
    let part = all_succeeded(comm, read_part(args, rank, ranks))?;
    let dtype = part.values.dtype();
    if !same_on_every_rank(comm, dtype as u64)? {
        return Err(Error::InvalidArgument(format!(
            "the ranks' files hold different element types (this rank's: {dtype}); every part \
             must have the same dtype"
        )));
    }
    let probs = args.probabilities();
    let outcome = part.values.visit(Quantiles {
        comm,
        device,
        args,
        probs: &probs,
        range: part.range.clone(),
    })?;
    if rank != 0 {
        return Ok(String::new());
    }
    let name = if args.shards {
        args.file.display().to_string()
    } else {
        part.name.display().to_string()
    };
    let printout = Printout {
        args,
        name: &name,
        format: part.format,
        dtype: dtype.name(),
        probs: &probs,
        out: &outcome,
    };
    Ok(if args.json {
        json(&printout)?
    } else {
        table(&printout)
    })
}

/// Reads this rank's part: its own file (`--shards`), its slice of an uncompressed `.npy`
/// from its offset, or its slice of any other file read whole.
fn read_part(args: &QuantilesArgs, rank: usize, ranks: usize) -> Result<Part> {
    let file = args.file.to_string_lossy();
    if file == "-" {
        return Err(Error::InvalidArgument(
            "--distributed reads files, not standard input (mpirun gives it to rank 0 only): \
             name the file, or each rank's file with --shards"
                .into(),
        ));
    }
    if args.shards {
        if !file.contains("{rank}") {
            return Err(Error::InvalidArgument(format!(
                "--shards: the file name `{file}` has no {{rank}} to replace by each rank's number"
            )));
        }
        let path = PathBuf::from(file.replace("{rank}", &rank.to_string()));
        let (values, format) = read_whole(&path, args.column.as_deref())?;
        return Ok(Part {
            values,
            range: None,
            name: path,
            format,
        });
    }
    let path = args.file.clone();
    if args.column.is_none() {
        match read_npy_part(&path, rank, ranks) {
            Ok(p) => {
                return Ok(Part {
                    values: p.values,
                    range: None,
                    name: path,
                    format: FileFormat::Npy,
                })
            }
            // A compressed or CSV file is read whole, below.
            Err(Error::Format { message, .. })
                if message.contains("gzip") || message.contains("magic string") => {}
            Err(e) => return Err(e),
        }
    }
    let (values, format) = read_whole(&path, args.column.as_deref())?;
    let n = values.len();
    Ok(Part {
        values,
        range: Some(n * rank / ranks..n * (rank + 1) / ranks),
        name: path,
        format,
    })
}

/// The values of a whole file (its `column` for a CSV file).
fn read_whole(path: &Path, column: Option<&str>) -> Result<(Column, FileFormat)> {
    let source = crate::open::open(path)?;
    let format = source.format();
    let values = match format {
        FileFormat::Csv => source.read_csv_column(column)?.values,
        FileFormat::Npy => source.read_column(column)?,
    };
    Ok((values, format))
}

/// The distributed call, generic over the element type.
struct Quantiles<'a> {
    comm: &'a dyn Communicator,
    device: &'a Device,
    args: &'a QuantilesArgs,
    probs: &'a [f64],
    range: Option<Range<usize>>,
}

/// What the call found.
struct Outcome {
    values: Vec<f64>,
    report: DistributedReport,
    /// Every rank's traffic (at the root).
    per_rank: Vec<Traffic>,
    /// The number of ranks whose passes ran on a GPU (at the root).
    gpu_ranks: usize,
    transport: &'static str,
    seconds: f64,
}

impl Outcome {
    /// `"cuda"`, `"cpu"`, or `"cuda+cpu"` when the ranks differ.
    fn backend(&self) -> &'static str {
        match self.gpu_ranks {
            0 => "cpu",
            g if g == self.report.ranks => "cuda",
            _ => "cuda+cpu",
        }
    }
}

impl ColumnVisitor for Quantiles<'_> {
    type Output = Result<Outcome>;

    fn visit<T: Element>(self, data: &[T]) -> Result<Outcome> {
        let mine = match self.range {
            Some(r) => &data[r],
            None => data,
        };
        let selector = DistributedSelector::new(self.comm)
            .algorithm(self.args.distributed_algorithm)
            .nan_policy(self.args.nan)
            .buckets(self.args.buckets);
        let start = Instant::now();
        // A rank that cannot hold its part on its GPU fails every rank.
        let on_gpu = match self.device {
            Device::Cuda(gpu) => DeviceBuffer::from_host_on(gpu, mine).map(Some),
            Device::Cpu => Ok(None),
        };
        let out = match all_succeeded(self.comm, on_gpu)? {
            Some(buffer) => selector.quantiles_device(&buffer, self.probs, self.args.method),
            None => selector.quantiles(mine, self.probs, self.args.method),
        }?;
        let seconds = start.elapsed().as_secs_f64();
        let per_rank = selector.gather_traffic(&out.report)?.unwrap_or_default();
        // How many ranks ran on a GPU, summed at the root.
        let mut gpu_ranks = [matches!(self.device, Device::Cuda(_)) as u64];
        self.comm.reduce(&mut gpu_ranks, ReduceOp::Sum)?;
        Ok(Outcome {
            values: out.values.unwrap_or_default(),
            report: out.report,
            per_rank,
            gpu_ranks: gpu_ranks[0] as usize,
            transport: self.comm.transport(),
            seconds,
        })
    }
}

/// The traffic of all ranks together.
fn job_traffic(out: &Outcome) -> Traffic {
    out.per_rank
        .iter()
        .fold(Traffic::default(), |all, t| all.sum(t))
}

/// What rank 0 prints: the job's outcome, the file as named and its element type.
struct Printout<'a> {
    args: &'a QuantilesArgs,
    name: &'a str,
    format: FileFormat,
    dtype: &'a str,
    probs: &'a [f64],
    out: &'a Outcome,
}

/// The one JSON object of `--json`.
fn json(printout: &Printout) -> Result<String> {
    let (args, out) = (printout.args, printout.out);
    #[derive(Serialize)]
    struct Distributed<'a> {
        file: &'a str,
        format: &'a str,
        dtype: &'a str,
        ranks: usize,
        n: u64,
        nan_policy: &'a str,
        probs: Vec<Num>,
        values: Vec<Num>,
        method: &'a str,
        algorithm: &'a str,
        backend: &'a str,
        gpu_ranks: usize,
        transport: &'a str,
        buckets: usize,
        passes: usize,
        traffic: Traffic,
        traffic_per_rank: &'a [Traffic],
        seconds: f64,
    }

    json_line(&Distributed {
        file: printout.name,
        format: printout.format.name(),
        dtype: printout.dtype,
        ranks: out.report.ranks,
        n: out.report.values,
        nan_policy: args.nan.name(),
        probs: nums(printout.probs),
        values: nums(&out.values),
        method: args.method.name(),
        algorithm: out.report.algorithm.name(),
        backend: out.backend(),
        gpu_ranks: out.gpu_ranks,
        transport: out.transport,
        buckets: args.buckets,
        passes: out.report.passes,
        traffic: job_traffic(out),
        traffic_per_rank: &out.per_rank,
        seconds: out.seconds,
    })
}

/// The report of `kselect quantiles --distributed` without `--json`.
fn table(printout: &Printout) -> String {
    let Printout {
        args,
        name,
        format,
        dtype,
        probs,
        out,
    } = *printout;
    let r = &out.report;
    let total = job_traffic(out);
    let mut s = format!(
        "file:       {name} ({}, {dtype}), {} values on {} ranks (NaN policy: {})\n\
         ranks:      {} on a GPU, {} on the CPU; messages by {}\n\
         algorithm:  {}; passes over the data: {}; buckets a pass: {}\n\
         sent:       {total} by all ranks\n",
        format.name(),
        r.values,
        r.ranks,
        args.nan.name(),
        out.gpu_ranks,
        r.ranks - out.gpu_ranks,
        out.transport,
        r.algorithm,
        r.passes,
        args.buckets,
    );
    for (phase, flow) in total.phases() {
        s.push_str(&format!(
            "  {:<14} {} messages, {} values, {} bytes\n",
            phase.name(),
            flow.messages,
            flow.values,
            flow.bytes
        ));
    }
    s.push_str(&format!(
        "seconds:    {}\n\n",
        Num::of_f64(out.seconds).text()
    ));
    let rows: Vec<Vec<String>> = probs
        .iter()
        .zip(&out.values)
        .map(|(&p, &v)| {
            vec![
                Num::of_f64(p).text().to_string(),
                Num::of_f64(v).text().to_string(),
            ]
        })
        .collect();
    aligned(
        &mut s,
        &["p", &format!("quantile ({})", args.method.name())],
        &rows,
    );
    s
}
