#!/usr/bin/env bash
# One prepared run for a machine with a GPU and CuPy already installed (no network needed):
# install minigraph without dependencies, run the real-GPU tests, the whole test suite
# (every op test runs on the CPU and on the real /gpu:0; 8 workers when pytest-xdist is
# installed), and the GPU benchmark (ops against PyTorch and raw CuPy, then the Keras
# models against the CPU). Each step has a time limit, so the whole run ends within 8
# minutes; $OUTDIR/summary.txt collects the environment, the tests' last lines and the
# benchmark's tables and summary.
# Usage: bash benchmarks/run_on_gpu.sh [OUTDIR]   (OUTDIR defaults to ./gpu-results)
set -uo pipefail
cd "$(dirname "$0")/.."
out="${1:-${OUT:-gpu-results}}"
mkdir -p "$out"
export PYTHONUNBUFFERED=1
{
  python3 -c "import cupy, numpy; print('cupy', cupy.__version__, 'numpy', numpy.__version__); \
print(cupy.cuda.runtime.getDeviceProperties(0)['name'])"
  python3 -c "import torch; print('torch', torch.__version__, 'cuda', torch.cuda.is_available())" \
    2>/dev/null || echo "torch: not importable"
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
  echo "cpus: $(nproc)"
} > "$out/environment.txt" 2>&1
python3 -m pip install -q --no-deps --no-build-isolation -e . > "$out/install.log" 2>&1
workers=""
python3 -c "import xdist" 2>/dev/null && workers="-n 8"
# limits (seconds): 60 + 210 + 170, plus install and environment: under 8 minutes
timeout -k 5 60 python3 -m pytest -q -p no:cacheprovider tests/gpu > "$out/tests_gpu.log" 2>&1
echo "exit status $?" >> "$out/tests_gpu.log"
tail -4 "$out/tests_gpu.log"
timeout -k 5 210 python3 -m pytest -q -p no:cacheprovider $workers \
  > "$out/tests_all.log" 2>&1
echo "exit status $?" >> "$out/tests_all.log"
tail -4 "$out/tests_all.log"
timeout -k 5 170 python3 benchmarks/gpu.py --repeat 5 --no-cpu --budget 130 2>&1 \
  | tee "$out/bench_gpu.log"
{
  echo "== environment"
  cat "$out/environment.txt"
  echo "== pytest tests/gpu (last lines; exit status 124: stopped at its time limit)"
  tail -4 "$out/tests_gpu.log"
  echo "== pytest $workers (the whole suite)"
  tail -4 "$out/tests_all.log"
  echo "== benchmarks/gpu.py --repeat 5 --no-cpu --budget 130"
  cat "$out/bench_gpu.log"
} > "$out/summary.txt"
