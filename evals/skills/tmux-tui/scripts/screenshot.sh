#!/usr/bin/env sh
# screenshot.sh SESSION OUT.svg: render the pane as it looks now, colours included, to an SVG image.
set -eu
if [ $# -ne 2 ]; then
  echo "usage: screenshot.sh SESSION OUT.svg" >&2
  exit 64
fi
session=$1 out=$2
socket=${TMUX_SOCKET:-skillgym}
here=$(dirname "$0")
size=$(tmux -L "$socket" display-message -p -t "$session" '#{pane_width} #{pane_height}')
mkdir -p "$(dirname "$out")"
tmux -L "$socket" capture-pane -e -p -N -t "$session" \
  | python3 "$here/ansi2svg.py" --size "$size" --title "$session" > "$out"
echo "screenshot: $out (${size% *}x${size#* })"
