"""Loading a bot whose data folder holds a venv with numpy, beside the floor.

    python benchmarks/bot_hash.py [--trials 9] [--write docs/performance.md]

The bot's sha256 covers its data folder (docs/protocol.md), so loading a bot
that carries its own venv reads and hashes every file of it. Measured in the
same run, trials interleaved:

- floor: one sha256 over the bytes of every file of the folder, in a plain
  walk (the least any content hash of the folder can cost);
- load_bot: the whole load of the bot: its own files listed and checked, the
  data folder walked without following links, each file hashed, the runtime
  (the venv's base Python) resolved.

The venv is real (``python -m venv --without-pip``) with numpy copied in from
this environment. Reports the median seconds and the ratio to the floor.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from arena.botfile.spec import load_bot  # noqa: E402


def make_bot(root: Path) -> Path:
    import sysconfig

    import numpy

    venv = root / "bots" / "npbot" / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    site = Path(sysconfig.get_path("purelib", vars={"base": str(venv), "platbase": str(venv)}))
    for item in Path(numpy.__file__).parent.parent.iterdir():
        if item.name == "numpy" or item.name.startswith(("numpy.libs", "numpy-")):
            shutil.copytree(item, site / item.name, symlinks=True)
    (root / "bots" / "npbot" / "npbot.py").write_text("import numpy\n")
    (root / "bots" / "npbot.yaml").write_text("command: [./npbot/venv/bin/python, ./npbot/npbot.py]\n")
    return root / "bots" / "npbot.yaml"


def floor(folder: Path) -> str:
    h = hashlib.sha256()
    for dirpath, _, filenames in os.walk(folder):
        for name in filenames:
            p = os.path.join(dirpath, name)
            if not os.path.islink(p):
                with open(p, "rb") as f:
                    h.update(f.read())
    return h.hexdigest()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=9)
    ap.add_argument("--write", help="update the '## Bot loading' section of this markdown file")
    args = ap.parse_args()
    root = Path(tempfile.mkdtemp(prefix="arena-bench-hash-"))
    try:
        manifest = make_bot(root)
        data = manifest.parent / "npbot"
        files = sum(len(fs) for _, _, fs in os.walk(data))
        size = sum(os.lstat(os.path.join(d, f)).st_size for d, _, fs in os.walk(data) for f in fs)
        times: dict[str, list[float]] = {"floor": [], "load_bot": []}
        for _ in range(args.trials):
            for what, fn in (("floor", lambda: floor(data)), ("load_bot", lambda: load_bot(manifest))):
                t0 = time.perf_counter()
                fn()
                times[what].append(time.perf_counter() - t0)
        med = {k: statistics.median(v) for k, v in times.items()}
        ratio = statistics.median(b / a for a, b in zip(times["floor"], times["load_bot"]))
        text = (
            f"## Bot loading\n\nMeasured {time.strftime('%Y-%m-%d')} on {os.cpu_count()} cores, Python "
            f"{sys.version.split()[0]}, with `python benchmarks/bot_hash.py --trials {args.trials}`: a bot whose "
            f"data folder is a venv with numpy ({files} files, {size / 2**20:.0f} MiB).\n\n"
            f"| what | median |\n|---|---|\n"
            f"| floor: one sha256 over every file's bytes | {med['floor'] * 1000:.0f} ms |\n"
            f"| load_bot: list, check, hash (links as text), resolve the runtime | {med['load_bot'] * 1000:.0f} ms |\n"
            f"| ratio to the floor (median of per-trial ratios) | {ratio:.2f}x |\n\n"
            f"The hash is what makes a changed data folder a different bot; it is paid once per load "
            f"(the config, and each Ray worker's copy).\n"
        )
        print(text)
        if args.write:
            from _markdown import replace_section

            replace_section(Path(args.write), "## Bot loading", text)
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
