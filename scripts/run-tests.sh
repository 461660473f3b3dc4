#!/usr/bin/env bash
# Set up, build and run the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
ctest --test-dir "${LIFTX_BUILD_DIR:-build}" --output-on-failure -j "$(nproc)"
scripts/test-install.sh
