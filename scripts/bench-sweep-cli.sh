#!/usr/bin/env bash
# Speed of `roofline sweep` as a user runs it: llama-2-7b on an H100, batch 1..N (step 1), both
# phases, crossovers included, written as CSV and as JSON to /dev/null. Prints one row per format:
# points, seconds (wall, best of 3) and points per second. Needs build/roofline.
#   scripts/bench-sweep-cli.sh [N]      (default 100000)
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-100000}
bin=build/roofline
[[ -x $bin ]] || { echo "bench-sweep-cli: build/roofline is missing (run scripts/build.sh)" >&2; exit 2; }
printf '%-6s %10s %10s %14s\n' format points seconds points/s
for format in csv json; do
  best=
  for _ in 1 2 3; do
    start=$(date +%s.%N)
    "$bin" sweep llama-2-7b --hw h100-sxm --prompt 512 --vary "batch=1:$n:+1" --format "$format" \
      >/dev/null
    end=$(date +%s.%N)
    best=$(python3 -c "t = $end - $start; b = '$best'; print(min(t, float(b)) if b else t)")
  done
  printf '%-6s %10d %10.2f %14.0f\n' "$format" "$n" "$best" "$(python3 -c "print($n / $best)")"
done
