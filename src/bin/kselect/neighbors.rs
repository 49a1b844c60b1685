//! `kselect neighbors`: the exact k nearest base points of each query point (or of each base
//! point, itself left out), written as `.npy` arrays or printed.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

use kselect::io::npy::write_npy_matrix;
use kselect::knn::{KnnFloat, Metric, NeighborLists, Neighbors, Points};
use kselect::{Device, Error, Result};
use serde::Serialize;

use crate::cli::NeighborsArgs;
use crate::open;
use crate::output::{json_line, Num, RunFields};
use crate::output_files::{write_replacing, FileKind};
use crate::points::{Coordinates, PointsFile};

/// The lists found, in the element type they were searched in.
enum Lists {
    F32(NeighborLists<f32>),
    F64(NeighborLists<f64>),
}

/// What was searched and found.
pub struct Outcome {
    /// The base file.
    base: String,
    /// The number of base points.
    points: usize,
    /// The coordinates of each point.
    dim: usize,
    /// The query file and its point count; `None` for `--self`.
    query: Option<(String, usize)>,
    metric: Metric,
    k: usize,
    lists: Lists,
    /// Wall time of the search alone (not of reading or writing files).
    seconds: f64,
}

impl Outcome {
    /// `f32` or `f64`: the type of the distances.
    fn dtype(&self) -> &'static str {
        match self.lists {
            Lists::F32(_) => "f32",
            Lists::F64(_) => "f64",
        }
    }

    /// The number of lists (queries, or base points for `--self`).
    fn queries(&self) -> usize {
        match &self.lists {
            Lists::F32(lists) => lists.queries(),
            Lists::F64(lists) => lists.queries(),
        }
    }

    /// Every index, row-major.
    fn indices(&self) -> &[usize] {
        match &self.lists {
            Lists::F32(lists) => lists.indices(),
            Lists::F64(lists) => lists.indices(),
        }
    }

    /// Every distance as text, row-major.
    fn distances(&self) -> Vec<Num> {
        match &self.lists {
            Lists::F32(lists) => lists.distances().iter().map(|&d| Num::of(d)).collect(),
            Lists::F64(lists) => lists.distances().iter().map(|&d| Num::of(d)).collect(),
        }
    }
}

/// Reads the points, searches on `device` and writes the files asked for.
pub fn run(args: &NeighborsArgs, device: Device) -> Result<Outcome> {
    let base = PointsFile::read(&args.base)?;
    let query = args.query.as_deref().map(PointsFile::read).transpose()?;
    if let Some(query) = &query {
        if query.dim != base.dim {
            return Err(Error::InvalidArgument(format!(
                "the query points ({}) have {} coordinate(s) each but the base points ({}) have \
                 {}: both files need the same number of columns",
                query.name.display(),
                query.dim,
                base.name.display(),
                base.dim
            )));
        }
    }
    let search = Search {
        metric: args.metric,
        device,
        k: args.k,
        dim: base.dim,
        base: base.name.clone(),
    };
    let (name, points) = (base.name.display().to_string(), base.rows);
    let query_described = query
        .as_ref()
        .map(|q| (q.name.display().to_string(), q.rows));
    let start = Instant::now();
    let lists = match (base.coordinates, query.map(|q| q.coordinates)) {
        (Coordinates::F32(b), None) => Lists::F32(search.run(b, None)?),
        (Coordinates::F32(b), Some(Coordinates::F32(q))) => Lists::F32(search.run(b, Some(q))?),
        (b, q) => Lists::F64(search.run(b.into_f64(), q.map(Coordinates::into_f64))?),
    };
    let outcome = Outcome {
        base: name,
        points,
        dim: search.dim,
        query: query_described,
        metric: args.metric,
        k: args.k,
        lists,
        seconds: start.elapsed().as_secs_f64(),
    };
    outcome.write(args.out_indices.as_deref(), args.out_distances.as_deref())?;
    Ok(outcome)
}

/// A search to run.
struct Search {
    metric: Metric,
    device: Device,
    k: usize,
    /// The coordinates of each point.
    dim: usize,
    /// The base file, which the errors about the base points name.
    base: PathBuf,
}

impl Search {
    /// The lists of the `query` points among the `base` points (row-major coordinates), or
    /// the kNN graph of the base points when there is no query.
    fn run<T: KnnFloat>(&self, base: Vec<T>, query: Option<Vec<T>>) -> Result<NeighborLists<T>> {
        let dim = self.dim;
        let index = Neighbors::new(Points::from_vec(base, dim)?)
            .map_err(|e| open::naming(e, &self.base))?
            .metric(self.metric)
            .device(self.device.clone());
        match query {
            Some(query) => index.search(Points::from_vec(query, dim)?, self.k),
            None => index.search_self(self.k),
        }
    }
}

impl Outcome {
    /// Writes the indices (int64) and the distances (the points' type) as `queries x k`
    /// arrays to the files given.
    fn write(&self, indices: Option<&Path>, distances: Option<&Path>) -> Result<()> {
        let (rows, k) = (self.queries(), self.k);
        if let Some(path) = indices {
            let values: Vec<i64> = self.indices().iter().map(|&i| i as i64).collect();
            write_replacing(path, FileKind::Array, |p| {
                write_npy_matrix(p, &values, rows, k)
            })?;
        }
        if let Some(path) = distances {
            write_replacing(path, FileKind::Array, |p| match &self.lists {
                Lists::F32(lists) => write_npy_matrix(p, lists.distances(), rows, k),
                Lists::F64(lists) => write_npy_matrix(p, lists.distances(), rows, k),
            })?;
        }
        Ok(())
    }
}

/// The lists as CSV text: a header, then `query,rank,index,distance` a neighbour, nearest
/// first (rank 0).
pub fn csv(out: &Outcome) -> String {
    let mut s = String::from("query,rank,index,distance\n");
    let distances = out.distances();
    for (at, (index, distance)) in out.indices().iter().zip(&distances).enumerate() {
        let _ = writeln!(
            s,
            "{},{},{index},{}",
            at / out.k,
            at % out.k,
            distance.text()
        );
    }
    s
}

/// A file written: its JSON key, its label in the summary, and its path.
struct Written<'a> {
    key: &'static str,
    label: &'static str,
    path: &'a Path,
}

/// The files written, indices first.
fn written(args: &NeighborsArgs) -> Vec<Written<'_>> {
    [
        ("out_indices", "indices:  ", &args.out_indices),
        ("out_distances", "distances:", &args.out_distances),
    ]
    .into_iter()
    .filter_map(|(key, label, path)| {
        Some(Written {
            key,
            label,
            path: path.as_deref()?,
        })
    })
    .collect()
}

/// The one JSON object of `--json`: the lists themselves when no file was written.
pub fn json(args: &NeighborsArgs, out: &Outcome, device: &Device) -> Result<String> {
    #[derive(Serialize)]
    struct Neighbours<'a> {
        base: &'a str,
        /// None (null) when the base searched itself.
        query: Option<&'a str>,
        #[serde(rename = "self")]
        self_search: bool,
        points: usize,
        queries: usize,
        dim: usize,
        k: usize,
        metric: &'a str,
        dtype: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        out_indices: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        out_distances: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        indices: Option<Vec<&'a [usize]>>,
        #[serde(skip_serializing_if = "Option::is_none")]
        distances: Option<Vec<&'a [Num]>>,
        #[serde(flatten)]
        run: RunFields,
    }

    let path = |p: &Option<PathBuf>| p.as_ref().map(|p| p.display().to_string());
    let lists = args.out_indices.is_none() && args.out_distances.is_none();
    let distances = out.distances();
    json_line(&Neighbours {
        base: &out.base,
        query: out.query.as_ref().map(|(q, _)| q.as_str()),
        self_search: out.query.is_none(),
        points: out.points,
        queries: out.queries(),
        dim: out.dim,
        k: out.k,
        metric: out.metric.name(),
        dtype: out.dtype(),
        out_indices: path(&args.out_indices),
        out_distances: path(&args.out_distances),
        indices: lists.then(|| out.indices().chunks(out.k).collect()),
        distances: lists.then(|| distances.chunks(out.k).collect()),
        run: RunFields::new(device, out.seconds),
    })
}

/// The readable output when files were written: what was searched and where the lists went.
pub fn summary(args: &NeighborsArgs, out: &Outcome, device: &Device) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "base:      {} ({} points of {} coordinates, {})",
        out.base,
        out.points,
        out.dim,
        out.dtype()
    );
    let queries = match &out.query {
        Some((query, n)) => format!("{query} ({n} points)"),
        None => "every base point, itself left out (--self)".to_string(),
    };
    let _ = writeln!(s, "queries:   {queries}");
    let order = if out.metric.is_similarity() {
        "largest first"
    } else {
        "nearest first"
    };
    let _ = writeln!(
        s,
        "searched:  k = {}, {} ({order}; ties by the lower index)",
        out.k,
        out.metric.name()
    );
    let shape = format!("{} x {}", out.queries(), out.k);
    for file in written(args) {
        let dtype = match file.key {
            "out_indices" => "int64",
            _ => out.dtype(),
        };
        let _ = writeln!(
            s,
            "{} {} ({dtype}, {shape})",
            file.label,
            file.path.display()
        );
    }
    let _ = writeln!(
        s,
        "backend:   {}, {:.6} s",
        device.description(),
        out.seconds
    );
    s
}
