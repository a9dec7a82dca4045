#!/bin/sh
# On its first turn, starts a CPU spinner in a session of its own (it escapes
# the bot's process tree: only the bot's cgroup still holds it), then doubts.
started=
while IFS= read -r line; do
  case "$line" in
    *'"hello"'*) echo '{"type": "ready", "name": "spinner"}' ;;
    *'"turn"'*)
      if [ -z "$started" ]; then
        setsid sh -c 'while :; do :; done' </dev/null >/dev/null 2>&1 &
        started=1
      fi
      echo '{"action": "dudo"}' ;;
  esac
done
