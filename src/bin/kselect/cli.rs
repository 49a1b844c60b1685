//! The command line: clap's derive definitions and the parsers of option values.

use std::path::PathBuf;

use clap::{ArgGroup, Args, Parser, Subcommand, ValueEnum};
use kselect::distributed::DistributedAlgorithm;
use kselect::knn::{Metric, Weights};
use kselect::recovery::{Algorithm as RecoveryAlgorithm, Ensemble, SignalKind};
use kselect::{Algorithm, NanPolicy, QuantileMethod};

/// Exact order statistics of a column of numbers: the k-th smallest or largest values, the
/// median and quantiles, the top-k values of arrays and matrices and hard thresholding, on the
/// CPU or a CUDA GPU; robust regression (LTS and LMS) built on them; exact k nearest
/// neighbours, with kNN regression and classification; and compressed sensing.
#[derive(Debug, Parser)]
#[command(
    name = "kselect",
    version,
    long_about = "Exact order statistics of a column of numbers: the k-th smallest or largest \
                  values, the median and quantiles, the top-k values of arrays and matrices with \
                  their indices, and hard thresholding, on the CPU or a CUDA GPU; and robust \
                  regression (least trimmed squares and least median of squares) built on \
                  them; exact k nearest neighbours, with kNN regression and \
                  classification; and compressed sensing: sparse signals recovered from few \
                  measurements by iterative hard thresholding and its relatives, and their \
                  phase transitions.\n\n\
                  Input files are NumPy .npy arrays (1-D; topk, lts, lms, knn and recover also \
                  read 2-D, neighbors only 2-D) or CSV files with a header row (select, quantiles, \
                  lts, lms, neighbors and knn), either possibly \
                  gzip-compressed; FILE - reads standard input. Every input is read once, so a \
                  pipe or a FIFO reads like a file; long reads show their progress on standard \
                  error when it is a terminal. Every algorithm and backend returns exactly the \
                  value a full sort would put at the rank asked for.",
    after_help = "Examples:\n  \
        kselect select data.npy --k 0 --k 999\n  \
        kselect select flights.csv.gz --column dep_delay --nan omit --median --quantile 0.99\n  \
        kselect select values.npy --largest --k 0,1,2 --json\n  \
        (echo x; seq 1000) | kselect select - --median\n  \
        kselect quantiles flights.csv.gz --column dep_delay --nan omit --count 101 --plot pdf.png\n  \
        kselect topk scores.npy --k 10 --sorted --json\n  \
        kselect topk values.npy --cols 100 --k 5 --smallest\n  \
        kselect threshold x.npy --k 50 --out x_sparse.npy --json\n  \
        kselect lts stackloss.csv --response stack.loss --json\n  \
        kselect lms Animals2.csv --response brain --predictors body --log brain,body\n  \
        kselect neighbors base.npy --query q.npy --k 10 --out-indices I.npy --out-distances D.npy\n  \
        kselect knn iris.csv --response species --classify --k 1,5,9 --standardize\n  \
        kselect recover --ensemble gaussian --n 1024 --m 256 --y y.npy --k 20 --out x.npy\n  \
        kselect phase-transition --ensemble gaussian --n 256 --algorithms niht,htp --plot pt.png\n\n\
        Exit status: 0 on success, 1 when the input or the selection fails, 2 for a usage error; \
        kselect recover: 3 when a solver stopped without converging."
)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Select values by rank, the median or quantiles of the values of a file.
    #[command(
        long_about = "Select values by rank, the median or quantiles of the values of a file.\n\n\
            Ranks are 0-based in ascending order: --k 0 is the minimum, --k N-1 the maximum of N \
            values (--largest counts from the maximum instead). Values are ordered as a sort \
            orders them: NaN after +inf (under --nan last), -0.0 just below +0.0.\n\n\
            Give at least one of --k, --median, --quantile; they may be combined, and each of \
            --k and --quantile may be repeated or take a comma-separated list.",
        after_help = "Output: without --json, a summary of the input and the run, then a table \
            of rank and value (and of q and value for quantiles). With --json, one JSON object \
            (see --json). Integers are printed exactly; floats with the fewest digits that read \
            back as the same f32 or f64; infinities and NaN as inf, -inf and nan (JSON strings).\n\n\
            Examples:\n  \
            kselect select data.npy --k 0 --k 999\n  \
            kselect select flights.csv.gz --column dep_delay --nan omit --median --quantile 0.9,0.99\n  \
            kselect select values.npy --largest --k 0,1,2 --json",
        group(
            ArgGroup::new("what")
                .required(true)
                .multiple(true)
                .args(["k", "median", "quantile"])
        )
    )]
    Select(SelectArgs),

    /// Quantiles of the values of a file, and the distribution they describe: its
    /// Kolmogorov-Smirnov distance to the data, plots of its PDF and CDF.
    #[command(
        long_about = "Quantiles of the values of a file, and the distribution they describe.\n\n\
            The quantiles at the probabilities p_1 < ... < p_m (--probs, or --count for m evenly \
            spaced ones) are exact order statistics, computed as numpy.quantile computes them \
            (--method). Through the points (quantile, p) runs a piecewise-linear estimate of \
            the CDF; its slope, constant between neighbouring quantiles, estimates the PDF \
            (Blanchard et al. 2016, Fig. 5). Equal quantiles (ties, common in data with few \
            distinct values) are point masses, and so is the probability below p_1 and above \
            p_m, at the smallest and largest quantile. The output reports the \
            Kolmogorov-Smirnov distance sup |F_est - F_emp| between the estimate and the \
            empirical CDF of the values, computed exactly.\n\n\
            --plot and --cdf-plot draw the estimated PDF over a normalized histogram of the \
            values, and the estimated CDF over their cumulative histogram, with a smoothed \
            estimate beside them (each piece of the estimate spread by a biweight kernel as \
            wide as 1.5 times the local spacing of the quantiles, or --bandwidth).",
        after_help = "Output: without --json, a summary of the input, the run and the estimate, \
            then a table of p and quantile. With --json, one JSON object (see --json). \
            Quantiles are printed with the fewest digits that read back as the same f64.\n\n\
            Examples:\n  \
            kselect quantiles flights.csv.gz --column dep_delay --nan omit --count 101 \
            --plot pdf.png --cdf-plot cdf.png --plot-range=-40,160\n  \
            kselect quantiles data.npy --probs 0.1,0.5,0.9 --method median_unbiased --json\n  \
            kselect quantiles data.npy --count 11 --plot deciles.svg --bins 50",
        group(
            ArgGroup::new("probabilities")
                .required(true)
                .multiple(false)
                .args(["probs", "count"])
        )
    )]
    Quantiles(QuantilesArgs),

    /// The k largest (or smallest) values of an array, or of every row of a matrix, with their
    /// indices.
    #[command(
        long_about = "The k largest (or smallest) values of an array, or of every row of a \
            matrix, with their indices.\n\n\
            FILE is a .npy array: 1-D (one row, or rows of --cols values each) or 2-D (rows x \
            cols, in C order). Values are ordered as a sort orders them (-0.0 just below +0.0; \
            NaN after +inf under --nan last); ties go to the lower index, so the result is \
            deterministic. k is 1 to the number of values of a row.",
        after_help = "Output: without --json, a summary and a table of row, position, index and \
            value. With --json, one JSON object: {\"rows\": R, \"k\": K, \"values\": [[...], \
            ...], \"indices\": [[...], ...], \"backend\": \"...\", \"seconds\": S}, one list \
            of k values and one of k indices per row (indices count inside the row). Integers \
            are printed exactly; floats with the fewest digits that read back as the same f32 \
            or f64; infinities and NaN as the strings \"inf\", \"-inf\", \"nan\".\n\n\
            Examples:\n  \
            kselect topk scores.npy --k 10 --sorted\n  \
            kselect topk matrix.npy --k 3 --smallest --json\n  \
            kselect topk values.npy --cols 100 --k 5 --nan omit"
    )]
    Topk(TopkArgs),

    /// Hard thresholding: keep the k entries of largest magnitude of an array, zero the rest.
    #[command(
        long_about = "Hard thresholding (H_k of iterative hard thresholding): keep the k \
            entries of largest magnitude of a 1-D .npy array, set every other entry to zero, and \
            write the result to --out (same dtype and length).\n\n\
            Magnitude is |x| for floats (-0.0 and +0.0 alike), the absolute value for signed \
            integers (the minimum has the largest), the value for unsigned ones; ties go to the \
            lower index. The threshold is the kept entry of smallest magnitude (of the highest \
            index among equal ones).",
        after_help = "Output: without --json, a summary, the threshold and the support (the \
            indices kept, ascending). With --json, one JSON object: {\"n\": N, \"k\": K, \
            \"threshold\": V, \"threshold_index\": I, \"support\": [...], \"backend\": \
            \"...\", \"seconds\": S}.\n\n\
            Examples:\n  \
            kselect threshold x.npy --k 50 --out x_sparse.npy\n  \
            kselect threshold x.npy --k 50 --out x_sparse.npy --nan omit --json"
    )]
    Threshold(ThresholdArgs),

    /// Least trimmed squares regression (FAST-LTS, with R robustbase ltsReg's conventions) of
    /// one column of a file on others.
    #[command(
        long_about = "Least trimmed squares regression of one column of a file on others.\n\n\
            LTS finds the coefficients that minimize the sum of the h smallest squared \
            residuals, so that up to n - h rows, however far off, cannot pull the fit (FAST-LTS: \
            random p-subsets refined by C-steps, every p-subset when there are few). The rows \
            whose raw residual exceeds 2.24 raw scales (qnorm(0.9875)) get weight 0, least \
            squares on the others gives the reweighted coefficients and scale, and the rows \
            that fit flags are the outliers, as R's robustbase ltsReg (0.95-0) computes them. \
            The coverage is h = floor((n + p + 1) / 2) by default (alpha = 0.5, the highest \
            breakdown), p counting the intercept.",
        after_help = "Output: without --json, a summary (model, n, p, h, objective, scales, \
            backend and time), a table of term, coefficient (reweighted) and raw coefficient, \
            and the outlier rows. With --json, one JSON object (see --json); numbers are \
            printed with the fewest digits that read back as the same f64.\n\n\
            Examples:\n  \
            kselect lts stackloss.csv --response stack.loss\n  \
            kselect lts hbk.csv --response Y --predictors X1,X2,X3 --alpha 0.75 --json\n  \
            kselect lts Animals2.csv --response brain --predictors body --log brain,body"
    )]
    Lts(RegressionArgs),

    /// Least median of squares regression (the h-th smallest absolute residual minimized, as
    /// MASS lqs) of one column of a file on others.
    #[command(
        long_about = "Least median of squares regression of one column of a file on others.\n\n\
            LMS finds the coefficients that minimize the h-th smallest absolute residual (MASS \
            lqs's criterion), from elemental fits of random p-subsets (every p-subset when there \
            are few) refined by minimax fits. The coverage is h = floor(n / 2) + \
            floor((p + 1) / 2) by default (Rousseeuw and Leroy's choice with the highest \
            breakdown), p counting the intercept. The rows whose residual exceeds 2.5 raw \
            scales get weight 0 and are the outliers; least squares on the others gives the \
            reweighted coefficients and scale.",
        after_help = "Output: as kselect lts; the objective is the h-th smallest absolute \
            residual of the raw fit.\n\n\
            Examples:\n  \
            kselect lms stackloss.csv --response stack.loss\n  \
            kselect lms starsCYG.csv --response log.light --json"
    )]
    Lms(RegressionArgs),

    /// Exact k nearest neighbours: for each query point, the k nearest points of a base set,
    /// with their distances (or the kNN graph of the base set with --self).
    #[command(
        long_about = "Exact k nearest neighbours: for each query point, the k nearest points of \
            a base set, with their distances; with --self instead of --query, the kNN graph of \
            the base set (each point's k nearest other points, itself left out).\n\n\
            BASE and --query are 2-D NumPy .npy arrays (points x coordinates; f4 and f8 are \
            searched as they are, integer dtypes as f8) or CSV files with a header row whose \
            columns are all numbers (every column is a coordinate, read as f8); either may be \
            gzip-compressed; one of them may be - (standard input). Both need the same number \
            of coordinates, every one finite (a missing CSV value is NaN: an error naming the \
            point).\n\n\
            The search is exact and the same on every backend, bit for bit: every distance is \
            computed in f64 from the coordinates in order (rounded to f4 for f4 points), each \
            list is sorted nearest first, and equal distances are ordered by the lower base \
            index. Indices and ranks are 0-based.",
        after_help = "Output: with --out-indices and --out-distances, .npy arrays of queries x k \
            (indices as int64, distances as the points' float type: f4 when both files hold \
            f4, f8 otherwise), and a summary on standard output (one JSON object with --json). \
            Without either file, the lists themselves: CSV lines query,rank,index,distance \
            after that header (rank 0 is the nearest), or with --json one JSON object whose \
            indices and distances are lists of k per query. For inner_product the distance \
            column holds the inner product, and lists run from the largest.\n\n\
            Examples:\n  \
            kselect neighbors base.npy --query queries.npy --k 10 --out-indices I.npy \
            --out-distances D.npy\n  \
            kselect neighbors points.csv --self --k 5 --metric manhattan\n  \
            kselect neighbors embeddings.npy --query q.npy --k 3 --metric cosine --json",
        group(
            ArgGroup::new("queries")
                .required(true)
                .multiple(false)
                .args(["query", "self_graph"])
        )
    )]
    Neighbors(NeighborsArgs),

    /// k-nearest-neighbour regression or classification of one column of a file from others:
    /// the leave-one-out error of each k, or predictions for new points.
    #[command(
        long_about = "k-nearest-neighbour regression or classification of one column of a file \
            (--response) from others (--predictors), as scikit-learn's KNeighborsRegressor and \
            KNeighborsClassifier predict: the mean of the k nearest training points' responses \
            (weighted by 1 / distance with --weights distance), or with --classify their most \
            common label (weighted votes; ties to the smallest label). The neighbours are exact \
            (ties by the lower row).\n\n\
            Without --query: the leave-one-out error of each k given, each training row \
            predicted from the others (mean squared error, or with --classify the \
            misclassification rate), the best k marked (the lowest error; ties to the smallest \
            k). With --query FILE: the predictions for its rows, from one k.\n\n\
            TRAIN is a CSV file with a header row, or a 2-D .npy array whose columns are named \
            by their 0-based index; the query file likewise, with every predictor column (by \
            name; other columns are ignored). Predictors must be finite numbers. With \
            --classify the response may be text (labels ordered as strings) or numbers \
            (ordered by value); regression needs numbers.",
        after_help = "Output: without --query, a summary and a table of k and error (* marks \
            the best k); with --json an array of {\"k\": K, \"error\": E, \"metric\": \
            \"mse\" or \"misclassification\", \"best\": true or false}. With --query, the \
            predictions as CSV with a header: row (the query's 0-based data row) and \
            prediction, then with --classify a column proba_<class> per class (the weighted \
            share of the class among the neighbours); --out writes them to a file instead \
            (CSV, or a 1-D f8 .npy array of the predictions when the name ends in .npy or \
            .npy.gz) and prints a summary. --json prints one JSON object instead (see \
            --json).\n\n\
            Examples:\n  \
            kselect knn housing.csv --response price --k 1,5,10,20 --standardize\n  \
            kselect knn iris.csv --response species --classify --k 3,5,7 --json\n  \
            kselect knn iris.csv --response species --classify --k 5 --query new.csv \
            --out predicted.csv"
    )]
    Knn(KnnArgs),

    /// Compressed sensing: recover a k-sparse signal x from measurements y = A x, the matrix A
    /// read from a file or drawn from a random ensemble.
    #[command(
        long_about = "Compressed sensing: recover a k-sparse signal x (at most k nonzeros among \
            n entries) from m measurements y = A x, by iterative hard thresholding or one of its \
            relatives.\n\n\
            The operator A (m x n) is a 2-D NumPy .npy array (--matrix: f4 or f8, integer dtypes \
            read as f8, in C or Fortran order, every entry finite), or is drawn from a random \
            ensemble (--ensemble with --n, --m and --seed; a seed always gives the same \
            operator). --y holds the measurements: a 1-D .npy array of m values, or a 2-D array \
            of B rows of m values: B problems with the same operator, solved at once. Either \
            file may be gzip-compressed (.gz), and one of them may be - (standard input).\n\n\
            Every iteration keeps the k entries of largest magnitude (H_k; equal magnitudes by \
            the lower index), found by exact selection. A solver stops when |y - A x| <= tol |y| \
            (converged), or when it diverged, came back to an earlier support and residual \
            (cycling), made no progress over 16 iterations, converged too slowly after 1000, or \
            reached --max-iter.\n\n\
            The element type follows the files: f4 when every input is f4 (--y, and --matrix \
            when given), f8 otherwise (an f4 file beside an f8 one is converted to f8, exactly). \
            The solution is written in that type.",
        after_help = "Output: without --json, a short report: the operator, the measurements, \
            the algorithm, why it stopped and after how many iterations, the final residual \
            |y - A x| / |y|, the size of the support, the file written and the time; for a \
            batch, the count of each reason to stop and a line per problem (only the problems \
            that did not converge, when there are more than 20). With --json, one JSON object \
            (see --json).\n\n\
            Exit status: 0 when every problem converged; 3 when a solver stopped without \
            converging (the report is printed and --out written all the same, but the solution \
            is the algorithm's last iterate, not a converged one, and a warning on standard \
            error says so); 1 for an error (an unreadable file, shapes that do not match, NaN or \
            infinity in y or A, k > n); 2 for a usage error.\n\n\
            Examples:\n  \
            kselect recover --ensemble gaussian --n 1024 --m 256 --seed 7 --y y.npy --k 20 \
            --out x.npy\n  \
            kselect recover --matrix A.npy --y y.npy --k 10 --algorithm htp --json\n  \
            kselect recover --ensemble dct --n 16384 --m 4096 --y batch.npy --k 400 --out X.npy",
        group(
            ArgGroup::new("operator")
                .required(true)
                .multiple(false)
                .args(["matrix", "ensemble"])
        )
    )]
    Recover(RecoverArgs),

    /// Phase transitions of compressed sensing: how often each recovery algorithm recovers a
    /// k-sparse signal over a grid of delta = m / n and rho = k / m, and where it succeeds half
    /// the time.
    #[command(
        long_about = "Phase transitions of compressed sensing (Donoho & Tanner; Blanchard & \
            Tanner): how often each recovery algorithm recovers a k-sparse signal of length n \
            from m measurements, over a grid of delta = m / n (undersampling) and rho = k / m \
            (sparsity), and the curve rho*(delta) where it succeeds half the time.\n\n\
            Each cell of the grid runs --trials problems: m = round(delta n) and k = round(rho \
            m) (each at least 1), an operator drawn from --ensemble and a k-sparse signal with \
            --signal nonzeros, each from its own seed derived from --seed, the cell and the \
            trial, so that every algorithm solves the same problems, in every run. A trial \
            succeeds when the solution's largest error is below 1e-3 times the signal's largest \
            entry. The 50% point rho* of each delta comes from a logistic fit of the successes \
            against rho; it is absent where every trial of the column succeeded or every one \
            failed.\n\n\
            A LIST is comma-separated numbers in (0, 1], ranges a:b:step (a, a + step, ... up \
            to b included), or both: 0.1,0.3:0.5:0.1 is 0.1, 0.3, 0.4, 0.5. The values are \
            sorted and repeats dropped. By default delta and rho each run from 0.05 to 0.95 by \
            0.05 (0.05:0.95:0.05).\n\n\
            The trials run in parallel on every CPU thread; a run longer than a second draws \
            its progress on standard error when that is a terminal.",
        after_help = "Output: the experiment, then a table of the 50% curve: delta, and rho* \
            for each algorithm (- where that delta has no transition), and the files written. \
            --json FILE writes the whole diagram as JSON (see --json); --plot FILE draws it.\n\n\
            Exit status: 0 on success, 1 when the experiment or writing its files fails, 2 for a \
            usage error (a value of a LIST outside (0, 1] among them).\n\n\
            Examples:\n  \
            kselect phase-transition --ensemble gaussian --n 256 --algorithms niht,htp,cosamp \
            --plot phase.png\n  \
            kselect phase-transition --ensemble sparse:7 --n 512 --deltas 0.1:0.9:0.1 \
            --rhos 0.02:0.5:0.02 --trials 20 --json phase.json\n  \
            kselect phase-transition --ensemble dct --n 1024 --dtype f32 --signal sign \
            --plot dct.svg"
    )]
    PhaseTransition(PhaseTransitionArgs),
}

/// The options of `kselect topk`.
#[derive(Debug, Args)]
pub struct TopkArgs {
    /// The data file: a 1-D or 2-D NumPy .npy array (2-D in C order) of dtype f4, f8, i4, i8,
    /// u4 or u8, possibly gzip-compressed (.gz); - reads standard input.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,

    /// How many values to take from each row: 1 to the row's length.
    #[arg(
        short = 'k',
        long = "k",
        value_name = "K",
        allow_negative_numbers = true,
        value_parser = parse_values_per_row
    )]
    pub k: usize,

    /// Take the smallest values instead of the largest.
    #[arg(long)]
    pub smallest: bool,

    /// Read a 1-D array as rows of C values each (its length must be a multiple of C).
    #[arg(
        long,
        value_name = "C",
        allow_negative_numbers = true,
        value_parser = parse_cols
    )]
    pub cols: Option<usize>,

    /// Sort each row's values (descending for the largest, ascending for the smallest; ties by
    /// index) instead of listing them in index order.
    #[arg(long)]
    pub sorted: bool,

    /// What to do with NaN values: error (refuse the input; the default), omit (never take
    /// them: every row needs k numbers), last (order them after +inf: taken first by the
    /// largest, last by --smallest).
    #[arg(long, value_name = "POLICY", default_value = "error", value_parser = parse_named::<NanPolicy>)]
    pub nan: NanPolicy,

    /// Where it runs: auto (CUDA device 0 when a GPU and its driver are present, the CPU
    /// otherwise), cpu, or cuda (an error when there is no usable GPU).
    #[arg(long, value_enum, value_name = "BACKEND", default_value_t = Backend::Auto)]
    pub backend: Backend,

    /// Print one JSON object instead of a table (see the output description below).
    #[arg(long)]
    pub json: bool,
}

/// The options of `kselect threshold`.
#[derive(Debug, Args)]
pub struct ThresholdArgs {
    /// The data file: a 1-D NumPy .npy array of dtype f4, f8, i4, i8, u4 or u8, possibly
    /// gzip-compressed (.gz); - reads standard input.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,

    /// How many entries to keep: 1 to the number of values.
    #[arg(
        short = 'k',
        long = "k",
        value_name = "K",
        allow_negative_numbers = true,
        value_parser = parse_entries_kept
    )]
    pub k: usize,

    /// Where to write the thresholded array (.npy, gzip-compressed when the name ends in .gz):
    /// written to a temporary file beside it, renamed over it once complete. Not the input
    /// file.
    #[arg(short = 'o', long, value_name = "OUT.npy")]
    pub out: PathBuf,

    /// What to do with NaN values: error (refuse the input; the default), omit (never keep
    /// them: they are zeroed, and the array needs k numbers), last (NaN has the largest
    /// magnitude).
    #[arg(long, value_name = "POLICY", default_value = "error", value_parser = parse_named::<NanPolicy>)]
    pub nan: NanPolicy,

    /// Where it runs: auto (CUDA device 0 when a GPU and its driver are present, the CPU
    /// otherwise), cpu, or cuda (an error when there is no usable GPU).
    #[arg(long, value_enum, value_name = "BACKEND", default_value_t = Backend::Auto)]
    pub backend: Backend,

    /// Print one JSON object instead of a summary (see the output description below).
    #[arg(long)]
    pub json: bool,
}

/// The options of `kselect quantiles`.
#[derive(Debug, Args)]
pub struct QuantilesArgs {
    /// The data file: a 1-D NumPy .npy array of dtype f4, f8, i4, i8, u4 or u8, or otherwise a
    /// CSV file with a header row; either may be gzip-compressed (.gz); - reads standard input.
    /// Read as by `kselect select` (see its --help).
    #[arg(value_name = "FILE")]
    pub file: PathBuf,

    /// The probabilities of the quantiles, a comma-separated list (or the option repeated) of
    /// at least two numbers in [0, 1], strictly increasing.
    #[arg(
        short = 'p',
        long,
        value_name = "P,P,...",
        value_delimiter = ',',
        allow_hyphen_values = true,
        value_parser = parse_probability
    )]
    pub probs: Vec<f64>,

    /// M evenly spaced probabilities from 0 to 1 inclusive: i / (M - 1) for i = 0 .. M-1, so
    /// the first quantile is the minimum and the last the maximum. --count 11 gives the
    /// deciles, --count 101 the percentiles. M is at least 2.
    #[arg(
        short = 'm',
        long,
        value_name = "M",
        allow_negative_numbers = true,
        value_parser = parse_count
    )]
    pub count: Option<usize>,

    /// The quantile definition, by numpy's names: inverted_cdf, averaged_inverted_cdf,
    /// closest_observation, interpolated_inverted_cdf, hazen, weibull, linear (numpy's
    /// default), median_unbiased, normal_unbiased (Hyndman-Fan types 1 to 9), lower, higher,
    /// midpoint, nearest.
    #[arg(long, value_name = "NAME", default_value = "linear", value_parser = parse_named::<QuantileMethod>)]
    pub method: QuantileMethod,

    /// The CSV column to read, by its name in the header row. Needed when the CSV file has more
    /// than one column; not allowed with a .npy file.
    #[arg(short = 'c', long, value_name = "NAME")]
    pub column: Option<String>,

    /// Where the selection runs: auto (CUDA device 0 when a GPU and its driver are present,
    /// the CPU otherwise), cpu (all CPU threads), or cuda (CUDA device 0; an error when there is
    /// no usable GPU). The estimate, its distance to the data and the plots are computed on
    /// the CPU.
    #[arg(long, value_enum, value_name = "BACKEND", default_value_t = Backend::Auto)]
    pub backend: Backend,

    #[arg(
        long,
        value_name = "NAME",
        default_value = "auto",
        value_parser = parse_named::<Algorithm>,
        help = algorithm_help("the backend's fastest for the input and the number of quantiles")
    )]
    pub algorithm: Algorithm,

    /// What to do with NaN values (missing CSV values count as NaN): error (refuse the input;
    /// the default), omit (leave them out: the quantiles, the estimate and the histograms
    /// describe the other values), last (order them after +inf, as numpy.sort does: they
    /// count among the values, so quantiles that fall on them are NaN, which no distribution
    /// of numbers has: an error).
    #[arg(long, value_name = "POLICY", default_value = "error", value_parser = parse_named::<NanPolicy>)]
    pub nan: NanPolicy,

    /// Draw the estimated PDF over a normalized histogram of the values into this file, PNG or
    /// SVG by its extension (.png or .svg): written to a temporary file beside it, renamed over
    /// it once complete. Not the input file.
    #[arg(long, value_name = "PDF.png|PDF.svg", value_parser = parse_plot_path)]
    pub plot: Option<PathBuf>,

    /// Draw the estimated CDF over the cumulative histogram of the values into this file, PNG
    /// or SVG by its extension (.png or .svg), as --plot is written. Not the input file nor
    /// the --plot file.
    #[arg(long, value_name = "CDF.png|CDF.svg", value_parser = parse_plot_path)]
    pub cdf_plot: Option<PathBuf>,

    /// The x range of the plots, LO,HI (write --plot-range=-40,160 when LO is negative), with
    /// --bins equal bins. Without it the plots span the smallest to the largest quantile, and
    /// for data of integers the bins are aligned to the integers (at most --bins of them).
    #[arg(
        long,
        value_name = "LO,HI",
        allow_hyphen_values = true,
        value_parser = parse_range
    )]
    pub plot_range: Option<(f64, f64)>,

    /// The number of histogram bins in the plots, 1 to 100000.
    #[arg(
        long,
        value_name = "N",
        default_value_t = 100,
        allow_negative_numbers = true,
        value_parser = parse_bins
    )]
    pub bins: usize,

    /// The bandwidth H of the smoothed estimate in the plots: one half-width, in units of the
    /// data, for the biweight kernels that spread each piece of the estimate. Default: each
    /// piece's own, 1.5 times the local spacing of the quantiles (narrow where the data are
    /// dense, wide in the tails).
    #[arg(
        long,
        value_name = "H",
        allow_hyphen_values = true,
        value_parser = parse_bandwidth
    )]
    pub bandwidth: Option<f64>,

    /// Print one JSON object instead of a table, with the keys: file, format, column (CSV
    /// only), dtype, n (the number of values in the file, NaNs included), nan_count,
    /// nan_policy, probs, values (the quantiles), method, backend ("cpu" or "cuda"), device,
    /// algorithm (the one that ran), ks_distance (between the estimate and the empirical CDF
    /// of the values), plot and cdf_plot (the files written, with --plot and --cdf-plot), and
    /// seconds (wall time of the selection alone, on cuda including the copy to the GPU).
    #[arg(long)]
    pub json: bool,

    /// Run as one rank of an MPI job: `mpirun -np Q kselect quantiles FILE --distributed`.
    /// Each rank reads its own contiguous part of FILE (from its offset when FILE is an
    /// uncompressed .npy array; otherwise each rank reads FILE and keeps its part), or its own
    /// file with --shards. The quantiles are exactly those of all the values together; rank 0
    /// prints them, with the messages, values and bytes the ranks sent. Needs a kselect built
    /// with the `mpi` feature. The local passes run on each rank's GPU (by --backend: the
    /// GPU of the rank's number among the ranks of its host, GPUs shared when the ranks
    /// outnumber them) or on its CPU; not with --plot or --cdf-plot, which need every value
    /// in one place. With --json, rank 0 prints the keys file, format, dtype, ranks, n (values
    /// counted, NaNs left out under --nan omit), nan_policy, probs, values, method, algorithm,
    /// backend ("cpu", "cuda", or "cuda+cpu" when the ranks differ), gpu_ranks, transport,
    /// buckets, passes, traffic (the messages, values and bytes of all ranks, by phase),
    /// traffic_per_rank and seconds.
    #[arg(long, conflicts_with_all = ["plot", "cdf_plot", "plot_range", "bandwidth"])]
    pub distributed: bool,

    /// With --distributed: FILE names each rank's own file, with `{rank}` replaced by the
    /// rank's number (e.g. 'data-{rank}.npy'; .npy or CSV, compressed or not).
    #[arg(long, requires = "distributed")]
    pub shards: bool,

    /// With --distributed: the distributed algorithm, sort-choose (local sorts merged at rank
    /// 0), distributed-bms (one bucket pass, then the candidates gathered at rank 0), dibms
    /// (bucket passes where the data lie; only counts, bucket bounds and extremes move), or
    /// auto (distributed-bms or dibms, whichever is expected to send less; dibms on one rank).
    #[arg(
        long,
        value_name = "NAME",
        default_value = "auto",
        requires = "distributed",
        value_parser = parse_named::<DistributedAlgorithm>
    )]
    pub distributed_algorithm: DistributedAlgorithm,

    /// With --distributed: how the ranks exchange messages, mpi (the default; ranks may share
    /// a GPU or have none) or nccl (each rank on a GPU of its own, NCCL set up through MPI;
    /// not with --backend cpu).
    #[arg(
        long,
        value_enum,
        value_name = "NAME",
        default_value_t = Transport::Mpi,
        requires = "distributed"
    )]
    pub transport: Transport,

    /// With --distributed: buckets a pass, 4 or more.
    #[arg(long, value_name = "B", default_value_t = 8192, requires = "distributed", value_parser = parse_buckets)]
    pub buckets: usize,
}

impl QuantilesArgs {
    /// The files to write, each with its option: the plots asked for.
    pub fn outputs(&self) -> Vec<(&'static str, &std::path::Path)> {
        [("--plot", &self.plot), ("--cdf-plot", &self.cdf_plot)]
            .into_iter()
            .filter_map(|(option, path)| Some((option, path.as_deref()?)))
            .collect()
    }

    /// The probabilities asked for: --probs as given, or --count's evenly spaced ones.
    pub fn probabilities(&self) -> Vec<f64> {
        match self.count {
            Some(m) => (0..m)
                .map(|i| {
                    if i + 1 == m {
                        1.0
                    } else {
                        i as f64 / (m - 1) as f64
                    }
                })
                .collect(),
            None => self.probs.clone(),
        }
    }

    /// Why the probabilities cannot describe a distribution, if they cannot.
    pub fn probabilities_problem(&self) -> Option<String> {
        let probs = self.probabilities();
        if probs.len() < 2 {
            return Some(format!(
                "--probs needs at least two probabilities to describe a distribution, got {} \
                 (`kselect select --quantile` computes single quantiles)",
                probs.len()
            ));
        }
        probs.windows(2).find(|w| w[1] <= w[0]).map(|w| {
            format!(
                "--probs must be strictly increasing: {} follows {}",
                w[1], w[0]
            )
        })
    }
}

/// The options of `kselect select`.
#[derive(Debug, Args)]
pub struct SelectArgs {
    /// The data file: a 1-D NumPy .npy array of dtype f4, f8, i4, i8, u4 or u8 (recognised by
    /// the .npy extension or by its content), or otherwise a CSV file with a header row. Either
    /// may be gzip-compressed (.gz, or recognised by its content); - reads standard input (a
    /// pipe). In CSV files, empty fields, NA and NaN are missing values, read as NaN; a column
    /// of integers is read exactly as i64 (u64 above i64::MAX), unless it has missing values,
    /// non-integers or -0 (read as -0.0, as numpy reads it), when it is read as f64.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,

    /// A 0-based rank to select, in ascending order (0 = the minimum). Repeat the option or
    /// give a comma-separated list for several ranks (any order, repeats allowed); values are
    /// printed in the order given.
    #[arg(
        short = 'k',
        long = "k",
        value_name = "K",
        value_delimiter = ',',
        allow_hyphen_values = true,
        value_parser = parse_rank
    )]
    pub k: Vec<usize>,

    /// Count --k from the largest value instead: --k 0 --largest is the maximum, --k 1 the
    /// second largest. The output shows each K and the ascending rank it selects.
    #[arg(long)]
    pub largest: bool,

    /// Also compute the median as numpy.median does: the middle value of an odd number of
    /// values, the mean of the two middle values of an even number, computed in the data's
    /// type as numpy computes it (float32 for f4 data, float64 otherwise) and printed as f64.
    /// --method does not apply. NaN: --nan omit gives numpy.nanmedian, --nan last gives NaN
    /// when any value is NaN (as numpy.median). Infinities count as values: [x, inf] gives inf,
    /// [-inf, inf] nan. Where the two middle values are finite but their sum overflows, the
    /// result is their finite mean (numpy's is inf). --k (N-1)/2 selects the lower median, a
    /// value of the data.
    #[arg(long)]
    pub median: bool,

    /// A quantile probability Q in [0, 1], computed by --method (as numpy.quantile does).
    /// Repeat the option or give a comma-separated list for several. Quantile values are
    /// computed and printed as f64.
    #[arg(
        short = 'q',
        long,
        value_name = "Q",
        value_delimiter = ',',
        allow_hyphen_values = true,
        value_parser = parse_probability
    )]
    pub quantile: Vec<f64>,

    /// The quantile definition for --quantile (not --median, which is numpy.median), by numpy's
    /// names: inverted_cdf, averaged_inverted_cdf, closest_observation,
    /// interpolated_inverted_cdf, hazen, weibull, linear (numpy's default), median_unbiased,
    /// normal_unbiased (Hyndman-Fan types 1 to 9), lower, higher, midpoint, nearest.
    #[arg(long, value_name = "NAME", default_value = "linear", value_parser = parse_named::<QuantileMethod>)]
    pub method: QuantileMethod,

    /// The CSV column to read, by its name in the header row. Needed when the CSV file has more
    /// than one column; not allowed with a .npy file.
    #[arg(short = 'c', long, value_name = "NAME")]
    pub column: Option<String>,

    /// Where the selection runs: auto (CUDA device 0 when a GPU and its driver are present,
    /// the CPU otherwise), cpu (all CPU threads), or cuda (CUDA device 0; an error when there is
    /// no usable GPU).
    #[arg(long, value_enum, value_name = "BACKEND", default_value_t = Backend::Auto)]
    pub backend: Backend,

    #[arg(
        long,
        value_name = "NAME",
        default_value = "auto",
        value_parser = parse_named::<Algorithm>,
        help = algorithm_help("the backend's fastest for the input and the number of ranks")
    )]
    pub algorithm: Algorithm,

    /// What to do with NaN values (missing CSV values count as NaN): error (refuse the input;
    /// the default), omit (leave them out: ranks and quantiles refer to the other values, as
    /// numpy's nan* functions do), last (order them after +inf, as numpy.sort does: ranks count
    /// them, and the largest ranks are NaN).
    #[arg(long, value_name = "POLICY", default_value = "error", value_parser = parse_named::<NanPolicy>)]
    pub nan: NanPolicy,

    /// Print one JSON object instead of a table, with the keys: file, format, column (CSV
    /// only), dtype, n (the number of values in the file, NaNs included), nan_count,
    /// nan_policy, largest, k (as given), ranks (the ascending ranks selected: equal to k
    /// without --largest), values, method (the --method given, with --quantile or --median; it
    /// applies to the quantiles only), quantiles ({"q": [...], "values": [...]}, with
    /// --quantile), median (numpy.median, with --median), backend ("cpu" or "cuda"), device,
    /// algorithm (the one that ran: of the ranks, else of the quantiles, else of the median),
    /// seconds (wall time of the selection alone, on cuda including the copy to the GPU; not
    /// of reading the file).
    #[arg(long)]
    pub json: bool,
}

/// The options of `kselect lts` and `kselect lms`.
#[derive(Debug, Args)]
pub struct RegressionArgs {
    /// The data file: a CSV file with a header row naming its columns, or a 2-D NumPy .npy
    /// array (rows x columns, any numeric dtype) whose columns are named by their 0-based
    /// index (0, 1, ...); either may be gzip-compressed (.gz); - reads standard input. Empty
    /// fields, NA and NaN are missing values, which a fit refuses in the columns it uses.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,

    /// The column to explain, by its name in the header row.
    #[arg(short = 'r', long, value_name = "COL")]
    pub response: String,

    /// The predictors, a comma-separated list of column names (or the option repeated).
    /// Default: every column of numbers but the response, in the file's order (columns of
    /// text are left out).
    #[arg(short = 'x', long, value_name = "A,B,...", value_delimiter = ',')]
    pub predictors: Vec<String>,

    /// Take the natural logarithm of these columns (response or predictors) before the fit,
    /// a comma-separated list. Every value of them must be positive.
    #[arg(long, value_name = "COL,...", value_delimiter = ',')]
    pub log: Vec<String>,

    /// Fit without an intercept (by default the first coefficient is an intercept).
    #[arg(long)]
    pub no_intercept: bool,

    /// The coverage as a fraction, in [0.5, 1]: h = floor(2 n2 - n + 2 (n - n2) alpha) with
    /// n2 = floor((n + p + 1) / 2) (robustbase's h.alpha.n; alpha = 0.5 gives n2, alpha = 1
    /// gives n). For lms the same rule gives h. Not with --h.
    #[arg(
        long,
        value_name = "A",
        allow_negative_numbers = true,
        value_parser = parse_alpha,
        conflicts_with = "h"
    )]
    pub alpha: Option<f64>,

    /// The coverage: a number of rows, or for lms a rule of MASS lqs. lts takes
    /// floor((n + p + 1) / 2) to n rows; lms takes p + 1 to n rows (default
    /// floor(n / 2) + floor((p + 1) / 2), the highest breakdown point), `lms` for
    /// floor((n + 1) / 2) (lqs(method = "lms"), the median absolute residual) or `lqs` for
    /// floor((n + p + 1) / 2) (lqs(method = "lqs")'s default). LMS with h rows breaks down
    /// at min(n - h + 1, h - p + 1) / n of the rows. Not with --alpha.
    #[arg(
        long = "h",
        value_name = "H",
        allow_negative_numbers = true,
        value_parser = parse_h
    )]
    pub h: Option<HArg>,

    /// The number of random starting p-subsets, at least 1. Default: 500 for lts (as
    /// robustbase), min(500 p, 3000) for lms (as MASS lqs). Every p-subset is a start instead
    /// when there are at most max(nsamp, 5000) of them.
    #[arg(
        long,
        value_name = "N",
        allow_negative_numbers = true,
        value_parser = parse_nsamp
    )]
    pub nsamp: Option<usize>,

    /// The seed of the random starts: the same seed gives the same fit, bit for bit, on any
    /// number of threads. Default: 42.
    #[arg(
        long,
        value_name = "S",
        allow_negative_numbers = true,
        value_parser = parse_seed
    )]
    pub seed: Option<u64>,

    /// Where the fit runs: auto (the default: CUDA device 0 when a GPU and its driver are
    /// present, the CPU otherwise), cpu (all CPU threads), or cuda (CUDA device 0: an error
    /// when there is no usable GPU).
    #[arg(
        long,
        value_enum,
        value_name = "BACKEND",
        default_value_t = Backend::Auto,
        hide_possible_values = true
    )]
    pub backend: Backend,

    /// Print one JSON object instead of a summary and a table, with the keys: file, method
    /// ("LTS" or "LMS"), response (log(COL) when logged), terms (the coefficients' names, "(Intercept)" first when
    /// there is one, then the predictors), log (the columns logged), n, p (coefficients,
    /// counting the intercept), h, alpha (lts), coefficients and raw_coefficients (arrays
    /// in the order of terms), objective (lts: the sum of the h smallest squared residuals of
    /// the raw fit; lms: the h-th smallest absolute residual), raw_scale, scale, outliers
    /// (0-based data rows with weight 0), weights (0 or 1 per row), starts, exhaustive,
    /// exact_fit, seed, backend ("cpu" or "cuda") and seconds (wall time of the fit alone,
    /// not of reading the file).
    #[arg(long)]
    pub json: bool,
}

/// The options of `kselect neighbors`.
#[derive(Debug, Args)]
pub struct NeighborsArgs {
    /// The base points: a 2-D .npy array (points x coordinates) or a CSV file of numeric
    /// columns, possibly gzip-compressed (.gz); - reads standard input.
    #[arg(value_name = "BASE")]
    pub base: PathBuf,

    /// The query points, a file as BASE (with as many coordinates). Not with --self.
    #[arg(long, value_name = "Q")]
    pub query: Option<PathBuf>,

    /// Search the base points themselves: each point's k nearest other points (the kNN graph;
    /// k is below the number of points). Not with --query.
    #[arg(long = "self")]
    pub self_graph: bool,

    /// The number of neighbours of each query: 1 to the number of base points (to one fewer
    /// with --self).
    #[arg(
        short = 'k',
        long = "k",
        value_name = "K",
        allow_negative_numbers = true,
        value_parser = parse_neighbours
    )]
    pub k: usize,

    /// Write the indices of the neighbours (0-based rows of BASE) to this .npy file: int64,
    /// queries x k, nearest first (gzip-compressed when the name ends in .gz). Written to a
    /// temporary file beside it, renamed over it once complete. Not an input file.
    #[arg(long, value_name = "I.npy")]
    pub out_indices: Option<PathBuf>,

    /// Write the distances of the neighbours to this .npy file: queries x k, of the points'
    /// float type, as --out-indices is written. Not an input file nor the --out-indices file.
    #[arg(long, value_name = "D.npy")]
    pub out_distances: Option<PathBuf>,

    /// The distance: euclidean (the default), sqeuclidean, manhattan, cosine (1 - cosine
    /// similarity; 1 for the zero vector), or inner_product (a similarity: the neighbours are
    /// the largest inner products).
    #[arg(long, value_name = "NAME", default_value = "euclidean", value_parser = parse_named::<Metric>)]
    pub metric: Metric,

    /// Where the search runs: auto (CUDA device 0 when a GPU and its driver are present, the
    /// CPU otherwise), cpu (all CPU threads), or cuda (CUDA device 0; an error when there is
    /// no usable GPU). Every backend finds the same lists.
    #[arg(long, value_enum, value_name = "BACKEND", default_value_t = Backend::Auto)]
    pub backend: Backend,

    /// Print one JSON object instead of text, with the keys: base, query (null with --self),
    /// self, points (base points), queries, dim, k, metric, dtype (of the distances: f32 or
    /// f64), out_indices and out_distances (the files written, when given), indices and
    /// distances (lists of k per query, only when no file is written), backend, device and
    /// seconds (wall time of the search alone).
    #[arg(long)]
    pub json: bool,
}

impl NeighborsArgs {
    /// The files to write, each with its option.
    pub fn outputs(&self) -> Vec<(&'static str, &std::path::Path)> {
        [
            ("--out-indices", &self.out_indices),
            ("--out-distances", &self.out_distances),
        ]
        .into_iter()
        .filter_map(|(option, path)| Some((option, path.as_deref()?)))
        .collect()
    }
}

/// The options of `kselect knn`.
#[derive(Debug, Args)]
pub struct KnnArgs {
    /// The training data: a CSV file with a header row naming its columns, or a 2-D NumPy .npy
    /// array whose columns are named by their 0-based index (0, 1, ...); either may be
    /// gzip-compressed (.gz); - reads standard input.
    #[arg(value_name = "TRAIN")]
    pub file: PathBuf,

    /// The column to predict, by its name in the header row.
    #[arg(short = 'r', long, value_name = "COL")]
    pub response: String,

    /// The predictors, a comma-separated list of column names (or the option repeated).
    /// Default: every column of numbers but the response, in the file's order (columns of
    /// text are left out).
    #[arg(short = 'x', long, value_name = "A,B,...", value_delimiter = ',')]
    pub predictors: Vec<String>,

    /// Predict the rows of this file (CSV or .npy, with the predictor columns by name; - reads
    /// standard input) instead of scoring the training rows; needs exactly one --k.
    #[arg(short = 'q', long, value_name = "FILE")]
    pub query: Option<PathBuf>,

    /// The numbers of neighbours, a comma-separated list (or the option repeated): each 1 to
    /// the number of training rows less one (without --query) or to the number of training
    /// rows (with --query, which takes one k).
    #[arg(
        short = 'k',
        long = "k",
        value_name = "K,...",
        value_delimiter = ',',
        allow_hyphen_values = true,
        required = true,
        value_parser = parse_neighbours
    )]
    pub k: Vec<usize>,

    /// Classification: predict the most common label among the neighbours (the response may
    /// be text) instead of the mean of their responses.
    #[arg(long)]
    pub classify: bool,

    /// How the neighbours count: uniform (the default: all the same) or distance (1 /
    /// distance; neighbours at distance 0 share all the weight). Not with inner_product.
    #[arg(long, value_name = "NAME", default_value = "uniform", value_parser = parse_named::<Weights>)]
    pub weights: Weights,

    /// The distance: euclidean (the default), sqeuclidean, manhattan, cosine, or
    /// inner_product (a similarity: the neighbours are the largest inner products).
    #[arg(long, value_name = "NAME", default_value = "euclidean", value_parser = parse_named::<Metric>)]
    pub metric: Metric,

    /// Z-score each predictor by the training rows' mean and population standard deviation
    /// (as scikit-learn's StandardScaler; a constant column is only centred), the query rows
    /// by the same numbers, so that predictors of different scales count alike.
    #[arg(long)]
    pub standardize: bool,

    /// Where the neighbours are searched: auto (the default: CUDA device 0 when a GPU and its
    /// driver are present, the CPU otherwise), cpu (all CPU threads), or cuda (CUDA device 0:
    /// an error when there is no usable GPU). Every backend predicts the same.
    #[arg(
        long,
        value_enum,
        value_name = "BACKEND",
        default_value_t = Backend::Auto,
        hide_possible_values = true
    )]
    pub backend: Backend,

    /// Write the predictions of --query to this file instead of standard output: CSV, or a
    /// 1-D .npy array (f8; numeric labels only) when the name ends in .npy or .npy.gz. Written
    /// to a temporary file beside it, renamed over it once complete. Not an input file.
    #[arg(short = 'o', long, value_name = "FILE", requires = "query")]
    pub out: Option<PathBuf>,

    /// Print JSON instead of text. Without --query, an array of {k, error, metric ("mse" or
    /// "misclassification"), best}. With --query, one object with the keys: file, query,
    /// response, predictors, task ("regression" or "classification"), k, weights, metric,
    /// standardize, rows (query rows), classes (with --classify), out (the file written, with
    /// --out), predictions and with --classify proba (a list per row, in the order of classes)
    /// when there is no --out; backend, device and seconds.
    #[arg(long)]
    pub json: bool,
}

/// The options of `kselect recover`.
#[derive(Debug, Args)]
pub struct RecoverArgs {
    /// The measurement matrix A: a 2-D .npy array of m rows and n columns (f4 or f8; integer
    /// dtypes read as f8; C or Fortran order), possibly gzip-compressed (.gz); - reads standard
    /// input. A 3-D array of B matrices (B x m x n) gives each of the B problems of --y its own.
    /// Not with --ensemble.
    #[arg(long, value_name = "A.npy")]
    pub matrix: Option<PathBuf>,

    /// Draw A from a random ensemble: gaussian (entries N(0, 1/m)), sign (entries +-1/sqrt(m)),
    /// dct (m rows of the orthonormal DCT, applied by FFT), sparse or sparse:d (d entries
    /// 1/sqrt(d) in each column; d = 7 by default). Needs --n and --m. Not with --matrix.
    #[arg(
        long,
        value_name = "NAME",
        value_parser = parse_named::<Ensemble>,
        requires = "n",
        requires = "m"
    )]
    pub ensemble: Option<Ensemble>,

    /// The length n of the signal (the columns of A), with --ensemble.
    #[arg(
        long,
        value_name = "N",
        allow_negative_numbers = true,
        value_parser = parse_size,
        conflicts_with = "matrix"
    )]
    pub n: Option<usize>,

    /// The number m of measurements (the rows of A), with --ensemble: the length of each
    /// problem's measurements in --y.
    #[arg(
        long,
        value_name = "M",
        allow_negative_numbers = true,
        value_parser = parse_size,
        conflicts_with = "matrix"
    )]
    pub m: Option<usize>,

    /// The seed A is drawn from, with --ensemble (1 by default): the same seed, the same
    /// operator, on every machine. With --operators each, problem p's from seed S + p.
    #[arg(
        long,
        value_name = "S",
        allow_negative_numbers = true,
        value_parser = parse_seed,
        conflicts_with = "matrix"
    )]
    pub seed: Option<u64>,

    /// With --ensemble and B problems: shared (the default: one operator for all) or each (an
    /// operator drawn for each problem, problem p's from seed S + p). A 3-D --matrix is one
    /// operator each.
    #[arg(long, value_enum, value_name = "WHICH", hide_possible_values = true)]
    pub operators: Option<Operators>,

    /// The measurements: a 1-D .npy array of m values (one problem), or a 2-D array of B rows
    /// of m values (B problems with the same A, or each with its own: --operators); f4 or f8
    /// (integer dtypes read as f8), possibly gzip-compressed (.gz); - reads standard input.
    /// Every value finite.
    #[arg(long = "y", value_name = "Y.npy")]
    pub y: PathBuf,

    /// The sparsity: the most nonzeros of the signal, 1 to n.
    #[arg(
        short = 'k',
        long = "k",
        value_name = "K",
        allow_negative_numbers = true,
        value_parser = parse_sparsity
    )]
    pub k: usize,

    /// The algorithm: niht (the default: normalised IHT, the step that minimises the residual
    /// along the gradient), iht (a fixed step 1 / |A|^2), htp (hard thresholding pursuit: least
    /// squares on NIHT's support), cosamp (compressive sampling matching pursuit), sp
    /// (subspace pursuit) or cgiht (conjugate-gradient IHT, restarted when the support
    /// changes).
    #[arg(
        long,
        value_name = "NAME",
        default_value = "niht",
        value_parser = parse_named::<RecoveryAlgorithm>
    )]
    pub algorithm: RecoveryAlgorithm,

    /// Converged when |y - A x| <= T |y|: positive. By default 1e-5 for f4 data and 1e-10 for
    /// f8.
    #[arg(long, value_name = "T", allow_negative_numbers = true, value_parser = parse_tolerance)]
    pub tol: Option<f64>,

    /// The most iterations of each problem: 1 or more (5000 by default).
    #[arg(
        long = "max-iter",
        value_name = "I",
        allow_negative_numbers = true,
        value_parser = parse_iterations
    )]
    pub max_iter: Option<usize>,

    /// Where it runs: cuda (GPU 0: the operator copied there, a batch solved at once), cpu,
    /// or auto (the default: cuda when a GPU is usable, else the CPU).
    #[arg(
        long,
        value_enum,
        value_name = "BACKEND",
        default_value_t = Backend::Auto,
        hide_possible_values = true
    )]
    pub backend: Backend,

    /// Write the solution to this .npy file (gzip-compressed when the name ends in .gz): n
    /// values, or B x n for B problems, in the element type of the inputs. Written even when a
    /// solver did not converge (see the exit status), to a temporary file beside it renamed
    /// over it once complete. Not an input file.
    #[arg(short = 'o', long, value_name = "X.npy")]
    pub out: Option<PathBuf>,

    /// Print one JSON object instead of the report, with the keys: y, matrix (null with
    /// --ensemble), ensemble and seed (null with --matrix), operators ("shared" or "each": one
    /// operator a problem, problem p's from seed + p), m, n, k, dtype ("f32" or "f64"),
    /// algorithm, tolerance, max_iterations, out (the file written, when given); for one
    /// problem (a 1-D --y): stop (converged, diverged, cycling, no progress, slow
    /// convergence, iteration limit), converged (true or false), iterations, residual
    /// (|y - A x|), relative_residual (over |y|), residuals (|y - A x| at the start and after
    /// each iteration), support (the indices kept, ascending) and values (the solution's
    /// entries there); for a batch (a 2-D --y): problems (B), converged (whether every one
    /// did), stops (how many stopped for each reason) and results (a list of B objects with
    /// the keys of one problem); then backend, device and seconds (wall time of the solves
    /// alone).
    #[arg(long)]
    pub json: bool,
}

impl RecoverArgs {
    /// The files read, each with its option.
    pub fn inputs(&self) -> Vec<(&'static str, &std::path::Path)> {
        let matrix = self.matrix.as_deref().map(|m| ("--matrix", m));
        matrix
            .into_iter()
            .chain([("--y", self.y.as_path())])
            .collect()
    }
}

/// The options of `kselect phase-transition`.
#[derive(Debug, Args)]
pub struct PhaseTransitionArgs {
    /// The operators: gaussian, sign, dct, sparse or sparse:d (d nonzeros in each column; 7 by
    /// default), as for kselect recover --ensemble.
    #[arg(long, value_name = "NAME", value_parser = parse_named::<Ensemble>)]
    pub ensemble: Ensemble,

    /// The length n of the signals.
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = parse_size)]
    pub n: usize,

    /// The values of delta = m / n: a LIST of numbers in (0, 1] and ranges a:b:step (see
    /// above).
    #[arg(
        long,
        value_name = "LIST",
        allow_hyphen_values = true,
        default_value = "0.05:0.95:0.05",
        value_parser = parse_deltas
    )]
    pub deltas: Grid,

    /// The values of rho = k / m: a LIST of numbers in (0, 1] and ranges a:b:step.
    #[arg(
        long,
        value_name = "LIST",
        allow_hyphen_values = true,
        default_value = "0.05:0.95:0.05",
        value_parser = parse_rhos
    )]
    pub rhos: Grid,

    /// The problems of each cell: 1 or more (10 by default).
    #[arg(long, value_name = "T", allow_negative_numbers = true, value_parser = parse_trials)]
    pub trials: Option<usize>,

    /// The algorithms, a comma-separated list (or the option repeated) of niht, iht, htp,
    /// cosamp, sp and cgiht, each named once (niht by default). They solve the same problems.
    #[arg(
        long,
        value_name = "LIST",
        value_delimiter = ',',
        value_parser = parse_named::<RecoveryAlgorithm>
    )]
    pub algorithms: Vec<RecoveryAlgorithm>,

    /// The signals' nonzeros: gaussian (standard normal values; the default) or sign (+1 or
    /// -1, the hardest case at a given k).
    #[arg(long, value_name = "KIND", value_parser = parse_named::<SignalKind>)]
    pub signal: Option<SignalKind>,

    /// The seed every problem's seed is derived from (1 by default).
    #[arg(long, value_name = "S", allow_negative_numbers = true, value_parser = parse_seed)]
    pub seed: Option<u64>,

    /// The element type of the operators, signals and solvers.
    #[arg(long, value_enum, value_name = "DTYPE", default_value_t = Dtype::F64)]
    pub dtype: Dtype,

    /// The most iterations of each solve: 1 or more (each algorithm's default, 5000, when not
    /// given).
    #[arg(
        long = "max-iter",
        value_name = "I",
        allow_negative_numbers = true,
        value_parser = parse_iterations
    )]
    pub max_iter: Option<usize>,

    /// Draw the diagram into this file (.png or .svg): the first algorithm's fraction of
    /// successes in each cell, shaded, and every algorithm's 50% curve. Written to a temporary
    /// file beside it, renamed over it once complete.
    #[arg(long, value_name = "FILE.png|.svg", value_parser = parse_plot_path)]
    pub plot: Option<PathBuf>,

    /// Write the diagram as JSON to this file (- prints it on standard output instead of the
    /// table): {"ensemble", "n", "signal", "dtype", "trials", "success", "seed", "deltas",
    /// "rhos", "algorithms": [{"algorithm", "cells": [{"delta", "rho", "m", "k", "trials",
    /// "successes", "mean_iterations", "seconds"}, ...] (every rho of the first delta, then
    /// the next), "curve": [{"delta", "rho"}, ...] (the 50% points)}, ...]}. Written as --plot
    /// is. Not the --plot file.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,

    /// Where it runs: cpu, or auto (the default), which is the CPU for the experiment (the
    /// trials solved in parallel), or cuda (GPU 0: each cell's trials solved together, their
    /// operators a stack; the same problems, the GPU's rounding).
    #[arg(
        long,
        value_enum,
        value_name = "BACKEND",
        default_value_t = Backend::Auto,
        hide_possible_values = true
    )]
    pub backend: Backend,
}

impl PhaseTransitionArgs {
    /// The files to write, each with its option (standard output left out).
    pub fn outputs(&self) -> Vec<(&'static str, &std::path::Path)> {
        [("--plot", &self.plot), ("--json", &self.json)]
            .into_iter()
            .filter_map(|(option, path)| Some((option, path.as_deref()?)))
            .filter(|(_, path)| *path != std::path::Path::new("-"))
            .collect()
    }
}

/// The values of a grid axis (`--deltas`, `--rhos`): ascending, each once, in (0, 1].
#[derive(Clone, Debug, PartialEq)]
pub struct Grid(pub Vec<f64>);

/// `--dtype`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Dtype {
    /// 32-bit floats.
    F32,
    /// 64-bit floats.
    F64,
}

/// `--operators`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Operators {
    /// One operator for every problem.
    Shared,
    /// An operator for each problem.
    Each,
}

/// `--transport`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Transport {
    /// MPI messages between the ranks.
    Mpi,
    /// NCCL between the ranks' GPUs.
    Nccl,
}

/// `--backend`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Backend {
    /// CUDA device 0 when available, the CPU otherwise.
    Auto,
    /// The CPU.
    Cpu,
    /// CUDA device 0.
    Cuda,
}

fn parse_probability(s: &str) -> Result<f64, String> {
    let q: f64 = s.trim().parse().map_err(|_| not_a_number(s, "a number"))?;
    if (0.0..=1.0).contains(&q) {
        Ok(q)
    } else {
        Err(format!("quantile probability {s} is not in [0, 1]"))
    }
}

/// A whole number, possibly negative, before the checks of the option it is given to.
fn parse_integer(s: &str) -> Result<i128, String> {
    s.trim()
        .parse()
        .map_err(|_| not_a_number(s, "a whole number"))
}

/// Why `s` is not `what` (a number): an option where a value was due (options whose values
/// may start with a hyphen take the next argument whatever it is), or not a number at all.
fn not_a_number(s: &str, what: &str) -> String {
    if s.starts_with("--") {
        format!("the value is missing: {s} is an option, not {what}")
    } else {
        format!("`{s}` is not {what}")
    }
}

/// A whole number that is not negative; a negative one is refused with `why`.
fn parse_whole(s: &str, why: &str) -> Result<usize, String> {
    let n = parse_integer(s)?;
    if n < 0 {
        return Err(why.to_string());
    }
    usize::try_from(n).map_err(|_| format!("{n} is too large"))
}

/// A whole number of at least 1; 0 or a negative one is refused with `why`.
fn parse_positive(s: &str, why: &str) -> Result<usize, String> {
    match parse_whole(s, why)? {
        0 => Err(why.to_string()),
        n => Ok(n),
    }
}

/// A rank of `kselect select --k`.
fn parse_rank(s: &str) -> Result<usize, String> {
    parse_whole(
        s,
        "a rank is a non-negative integer (0 is the smallest value)",
    )
}

/// `kselect topk --k`.
fn parse_values_per_row(s: &str) -> Result<usize, String> {
    parse_whole(
        s,
        "k is the number of values to take from each row: 1 or more",
    )
}

/// `kselect neighbors --k`.
fn parse_neighbours(s: &str) -> Result<usize, String> {
    parse_positive(s, "k is the number of neighbours of each point: 1 or more")
}

/// `kselect threshold --k`.
fn parse_entries_kept(s: &str) -> Result<usize, String> {
    parse_whole(s, "k is the number of entries to keep: 1 or more")
}

/// `kselect recover --n`, `--m`, `kselect phase-transition --n`.
fn parse_size(s: &str) -> Result<usize, String> {
    parse_positive(s, "a dimension is a whole number: 1 or more")
}

/// `kselect recover --k`.
fn parse_sparsity(s: &str) -> Result<usize, String> {
    parse_positive(s, "k is the most nonzeros of the signal: 1 or more")
}

/// `--max-iter`.
fn parse_iterations(s: &str) -> Result<usize, String> {
    parse_positive(s, "--max-iter is the most iterations of a solve: 1 or more")
}

/// `kselect phase-transition --trials`.
fn parse_trials(s: &str) -> Result<usize, String> {
    parse_positive(
        s,
        "--trials is the number of problems of each cell: 1 or more",
    )
}

/// `kselect recover --tol`.
fn parse_tolerance(s: &str) -> Result<f64, String> {
    let tol: f64 = s.trim().parse().map_err(|_| not_a_number(s, "a number"))?;
    if tol.is_finite() && tol > 0.0 {
        Ok(tol)
    } else {
        Err(format!(
            "the tolerance is relative to |y|: finite and positive, not {s}"
        ))
    }
}

/// The most values of a grid axis.
const MAX_GRID: usize = 10_000;

/// `--deltas`.
fn parse_deltas(s: &str) -> Result<Grid, String> {
    parse_grid(s, "delta")
}

/// `--rhos`.
fn parse_rhos(s: &str) -> Result<Grid, String> {
    parse_grid(s, "rho")
}

/// A LIST of `kselect phase-transition`: comma-separated numbers and ranges `a:b:step` (from
/// `a` to `b` included, within a billionth of a step; each value rounded to 12 decimals, so
/// that `0.05:0.95:0.05` gives 0.15 rather than 0.15000000000000002), every value in (0, 1];
/// sorted, each value once.
fn parse_grid(s: &str, name: &str) -> Result<Grid, String> {
    let number = |t: &str| -> Result<f64, String> {
        let v: f64 = t
            .trim()
            .parse()
            .map_err(|_| not_a_number(t.trim(), "a number"))?;
        if v.is_finite() {
            Ok(v)
        } else {
            Err(format!("{name} = {} is outside (0, 1]", t.trim()))
        }
    };
    let mut values = Vec::new();
    for item in s.split(',') {
        let parts: Vec<&str> = item.split(':').collect();
        match parts[..] {
            [value] if !value.trim().is_empty() => values.push(number(value)?),
            [a, b, step] => {
                let (a, b, step) = (number(a)?, number(b)?, number(step)?);
                if step <= 0.0 {
                    return Err(format!(
                        "the range {}: its step must be positive",
                        item.trim()
                    ));
                }
                if b < a {
                    return Err(format!(
                        "the range {} ends below its start: a range a:b:step runs from a up to b",
                        item.trim()
                    ));
                }
                let count = ((b - a) / step + 1e-9).floor() + 1.0;
                if count > MAX_GRID as f64 {
                    return Err(format!(
                        "the range {} has {count} values: at most {MAX_GRID}",
                        item.trim()
                    ));
                }
                values.extend(
                    (0..count as usize).map(|i| ((a + i as f64 * step) * 1e12).round() / 1e12),
                );
            }
            _ => {
                return Err(format!(
                    "`{}` is neither a number nor a range a:b:step (a LIST is numbers and ranges \
                     separated by commas, as 0.1,0.3:0.5:0.1)",
                    item.trim()
                ))
            }
        }
    }
    if let Some(v) = values.iter().find(|v| !(**v > 0.0 && **v <= 1.0)) {
        return Err(format!("{name} = {v} is outside (0, 1]"));
    }
    values.sort_by(f64::total_cmp);
    values.dedup();
    if values.len() > MAX_GRID {
        return Err(format!(
            "{} values of {name}: at most {MAX_GRID}",
            values.len()
        ));
    }
    Ok(Grid(values))
}

fn parse_seed(s: &str) -> Result<u64, String> {
    u64::try_from(parse_integer(s)?)
        .map_err(|_| format!("the seed is an integer from 0 to {}", u64::MAX))
}

/// What `--h` gives: a number of rows or a rule of MASS `lqs`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HArg {
    /// `h` rows.
    Rows(usize),
    /// `lms`: floor((n + 1) / 2), as `lqs(method = "lms")`.
    LqsLms,
    /// `lqs`: floor((n + p + 1) / 2), as `lqs(method = "lqs")`.
    LqsLqs,
}

fn parse_h(s: &str) -> Result<HArg, String> {
    match s.trim() {
        "lms" => Ok(HArg::LqsLms),
        "lqs" => Ok(HArg::LqsLqs),
        t => t.parse().map(HArg::Rows).map_err(|_| {
            format!(
                "the coverage is a number of rows (a positive integer), `lms` or `lqs` (rules of \
                 MASS lqs), not `{s}`"
            )
        }),
    }
}

fn parse_count(s: &str) -> Result<usize, String> {
    let m = parse_integer(s)?;
    if (2..=10_000_000).contains(&m) {
        Ok(m as usize)
    } else {
        Err(format!(
            "--count is the number of probabilities, 2 to 10000000, not {m}"
        ))
    }
}

fn parse_alpha(s: &str) -> Result<f64, String> {
    let alpha: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("`{s}` is not a number"))?;
    if (0.5..=1.0).contains(&alpha) {
        Ok(alpha)
    } else {
        Err(format!(
            "alpha is the fraction of rows the fit covers, in [0.5, 1], not {s}"
        ))
    }
}

fn parse_nsamp(s: &str) -> Result<usize, String> {
    parse_positive(s, "--nsamp is the number of starting subsets: at least 1")
}

fn parse_cols(s: &str) -> Result<usize, String> {
    parse_positive(s, "--cols is the number of values of a row: at least 1")
}

fn parse_bins(s: &str) -> Result<usize, String> {
    let bins = parse_integer(s)?;
    if (1..=kselect::plot::MAX_BINS as i128).contains(&bins) {
        Ok(bins as usize)
    } else {
        Err(format!(
            "the number of bins is 1 to {}, not {bins}",
            kselect::plot::MAX_BINS
        ))
    }
}

fn parse_bandwidth(s: &str) -> Result<f64, String> {
    let h: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("`{s}` is not a number"))?;
    if h.is_finite() && h > 0.0 {
        Ok(h)
    } else {
        Err(format!(
            "the bandwidth must be finite and positive, not {s}"
        ))
    }
}

fn parse_range(s: &str) -> Result<(f64, f64), String> {
    let parts: Vec<&str> = s.split(',').collect();
    let [lo, hi] = parts[..] else {
        return Err(format!("`{s}` is not LO,HI"));
    };
    let number = |t: &str| {
        t.trim()
            .parse::<f64>()
            .map_err(|_| format!("`{t}` is not a number"))
    };
    let (lo, hi) = (number(lo)?, number(hi)?);
    if lo.is_finite() && hi.is_finite() && lo < hi {
        Ok((lo, hi))
    } else {
        Err(format!("the plot range needs finite LO < HI, not {s}"))
    }
}

fn parse_plot_path(s: &str) -> Result<PathBuf, String> {
    let path = PathBuf::from(s);
    kselect::plot::ImageFormat::from_path(&path).map_err(strip_prefix)?;
    Ok(path)
}

/// The help of `--algorithm`, from the library's lists of algorithms: every name, and which
/// backend has which. `auto` is what `auto` chooses by.
fn algorithm_help(auto: &str) -> String {
    let (cpu, cuda) = (Algorithm::cpu_algorithms(), Algorithm::cuda_algorithms());
    // The names of the algorithms (`auto` aside) that the CPU and CUDA have or lack as given.
    let names = |on_cpu: Option<bool>, on_cuda: Option<bool>| {
        Algorithm::ALL
            .iter()
            .filter(|&&a| a != Algorithm::Auto)
            .filter(|a| on_cpu.is_none_or(|has| cpu.contains(a) == has))
            .filter(|a| on_cuda.is_none_or(|has| cuda.contains(a) == has))
            .map(|a| a.name())
            .collect::<Vec<_>>()
            .join(", ")
    };
    format!(
        "The selection algorithm: auto ({auto}), {}. Both backends have {}; only the CPU {}; \
         only CUDA {}. Every algorithm returns the same values; they differ only in speed and \
         workspace.",
        names(None, None),
        names(Some(true), Some(true)),
        names(Some(true), Some(false)),
        names(Some(false), Some(true)),
    )
}

fn parse_buckets(s: &str) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(b) if b >= 4 => Ok(b),
        _ => Err(format!(
            "`{s}` is not a number of buckets (an integer of at least 4)"
        )),
    }
}

/// A value named by a string of the library's names (an algorithm, a metric, ...).
fn parse_named<T: std::str::FromStr<Err = kselect::Error>>(s: &str) -> Result<T, String> {
    s.parse().map_err(strip_prefix)
}

/// The message of an invalid-argument error (`InvalidArgument`, `UnknownName`, ...) without
/// its "invalid argument: " prefix (clap says that already).
fn strip_prefix(e: kselect::Error) -> String {
    let text = e.to_string();
    match text.strip_prefix("invalid argument: ") {
        Some(message) => message.to_string(),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grids_take_numbers_and_ranges() {
        let default = parse_grid("0.05:0.95:0.05", "delta").unwrap().0;
        let want: Vec<f64> = (1..20).map(|i| i as f64 * 0.05).collect();
        assert_eq!(default.len(), 19);
        for (got, want) in default.iter().zip(&want) {
            assert!((got - want).abs() < 1e-12, "{got} {want}");
        }
        assert_eq!(default[2], 0.15, "rounded, not 0.15000000000000002");
        assert_eq!(
            parse_grid(" 0.5, 0.1:0.3:0.1 ,0.2", "rho").unwrap().0,
            vec![0.1, 0.2, 0.3, 0.5],
            "sorted, each value once"
        );
        assert_eq!(parse_grid("1", "rho").unwrap().0, vec![1.0]);
        assert_eq!(parse_grid("0.5:0.5:0.1", "rho").unwrap().0, vec![0.5]);
    }

    #[test]
    fn bad_grids_say_why() {
        let cases = [
            ("0,0.5", "delta = 0 is outside (0, 1]"),
            ("0.5,1.5", "delta = 1.5 is outside (0, 1]"),
            ("-0.1", "delta = -0.1 is outside (0, 1]"),
            ("nan", "delta = nan is outside (0, 1]"),
            ("0.1,,0.2", "`` is neither a number nor a range"),
            ("0.1:0.2", "`0.1:0.2` is neither a number nor a range"),
            ("0.1:0.5:0", "its step must be positive"),
            ("0.5:0.1:0.1", "ends below its start"),
            ("0.1:0.9:1e-9", "at most 10000"),
            ("x", "`x` is not a number"),
            ("--rhos", "the value is missing: --rhos is an option"),
        ];
        for (list, want) in cases {
            let e = parse_grid(list, "delta").unwrap_err();
            assert!(e.contains(want), "{list}: {e}");
        }
    }

    #[test]
    fn recovery_values_are_checked() {
        assert_eq!(parse_sparsity("3"), Ok(3));
        assert!(parse_sparsity("0").unwrap_err().contains("1 or more"));
        assert!(parse_size("-2").unwrap_err().contains("1 or more"));
        assert!(parse_iterations("0").is_err());
        assert!(parse_trials("0").is_err());
        assert_eq!(parse_tolerance("1e-6"), Ok(1e-6));
        for bad in ["0", "-1", "inf", "nan"] {
            assert!(parse_tolerance(bad).is_err(), "{bad}");
        }
        assert_eq!(
            parse_named::<Ensemble>("sparse:12"),
            Ok(Ensemble::Sparse { d: 12 })
        );
        assert!(parse_named::<RecoveryAlgorithm>("omp")
            .unwrap_err()
            .starts_with("unknown recovery algorithm"));
        assert_eq!(parse_named::<SignalKind>("sign"), Ok(SignalKind::Sign));
    }
}
