#!/bin/sh
# Installs the R peers of benches/regression.rs and benches/lms_classic.rs (R, robustbase and
# MASS, from Debian's packages) unless they are already there; safe to run again.
#
#   sh benches/install_r_peer.sh
set -eu

if command -v Rscript >/dev/null 2>&1 &&
    Rscript -e 'quit(status = !(requireNamespace("robustbase", quietly = TRUE) &&
                                requireNamespace("MASS", quietly = TRUE)))' >/dev/null 2>&1; then
    echo "R, robustbase and MASS are installed:"
else
    SUDO=""
    if [ "$(id -u)" -ne 0 ]; then
        SUDO="sudo"
    fi
    $SUDO apt-get update
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends \
        r-base-core r-cran-robustbase r-cran-mass
fi
Rscript -e 'cat(R.version.string, "robustbase", as.character(packageVersion("robustbase")),
                "MASS", as.character(packageVersion("MASS")), "\n")'
