#!/usr/bin/env bash
# Renders SVG files to PNG with headless Chromium (Debian package `chromium`), to look at charts
# the way a person does.  usage: scripts/render-svg.sh in.svg out.png [width height]
set -euo pipefail
in=$1
out=$2
width=${3:-1000}
height=${4:-700}
browser=$(command -v chromium || command -v chromium-browser || true)
if [[ -z $browser ]]; then
  echo "render-svg: chromium is not installed (apt-get install chromium)" >&2
  exit 2
fi
abs=$(readlink -f "$in")
"$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars \
  --window-size="$width,$height" --screenshot="$out" "file://$abs" >/dev/null 2>&1
test -s "$out"
