#!/bin/sh
# Answers hello properly, then prints garbage (not JSON) for every turn.
while IFS= read -r line; do
  case "$line" in
    *'"hello"'*) echo '{"type": "ready", "name": "garbage"}' ;;
    *'"turn"'*) echo 'I raise to five threes!' ;;
  esac
done
