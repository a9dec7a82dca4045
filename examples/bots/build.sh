#!/usr/bin/env bash
# Builds the starter bots in place: compiles the C and Java bots and creates
# the Python bot's own venv (with numpy from PyPI). The Node and bash bots need
# no build. Safe to run again: what is already built is kept.
#
#   examples/bots/build.sh            # every bot
#   examples/bots/build.sh c_odds     # only these
#
# A bot whose toolchain is missing is skipped with a line saying which tool
# (the tests then skip it for the same reason). PYTHON picks the interpreter
# the venv is made from (default: python3).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
names=("$@")
[ ${#names[@]} -gt 0 ] || names=(c_odds java_odds py_numpy node_odds sh_odds)

have() { command -v "$1" >/dev/null 2>&1 || { echo "build.sh: $2: skipped, $1 is not installed"; return 1; }; }

for name in "${names[@]}"; do
    dir="$here/$name"
    case "$name" in
        c_odds)
            have cc "$name" || continue
            if [ ! -x "$dir/bot" ] || [ "$dir/bot.c" -nt "$dir/bot" ]; then
                cc -std=c99 -O2 -Wall -Wextra -o "$dir/bot" "$dir/bot.c" -lm
                echo "build.sh: $name: compiled $dir/bot"
            fi ;;
        java_odds)
            have javac "$name" || continue
            if [ ! -f "$dir/classes/OddsBot.class" ] || [ "$dir/OddsBot.java" -nt "$dir/classes/OddsBot.class" ]; then
                mkdir -p "$dir/classes"
                javac -d "$dir/classes" "$dir/OddsBot.java"
                echo "build.sh: $name: compiled into $dir/classes"
            fi ;;
        py_numpy)
            python="${PYTHON:-python3}"
            have "$python" "$name" || continue
            if ! "$dir/venv/bin/python" -c "import numpy" >/dev/null 2>&1; then
                rm -rf "$dir/venv"
                "$python" -m venv "$dir/venv"
                "$dir/venv/bin/python" -m pip install -q -r "$dir/requirements.txt"
                echo "build.sh: $name: venv with numpy in $dir/venv"
            fi ;;
        node_odds|sh_odds) ;;  # nothing to build
        *) echo "build.sh: no starter bot named $name" >&2; exit 2 ;;
    esac
done
