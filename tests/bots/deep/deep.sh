#!/bin/bash
# Attack: a reply nested 1015 levels deep with a float at the top level (it
# passes orjson; re-read with the stdlib, it used to raise RecursionError in
# the referee). DEEP_AT=hello sends it as the reply to hello, DEEP_AT=turn
# (the default) answers hello properly and sends it for every turn.
open=$(printf '[%.0s' $(seq 1015))
close=$(printf ']%.0s' $(seq 1015))
deep="{\"action\":\"bid\",\"quantity\":$open$close,\"face\":3,\"f\":1.5}"
while IFS= read -r line; do
  case "$line" in
    *'"hello"'*)
      if [ "${DEEP_AT:-turn}" = hello ]; then echo "$deep"; else echo '{"type": "ready", "name": "deep"}'; fi ;;
    *'"turn"'*) echo "$deep" ;;
  esac
done
