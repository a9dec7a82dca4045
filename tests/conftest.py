"""Settings for the whole test session."""

from __future__ import annotations

import signal

# The Ctrl-C tests (test_run, test_daily, test_tablefiles, test_ray) send SIGINT
# to an `arena run` they started, as a terminal does to its foreground job. A job
# started in the background by a non-interactive shell (`bash -c '... &'`, as
# some CI runners do) has SIGINT ignored, and an ignored signal stays ignored
# across exec: every `arena run` the tests start would then ignore the Ctrl-C
# too, as Python leaves an inherited SIG_IGN alone, and run to the end. Python's
# own handler here makes the children start with the default again (a handler,
# unlike SIG_IGN, does not survive exec).
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


import pytest  # noqa: E402

from arena import compiled  # noqa: E402


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """A ``pure`` test replaces a function inside one of the compiled modules
    (arena/compiled.py) to watch a code path; compiled code calls its own
    functions directly, past the replacement, so the test could not fail
    there. It runs against the source (.ci/run runs them with
    ARENA_PURE_PYTHON=1)."""
    if not compiled.active():
        return
    skip = pytest.mark.skip(reason="watches a function inside a compiled module: run with ARENA_PURE_PYTHON=1")
    for item in items:
        if "pure" in item.keywords:
            item.add_marker(skip)
