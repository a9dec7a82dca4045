"""What the file view costs a program bot (a manifest): start-up and memory.

    python benchmarks/program_view.py [--trials 7] [--cpu 0] [--bots sh,c,java,python3]

Program bots of four kinds, made in a scratch folder: a shell script (``sh``),
a compiled C program (tests/bots/cbot.c, built with gcc), a JVM running a
compiled class (javac), the system's Python running a script
(``/usr/bin/python3 -I``). Each kind skipped where its tool is missing.

For each, in the same run with trials interleaved (so machine load hits
them alike), the parent pinned to one core and children inheriting it:

- start-up to ``ready`` in the full sandbox, with its runtime's closure read
  from the memory view (arena/sandbox/programview.py, the default) against
  the host's files bound as before (host files);
- its memory at ``ready`` (Rss and Pss summed over the sandbox's processes;
  Pss shares each page among the processes that map it: the view's pages
  are shared among bots only, the host's with every process of the machine);
- the view's size on the tmpfs, the time to build it from nothing (in a
  scratch view folder, so the machine's views are left alone) and to find
  it again (a new referee process: the walk of its sources for the key).

Figures go to docs/sandbox.md ("The file view").
"""

from __future__ import annotations

import argparse
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

from sandbox_start import _memory_kb  # noqa: E402  (Rss and Pss of a process tree, measured alike)

import arena.sandbox.box as box  # noqa: E402
from arena.botfile.spec import BotSpec, load_bot  # noqa: E402
from arena.match.process import BotProcess, TimeControl  # noqa: E402
from arena.sandbox import SandboxLimits, describe_sandbox, mounts, programview  # noqa: E402
from arena.sandbox import view as fileview  # noqa: E402

SH = """\
#!/bin/sh
while IFS= read -r line; do
  case "$line" in
    *'"hello"'*) echo '{"type": "ready", "name": "shbot"}' ;;
    *'"turn"'*) echo '{"action": "dudo"}' ;;
  esac
done
"""
PY = """\
import json, sys
for line in sys.stdin:
    if json.loads(line)["type"] == "hello":
        print(json.dumps({"type": "ready", "name": "pybot"}), flush=True)
"""
JAVA = """\
import java.io.*;
public class Bot {
    public static void main(String[] a) throws IOException {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        String line;
        while ((line = in.readLine()) != null) {
            if (line.contains("\\"hello\\"")) System.out.println("{\\"type\\":\\"ready\\",\\"name\\":\\"jbot\\"}");
            else if (line.contains("\\"turn\\"")) System.out.println("{\\"action\\":\\"dudo\\"}");
            System.out.flush();
        }
    }
}
"""


def make_bots(folder: Path, kinds: list[str]) -> dict[str, Path]:
    """The manifests of the bots of ``kinds`` this machine can build."""
    out: dict[str, Path] = {}
    for kind in kinds:
        own = folder / f"{kind}bot"
        own.mkdir()
        manifest = folder / f"{kind}bot.yaml"
        if kind == "sh":
            (own / "bot.sh").write_text(SH)
            manifest.write_text(f"command: [sh, ./{kind}bot/bot.sh]\n")
        elif kind == "c" and shutil.which("gcc"):
            src = HERE.parent / "tests" / "bots" / "cbot.c"
            subprocess.run(["gcc", "-O2", "-pthread", "-o", str(own / "bot"), str(src)], check=True, timeout=120)
            manifest.write_text(f"command: [./{kind}bot/bot]\n")
        elif kind == "java" and shutil.which("javac") and shutil.which("java"):
            (own / "Bot.java").write_text(JAVA)
            subprocess.run(["javac", "-d", str(own), str(own / "Bot.java")], check=True, timeout=120)
            manifest.write_text(
                f"command: [java, -XX:+DisplayVMOutputToStderr, -Xlog:disable, -cp, ./{kind}bot, Bot]\n"
                "limits: {processes: 64}\n"
            )
        elif kind == "python3" and os.path.exists("/usr/bin/python3"):
            (own / "bot.py").write_text(PY)
            manifest.write_text(f"command: [/usr/bin/python3, -I, ./{kind}bot/bot.py]\n")
        else:
            continue
        out[kind] = manifest
    return out


class View:
    """The memory view on (the default) or off (the host's files, as before) for one start."""

    def __init__(self, on: bool) -> None:
        self.on = on

    def __enter__(self) -> None:
        self.saved = fileview.unavailable
        if not self.on:
            fileview.unavailable = lambda: "off for the benchmark"  # type: ignore[assignment]

    def __exit__(self, *exc: object) -> None:
        fileview.unavailable = self.saved  # type: ignore[assignment]


def start(spec: BotSpec, on: bool) -> tuple[float, tuple[int, int]]:
    """(ms to ready, (Rss, Pss) KiB at ready)."""
    limits = SandboxLimits().for_bot(spec.limits)
    with View(on):
        bot = BotProcess(spec, limits, TimeControl(hello_ms=60000))
        t = time.perf_counter()
        bot.start()
        ms = (time.perf_counter() - t) * 1000
        mem = _memory_kb(bot.pid) if bot.pid is not None else (0, 0)
        bot.close()
    return ms, mem


def view_build(spec: BotSpec) -> tuple[float, float, int]:
    """(ms to build the bot's view from nothing, ms to find it again, its bytes),
    in a scratch view folder, so that the machine's views are left alone."""
    scratch = tempfile.mkdtemp(prefix="arena-view-bench-", dir="/dev/shm")
    saved = os.environ.get("ARENA_VIEW_ROOT")
    os.environ["ARENA_VIEW_ROOT"] = scratch
    try:
        programview.forget()
        t = time.perf_counter()
        v = programview.program_view(spec, mounts.sandbox_programs())
        first = (time.perf_counter() - t) * 1000
        programview.forget()
        t = time.perf_counter()
        programview.program_view(spec, mounts.sandbox_programs())
        again = (time.perf_counter() - t) * 1000
        return first, again, fileview.size(v)
    finally:
        programview.forget()
        if saved is None:
            del os.environ["ARENA_VIEW_ROOT"]
        else:
            os.environ["ARENA_VIEW_ROOT"] = saved
        shutil.rmtree(scratch, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trials", type=int, default=7)
    ap.add_argument("--cpu", type=int, default=0, help="core to pin to (-1: do not pin)")
    ap.add_argument("--bots", default="sh,c,java,python3")
    args = ap.parse_args()
    if args.cpu >= 0:
        os.sched_setaffinity(0, {args.cpu})
    if fileview.unavailable() is not None:
        sys.exit(f"no file view on this machine: {fileview.unavailable()}")
    with tempfile.TemporaryDirectory(prefix="arena-progview-") as tmp:
        specs = {k: load_bot(p) for k, p in make_bots(Path(tmp), args.bots.split(",")).items()}
        builds = {k: view_build(s) for k, s in specs.items()}
        for s in specs.values():
            for on in (True, False):
                start(s, on)  # warm: the machine's view made, the page cache
        times: dict[tuple[str, bool], list[float]] = {}
        mems: dict[tuple[str, bool], list[tuple[int, int]]] = {}
        for _ in range(args.trials):
            for k, s in specs.items():
                for on in (True, False):
                    ms, mem = start(s, on)
                    times.setdefault((k, on), []).append(ms)
                    mems.setdefault((k, on), []).append(mem)
    print(describe_sandbox(SandboxLimits()))
    print(
        f"pinned: {'core ' + str(args.cpu) if args.cpu >= 0 else 'no'}; {args.trials} interleaved trials; "
        f"load average {os.getloadavg()[0]:.1f}"
    )
    print(f"{'bot':<8} {'view MB':>8} {'built ms':>9} {'again ms':>9}")
    for k, (first, again, size) in builds.items():
        print(f"{k:<8} {size / 1e6:>8.0f} {first:>9.0f} {again:>9.0f}")
    print(f"{'bot':<8} {'files':<10} {'ready ms':>9} {'min':>7} {'max':>7} {'x host':>7} {'Rss MB':>7} {'Pss MB':>7}")
    for k in specs:
        host = statistics.median(times[(k, False)])
        for on in (True, False):
            v = times[(k, on)]
            med = statistics.median(v)
            rss = statistics.median(m[0] for m in mems[(k, on)]) / 1024
            pss = statistics.median(m[1] for m in mems[(k, on)]) / 1024
            label = "view" if on else "host"
            print(
                f"{k:<8} {label:<10} {med:>9.1f} {min(v):>7.1f} {max(v):>7.1f} {med / host:>7.2f} "
                f"{rss:>7.1f} {pss:>7.1f}"
            )


if __name__ == "__main__":
    box._warned.add("off for the benchmark")
    main()
