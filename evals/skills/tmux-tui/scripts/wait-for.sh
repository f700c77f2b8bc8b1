#!/usr/bin/env sh
# wait-for.sh SESSION PATTERN [TIMEOUT_S]: poll the visible pane until PATTERN (grep -E) shows, or fail.
# Exit 0 when it shows, 1 on timeout (the pane is printed to stderr), 2 when the session is gone.
set -eu
if [ $# -lt 2 ]; then
  echo "usage: wait-for.sh SESSION PATTERN [TIMEOUT_S]" >&2
  exit 64
fi
session=$1 pattern=$2 timeout=${3:-10}
socket=${TMUX_SOCKET:-skillgym}
deadline=$(( $(date +%s) + timeout ))
while [ "$(date +%s)" -le "$deadline" ]; do
  if ! screen=$(tmux -L "$socket" capture-pane -p -J -t "$session" 2>/dev/null); then
    echo "wait-for: session '$session' is gone (did the program exit? use remain-on-exit)" >&2
    exit 2
  fi
  if printf '%s\n' "$screen" | grep -Eq -- "$pattern"; then
    exit 0
  fi
  # Poll interval, bounded by the deadline above: this is a poll loop, not a blind sleep.
  sleep 0.1
done
echo "wait-for: '$pattern' did not appear in $session within ${timeout}s; the pane shows:" >&2
tmux -L "$socket" capture-pane -p -t "$session" >&2 || true
exit 1
