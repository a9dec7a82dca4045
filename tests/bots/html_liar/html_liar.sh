#!/bin/sh
# Attack bot for the browser table (tests/test_serve.py): calls itself by HTML
# that runs script if a page renders it as markup, then writes the same kind of
# HTML to stderr and dies on its first turn, so the fault's stderr excerpt (shown
# on every page at the table) carries it too.
while IFS= read -r line; do
  case "$line" in
    *'"hello"'*) echo '{"type": "ready", "name": "<img src=x onerror=\"document.title=1\">", "version": "<script>document.title=2</script>"}' ;;
    *'"turn"'*) echo '<img src=y onerror="document.title=3"><b id="bold">stderr markup</b>' >&2; exit 3 ;;
  esac
done
