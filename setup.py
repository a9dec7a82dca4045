"""The build: the modules of ``arena.compiled.MODULES`` compiled with mypyc.

Everything else is in pyproject.toml. ``ARENA_PURE_PYTHON=1`` at install time
compiles nothing; a machine without a C compiler gets the pure-Python package
(each extension is optional: setuptools warns and goes on). Either way the
package runs the same source (arena/compiled.py says when it runs which).

An editable install (the README's) also writes the package's bytecode beside
its source, as pip does for any package it installs into site-packages.
"""

from __future__ import annotations

import compileall
import os
import runpy
import shutil

from setuptools import setup
from setuptools.command.build_py import build_py

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


class BuildPy(build_py):  # type: ignore[misc]  # setuptools ships no types
    """In a built package, the built-in bots; in an editable install, the
    bytecode of every module of the package.

    The built-in bots are the project's ``bots/`` folder, found beside the
    package in a checkout; a wheel (``pip install .``) carries a copy as
    ``arena/bots/`` (arena/botfile/builtin.py looks there first). Copied as
    files, not declared as a package: they are what a sandbox runs.

    pip byte-compiles what it installs into site-packages, but an editable
    install leaves the package where it is, and where PYTHONDONTWRITEBYTECODE
    is set (many container images set it) no import ever writes it: then
    every ``arena`` command compiled its 40-odd modules (0.06-0.14 s), and
    every Python bot's start the 14 its host imports (16 ms of about 52 ms of
    CPU; docs/performance.md). Timestamped, as Python writes it: a module
    edited after the install is compiled afresh on import, as before."""

    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            compileall.compile_dir(os.path.join(HERE, "arena"), quiet=1)
        else:
            shipped = os.path.join(self.build_lib, "arena", "bots")
            shutil.rmtree(shipped, ignore_errors=True)  # no bot removed since the last build lingers
            shutil.copytree(
                os.path.join(HERE, "bots"),
                shipped,
                symlinks=True,
                ignore=shutil.ignore_patterns("__pycache__", "*.pyc"),
                dirs_exist_ok=True,
            )


setup(ext_modules=ext_modules(), cmdclass={"build_py": BuildPy})
