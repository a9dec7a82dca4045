"""The profile mode's bot: appended by benchmarks/league_vs_bare.py to the text of
``bots/heuristic.py`` and ``_sampler.py`` to make one self-contained bot file (a
sandboxed bot sees only its own file), ``heuristic_profiled.py``.

It plays as ``Heuristic`` and runs the sampler inside the bot's process from
its first match on (the interpreter's start-up is left out). When the host
exits (its input closed at the end of a run) it writes one line to stderr,
``PROFILE {json}``: the CPU seconds since its first match, its decisions and
the samples. For the profile mode only: a bot that logs is no bot to time.
"""

import atexit as _atexit
import json as _json
import sys as _sys

_sampler = Sampler()  # type: ignore[name-defined]  # noqa: F821 - defined by _sampler.py, above it
_state = {"decisions": 0, "running": False}


def _report():
    if _state["running"]:
        _sampler.stop()
        data = _sampler.to_data()
        data["decisions"] = _state["decisions"]
        _sys.stderr.write("PROFILE " + _json.dumps(data) + "\n")
        _sys.stderr.flush()


_atexit.register(_report)


class HeuristicProfiled(Heuristic):  # type: ignore[name-defined]  # noqa: F821 - defined by heuristic.py
    def start(self, match):
        if not _state["running"]:
            _state["running"] = True
            _sampler.start()

    def act(self, turn):
        _state["decisions"] += 1
        return super().act(turn)


del Heuristic  # type: ignore[name-defined]  # noqa: F821 - one Bot class in the file
