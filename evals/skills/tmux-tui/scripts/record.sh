#!/usr/bin/env sh
# record.sh start SESSION OUT.cast [MAX_SECONDS]   start recording the pane in the background
# record.sh stop OUT.cast                          last frame, stop, print a summary
# Records an asciicast v2 file (frames whenever the screen changes, resize events). Stop it before you
# kill the session, so the last screen is in the recording.
set -eu
exec python3 "$(dirname "$0")/record.py" "$@"
