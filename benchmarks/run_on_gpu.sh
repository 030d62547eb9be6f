#!/usr/bin/env bash
# One prepared run for a machine with a GPU and CuPy already installed (no network needed):
# install minigraph without dependencies, run the whole test suite (every op test runs on
# the CPU and on the real /gpu:0), the real-GPU tests, and the GPU benchmark.
# Usage: bash benchmarks/run_on_gpu.sh [OUTDIR]   (OUTDIR defaults to ./gpu-results)
set -uo pipefail
cd "$(dirname "$0")/.."
out="${1:-${OUT:-gpu-results}}"
mkdir -p "$out"
export PYTHONUNBUFFERED=1
{
  python3 -c "import cupy, numpy; print('cupy', cupy.__version__, 'numpy', numpy.__version__); \
print(cupy.cuda.runtime.getDeviceProperties(0)['name'])"
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
} > "$out/environment.txt" 2>&1
python3 -m pip install -q --no-deps --no-build-isolation -e . > "$out/install.log" 2>&1
python3 -m pytest -q -p no:cacheprovider tests/gpu 2>&1 \
  | tee "$out/tests_gpu.log" | tail -3
python3 -m pytest -q -p no:cacheprovider 2>&1 | tee "$out/tests_all.log" | tail -3
python3 benchmarks/gpu.py --repeat 5 2>&1 | tee "$out/bench_gpu.log"
