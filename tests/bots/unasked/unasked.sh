#!/bin/sh
# Writes lines nobody asked for: one right after `ready`, in the same write.
while IFS= read -r line; do
  case "$line" in
    *'"hello"'*) printf '{"type": "ready", "name": "unasked"}\n{"note": "I am thinking"}\n' ;;
    *'"turn"'*) echo '{"action": "dudo"}' ;;
  esac
done
