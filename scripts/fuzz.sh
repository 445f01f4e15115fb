#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/, clang with ASan + UBSan) into build-fuzz/ (the build of
# scripts/sanitize.sh) and runs each for SECONDS (default 30), seeded from the project's own
# fixtures and data files, FUZZ_JOBS targets at a time (default: one per core).
#   scripts/fuzz.sh [SECONDS] [TARGET ...]     targets: hf_config device profile_json efficiency engine
#                                              calibrate
#                                              published scenario graph_json onnx ncu_long ncu_raw
#                                              nsys_csv torch_trace torch_trace_gz (default: all)
# A run fails on any crash, sanitizer report, leak or input slower than 2 s (a hang); the input
# is kept in build-fuzz/artifacts/ (make it a fixture and a regression test). Prints one line
# per target: executions, seconds, result. FUZZ_RUNS=N also stops each target after N
# executions (the long run: FUZZ_RUNS=1000000 scripts/fuzz.sh 1200).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-30}
shift || true
all=(hf_config device profile_json efficiency engine calibrate published scenario graph_json onnx ncu_long ncu_raw nsys_csv
     torch_trace torch_trace_gz)
targets=("$@")
((${#targets[@]})) || targets=("${all[@]}")

scripts/sanitize.sh --configure
cmake --build build-fuzz -j "$(nproc)" --target "${targets[@]/#/fuzz_}" >/dev/null

# Seeds: the inputs each format's tests use (good and bad), copied fresh into a scratch corpus.
seed() {  # TARGET -> files
  case $1 in
    hf_config) ls data/models/*.json ;;
    device) ls data/hardware/*.json ;;
    profile_json) ls fuzz/seeds/profile_json/* ;;
    efficiency) ls data/efficiency.json ;;
    engine) ls data/engines/*.json fuzz/seeds/engine/* ;;
    calibrate) ls tests/fixtures/calibrate/* ;;
    published) ls fuzz/seeds/published/* data/validation/published_runs.json data/validation/serving_runs.json ;;
    scenario) ls fuzz/seeds/scenario/* ;;
    graph_json) ls tests/fixtures/graphs/*.json tests/fixtures/captured/*.json ;;
    onnx) ls tests/fixtures/onnx/*.onnx ;;
    ncu_long) ls tests/fixtures/profiles/ncu_*.csv | grep -v raw ;;
    ncu_raw) ls tests/fixtures/profiles/ncu_raw*.csv tests/fixtures/profiles/ncu_truncated.csv ;;
    nsys_csv) ls tests/fixtures/profiles/nsys_*.csv ;;
    torch_trace) ls tests/fixtures/profiles/torch_*.json ;;
    torch_trace_gz) ls tests/fixtures/profiles/torch_*.json tests/fixtures/profiles/*.json.gz ;;
    *) echo "fuzz: unknown target '$1' (one of: ${all[*]})" >&2; exit 2 ;;
  esac
}

mkdir -p build-fuzz/artifacts
run() {  # TARGET: runs it, writes its one-line result to build-fuzz/TARGET.result
  local t=$1 corpus=build-fuzz/corpus/$1 max_len=65536 log=build-fuzz/$1.log status took runs
  mkdir -p "$corpus"
  seed "$t" | xargs -I{} cp {} "$corpus/"
  # The big ONNX and trace seeds are inputs too; libFuzzer mutates at most -max_len bytes of each.
  [[ $t == onnx ]] && max_len=1048576
  set +e
  ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 \
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    "build-fuzz/fuzz/fuzz_$t" "$corpus" -max_total_time="$seconds" ${FUZZ_RUNS:+-runs=$FUZZ_RUNS} \
    -timeout=2 -rss_limit_mb=2560 \
    -max_len=$max_len -artifact_prefix="build-fuzz/artifacts/$t-" -print_final_stats=1 \
    >"$log" 2>&1
  status=$?
  set -e
  took=$(grep -o 'Done [0-9]* runs in [0-9]*' "$log" | grep -o '[0-9]*$' || true)
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo 0)
  if ((status != 0)); then
    { echo "fuzz $t: FAILED after $runs executions (exit $status); see $log and build-fuzz/artifacts/"
      grep -m3 -E 'ERROR|SUMMARY|timeout|runtime error' "$log" || true; } >"build-fuzz/$t.result"
    return 1
  fi
  echo "fuzz $t: $runs executions in ${took:-$seconds} s, 0 crashes, 0 hangs, 0 sanitizer reports" \
    >"build-fuzz/$t.result"
}

jobs_max=${FUZZ_JOBS:-$(nproc)}
for t in "${targets[@]}"; do
  rm -f "build-fuzz/$t.result"
  while (($(jobs -rp | wc -l) >= jobs_max)); do wait -n || true; done
  run "$t" &
done
wait || true
failed=0
for t in "${targets[@]}"; do
  if [[ ! -f build-fuzz/$t.result ]]; then
    echo "fuzz $t: FAILED (no result)"
    failed=1
    continue
  fi
  cat "build-fuzz/$t.result"
  grep -q FAILED "build-fuzz/$t.result" && failed=1
done
exit $failed
