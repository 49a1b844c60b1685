#!/bin/sh
# Installs the R peer of benches/regression.rs (R and robustbase, from Debian's packages) unless
# it is already there; safe to run again.
#
#   sh benches/install_r_peer.sh
set -eu

if command -v Rscript >/dev/null 2>&1 &&
    Rscript -e 'quit(status = !requireNamespace("robustbase", quietly = TRUE))' >/dev/null 2>&1; then
    echo "R and robustbase are installed:"
else
    SUDO=""
    if [ "$(id -u)" -ne 0 ]; then
        SUDO="sudo"
    fi
    $SUDO apt-get update
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends \
        r-base-core r-cran-robustbase
fi
Rscript -e 'cat(R.version.string, "robustbase", as.character(packageVersion("robustbase")), "\n")'
