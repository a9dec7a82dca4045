"""The build: the modules of ``arena.compiled.MODULES`` compiled with mypyc.

Everything else is in pyproject.toml. ``ARENA_PURE_PYTHON=1`` at install time
compiles nothing; a machine without a C compiler gets the pure-Python package
(each extension is optional: setuptools warns and goes on). Either way the
package runs the same source (arena/compiled.py says when it runs which).
"""

from __future__ import annotations

import os
import runpy

from setuptools import setup

HERE = os.path.dirname(os.path.abspath(__file__))


def ext_modules() -> list[object]:
    if os.environ.get("ARENA_PURE_PYTHON", "") not in ("", "0"):
        return []
    from mypyc.build import mypycify

    listed = runpy.run_path(os.path.join(HERE, "arena", "compiled.py"))  # not imported: no package yet
    paths = [os.path.join("arena", *name.split(".")[1:]) + ".py" for name in listed["MODULES"]]
    # Its own mypy settings: the build environment has none of the type stubs
    # the project's checks use, and mypy's notes on them would stop the build.
    exts = mypycify(["--config-file", os.path.join("tools", "mypyc.ini"), *paths],
                    opt_level="3", group_name=listed["GROUP"])
    for ext in exts:
        ext.optional = True
    return list(exts)


setup(ext_modules=ext_modules())
