#!/usr/bin/env bash
# Runs `roofline measure` and likwid-bench (Debian package `likwid`) back to back on this
# machine and prints both sets of figures. usage: scripts/compare-likwid.sh [threads]
set -euo pipefail
cd "$(dirname "$0")/.."
threads=${1:-$(nproc)}
command -v likwid-bench >/dev/null || { echo "likwid-bench not installed (apt-get install likwid)" >&2; exit 2; }
test -x build/roofline || scripts/build.sh
echo "== $(date -u +%Y-%m-%dT%H:%M:%SZ) $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2) x $threads threads"
echo "== roofline measure --device cpu --threads $threads"
build/roofline measure --device cpu --threads "$threads" -o /tmp/roofline-compare.json 2>/dev/null
lw() {  # test working-set -> MFlops/s for peakflops tests, MByte/s for the others
  local key='MByte/s'
  [[ $1 == peakflops* ]] && key='MFlops/s'
  likwid-bench -t "$1" -W "N:$2:$threads" 2>/dev/null | grep -E "^$key:" | head -1
}
echo "== likwid-bench"
for t in "peakflops_avx_fma 32kB" "peakflops_sp_avx_fma 32kB" "load_avx 32kB" "load_avx 512kB" \
         "load_avx 16MB" "load_avx 1GB" "copy_avx 1GB" "stream_avx_fma 1GB" "triad_avx_fma 1GB"; do
  set -- $t
  printf '%-22s %-6s %s\n' "$1" "$2" "$(lw "$1" "$2")"
done
