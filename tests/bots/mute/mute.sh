#!/bin/sh
# Answers hello, then never reads its input again and never answers: the
# referee must not block on it when its input pipe fills up.
IFS= read -r line
echo '{"type": "ready", "name": "mute"}'
exec sleep 3600
