#!/usr/bin/env bash
# run.sh PROGRAM [ARGS...]: run a program inside a tmux pane and keep the pane when it ends.
# When the program exits (or crashes), the pane prints "[exit status N]" under its last screen and stays
# open until you kill the session, so exit-status.sh and capture-pane still work afterwards. Ctrl-C
# reaches the program as usual.
#   tmux -L skillgym new-session -d -s app -x 100 -y 30 "$SCRIPTS/run.sh python3 app.py"
"$@"
status=$?
printf '\n[exit status %d]\n' "$status"
while :; do
  sleep 3600  # idle until the session is killed; the pane's last screen stays readable
done
