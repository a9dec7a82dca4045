#!/bin/sh
# Answers hello, then exits as soon as a match starts (status 3).
IFS= read -r line
echo '{"type": "ready", "name": "quitter"}'
IFS= read -r line
echo "quitter: leaving" >&2
exit 3
