"""What the live page (``arena run --serve``) costs a run: matches/s with and without it.

    python benchmarks/serve_cost.py [--config configs/quick.yaml] [--matches 1000] [--trials 3]
                                    [--poll 2]

The same run (fixed seed, 2 workers, sandboxed bots as ``arena run`` plays
them) is played without a server, and with ``arena serve RUN --run-pending``
in its own process (as ``arena run --serve`` starts it) and two pages open
on it: one polling ``/api/run`` (the live page: the new records read, the
Elo table refitted at its pace, the variant statistics) and one polling the
match list, each every ``--poll`` seconds as the pages do. The two are
alternated (off, on; then on, off; ...) ``--trials`` times so both see the
same load. Reported: matches/s of each, the median of the per-trial ratios
(with / without; 1.00 = free), and the server's own CPU time as a share of
the run's wall time (on 2 cores, CPU the server takes is the workers'
loss at most; less at the mercy of the machine's load than the ratio).
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from arena.running.config import load_config  # noqa: E402
from arena.running.runner import run  # noqa: E402


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _cpu(pid: int) -> float:
    """CPU seconds (user + system) of a running process and its threads."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _poll(url: str, every: float, stop: threading.Event, answers: list[int]) -> None:
    while not stop.wait(every):
        try:
            with urllib.request.urlopen(url, timeout=30) as resp:
                resp.read()
                answers.append(resp.status)
        except OSError:
            pass  # the server still starting


def timed(config: str, out: Path, matches: int, seed: int, poll: float | None) -> tuple[float, int, float, int]:
    """(wall s, matches played, server CPU s, pages answered) of one run."""
    cfg = load_config(config, (), workers=2, matches=matches, seed=seed, out=str(out))
    server = None
    stop = threading.Event()
    answers: list[int] = []
    pollers = []
    if poll is not None:
        port = _port()
        server = subprocess.Popen(
            [sys.executable, "-m", "arena", "serve", str(out), "--port", str(port), "--run-pending"],
            stdout=subprocess.DEVNULL,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while True:  # started and listening before the run, as arena run --serve has it
            try:
                urllib.request.urlopen(base + "/api/run", timeout=5).read()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise SystemExit("the server did not start") from None
                time.sleep(0.1)
        cpu0 = _cpu(server.pid)
        for path in ("/api/run", "/api/matches"):
            t = threading.Thread(target=_poll, args=(base + path, poll, stop, answers), daemon=True)
            t.start()
            pollers.append(t)
    t0 = time.perf_counter()
    result = run(cfg)
    wall = time.perf_counter() - t0
    cpu = 0.0
    if server is not None:
        cpu = _cpu(server.pid) - cpu0
        stop.set()
        for t in pollers:
            t.join(30)
        server.terminate()
        server.wait(30)
    if result.status != "complete":
        raise SystemExit(f"run did not complete: {result.status} {result.error}")
    return wall, result.played, cpu, len(answers)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", default="configs/quick.yaml")
    ap.add_argument("--matches", type=int, default=1000, help="matches per variant")
    ap.add_argument("--trials", type=int, default=3)
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--poll", type=float, default=2.0, help="seconds between each page's requests")
    args = ap.parse_args()
    os.chdir(ROOT)
    ratios: list[float] = []
    shares: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        for t in range(args.trials):
            order = (None, args.poll) if t % 2 == 0 else (args.poll, None)
            got = {}
            for poll in order:
                got[poll is not None] = timed(
                    args.config, Path(tmp) / f"{t}-{poll is not None}", args.matches, args.seed, poll
                )
            (w0, n0, _, _), (w1, n1, cpu, answered) = got[False], got[True]
            ratios.append((n1 / w1) / (n0 / w0))
            shares.append(cpu / w1)
            print(
                f"trial {t + 1}: without {n0 / w0:.1f} matches/s, with the live page {n1 / w1:.1f} matches/s "
                f"({answered} pages answered, server CPU {cpu:.2f} s of {w1:.1f} s), ratio {ratios[-1]:.3f}",
                file=sys.stderr,
            )
    print(f"$ python benchmarks/serve_cost.py --config {args.config} --matches {args.matches} --trials {args.trials}")
    print(
        f"median ratio with/without the live page over {args.trials} trials: {statistics.median(ratios):.3f} "
        f"(of {', '.join(f'{r:.3f}' for r in ratios)}); the server's CPU: median "
        f"{100 * statistics.median(shares):.2f}% of the run's wall time (load {os.getloadavg()[0]:.1f})"
    )


if __name__ == "__main__":
    main()
