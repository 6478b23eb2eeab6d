#!/usr/bin/env bash
# The GPU check in one run, on a machine with a CUDA device (see docs/RESULTS.md, "GPU"):
#   1. the tests that need CUDA (skipped elsewhere) with the tests around them;
#   2. expert-iteration generation end to end (`training.exit generate`, 3 players, the
#      shipped network guided:default) with the leaf batches on the CPU and on the GPU,
#      batches of 32 and 128: decisions and seconds of each, same deals;
#   3. benchmarks/gpu_speedup.py: every leg on the CPU (one thread) and on CUDA, with ratios.
# Usage: bash benchmarks/gpu_check.sh [OUTDIR] [DEALS]   (default OUTDIR out/gpu_check, DEALS 12)
# Each part runs even if one before it failed; logs go to OUTDIR. Without a GPU it runs the
# CPU parts and says so (DEALS 1: about 2 minutes on a 2-core machine).
set -u
out=${1:-out/gpu_check}
deals=${2:-12}
mkdir -p "$out"
export PYTHONUNBUFFERED=1 OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 NUMBA_NUM_THREADS=1
py=${PYTHON:-python3}
$py -c "import sys, torch, numpy, numba; print('python', sys.version.split()[0], 'torch', torch.__version__,
'numpy', numpy.__version__, 'numba', numba.__version__, 'cuda', torch.cuda.is_available(),
torch.cuda.get_device_name(0) if torch.cuda.is_available() else '')" 2>&1 | tee "$out/device.txt"
timeout 240 $py -m pytest -q -p no:cacheprovider tests/agents/test_guided.py tests/training/test_exit_train.py \
  tests/training/test_gpu_speedup.py tests/envs/test_vector_api.py 2>&1 | tee "$out/pytest.txt" | tail -3
tmp=$(mktemp -d)
for batch in 32 128; do
  for device in cpu cuda; do
    printf 'generate, guided:default,batch=%s,device=%s: ' "$batch" "$device" | tee -a "$out/generate.txt"
    timeout 300 $py -m twilight_env.training.exit generate --out "$tmp/b${batch}_$device" --players 3 \
      --deals "$deals" --seed 5 --agent "guided:default,batch=$batch,device=$device" --no-progress 2>&1 \
      | tail -1 | tee -a "$out/generate.txt"
  done
done
rm -rf "$tmp"
timeout 330 $py benchmarks/gpu_speedup.py --seconds 4 2>&1 | tee "$out/gpu_speedup.txt"
