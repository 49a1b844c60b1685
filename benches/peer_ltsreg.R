# The R peer of benches/regression.rs: robustbase::ltsReg on the very data sets the benchmark
# simulated and wrote with --write-data DIR.
#
#   Rscript benches/peer_ltsreg.R DIR [--sizes 10000,100000] [--reps 1] [--seed 42] [--json FILE]
#
# Reads DIR/manifest.csv (n, p, file) and each file (column-major little-endian doubles:
# x_1 .. x_p, then y), fits ltsReg(x, y) with its defaults made explicit (intercept,
# alpha = 0.5, nsamp = 500; set.seed(SEED) before each fit, 42 by default), single-threaded as
# R runs it, and prints one JSON object (also written to FILE with --json): the machine, the
# date, the R and robustbase versions, and for each size n, p, h, seconds (median of --reps
# fits, elapsed time of the ltsReg call alone), objective (the sum of the h smallest squared
# residuals of the raw fit, computed from raw.coefficients: what kselect reports), crit
# (robustbase's own criterion from its Fortran search, on its internally scaled data: not
# comparable), flagged (rows with weight 0) and coefficient_error (the largest error of the
# reweighted coefficients against the benchmark's true b). Progress goes to stderr.

suppressPackageStartupMessages(library(robustbase))

args <- commandArgs(trailingOnly = TRUE)
if (length(args) < 1) {
  stop("usage: Rscript benches/peer_ltsreg.R DIR [--sizes N,N,...] [--reps R] [--seed S] [--json FILE]")
}
dir <- args[1]
option <- function(name, default) {
  i <- match(name, args)
  if (is.na(i) || i == length(args)) default else args[i + 1]
}
sizes <- option("--sizes", NA)
reps <- as.integer(option("--reps", "1"))
seed <- as.integer(option("--seed", "42"))
json_path <- option("--json", NA)

manifest <- read.csv(file.path(dir, "manifest.csv"))
if (!is.na(sizes)) {
  wanted <- as.numeric(strsplit(sizes, ",")[[1]])
  manifest <- manifest[manifest$n %in% wanted, , drop = FALSE]
}

# The benchmark's true coefficients: b_0 = 1, b_j = (-1)^j j / 2.
truth <- function(p) c(1, (-1)^(1:p) * (1:p) / 2)

read_data <- function(path, n, p) {
  con <- file(path, "rb")
  on.exit(close(con))
  values <- readBin(con, "double", n = n * (p + 1), size = 8, endian = "little")
  if (length(values) != n * (p + 1)) stop(sprintf("%s: short file", path))
  m <- matrix(values, nrow = n, ncol = p + 1)
  list(x = m[, 1:p, drop = FALSE], y = m[, p + 1])
}

num <- function(x) if (is.finite(x)) sprintf("%.17g", x) else "null"
str_json <- function(s) paste0("\"", gsub("\"", "\\\\\"", gsub("\\\\", "\\\\\\\\", s)), "\"")
obj_json <- function(fields) {
  paste0("{", paste0(str_json(names(fields)), ": ", unlist(fields), collapse = ", "), "}")
}

cpu_model <- tryCatch({
  line <- grep("^model name", readLines("/proc/cpuinfo"), value = TRUE)[1]
  trimws(sub("^[^:]*:", "", line))
}, error = function(e) "unknown CPU", warning = function(w) "unknown CPU")

results <- character(0)
for (row in seq_len(nrow(manifest))) {
  n <- manifest$n[row]
  p <- manifest$p[row]
  data <- read_data(file.path(dir, manifest$file[row]), n, p)
  times <- numeric(reps)
  for (r in seq_len(reps)) {
    set.seed(seed)
    times[r] <- system.time(
      fit <- ltsReg(data$x, data$y, intercept = TRUE, alpha = 0.5, nsamp = 500)
    )[["elapsed"]]
  }
  h <- fit$quan
  residuals <- data$y - cbind(1, data$x) %*% fit$raw.coefficients
  objective <- sum(sort(as.vector(residuals)^2, partial = h)[1:h])
  error <- max(abs(fit$coefficients - truth(p)))
  seconds <- sort(times)[length(times) %/% 2 + 1]
  message(sprintf("n = %d: %.2f s, h = %d, objective %.10e, crit %.10e", n, seconds, h,
                  objective, fit$crit))
  results <- c(results, obj_json(list(
    n = n, p = p + 1, h = h, seconds = num(seconds),
    times = paste0("[", paste(sapply(times, num), collapse = ", "), "]"),
    objective = num(objective), crit = num(unname(fit$crit)),
    raw_scale = num(fit$raw.scale[1]), scale = num(fit$scale),
    flagged = sum(fit$lts.wt == 0), coefficient_error = num(error)
  )))
}

document <- obj_json(list(
  peer = str_json(sprintf(
    "robustbase::ltsReg(x, y, intercept = TRUE, alpha = 0.5, nsamp = 500), set.seed(%d)", seed)),
  r_version = str_json(R.version.string),
  robustbase_version = str_json(as.character(packageVersion("robustbase"))),
  device = str_json(sprintf("cpu: %s (%d cores; R runs ltsReg on one)", cpu_model,
                            parallel::detectCores())),
  timing = str_json(sprintf("elapsed time of the ltsReg call, median of %d fits", reps)),
  objective = str_json("sum of the h smallest squared residuals of y - [1 x] raw.coefficients"),
  date = str_json(format(Sys.Date())),
  command = str_json(paste(c("Rscript benches/peer_ltsreg.R", args), collapse = " ")),
  results = paste0("[", paste(results, collapse = ", "), "]")
))
cat(document, "\n", sep = "")
if (!is.na(json_path)) writeLines(document, json_path)
