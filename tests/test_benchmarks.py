"""Every benchmark script still runs: each figure in docs/performance.md names
the command that made it, and a script that has rotted (a message the bot
host now refuses, an argument read as a file name) cannot be re-run to check
it. Each runs here at the smallest size that takes its whole path, in a
fresh interpreter as a user types it, writing nowhere in the repository;
what it measures is not asserted (timings belong to the scripts, not to tests).

``benchmarks/analysis.py`` is left out: its first run builds two run folders
of 5,800 matches (a minute), and tests/test_results.py and test_report.py
cover the commands it times.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from arena.sandbox import available

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "benchmarks"

pytestmark = pytest.mark.slow

# (script and arguments, the line fragment(s) its output must hold); {tmp} is the test's own folder.
RUNS: dict[str, tuple[list[str], str | tuple[str, ...]]] = {
    "bare_referee": (["bare_referee.py", "2000", "--par", "1"], '"decisions"'),
    "bare_referee_sandbox": (["bare_referee.py", "2000", "--par", "1", "--sandbox"], '"decisions"'),
    "bare_referee_unfrozen": (["bare_referee.py", "2000", "--par", "1", "--sandbox", "--no-freeze"], '"decisions"'),
    "protocol": (["protocol.py", "--trials", "1", "--decisions", "200"], "sandboxed / floor"),
    "sandbox_start": (["sandbox_start.py", "--trials", "1", "--calls", "1000"], ("getppid() in a loop", "file view:")),
    "view_timing": (["view_timing.py", "--trials", "1", "--n", "20"], "view, none marked"),
    "program_view": (["program_view.py", "--trials", "1", "--bots", "sh,c"], ("view MB", "x host")),
    "league_vs_bare": (
        ["league_vs_bare.py", "--matches", "20", "--trials", "1", "--parts"],
        "the same not frozen between turns",
    ),
    "league_vs_bare_profile": (
        ["league_vs_bare.py", "--profile", "--profile-matches", "10"],
        ("### Referee and bots apart", "### The referee through perf"),
    ),
    "referee_replay": (["referee_replay.py", "--matches", "3", "--repeats", "1"], "the referee alone"),
    "host_replay": (["host_replay.py", "--matches", "3", "--repeats", "1"], "the bot side alone"),
    "host_stalls": (
        ["host_stalls.py", "--matches", "3", "--budget-ms", "200", "--mix", "busy", "--busy", "1"],
        "records identical to the quiet run's",
    ),
    "engine": (["engine.py", "--trials", "1", "--seconds", "0.2"], "$ python benchmarks/engine.py"),
    "bot_decisions": (["bot_decisions.py", "--turns", "100"], "probabilistic"),
    "crash_diagnosis": (["crash_diagnosis.py", "--trials", "1"], "20 KiB of newlines"),
    "league": (["league.py", "--subset", "20", "--trials", "1"], "speed-up of 2 workers over 1"),
    "paired_play": (
        ["paired_play.py", "--matches", "2", "--variants", "2", "--trials", "1", "--workers", "2"],
        "paired matches/s as a share of unpaired",
    ),
    "live_standings": (["live_standings.py", "--subset", "20", "--trials", "1"], "median ratio with/without"),
    "ratings": (
        ["ratings.py", "--matches", "200", "--bots", "5", "--resamples", "10", "--trials", "1"],
        "rating 200 matches, 5 bots",
    ),
    "backends": (["backends.py", "--matches", "20", "--trials", "1"], "| local |"),
    "bayes_cpu": (
        ["bayes_cpu.py", "--baseline", "HEAD", "--matches", "3", "--trials", "1", "--warmup", "0"],
        "identical decisions",
    ),
    "bot_hash": (["bot_hash.py", "--trials", "1"], "ratio to the floor"),
    "serve_live": (
        ["serve_live.py", "--matches", "300", "--distinct", "20", "--append", "10", "--trials", "1"],
        "first look at 300 records",
    ),
    "serve_cost": (["serve_cost.py", "--matches", "4", "--trials", "1"], "median ratio with/without the live page"),
    "serve_latency": (
        ["serve_latency.py", "--matches", "1", "--dice", "2"],
        "from the referee's hands to the page's socket",
    ),
    "luck": (["luck.py", "--matches", "8", "--pairs", "bluffer:random"], "| bluffer v random, paired |"),
    "luck_sprt": (
        ["luck.py", "--sprt", "2", "--max-pairs", "40", "--cases", "tests/bots/jitter.py:tests/bots/jitter.py:0"],
        "| jitter v jitter | 0 | 2 |",
    ),
    "solver_recall": (["solver_recall.py", "neller", "1", "20", "10"], "neller,1-2,1,"),
    "solver_curve": (["solver_curve.py", "{tmp}/curve.png"], "curve.png"),
    "report_screenshots": (
        ["report_screenshots.py", "--variants", "2", "--bots", "6", "--matches", "5", "--out", "{tmp}"],
        "report-12-variants-stats.png",
    ),
}


def _needs(name: str) -> str | None:
    """Why this machine cannot run the script, or None."""
    if name == "report_screenshots" and not Path("/usr/bin/chromium").exists():
        return "no /usr/bin/chromium"
    if (
        name
        in (
            "bare_referee_sandbox",
            "bare_referee_unfrozen",
            "protocol",
            "sandbox_start",
            "view_timing",
            "program_view",
            "league_vs_bare",
            "league_vs_bare_profile",
            "backends",
            "league",
            "live_standings",
            "paired_play",
            "host_stalls",
            "serve_cost",
        )
        and available().bwrap is None
    ):
        return "no bubblewrap: the script measures the full sandbox"
    return None


def test_every_benchmark_script_is_listed() -> None:
    """A new script gets a run here (or a reason above to be left out)."""
    scripts = {p.name for p in BENCH.glob("[a-z]*.py")}
    listed = {args[0] for args, _ in RUNS.values()} | {"analysis.py"}
    assert scripts == listed


@pytest.mark.parametrize("name", sorted(RUNS))
def test_benchmark_runs(name: str, tmp_path: Path) -> None:
    why = _needs(name)
    if why:
        pytest.skip(why)
    args, expect = RUNS[name]
    argv = [sys.executable, str(BENCH / args[0]), *(a.replace("{tmp}", str(tmp_path)) for a in args[1:])]
    before = subprocess.run(["git", "status", "--porcelain"], cwd=ROOT, capture_output=True, text=True).stdout
    proc = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=600)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, f"{' '.join(args)} failed:\n{out[-3000:]}"
    for fragment in (expect,) if isinstance(expect, str) else expect:
        assert fragment in out, f"{' '.join(args)} printed no {fragment!r}:\n{out[-3000:]}"
    after = subprocess.run(["git", "status", "--porcelain"], cwd=ROOT, capture_output=True, text=True).stdout
    assert after == before, f"{' '.join(args)} wrote into the repository"
