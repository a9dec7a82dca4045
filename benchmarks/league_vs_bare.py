"""The project's league against a bare referee, and where a decision's time goes.

    python benchmarks/league_vs_bare.py [--matches 2000] [--trials 3] [--workers 2] [--parts]
                                        [--write docs/performance.md]
    python benchmarks/league_vs_bare.py --profile [--profile-matches 300] [--top] [--write docs/performance.md]

``--write`` puts the figures in their own section (``## ...: last run``) of the file.

**Throughput.** Each trial runs, one after the other (the order alternates
from trial to trial, so that drifting load hits both alike):

- the project: ``arena run`` as a user types it (a fresh interpreter running
  the CLI), five copies of ``benchmarks/bots/heuristic.py`` at 5-player
  ``classic`` tables, ``--workers`` workers, every protection of the sandbox
  on (bubblewrap, cgroups, the seccomp filter, freezing between turns);
- the bare referee (``benchmarks/bare_referee.py``): the same heuristic in
  plain child processes, stdlib JSON, no sandbox, no records, one referee per
  worker pinned to a core as the project's workers are, playing the very
  number of decisions the project's run made;
- the same bare referee with ``--sandbox``: each bot in the project's
  sandbox (bubblewrap, the seccomp filter, cgroups, rlimits), thawed, read,
  charged and frozen around each decision as the project's referee does it.
  Its ratio to the bare one is the price of the protections alone: the most
  any referee that keeps them could reach;
- with ``--parts``, the same once more with ``--no-freeze``: the sandbox
  without freezing between turns, so that the price of freezing and the
  price of the rest of the sandbox are told apart.

Reported per trial: decisions per second of both, in the match phase and for
the whole command, the ratios project / bare, the project's match phase as a
share of the sandboxed bare referee's (what the project costs beyond the
protections, whatever they cost on the machine), and the CPU time per decision
of each whole command (every process of it, bots included: the figure that
moves least with the machine's load, since waiting for a core is not in it). The project's match phase
runs from the moment its first record reaches ``games.jsonl`` to its last
(the file is watched every 2 ms; the decisions of the records already there
at the first sight are left out), so start-up of workers and bots and the
end of the run are outside it; the bare referee's runs from the moment every
bot said ``ready`` to the last game's end.

**Profile** (``--profile``). Where a decision's CPU time goes, referee side
and bot side. Matches of the same league are played in this process by one
:class:`arena.running.worker.Worker` (what a worker process runs), pinned to
one core with its bots, under a CPU-time sampler (``benchmarks/_sampler.py``);
first with the Python bot ``heuristic_profiled.py``, made here of
``bots/heuristic.py``, ``_sampler.py`` and ``_profiled_bot.py`` (one file: a
sandboxed bot sees only its own), which runs the same sampler inside its
sandbox (the host, the SDK's views, the bot's own code, the pipe), then with the program bot ``bots/node_probabilistic.yaml``
(Node.js: its side is its CPU as its cgroup counts it, without breakdown).
Samples are grouped by the innermost frame that belongs to a known part
(rules, views, encoding, the sandbox's accounting and freezing, ...), and
scaled to microseconds per decision by the CPU time the process used.
Last, unsampled (a sampler costs its process a few per cent): the same worker
with ``bots/heuristic.py``, beside ``bare_referee.py --pin --sandbox`` for as
many decisions, the referee process's user and kernel CPU and the bots' apart,
per decision: which side of the pipe the gap to the floor is on. And where
``perf`` is installed, the same worker once more under ``perf record``: the
compiled referee is one frame to the sampler above, so perf splits its CPU
instead, the kernel's by the system call a sample came through (the freeze
file's writes, the CPU counter, the pipes, poll) and the rest by the library
or compiled module it was in.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

BOT = HERE / "bots" / "heuristic.py"
PROGRAM = ROOT / "bots" / "node_probabilistic.yaml"


def write_config(folder: Path, bot: Path, matches: int, seed: int, extra: str = "") -> Path:
    path = folder / f"league-{bot.stem}.yaml"
    path.write_text(
        f"name: league_vs_bare\n"
        f"bots: [{', '.join([json.dumps(str(bot))] * 5)}]\n"
        f"players: [5]\nmatches: {matches}\nformat: league\nseed: {seed}\n"
        f"variants:\n  classic: {{preset: classic}}\n{extra}",
        encoding="utf-8",
    )
    return path


def decisions_of(line: bytes) -> int:
    rec = json.loads(line)
    return sum(len(r["actions"]) for r in rec["rounds"])


# --- throughput ----------------------------------------------------------------------------------------


def children_cpu() -> float:
    """CPU seconds of every waited-for descendant so far. Not every bot's: a
    sandboxed bot's time reaches its referee's only if every process between
    them waits for its child, and a worker that ends before its bots are
    reaped loses theirs; hence :class:`CommandCpu`."""
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


class CommandCpu:
    """The CPU time of a command and every process it starts, bots included,
    from a CPU-accounting cgroup the command is started in (a bot's own cgroup
    is made inside its referee's, and a cgroup's counter keeps what its
    removed children used). Without a cgroup we may create: the rusage of
    waited-for children, which can miss bots (``source`` says which)."""

    def __init__(self, tag: str) -> None:
        self.path: str | None = None
        self.source = "rusage of waited-for children (bots may be missing)"
        for base, counter in (
            ("/sys/fs/cgroup/cpuacct", "cpuacct.usage"),
            ("/sys/fs/cgroup/unified", "cpu.stat"),
            ("/sys/fs/cgroup", "cpu.stat"),
        ):
            if os.path.exists(os.path.join(base, counter)):
                path = os.path.join(base, f"league_vs_bare-{os.getpid()}-{tag}")
                try:
                    os.mkdir(path)
                except OSError:
                    continue
                self.path, self.counter = path, counter
                self.source = f"the command's cgroup ({counter}), bots included"
                break
        self._ru0 = children_cpu()

    def source_and_remove(self) -> str:
        """What :meth:`seconds` counts, for the report (the cgroup is not used)."""
        if self.path is not None:
            os.rmdir(self.path)
            self.path = None
        return self.source

    def preexec(self) -> None:
        """Runs in the child before exec: join the cgroup."""
        if self.path is not None:
            with open(os.path.join(self.path, "cgroup.procs"), "w") as f:
                f.write("0")

    def seconds(self) -> float:
        """CPU seconds so far (call after the command ended); removes the cgroup."""
        if self.path is None:
            return children_cpu() - self._ru0
        with open(os.path.join(self.path, self.counter)) as f:
            text = f.read()
        os.rmdir(self.path)
        self.path = None
        if self.counter == "cpuacct.usage":
            return int(text) / 1e9
        return int(text.split("usage_usec", 1)[1].split()[0]) / 1e6


def run_project(config: Path, out: Path, workers: int) -> dict[str, float]:
    """``arena run``, whole command timed; the match phase from games.jsonl as it grows."""
    games = out / "games.jsonl"
    seen: list[tuple[float, int]] = []  # (time, size) at each change
    stop = threading.Event()

    def watch() -> None:
        last = 0
        while not stop.is_set():
            try:
                size = os.stat(games).st_size
            except FileNotFoundError:
                size = 0
            if size != last:
                seen.append((time.perf_counter(), size))
                last = size
            time.sleep(0.002)

    watcher = threading.Thread(target=watch, daemon=True)
    meter = CommandCpu("project")
    t0 = time.perf_counter()
    watcher.start()
    proc = subprocess.run(
        [sys.executable, "-m", "arena", "run", str(config), "--workers", str(workers), "--out", str(out)],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        preexec_fn=meter.preexec,
    )
    whole = time.perf_counter() - t0
    cpu = meter.seconds()
    stop.set()
    watcher.join()
    if proc.returncode != 0:
        raise SystemExit(f"arena run failed:\n{proc.stderr.decode(errors='replace')}")
    data = games.read_bytes()
    lines = data.splitlines(keepends=True)
    per = [decisions_of(line) for line in lines]
    (t_first, s_first), (t_last, s_last) = seen[0], seen[-1]
    if s_last != len(data):
        raise SystemExit("games.jsonl changed after the run ended")
    # Records wholly in the file at the first sight are left out: the phase starts there.
    at, skip = 0, 0
    for line in lines:
        if at + len(line) > s_first:
            break
        at += len(line)
        skip += 1
    return {
        "decisions": sum(per),
        "whole_wall": whole,
        "match_decisions": sum(per[skip:]),
        "match_wall": t_last - t_first,
        "matches": len(lines),
        "cpu": cpu,
    }


# The bare referee's arms: (--sandbox, --no-freeze).
ARMS: dict[str, tuple[bool, bool]] = {"bare": (False, False), "boxed": (True, False), "unfrozen": (True, True)}


def run_bare(decisions: int, workers: int, arm: str = "bare") -> dict[str, float]:
    sandbox, unfrozen = ARMS[arm]
    meter = CommandCpu("bare")
    t0 = time.perf_counter()
    out = subprocess.run(
        [sys.executable, str(HERE / "bare_referee.py"), str(decisions), "--par", str(workers), "--pin"]
        + ["--sandbox"] * sandbox
        + ["--no-freeze"] * unfrozen,
        check=True,
        stdout=subprocess.PIPE,
        preexec_fn=meter.preexec,
    ).stdout
    whole = time.perf_counter() - t0
    res: dict[str, float] = json.loads(out)
    res["whole_wall"] = whole  # the command as typed, interpreter start-up included
    res["cpu"] = meter.seconds()
    res["match_decisions"] = res["decisions"]
    return res


def throughput(args: argparse.Namespace) -> list[str]:
    rows = []
    with tempfile.TemporaryDirectory(prefix="league_vs_bare-") as tmp:
        config = write_config(Path(tmp), BOT, args.matches, args.seed)
        for t in range(args.trials):
            order = ["project", "bare", "boxed"] + ["unfrozen"] * args.parts
            if t % 2:
                order.reverse()
            got: dict[str, dict[str, float]] = {}
            for side in order:
                if side == "project":
                    got[side] = run_project(config, Path(tmp) / f"run{t}", args.workers)
                else:
                    target = int(got["project"]["decisions"]) if "project" in got else args.bare_decisions
                    got[side] = run_bare(target, args.workers, side)
            for side in [side for side in order if side != "project"]:
                if got[side]["decisions"] < got["project"]["decisions"] * 0.95:
                    # the bare side went first with a guess: rerun it on the project's count
                    got[side] = run_bare(int(got["project"]["decisions"]), args.workers, side)
            p, b, x = got["project"], got["bare"], got["boxed"]
            row = {
                "trial": t + 1,
                "load": os.getloadavg()[0],
                "decisions": p["decisions"],
                "bare_decisions": b["decisions"],
                "p_match": p["match_decisions"] / p["match_wall"],
                "p_whole": p["decisions"] / p["whole_wall"],
                "b_match": b["match_decisions"] / b["match_wall"],
                "b_whole": b["decisions"] / b["whole_wall"],
                "p_cpu": p["cpu"] / p["decisions"] * 1e6,
                "b_cpu": b["cpu"] / b["decisions"] * 1e6,
                "p_whole_s": p["whole_wall"],
                "p_match_s": p["match_wall"],
                "b_whole_s": b["whole_wall"],
                "x_match": x["match_decisions"] / x["match_wall"],
                "x_cpu": x["cpu"] / x["decisions"] * 1e6,
            }
            row["r_floor"] = row["x_match"] / row["b_match"]
            # The project against the ceiling: what its own referee, host and
            # records cost beyond the protections, apart from what the
            # protections cost on this machine (freezing's price varies by
            # machine: the ceiling was 0.90 on one, 0.75 on another).
            row["r_ceiling"] = row["p_match"] / row["x_match"]
            if args.parts:
                u = got["unfrozen"]
                row["u_match"] = u["match_decisions"] / u["match_wall"]
                row["u_cpu"] = u["cpu"] / u["decisions"] * 1e6
                row["r_unfrozen"] = row["u_match"] / row["b_match"]
            row["r_match"] = row["p_match"] / row["b_match"]
            row["r_whole"] = row["p_whole"] / row["b_whole"]
            args.bare_decisions = int(p["decisions"])
            rows.append(row)
            print(
                f"trial {t + 1} (load {row['load']:.1f}): project {row['p_match']:,.0f} decisions/s in the match "
                f"phase, {row['p_whole']:,.0f} whole ({p['whole_wall']:.1f} s, of which {p['match_wall']:.1f} s "
                f"match phase); bare {row['b_match']:,.0f} / {row['b_whole']:,.0f}; ratio "
                f"{row['r_match']:.2f} / {row['r_whole']:.2f}; bare in the sandbox {row['x_match']:,.0f} "
                f"({row['r_floor']:.2f} of bare; the project {row['r_ceiling']:.2f} of it)"
                + (f"; unfrozen {row['u_match']:,.0f} ({row['r_unfrozen']:.2f})" if args.parts else ""),
                file=sys.stderr,
                flush=True,
            )
    lines = [
        f"`python benchmarks/league_vs_bare.py --matches {args.matches} --trials {args.trials} "
        f"--workers {args.workers}{' --parts' * args.parts}`, {time.strftime('%Y-%m-%d %H:%M')}, "
        f"{os.cpu_count()} cores, "
        f"Python {platform.python_version()}; load average before: {args.load_before}.",
        "",
        "| trial | load | decisions | project, match phase (decisions/s) | project, whole command | "
        "bare, match phase | bare, whole command | ratio match phase | ratio whole command | "
        "CPU us per decision, project / bare (whole commands) | bare in the sandbox, match phase (x bare) | "
        "its CPU us per decision | project / bare in the sandbox, match phase |"
        + (" the sandbox unfrozen, match phase (x bare) | its CPU us per decision |" if args.parts else ""),
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|" + "---|---|" * args.parts,
    ]
    for r in rows:
        lines.append(
            f"| {r['trial']} | {r['load']:.1f} | {r['decisions']:,} | {r['p_match']:,.0f} | "
            f"{r['p_whole']:,.0f} ({r['p_whole_s']:.1f} s) | {r['b_match']:,.0f} | "
            f"{r['b_whole']:,.0f} ({r['b_whole_s']:.1f} s) | {r['r_match']:.2f} | {r['r_whole']:.2f} | "
            f"{r['p_cpu']:.0f} / {r['b_cpu']:.0f} | {r['x_match']:,.0f} ({r['r_floor']:.2f}) | "
            f"{r['x_cpu']:.0f} | {r['r_ceiling']:.2f} |"
            + (f" {r['u_match']:,.0f} ({r['r_unfrozen']:.2f}) | {r['u_cpu']:.0f} |" if args.parts else "")
        )
    lines += [
        "",
        f"CPU time from {CommandCpu('probe').source_and_remove()}.",
        "",
        f"Median ratio: match phase **{statistics.median(r['r_match'] for r in rows):.2f}**, "
        f"whole command **{statistics.median(r['r_whole'] for r in rows):.2f}**; the bare referee with "
        f"its bots in the sandbox, frozen between turns: **{statistics.median(r['r_floor'] for r in rows):.2f}** "
        f"of the bare referee (the ceiling for any referee keeping the protections), and the project "
        f"**{statistics.median(r['r_ceiling'] for r in rows):.2f}** of that ceiling"
        + (
            f"; the same not frozen between turns: **{statistics.median(r['r_unfrozen'] for r in rows):.2f}**"
            if args.parts
            else ""
        )
        + ".",
    ]
    return lines


# --- profile ------------------------------------------------------------------------------------------

# (path fragment, function or "*", part): the first rule that matches a frame,
# innermost frame first, names the part a sample belongs to.
RULES: list[tuple[str, str, str]] = [
    ("benchmarks/_sampler.py", "*", "the sampler itself"),
    ("heuristic_profiled.py", "_on_signal", "the sampler itself"),
    ("arena/sandbox/cgroups.py", "cpu_ns", "sandbox: CPU accounting (cgroup counter)"),
    ("arena/sandbox/box.py", "cpu_ns", "sandbox: CPU accounting (cgroup counter)"),
    ("arena/sandbox/procfs.py", "*", "sandbox: CPU accounting (cgroup counter)"),
    ("arena/sandbox/cgroups.py", "freeze", "sandbox: freezing and thawing"),
    ("arena/sandbox/cgroups.py", "thaw", "sandbox: freezing and thawing"),
    ("arena/sandbox/box.py", "freeze", "sandbox: freezing and thawing"),
    ("arena/sandbox/box.py", "thaw", "sandbox: freezing and thawing"),
    ("arena/sandbox/", "*", "sandbox: start and close of bots"),
    ("arena/protocol/wire.py", "*", "encoding: JSON lines (wire.py)"),
    ("arena/protocol/messages.py", "encode_reply", "encoding: JSON lines (wire.py)"),
    ("arena/protocol/messages.py", "*", "views: messages built (messages.py)"),
    ("arena/protocol/parse.py", "parse_turn", "views: the SDK's Turn built (parse.py)"),
    ("arena/protocol/parse.py", "*", "parsing of replies and messages (parse.py)"),
    ("arena/protocol/driver.py", "*", "host: driver (driver.py)"),
    ("arena/protocol/host.py", "*", "host: pipe read, decode, write (host.py)"),
    ("arena/sdk/__init__.py", "*", "SDK (sdk.py)"),
    ("heuristic_profiled.py", "*", "the bot's own code"),
    ("arena/engine/records.py", "*", "records: built and encoded (records.py)"),
    ("arena/engine/", "*", "rules and dice (engine/)"),
    ("arena/match/process.py", "*", "pipes and time control (process.py)"),
    ("arena/match/referee.py", "*", "referee loop (referee.py)"),
    ("arena/running/worker.py", "*", "worker (worker.py)"),
    ("subprocess.py", "*", "sandbox: start and close of bots"),
]


def part_of(stack: list[list[Any]]) -> str:
    for file, func, _line in stack:
        for frag, fn, part in RULES:
            if frag in file and (fn == "*" or fn == func):
                return part
    inner = stack[0] if stack else ["?", "?", 0]
    return f"other ({Path(str(inner[0])).name}:{inner[1]})"


def top_lines(samples: list[tuple[list[list[Any]], int]], n: int = 25) -> list[str]:
    """The innermost frames seen most often, with the frame that called each."""
    where: Counter[str] = Counter()
    for stack, k in samples:
        inner = stack[0]
        caller = f" <- {Path(stack[1][0]).name}:{stack[1][1]}:{stack[1][2]}" if len(stack) > 1 else ""
        where[f"{Path(inner[0]).name}:{inner[1]}:{inner[2]}{caller}"] += k
    total = sum(where.values()) or 1
    return [f"{100 * k / total:5.1f}% {w}" for w, k in where.most_common(n)]


def breakdown(samples: list[tuple[list[list[Any]], int]], cpu: float, decisions: int) -> list[tuple[str, float]]:
    parts: Counter[str] = Counter()
    for stack, n in samples:
        parts[part_of(stack)] += n
    total = sum(parts.values()) or 1
    return [(part, cpu * n / total / decisions * 1e6) for part, n in parts.most_common()]


def profiled_bot(folder: Path) -> Path:
    """heuristic.py, the sampler and the profiling wrapper in one bot file."""
    parts = [
        (HERE / name).read_text(encoding="utf-8") for name in ("bots/heuristic.py", "_sampler.py", "_profiled_bot.py")
    ]
    text = "\n\n".join(p.replace("from __future__ import annotations\n", "") for p in parts)
    path = folder / "heuristic_profiled.py"
    path.write_text(text, encoding="utf-8")
    return path


def profile_once(
    bot: Path, matches: int, seed: int, tmp: Path, sample: bool = True, perf: tuple[list[str], Path] | None = None
) -> dict[str, Any]:
    """One worker, pinned with its bots, plays ``matches``; with ``sample``, the
    worker's stacks are sampled (which costs it a few per cent), else only its
    CPU is counted. With ``perf`` (its command and a data file), ``perf record``
    samples this process (the referee alone, kernel included) while the
    matches are played."""
    from _sampler import Sampler

    from arena.running.config import load_config
    from arena.running.planning import plan_run
    from arena.running.runner import preflight
    from arena.running.worker import Worker

    config = write_config(tmp, bot, matches, seed, "sandbox: {stderr_tail: 4194304, output_bytes: 67108864}\n")
    cfg = load_config(str(config), (), workers=1, out=str(tmp / f"run-{bot.stem}"))
    preflight(cfg)
    specs = plan_run(cfg).specs
    os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})  # the worker and its bots on one core
    worker = Worker([(e.label, e.spec) for e in cfg.entrants], cfg.sandbox, cfg.time)
    for spec in specs[:5]:  # every bot started before sampling: start-up is not per decision
        worker.play(spec)
    sampler = Sampler()
    lines = []
    recorder = perf_record(*perf) if perf is not None else None
    self0 = resource.getrusage(resource.RUSAGE_SELF)
    if sample:
        sampler.start()
    for spec in specs[5:]:
        res = worker.play(spec)
        if "error" in res:
            raise SystemExit(res["error"])
        lines.append(res["line"])
    if sample:
        sampler.stop()
    else:
        self1 = resource.getrusage(resource.RUSAGE_SELF)
        sampler.cpu = self1.ru_utime + self1.ru_stime - self0.ru_utime - self0.ru_stime
        sampler.system = self1.ru_stime - self0.ru_stime
    if recorder is not None:
        recorder.send_signal(signal.SIGINT)  # perf writes its file and exits
        recorder.wait(timeout=60)
    decisions = 0
    think = 0.0
    for line in lines:  # read after sampling: the benchmark's own work is no part of a decision
        rec = json.loads(line)
        decisions += sum(len(r["actions"]) for r in rec["rounds"])
        think += sum(rec["think"])
    stderr = worker.drain()
    bot_side = None
    for _label, _match, _note, data, _lost in stderr:
        for line in data.splitlines():
            if line.startswith(b"PROFILE "):
                got = json.loads(line[8:])
                if bot_side is None:
                    bot_side = {"cpu": 0.0, "system": 0.0, "decisions": 0, "samples": []}
                bot_side["cpu"] += got["cpu"]
                bot_side["system"] += got["system"]
                bot_side["decisions"] += got["decisions"]
                bot_side["samples"] += got["samples"]
    ref = sampler.to_data()
    return {
        "bot": bot,
        "decisions": decisions,
        "referee_cpu": ref["cpu"],
        "referee_system": ref["system"],
        "referee": ref["samples"],
        "think": think,
        "bot_side": bot_side,
        "matches": len(specs) - 5,
    }


def profile(args: argparse.Namespace) -> list[str]:
    lines = [
        f"`python benchmarks/league_vs_bare.py --profile --profile-matches {args.profile_matches}`, "
        f"{time.strftime('%Y-%m-%d %H:%M')}; load average before: {args.load_before}. One worker in the "
        f"benchmark's process and its bots pinned to one core; microseconds of CPU per decision.",
        "",
    ]
    with tempfile.TemporaryDirectory(prefix="league_profile-") as tmp:
        profiled = profiled_bot(Path(tmp))
        for bot in (profiled, PROGRAM):
            res = profile_once(bot, args.profile_matches, args.seed, Path(tmp))
            d = res["decisions"]
            name = (
                "Python bot (heuristic.py with the sampler)"
                if bot == profiled
                else "program bot (bots/node_probabilistic.yaml, Node.js)"
            )
            lines += [
                f"### {name}",
                "",
                f"{res['matches']} matches, {d:,} decisions; referee (worker) CPU "
                f"{res['referee_cpu'] / d * 1e6:.1f} us per decision, the bots' CPU as their cgroups "
                f"count it {res['think'] / d * 1e6:.1f} us. Of the referee's CPU, "
                f"{res['referee_system'] / d * 1e6:.1f} us is the kernel's (system time)"
                + (
                    f"; of the Python bot's, {res['bot_side']['system'] / res['bot_side']['decisions'] * 1e6:.1f} us"
                    if res["bot_side"]
                    else ""
                )
                + ".",
                "",
                "| side | part | us per decision |",
                "|---|---|---|",
            ]
            for part, us in breakdown(res["referee"], res["referee_cpu"], d):
                lines.append(f"| referee | {part} | {us:.1f} |")
            side = res["bot_side"]
            if args.top:
                print("referee, innermost frames:\n  " + "\n  ".join(top_lines(res["referee"])), file=sys.stderr)
                if side is not None:
                    print("bot, innermost frames:\n  " + "\n  ".join(top_lines(side["samples"])), file=sys.stderr)
            if side is not None:
                for part, us in breakdown(side["samples"], side["cpu"], side["decisions"]):
                    lines.append(f"| bot | {part} | {us:.1f} |")
                lines.append(
                    f"| bot | (total, the bot's own count: {side['decisions']:,} decisions) | "
                    f"{side['cpu'] / side['decisions'] * 1e6:.1f} |"
                )
            else:
                lines.append(
                    f"| bot | all (its cgroup's CPU counter; no breakdown inside a program) | "
                    f"{res['think'] / d * 1e6:.1f} |"
                )
            lines.append("")
            print("\n".join(lines[-40:]), file=sys.stderr, flush=True)
        split, referee_us = split_against_bare(args, Path(tmp))
        lines += split + native_split(args, Path(tmp), referee_us)
    return lines


def split_against_bare(args: argparse.Namespace, tmp: Path) -> tuple[list[str], float]:
    """Referee and bots apart, unsampled, beside the bare referee with its bots
    in the sandbox (frozen between turns): which side the gap is on. Also
    returns the referee's CPU per decision (us), unsampled."""
    res = profile_once(BOT, args.profile_matches, args.seed, tmp, sample=False)
    d = res["decisions"]
    out = subprocess.run(
        [sys.executable, str(HERE / "bare_referee.py"), str(d), "--pin", "--sandbox"],
        check=True,
        stdout=subprocess.PIPE,
    ).stdout
    bare = json.loads(out)
    b = bare["decisions"]
    rows = [
        ("referee process, user", (res["referee_cpu"] - res["referee_system"]) / d, bare["referee_user"] / b),
        ("referee process, kernel", res["referee_system"] / d, bare["referee_system"] / b),
        ("bots (their cgroups' counters)", res["think"] / d, bare["bots_cpu"] / b),
    ]
    rows.append(("total", sum(r[1] for r in rows), sum(r[2] for r in rows)))
    lines = [
        "### Referee and bots apart, against the bare referee in the sandbox",
        "",
        f"Unsampled: the project's worker with five copies of benchmarks/bots/heuristic.py, "
        f"{res['matches']} matches, {d:,} decisions; `bare_referee.py {d} --pin --sandbox`, {b:,} decisions. "
        f"Both on one core; microseconds of CPU per decision.",
        "",
        "| part | project | bare referee, sandboxed | difference |",
        "|---|---|---|---|",
    ]
    for part, p, q in rows:
        lines.append(f"| {part} | {p * 1e6:.1f} | {q * 1e6:.1f} | {(p - q) * 1e6:+.1f} |")
    lines.append("")
    print("\n".join(lines), file=sys.stderr, flush=True)
    return lines, res["referee_cpu"] / d * 1e6


# --- the compiled referee, through perf ----------------------------------------------------------------

# A sample whose innermost frame is in the kernel is named by the system call
# it came through: the C library's wrapper is the first user-space frame of
# its chain (the kernel's own frames unwind; a user-space chain past the first
# frame does not, without frame pointers). The referee makes these calls per
# decision: the turn written, the freeze file written twice (thaw and freeze,
# with the switches to and from the bot they cause), the reply read, the CPU
# counter read.
SYSCALL_PARTS: list[tuple[str, str]] = [
    ("pwrite", "kernel: thaw and freeze (cgroup.freeze writes, and the switches they cause)"),
    ("pread", "kernel: the CPU counter read (cpuacct.usage / cpu.stat)"),
    ("poll", "kernel: waiting for a reply (poll)"),
    ("write", "kernel: pipe writes (turns and notifications)"),
    ("read", "kernel: pipe reads (replies, stderr)"),
]
# Compiled modules (arena/compiled.py), by the module part of mypyc's names.
MODULE_PARTS: dict[str, str] = {
    "rules": "compiled: rules and dice",
    "dice": "compiled: rules and dice",
    "messages": "compiled: views (messages.py)",
    "wire": "compiled: encoding (wire.py)",
    "parse": "compiled: parsing (parse.py)",
    "referee": "compiled: referee loop (referee.py)",
    "process": "compiled: pipes and time control (process.py)",
    "tables": "compiled: records' table rows",
    "tablefiles": "compiled: records' table rows",
}


def perf_command() -> list[str] | None:
    """``perf`` if it is installed and may sample this process, else None."""
    import shutil

    perf = shutil.which("perf")
    if perf is None:
        return None
    probe = subprocess.run(
        [perf, "record", "-q", "-e", "cpu-clock", "-o", "/dev/null", "--", "true"], capture_output=True
    )
    return [perf] if probe.returncode == 0 else None


def perf_record(perf: list[str], data: Path) -> subprocess.Popen[bytes]:
    """``perf record`` on this process, call chains on, until SIGINT."""
    proc = subprocess.Popen(
        [*perf, "record", "-q", "-g", "-e", "cpu-clock", "-F", "999", "-p", str(os.getpid()), "-o", str(data)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    time.sleep(0.5)  # it attaches before the first decision it must see
    return proc


def part_of_native(frames: list[tuple[str, str]]) -> str:
    """The part a perf sample belongs to: ``frames`` are (symbol, dso), innermost first."""
    sym, dso = frames[0]
    if dso == "[kernel.kallsyms]":
        kernel = [f for f, d in frames if d == "[kernel.kallsyms]"]
        if not any(f.startswith(("do_syscall_64", "entry_SYSCALL")) for f in kernel):
            if any("page_fault" in f for f in kernel):
                return "kernel: page faults"
            return "kernel: interrupts and other"
        user = next((f for f, d in frames if d != "[kernel.kallsyms]"), "?")
        for key, part in SYSCALL_PARTS:
            if key in user:
                return part
        return f"kernel: other system calls ({user.split('+')[0]})"
    if "_native__mypyc" in dso or dso.endswith("__mypyc.so"):
        if sym.startswith(("CPyDef_", "CPyPy_")) and "___" in sym:
            module = sym.split("_", 1)[1].split("___", 1)[0]
            return MODULE_PARTS.get(module, f"compiled: {module}")
        return "compiled: mypyc's runtime helpers"
    if "libpython" in dso:
        return "CPython runtime (objects, dicts, calls; worker.py and records.py run here)"
    if "orjson" in dso:
        return "encoding: orjson"
    if "libc.so" in dso:
        return "libc (allocation, copies)"
    return f"other ({Path(dso).name})"


def perf_samples(perf: list[str], data: Path) -> list[list[tuple[str, str]]]:
    """Each sample's frames, (symbol, dso) innermost first, from ``perf script``."""
    text = subprocess.run(
        [*perf, "script", "-i", str(data), "-F", "ip,sym,dso"], capture_output=True, text=True, check=True
    ).stdout
    out = []
    for block in text.split("\n\n"):
        frames = []
        for line in block.strip().splitlines():
            parts = line.strip().split(" ", 1)
            if len(parts) < 2 or not parts[1].endswith(")") or " (" not in parts[1]:
                continue
            sym, dso = parts[1].rsplit(" (", 1)
            frames.append((sym, dso[:-1]))
        if frames:
            out.append(frames)
    return out


def native_split(args: argparse.Namespace, tmp: Path, scale: float) -> list[str]:
    """The compiled referee's CPU per decision by part, as perf samples it:
    what the Python sampler cannot see into (a compiled module is one frame
    to it), and the kernel's side by system call. ``scale``: the referee's CPU
    per decision (us) measured unsampled, since sampling with call chains
    costs the sampled process a good part."""
    heading = "### The referee through perf (kernel and compiled code)"
    perf = perf_command()
    if perf is None:
        lines = [
            heading,
            "",
            "Not measured: `perf` is not installed, or may not sample this process "
            "(Debian: `apt-get install linux-perf`; `/proc/sys/kernel/perf_event_paranoid`).",
            "",
        ]
        print("\n".join(lines), file=sys.stderr, flush=True)
        return lines
    data = tmp / "referee.perf"
    res = profile_once(BOT, args.profile_matches, args.seed, tmp, sample=False, perf=(perf, data))
    d = res["decisions"]
    samples = perf_samples(perf, data)
    parts: Counter[str] = Counter(part_of_native(frames) for frames in samples)
    total = sum(parts.values()) or 1
    lines = [
        heading,
        "",
        f"`perf record -g -e cpu-clock -F 999` on the worker's process (the referee alone, its bots "
        f"apart), five copies of benchmarks/bots/heuristic.py, {res['matches']} matches, {d:,} "
        f"decisions, {len(samples):,} samples, split in the samples' proportions of the referee's "
        f"{scale:.1f} us of CPU per decision measured unsampled above ({res['referee_cpu'] / d * 1e6:.1f} "
        f"while perf sampled it). A kernel sample is named by the system call it came through; a "
        f"user-space one by its innermost frame (the CPython runtime's work for the compiled modules is a "
        f"part of its own: without frame pointers, perf cannot say whose it was).",
        "",
        "| part | us per decision | share |",
        "|---|---|---|",
    ]
    for part, n in parts.most_common():
        if n / total >= 0.005:
            lines.append(f"| {part} | {scale * n / total:.1f} | {100 * n / total:.0f}% |")
    rest = sum(n for n in parts.values() if n / total < 0.005)
    if rest:
        lines.append(f"| (parts under 0.5% each) | {scale * rest / total:.1f} | {100 * rest / total:.0f}% |")
    lines.append("")
    print("\n".join(lines), file=sys.stderr, flush=True)
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--matches", type=int, default=2000)
    ap.add_argument("--trials", type=int, default=3)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--bare-decisions", type=int, default=200_000, help=argparse.SUPPRESS)
    ap.add_argument(
        "--parts",
        action="store_true",
        help="also the bare referee's sandbox without freezing: the price of freezing on its own",
    )
    ap.add_argument("--profile", action="store_true", help="where a decision's time goes, instead")
    ap.add_argument("--profile-matches", type=int, default=300)
    ap.add_argument("--top", action="store_true", help="with --profile: also print the busiest lines")
    ap.add_argument("--label", default="", help="a word for the section heading (e.g. before, after)")
    ap.add_argument("--write", help="update this section of a markdown file")
    args = ap.parse_args()
    args.load_before = " ".join(f"{x:.1f}" for x in os.getloadavg())
    if args.profile:
        heading = "## League profile: last run" + (f" ({args.label})" if args.label else "")
        body = profile(args)
    else:
        heading = "## League against a bare referee: last run" + (f" ({args.label})" if args.label else "")
        body = throughput(args)
    text = "\n".join([heading, ""] + body) + "\n"
    print(text)
    if args.write:
        from _markdown import replace_section

        replace_section(Path(args.write), heading, text)


if __name__ == "__main__":
    main()
