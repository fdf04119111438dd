#!/usr/bin/env bash
# memcheck.sh EXE [GTEST_FILTER]: EXE's tests (those of the filter) under compute-sanitizer's memcheck;
# fails on any error it reports. compute-sanitizer from PATH, else the CUDA toolkit's bin folder
# (HGCA_CUDA_BIN_DIR, which CTest sets, or /usr/local/cuda/bin). Skipped (exit 77, CTest's
# SKIP_RETURN_CODE) where it is not installed; EXE itself skips every test where no GPU is usable.
set -uo pipefail
exe=$1 filter=${2:-*}
cs=$(command -v compute-sanitizer || ls "${HGCA_CUDA_BIN_DIR:-/usr/local/cuda/bin}/compute-sanitizer" \
  /usr/local/cuda/bin/compute-sanitizer 2>/dev/null | head -1)
if [ -z "$cs" ]; then
  echo "memcheck skipped: compute-sanitizer is not installed (it comes with the CUDA toolkit)"
  exit 77
fi
exec "$cs" --tool memcheck --error-exitcode 1 --leak-check no "$exe" --gtest_filter="$filter"
