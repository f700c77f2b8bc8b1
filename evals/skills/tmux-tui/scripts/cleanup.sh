#!/usr/bin/env sh
# cleanup.sh [SESSION]: end SESSION (or, without one, the whole private tmux server) and confirm that no
# session is left on the socket.
set -eu
socket=${TMUX_SOCKET:-skillgym}
if [ $# -ge 1 ]; then
  tmux -L "$socket" kill-session -t "$1" 2>/dev/null || true
else
  tmux -L "$socket" kill-server 2>/dev/null || true
fi
if left=$(tmux -L "$socket" list-sessions -F '#{session_name}' 2>/dev/null) && [ -n "$left" ]; then
  echo "cleanup: sessions still running on socket '$socket':" $left >&2
  exit 1
fi
echo "cleanup: no live sessions on socket '$socket'"
