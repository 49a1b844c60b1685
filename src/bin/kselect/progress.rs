//! Progress of long reads and long fits, drawn on standard error.
//!
//! [`FitBar`] shows the stages of an LTS or LMS fit (the setup, the starts, the refinement, the
//! reweighting), with the work done out of each stage's total, from the fit's progress reports,
//! or the problems a phase-transition experiment has solved out of its total; like the bar of a
//! read, it appears only once the work has run for a second, and is cleared when it ends.
//!
//! [`reading`] wraps the bytes of an input in a reader that counts them into an indicatif
//! progress bar. The bar stays hidden for a second: most inputs are read before then, and
//! drawing nothing for them spares the terminal a flicker. A read that takes longer — a large
//! file, a slow disk, a pipe whose writer is slow — shows a bar of bytes out of the file's
//! length, or a spinner with the bytes read so far when the length is unknown (standard input,
//! a pipe, a FIFO). Inputs known to be under 64 MiB never show one.
//!
//! The bar is drawn on standard error, only when it is a terminal: indicatif's
//! `ProgressDrawTarget::stderr` hides itself otherwise (and when `TERM` is unset or `dumb`), so
//! a redirected or captured stderr receives nothing. It is cleared once the input is read (when
//! the reader is dropped). Nothing goes to standard output, and the bytes pass unchanged: the
//! results are the same with and without it.

use std::io::Read;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressBarIter, ProgressDrawTarget, ProgressFinish, ProgressStyle};
use kselect::regression::FitProgress;

/// Inputs known to be shorter than this are read without progress: a fraction of a second.
const LARGE: u64 = 64 << 20;

/// How long a read runs before its progress appears.
const SHOW_AFTER: Duration = Duration::from_secs(1);

/// How often a shown bar is redrawn while no bytes arrive (a pausing pipe).
const TICK: Duration = Duration::from_millis(200);

/// A reader that reports the bytes read from `inner` on standard error, once reading has
/// taken a while (see the [module documentation](self)).
pub struct ReadProgress<R> {
    inner: ProgressBarIter<R>,
    /// When the bar is to appear: `None` once shown, or when it never will be.
    show_at: Option<Instant>,
    /// Whether the length of the input is known (a bar rather than a spinner).
    known_length: bool,
}

/// `reader`, counting its bytes into a progress bar named `name` that appears on standard
/// error when the read takes more than a second, unless `length` (the bytes `reader` gives in
/// all, when known) is under 64 MiB.
pub fn reading<R: Read>(reader: R, length: Option<u64>, name: &str) -> ReadProgress<R> {
    let bar = ProgressBar::with_draw_target(length, ProgressDrawTarget::hidden())
        .with_message(name.to_string())
        .with_finish(ProgressFinish::AndClear);
    let show_at = match length {
        Some(bytes) if bytes < LARGE => None,
        _ => Some(Instant::now() + SHOW_AFTER),
    };
    ReadProgress {
        inner: bar.wrap_read(reader),
        show_at,
        known_length: length.is_some(),
    }
}

impl<R> ReadProgress<R> {
    /// Draws the bar from now on (on standard error, if it is a terminal).
    fn show(&mut self) {
        self.show_at = None;
        let bar = &self.inner.progress;
        bar.set_draw_target(ProgressDrawTarget::stderr());
        // Set after the target, for its colours to follow standard error's.
        bar.set_style(style(self.known_length));
        bar.enable_steady_tick(TICK);
    }
}

impl<R: Read> Read for ReadProgress<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        if self.show_at.is_some_and(|at| Instant::now() >= at) {
            self.show();
        }
        Ok(n)
    }
}

/// The progress bar of a fit or an experiment (see the [module documentation](self)): hidden
/// until the work has run for a second, then on standard error (if it is a terminal); cleared
/// when dropped.
pub struct FitBar {
    bar: ProgressBar,
    show_at: Instant,
    shown: Arc<AtomicBool>,
}

impl FitBar {
    /// The bar of a fit named `what` (e.g. `"LTS fit"`), starting now.
    pub fn new(what: &str) -> FitBar {
        FitBar {
            bar: ProgressBar::with_draw_target(None, ProgressDrawTarget::hidden())
                .with_prefix(what.to_string()),
            show_at: Instant::now() + SHOW_AFTER,
            shown: Arc::new(AtomicBool::new(false)),
        }
    }

    /// The callback that moves the bar, for `Lts::progress` or `Lms::progress`.
    pub fn callback(&self) -> impl Fn(FitProgress) + Send + Sync + 'static {
        let (bar, show_at, shown) = (self.bar.clone(), self.show_at, Arc::clone(&self.shown));
        move |report: FitProgress| {
            show_when_due(&bar, show_at, &shown);
            if bar.message() != report.stage.name() {
                bar.set_message(report.stage.name());
                bar.reset_eta();
            }
            bar.set_length(report.total);
            bar.set_position(report.done);
        }
    }

    /// The callback that moves the bar to `done` units of `total`, named `unit` (e.g.
    /// `"problems"`), for `PhaseTransition::run`. It may be called from many threads, the
    /// counts out of order: the bar never moves back.
    pub fn counter(&self, unit: &str) -> impl Fn(usize, usize) + Send + Sync + 'static {
        let (bar, show_at, shown) = (self.bar.clone(), self.show_at, Arc::clone(&self.shown));
        bar.set_message(unit.to_string());
        move |done: usize, total: usize| {
            show_when_due(&bar, show_at, &shown);
            bar.set_length(total as u64);
            if done as u64 > bar.position() {
                bar.set_position(done as u64);
            }
        }
    }
}

/// Draws `bar` on standard error (if it is a terminal) from now on, once `show_at` has come
/// and unless it is `shown` already.
fn show_when_due(bar: &ProgressBar, show_at: Instant, shown: &AtomicBool) {
    if !shown.load(Ordering::Relaxed)
        && Instant::now() >= show_at
        && !shown.swap(true, Ordering::Relaxed)
    {
        bar.set_draw_target(ProgressDrawTarget::stderr());
        bar.set_style(
            ProgressStyle::with_template(FIT_TEMPLATE)
                .map(|style| style.progress_chars("=> "))
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        bar.enable_steady_tick(TICK);
    }
}

impl Drop for FitBar {
    fn drop(&mut self) {
        self.bar.finish_and_clear();
    }
}

/// A fit's bar: the stage, the units done out of the total, and the time left.
const FIT_TEMPLATE: &str = "{prefix}: {msg} [{bar:30}] {pos}/{len} ({eta} left)";

/// The look of the bar: see [`template`].
fn style(known_length: bool) -> ProgressStyle {
    ProgressStyle::with_template(template(known_length))
        .map(|style| style.progress_chars("=> "))
        .unwrap_or_else(|_| ProgressStyle::default_spinner())
}

/// A bar of bytes out of the length with the rate and the time left, or, for an unknown
/// length, a spinner with the bytes and the rate.
fn template(known_length: bool) -> &'static str {
    if known_length {
        "reading {msg} [{bar:30}] {bytes}/{total_bytes} ({bytes_per_sec}, {eta} left)"
    } else {
        "{spinner} reading {msg}: {bytes} ({bytes_per_sec})"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_pass_unchanged() {
        let data: Vec<u8> = (0..300_000u32).map(|i| (i * 7 % 251) as u8).collect();
        for length in [Some(data.len() as u64), Some(LARGE), None] {
            let mut reader = reading(&data[..], length, "test");
            if reader.show_at.is_some() {
                // As if a second had passed: the bar is shown (hidden by indicatif when
                // standard error is not a terminal).
                reader.show_at = Some(Instant::now());
            }
            let mut out = Vec::new();
            let mut chunk = [0u8; 4096];
            loop {
                let n = reader.read(&mut chunk).unwrap();
                if n == 0 {
                    break;
                }
                out.extend_from_slice(&chunk[..n]);
            }
            assert_eq!(out, data);
            assert_eq!(reader.inner.progress.position(), data.len() as u64);
            assert_eq!(reader.show_at, None, "shown or never to be");
        }
    }

    #[test]
    fn small_inputs_never_show_progress() {
        assert_eq!(reading(&b"x"[..], Some(1), "test").show_at, None);
        assert!(reading(&b"x"[..], Some(LARGE), "test").show_at.is_some());
        assert!(reading(&b"x"[..], None, "test").show_at.is_some());
    }

    #[test]
    fn both_templates_are_valid() {
        for known_length in [true, false] {
            assert!(ProgressStyle::with_template(template(known_length)).is_ok());
        }
        assert!(ProgressStyle::with_template(FIT_TEMPLATE).is_ok());
    }

    #[test]
    fn a_fit_bar_follows_the_reports() {
        let bar = FitBar::new("LMS fit");
        let callback = bar.callback();
        callback(FitProgress {
            stage: kselect::regression::FitStage::Starts,
            done: 30,
            total: 3000,
        });
        assert_eq!(bar.bar.position(), 30);
        assert_eq!(bar.bar.length(), Some(3000));
        assert_eq!(bar.bar.message(), "starts");
        assert!(
            !bar.shown.load(Ordering::Relaxed),
            "hidden during the first second"
        );
    }

    #[test]
    fn a_counter_never_moves_back() {
        let bar = FitBar::new("phase transition");
        let callback = bar.counter("problems");
        callback(6, 40);
        callback(3, 40); // a thread that counted earlier, reporting late
        assert_eq!(bar.bar.position(), 6);
        assert_eq!(bar.bar.length(), Some(40));
        assert_eq!(bar.bar.message(), "problems");
        callback(40, 40);
        assert_eq!(bar.bar.position(), 40);
        assert!(!bar.shown.load(Ordering::Relaxed));
    }
}
