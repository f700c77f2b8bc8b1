#!/usr/bin/env sh
# wait-for.sh SESSION PATTERN [TIMEOUT_S]: poll the pane until PATTERN (grep -E) shows, or fail.
set -eu
session=$1 pattern=$2 timeout=${3:-10}
socket=${TMUX_SOCKET:-skillgym}
deadline=$(( $(date +%s) + timeout ))
while [ "$(date +%s)" -le "$deadline" ]; do
  if tmux -L "$socket" capture-pane -p -t "$session" 2>/dev/null | grep -Eq -- "$pattern"; then
    exit 0
  fi
  # Poll interval, bounded by the deadline above: this is a poll loop, not a blind sleep.
  sleep 0.1
done
echo "wait-for: '$pattern' did not appear in $session within ${timeout}s" >&2
tmux -L "$socket" capture-pane -p -t "$session" >&2 || true
exit 1
