#!/usr/bin/env sh
# exit-status.sh SESSION [TIMEOUT_S]: wait until the pane's program has exited and print its exit status.
# Works for programs started through run.sh (the pane shows "[exit status N]") and, as a fallback, for
# panes kept with remain-on-exit (tmux 3.3 sometimes loses the status there: prefer run.sh).
# Exit 0 with the status printed, 1 on timeout (still running), 2 when the session is gone.
set -eu
session=$1 timeout=${2:-10}
socket=${TMUX_SOCKET:-skillgym}
deadline=$(( $(date +%s) + timeout ))
while [ "$(date +%s)" -le "$deadline" ]; do
  if ! screen=$(tmux -L "$socket" capture-pane -p -J -S - -t "$session" 2>/dev/null); then
    echo "exit-status: session '$session' is gone; start the program through run.sh to keep the status" >&2
    exit 2
  fi
  status=$(printf '%s\n' "$screen" | sed -n 's/^\[exit status \([0-9][0-9]*\)\]$/\1/p' | tail -n 1)
  if [ -n "$status" ]; then
    echo "$status"
    exit 0
  fi
  state=$(tmux -L "$socket" display-message -p -t "$session" '#{pane_dead}:#{pane_dead_status}' 2>/dev/null || true)
  case $state in
    1:[0-9]*) echo "${state#1:}"; exit 0 ;;
  esac
  sleep 0.1  # poll interval, bounded by the deadline
done
echo "exit-status: no exit status from '$session' after ${timeout}s (still running, or remain-on-exit lost it)" >&2
exit 1
