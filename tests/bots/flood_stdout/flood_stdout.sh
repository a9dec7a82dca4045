#!/bin/sh
# Answers a turn with an endless stream of bytes and no newline.
while IFS= read -r line; do
  case "$line" in
    *'"hello"'*) echo '{"type": "ready", "name": "flood_stdout"}' ;;
    *'"turn"'*) tr '\0' 'x' < /dev/zero ;;
  esac
done
