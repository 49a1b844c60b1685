# The R peer of benches/lms_classic.rs: MASS lqs on the classic data sets of datasets/robust
# and on the simulated set the benchmark wrote with --write-data DIR, with the benchmark's two
# coverages: lqs(method = "lms") (h = floor((n + 1) / 2)) and lqs(method = "lqs", quantile = h)
# with h = floor(n / 2) + floor((p + 1) / 2).
#
#   Rscript benches/peer_lqs.R DIR [REPS]
#
# Prints one JSON object: the R and MASS versions and, for each case, n, p, h, the median
# milliseconds a call of REPS (default 31) timings of 20 lqs calls each (elapsed time of the
# calls alone; lqs's defaults: nsamp = "best", every p-subset when there are fewer than 5000,
# else min(500 p, 3000) random ones; seed = 1) and the objective, the h-th smallest absolute
# residual of its coefficients. Run from the repository's root.

suppressPackageStartupMessages(library(MASS))

args <- commandArgs(trailingOnly = TRUE)
dir <- if (length(args) >= 1) args[1] else "."
reps <- if (length(args) >= 2) as.integer(args[2]) else 31L

sets <- list(
  list("stackloss", "datasets/robust/stackloss.csv", "stack.loss",
       c("Air.Flow", "Water.Temp", "Acid.Conc."), FALSE),
  list("starsCYG", "datasets/robust/starsCYG.csv", "log.light", c("log.Te"), FALSE),
  list("hbk", "datasets/robust/hbk.csv", "Y", c("X1", "X2", "X3"), FALSE),
  list("wood", "datasets/robust/wood.csv", "y", c("x1", "x2", "x3", "x4", "x5"), FALSE),
  list("Animals2", "datasets/robust/Animals2.csv", "brain", c("body"), TRUE),
  list("simulated-38x10", file.path(dir, "simulated-38x10.csv"), "y",
       paste0("x", 1:10), FALSE))

results <- character(0)
for (s in sets) {
  d <- read.csv(s[[2]])
  y <- d[[s[[3]]]]
  x <- as.matrix(d[, s[[4]], drop = FALSE])
  if (s[[5]]) {
    y <- log(y)
    x <- log(x)
  }
  n <- length(y)
  p <- ncol(x) + 1
  for (coverage in c("median", "highest_breakdown")) {
    h <- if (coverage == "median") floor((n + 1) / 2) else floor(n / 2) + floor((p + 1) / 2)
    fit_once <- function() {
      if (coverage == "median") {
        suppressWarnings(lqs(x, y, method = "lms", seed = 1))
      } else {
        suppressWarnings(lqs(x, y, method = "lqs", quantile = h, seed = 1))
      }
    }
    fit <- fit_once()
    # Each time is that of `inner` calls, divided (the clock counts milliseconds).
    inner <- 20L
    times <- vapply(seq_len(reps), function(i) {
      system.time(for (j in seq_len(inner)) fit_once())[["elapsed"]] / inner
    }, 0)
    objective <- sort(abs(y - cbind(1, x) %*% fit$coefficients))[h]
    results <- c(results, sprintf(
      '{"set": "%s", "n": %d, "p": %d, "h": %d, "coverage": "%s", "median_ms": %.4f, "objective": %.17g}',
      s[[1]], n, p, h, coverage, 1e3 * median(times), objective))
  }
}
cat(sprintf('{"peer": "MASS lqs", "r": "%s", "mass": "%s", "reps": %d, "results": [\n  %s\n]}\n',
            R.version.string, as.character(packageVersion("MASS")), reps,
            paste(results, collapse = ",\n  ")))
