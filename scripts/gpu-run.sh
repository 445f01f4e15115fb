#!/usr/bin/env bash
# The GPU checks of docs/measurements/gpu-method.md in one go, on a machine with an NVIDIA GPU,
# PyTorch, transformers and (for step ncu) Nsight Compute. Every step runs under a time limit;
# one failing step is logged and the others still run. Results go to $OUT (default gpu-results/).
#
#   scripts/gpu-run.sh [all|core|ceilings|quant|e2e|ncu]
#     core: ceilings (measure, PyTorch reference, kernel check, validate) and the unit tests
#     ceilings: core without the unit tests
#     quant: fp8, int8 and int4 matmuls and many-wave attention (scripts/gpu-quant-kernels.py)
#     e2e: PyTorch end-to-end timings, a profiler trace of one decode step, and transformers'
#          host time per module (scripts/gpu-module-host.py)
#     ncu: the Nsight Compute round trip (ncu-command, ncu, profile ncu) and profile torch
#
# ROOFLINE_BIN names the folder holding `roofline` and `roofline_tests` (default build/, with the
# tests at build/tests/).
set -u
cd "$(dirname "$0")/.."
WHAT=${1:-all}
OUT=${OUT:-gpu-results}
mkdir -p "$OUT"
BIN=${ROOFLINE_BIN:-build}
RL=$BIN/roofline
TESTS=$BIN/roofline_tests
[ -x "$TESTS" ] || TESTS=$BIN/tests/roofline_tests
LOG=$OUT/log-$WHAT.txt
exec > >(tee "$LOG") 2>&1

step() {  # step NAME SECONDS CMD...: runs CMD under a limit, logs its exit status and time
  local name=$1 limit=$2
  shift 2
  echo "=== $name ($(date -u +%H:%M:%S), limit ${limit}s): $*"
  local t0=$SECONDS
  timeout "$limit" "$@"
  local rc=$?
  echo "=== $name: exit $rc after $((SECONDS - t0)) s"
  echo "$name $rc $((SECONDS - t0))" >> "$OUT/steps-$WHAT.txt"
}

gpu_state() {  # the card as found: name, driver, clocks, power, temperature
  nvidia-smi --query-gpu=name,driver_version,pstate,clocks.sm,clocks.mem,clocks.max.sm,clocks.max.mem,power.draw,power.limit,temperature.gpu,memory.used,memory.total --format=csv
}

has() {  # has MODE...: whether this run includes one of the modes
  local m
  for m in "$@"; do [ "$WHAT" = all ] || [ "$WHAT" = "$m" ] && return 0; done
  return 1
}

# The card's clock, power and throttle reasons every 200 ms for the whole run (clocks.csv), so a
# figure can be read against the clock it ran at.
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active \
  --format=csv -lms 200 > "$OUT/clocks-$WHAT.csv" 2> "$OUT/clocks-$WHAT.err" &
SAMPLER=$!
trap 'kill $SAMPLER 2>/dev/null' EXIT

if has core ceilings; then
  nvidia-smi > "$OUT/nvidia-smi.txt" 2>&1
  nvidia-smi -q -d CLOCK,POWER,PERFORMANCE >> "$OUT/nvidia-smi.txt" 2>&1
  gpu_state
  nvcc --version | tail -2
  step measure 300 "$RL" measure --device cuda -o "$OUT/measured.json"
  HW=$OUT/measured.json
  [ -s "$HW" ] || HW=h100-sxm
  # The same measurement again: its run-to-run spread on this card.
  step measure-repeat 300 "$RL" measure --device cuda -o "$OUT/measured-repeat.json"
  step reference 240 python3 scripts/gpu-reference.py --kernels "$OUT/kernels.json"
  step kernel-check 120 "$TESTS" --gtest_filter='CudaKernels.*'
  step validate-decode 200 bash -c "\"$RL\" validate llama-3-8b --phase decode --context 4096 \
    --hw \"$HW\" --device cuda --format json > \"$OUT/validate-decode.json\""
  step validate-decode-table 200 "$RL" validate llama-3-8b --phase decode --context 4096 \
    --hw "$HW" --device cuda
  step validate-prefill 300 "$RL" validate llama-3-8b --phase prefill --prompt 2048 --hw "$HW" \
    --device cuda
  step validate-prefill-json 300 bash -c "\"$RL\" validate llama-3-8b --phase prefill \
    --prompt 2048 --hw \"$HW\" --device cuda --format json > \"$OUT/validate-prefill.json\""
  step validate-prefill-8192 300 "$RL" validate llama-3-8b --phase prefill --prompt 8192 \
    --hw "$HW" --device cuda
  step validate-prefill-8192-json 300 bash -c "\"$RL\" validate llama-3-8b --phase prefill \
    --prompt 8192 --hw \"$HW\" --device cuda --format json > \"$OUT/validate-prefill-8192.json\""
  step validate-decode-b8 300 "$RL" validate llama-3-8b --phase decode --batch 8 \
    --context 16384 --hw "$HW" --device cuda
  # The kernel that beat the measured ceiling on 2026-11-24 (prefill down_proj), alone, twice.
  for i in 1 2; do
    step "validate-down-proj-$i" 120 "$RL" validate op matmul --m 2048 --n 4096 --k 14336 \
      --dtype bf16 --hw "$HW" --device cuda --repetitions 20
  done
  gpu_state
  has core && step unit-tests 300 "$TESTS" --gtest_brief=1
fi

if has quant; then
  gpu_state
  PYTHONUNBUFFERED=1 step quant 330 python3 scripts/gpu-quant-kernels.py --out "$OUT/quant.json"
fi

HW=$OUT/measured.json
[ -s "$HW" ] || HW=h100-sxm
if has e2e; then
  gpu_state
  export PYTHONUNBUFFERED=1
  step e2e 420 python3 scripts/gpu-e2e.py --out "$OUT/e2e.json" --trace "$OUT/decode_trace.json"
  # The same model with one fused SDPA call over the grouped KV heads (no repeat_kv copy).
  step e2e-gqa 420 python3 scripts/gpu-e2e.py --attention sdpa-gqa --out "$OUT/e2e-gqa.json"
  # transformers' host time module by module, against a bare op in the same process (the
  # --modules hf-transformers host_factor of data/efficiency.json), and the full step beside it.
  step module-host 330 python3 scripts/gpu-module-host.py --configs data/models/llama-3-8b.json \
    data/models/qwen2.5-7b.json --repeat 3 --layers 2 8 --full-step 32 1024 \
    --out "$OUT/module-host.json"
  gpu_state
fi

if has ncu; then
  if command -v ncu > /dev/null; then
    for app in gemm decode; do
      limit=0
      [ $app = decode ] && limit=${NCU_DECODE_KERNELS:-300}  # ~200 set up the cache first
      cmd=$("$RL" ncu-command --hw "$HW" --app "python3 scripts/gpu-e2e.py --ncu-app $app" \
        -o "$OUT/ncu-$app.csv" --launch-count $limit)
      echo "$cmd" > "$OUT/ncu-$app.command"
      step "ncu-$app" 240 bash -c "$cmd"
      step "profile-ncu-$app" 60 "$RL" profile ncu "$OUT/ncu-$app.csv" --hw "$HW"
    done
  else
    echo "ncu is not on PATH: the Nsight Compute round trip is skipped"
  fi
  [ -s "$OUT/decode_trace.json" ] && step profile-torch 60 "$RL" profile torch \
    "$OUT/decode_trace.json" --model llama-3-8b --phase decode --context 4096 --hw "$HW"
fi
echo "=== steps ($WHAT): name, exit status, seconds"
cat "$OUT/steps-$WHAT.txt"
