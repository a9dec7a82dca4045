"""The ``arena`` command: thin wrappers that parse input, call one library
function and print. The only module that imports click; nothing imports it.

Each command lives in its own section; an :class:`ArenaError` becomes one
clear line on stderr and exit status 1 (a :class:`click.ClickException`); a
flag or argument click itself refuses is a usage error, exit status 2.
"""

from __future__ import annotations

import os

# One BLAS thread unless the user set how many: numpy's OpenBLAS starts a
# thread per core as it is imported (below, through arena.running.store), and
# they spin: 58 ms of CPU an import on a 2-core machine, taken from the cores
# an ``arena run`` starts its bots on; the analysis' fits are too small to gain
# from more (docs/performance.md, "Eleventh round"). Before any import of numpy.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import signal
import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import click

from arena import __version__, compiled
from arena.errors import ArenaError
from arena.running import backends
from arena.running.backends import names as backend_names
from arena.running.store import RATINGS, REPORT, VARIANT_STATS
from arena.untrusted import printable

if TYPE_CHECKING:
    from arena.apps.ahead import EloAhead
    from arena.apps.standings import LiveStandings
    from arena.running.config import RunConfig
    from arena.running.runner import RunResult

# When the command started (set as each invocation begins, in main): an
# analysis command's second before progress shows counts its imports too,
# which are most of a short command's wait.
_STARTED = time.monotonic()

F = TypeVar("F", bound=Callable[..., Any])


def _echo(text: Any = "", *, nl: bool = True, err: bool = False) -> None:
    """Print through the one filter for terminal output: bot-controlled text
    (stderr tails, names, versions, replies in fault details) reaches every
    command's output, and a control character in it must never reach the
    terminal (a bot could clear the screen, retitle the window, or print a
    fake verdict). Newlines and tabs pass."""
    click.echo(printable(str(text)), nl=nl, err=err)


def _note(text: str) -> None:
    """A line for the user beside a command's output (what loading a run left out)."""
    _echo(text, err=True)


def _friendly(fn: F) -> F:
    """Turn an ArenaError into a one-line message instead of a traceback."""
    import functools

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except ArenaError as exc:
            raise click.ClickException(printable(str(exc))) from None

    return wrapper  # type: ignore[return-value]


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="arena", message=f"%(prog)s %(version)s, {compiled.status()}")
def main() -> None:
    """Dudo Arena: sandboxed, seeded, parallel tournaments for Dudo bots."""
    global _STARTED
    _STARTED = time.monotonic()


# --- arena rules -----------------------------------------------------------


@main.command("rules")
@click.argument("preset", required=False)
@click.option("--set", "sets", multiple=True, metavar="KEY=VALUE", help="Override a rule key.")
@_friendly
def rules_cmd(preset: str | None, sets: tuple[str, ...]) -> None:
    """List the rule keys and presets, or print PRESET's resolved rule set."""
    from arena.engine.rules import KEYS, PRESET_MEANINGS, Rules, parse_sets

    if preset is None:
        if sets:
            raise ArenaError("--set needs a PRESET to apply to, e.g. `arena rules classic --set dice=3`")
        _echo("Rule keys (default, allowed values, meaning):")
        for spec in KEYS.values():
            default = str(spec.default).lower() if isinstance(spec.default, bool) else spec.default
            _echo(f"  {spec.name:<21} {str(default):<8} {spec.allowed():<28} {spec.meaning}")
        _echo("\nPresets:")
        for name, meaning in PRESET_MEANINGS.items():
            _echo(f"  {name:<10} {meaning}")
        _echo("\nShow one: arena rules PRESET [--set key=value ...]")
        return
    rules = Rules.preset(preset, parse_sets(sets))
    for key in KEYS:  # every key, the variant keys too (records leave those out when off)
        value = getattr(rules, key)
        shown = str(value).lower() if isinstance(value, bool) else value
        _echo(f"{key}: {shown}")


# --- arena run / replay ------------------------------------------------------


class _ProgressLine:
    """Matches done, matches/s, time left: a bar redrawn in place on a
    terminal; in a file or a CI log, a plain line a minute (a log keeps every
    line, and a redrawn bar there is only noise)."""

    LOG_EVERY = 60.0  # seconds between the plain lines of a log

    def __init__(self, tty: bool | None = None) -> None:
        self.tty = sys.stderr.isatty() if tty is None else tty
        self.last_shown = 0.0
        self.t0_done: int | None = None

    def __call__(self, done: int, total: int, elapsed: float) -> None:
        if self.t0_done is None:
            self.t0_done = done
        played = done - self.t0_done
        rate = played / elapsed if elapsed > 0 else 0.0
        left = (total - done) / rate if rate > 0 else float("nan")
        left_s = "?" if left != left else f"{int(left) // 60}:{int(left) % 60:02d}"
        if self.tty:
            width = 30
            filled = int(width * done / total) if total else width
            line = (
                f"[{'#' * filled}{'.' * (width - filled)}] {done}/{total} matches  {rate:6.1f} matches/s  {left_s} left"
            )
            click.echo("\r" + line, nl=done >= total, err=True)
        elif done < total and elapsed - self.last_shown >= self.LOG_EVERY:
            self.last_shown = elapsed
            click.echo(f"{done}/{total} matches recorded, {rate:.1f} matches/s, {left_s} left", err=True)


def _command_line(words: list[str], options: list[tuple[str, Any]]) -> str:
    """The shell command ``words`` with ``options`` (flag, value) given: a value of
    None is left out, a tuple repeats its flag, True is a bare flag."""
    import shlex

    out = list(words)
    for flag, value in options:
        if value is None or value is False or value == ():
            continue
        if value is True:
            out.append(flag)
        else:
            for v in value if isinstance(value, tuple) else (value,):
                out += [flag, str(v)]
    return shlex.join(out)


class _StepProgress:
    """Progress of a long analysis step on stderr (stats.Progress), shown only
    on a terminal and once the command has taken a second, as one line
    redrawn in place. In a file or a CI log it shows nothing: the result
    follows within the minute, and step counts there are only noise."""

    def __init__(self, since: float | None = None, tty: bool | None = None) -> None:
        self.clock = time.monotonic
        self.start = self.clock() if since is None else since
        self.tty = sys.stderr.isatty() if tty is None else tty
        self.drawn = False

    def __call__(self, what: str, done: int, total: int) -> None:
        if not self.tty or (self.clock() - self.start < 1.0 and not self.drawn):
            return
        pct = int(100 * done / total) if total else 100
        click.echo("\r" + f"{what}: {done}/{total} ({pct}%)".ljust(60), nl=False, err=True)
        self.drawn = True

    def finish(self) -> None:
        if self.tty and self.drawn:
            click.echo("\r" + " " * 60 + "\r", nl=False, err=True)


@main.command("run")
@click.argument("config", type=click.Path(dir_okay=False))
@click.option("--workers", type=click.IntRange(min=1), help="Worker processes (default: every core).")
@click.option("--matches", type=click.IntRange(min=1), help="Matches per variant.")
@click.option("--seed", type=click.IntRange(min=0), help="Run seed (default: the config's, else a new secret one).")
@click.option("--out", type=click.Path(file_okay=False), help="Run folder (default: results/<name>).")
@click.option(
    "--set",
    "sets",
    multiple=True,
    metavar="KEY=VALUE",
    help="Override a config key; dotted keys reach into maps (time.budget_ms=500).",
)
@click.option("--backend", type=click.Choice(backend_names()), help="Where to play (default: the config's).")
@click.option("--address", help="Ray cluster address (auto or HOST:PORT), with --backend ray.")
@click.option(
    "--new",
    "new",
    is_flag=True,
    help="Start a new run: move the run folder aside and draw a new secret seed (unless the config "
    "or --seed names one). Without it, the same command resumes or extends the folder's run.",
)
@click.option("--force", is_flag=True, help="Move an existing run folder of another config aside and start over.")
@click.option("--report", "html_report", is_flag=True, help=f"At the end, write the HTML report (RUN/{REPORT}).")
@click.option(
    "--live",
    "live",
    type=click.Choice(["top", "all"]),
    is_flag=False,
    flag_value="top",
    default=None,
    help="Live standings while it plays (the default): the leaders (top), or every bot (all). On a "
    "terminal every 5 s, redrawn in place; otherwise one line every 60 s.",
)
@click.option("--no-live", "no_live", is_flag=True, help="No live standings (fault warnings are still shown).")
@click.option(
    "--follow",
    "follow",
    multiple=True,
    metavar="BOT",
    help="Keep BOT in the live standings whatever its rank (repeat it for more).",
)
@click.option("--live-every", type=click.FloatRange(min=0.5), help="Seconds between live standings.")
@click.option(
    "--serve",
    "serve_page",
    is_flag=True,
    help="Serve the run's live page and match viewer (arena serve RUN) while it plays; "
    "after the run it stays until Ctrl-C (docs/serve.md).",
)
@click.option(
    "--serve-port", type=click.IntRange(1, 65535), default=8000, show_default=True, help="The live page's port."
)
@_friendly
def run_cmd(
    config: str,
    workers: int | None,
    matches: int | None,
    seed: int | None,
    out: str | None,
    sets: tuple[str, ...],
    backend: str | None,
    address: str | None,
    new: bool,
    force: bool,
    html_report: bool = False,
    live: str | None = None,
    no_live: bool = False,
    follow: tuple[str, ...] = (),
    live_every: float | None = None,
    serve_page: bool = False,
    serve_port: int = 8000,
) -> None:
    """Play every match of CONFIG not yet in its run folder (resumes a stopped run, adds new bots to a league)."""
    from arena.running.config import load_config
    from arena.running.runner import seed_warning
    from arena.sandbox import describe_sandbox

    cfg = load_config(
        config, sets, workers=workers, matches=matches, seed=seed, out=out, backend=backend, address=address
    )
    # Exactly what resumes this run: every option given but --new and --force (a resume
    # neither starts over nor moves anything aside; the drawn seed is in run.json).
    resume = _command_line(
        ["arena", "run", config],
        [
            ("--matches", matches),
            ("--seed", seed),
            ("--out", out),
            ("--set", sets),
            ("--backend", backend),
            ("--address", address),
            ("--workers", workers),
        ],
    )
    _echo(
        f"{cfg.name}: {len(cfg.entrants)} bots, {len(cfg.variants)} variant(s), "
        f"{cfg.format}, tables of {'/'.join(map(str, cfg.players))}, {cfg.workers} worker(s) "
        f"-> {cfg.out}",
        err=True,
    )
    _echo(describe_sandbox(cfg.sandbox), err=True)  # "sandbox auto: ..."
    warning = seed_warning(cfg.seed)
    if warning:
        _echo(warning, err=True)
    if not compiled.active() and not compiled.asked_pure():  # not the user's choice: say so
        _echo(
            f"note: the referee and the bot host run as {compiled.status()}; a run is slower so (docs/performance.md)",
            err=True,
        )
    from arena.apps.standings import LiveStandings, check_follow, live_progress

    paths = {e.label: str(e.spec.path) for e in cfg.entrants}
    paired = cfg.seating == "rotate" or len(cfg.variants) > 1 or cfg.format == "sprt"  # deals played again
    check_follow(follow, list(paths))
    standings = LiveStandings.for_terminal(
        sys.stderr.isatty(),
        False if no_live else None,
        live_every,
        _write_err,
        paths,
        paired,
        every_bot=live == "all",
        follow=follow,
    )
    bar = _ProgressLine()
    show = live_progress(bar, standings)

    from arena.apps.ahead import EloAhead

    # The end-of-run Elo table is made by a helper forked now, before any thread
    # or worker exists (arena/apps/ahead.py): it imports pandas while the bots are
    # checked and rates the run while this process writes the analysis tables.
    ahead = EloAhead.start(cfg.out)
    page = None
    if serve_page:
        from arena.apps.livepage import LivePage

        page = LivePage.start(cfg.out, serve_port)
        _echo(f"live page: {page.link} (every match: /matches)", err=True)
    try:
        _run_and_report(
            cfg,
            config,
            ahead,
            force=force,
            new=new,
            show=show,
            standings=standings,
            matches=matches,
            sets=sets,
            out=out,
            resume=resume,
            html_report=html_report,
        )
        if page is not None:
            page.stay(lambda text: _echo(text, err=True))
    finally:
        if page is not None:
            page.close()
        if ahead is not None:
            ahead.close()


def _run_and_report(
    cfg: RunConfig,
    config: str,
    ahead: EloAhead | None,
    *,
    force: bool,
    new: bool,
    show: Callable[[int, int, float], None],
    standings: LiveStandings,
    matches: int | None,
    sets: tuple[str, ...],
    out: str | None,
    resume: str,
    html_report: bool,
) -> None:
    """``arena run`` from the first match on: play, then the Elo table and the summary."""
    from arena.running.runner import run

    def end_of_run_imports() -> None:
        # The modules the rest of the run needs (the parquet writer of the run's
        # tables, 19 ms; the local backend's multiprocess and dill, 13 ms; the
        # end-of-run table's, pandas, a third of a second, unless the helper makes
        # it), imported while the bots are checked before the first match, which
        # is mostly waiting for their interpreters. Imported while matches run,
        # they cost more than their own CPU: a busy process on the cores where
        # each referee and its bot hand the turn back and forth delays every
        # hand-off (a 2,000-match run took 0.6-1.4 s longer measured so;
        # docs/performance.md, "Third round"); imported after, they wait on the
        # end of the run.
        import pyarrow.parquet  # noqa: F401

        if ahead is None:
            import arena.analysis.commands  # noqa: F401
        backends.load(cfg.backend)

    # Records are not kept in memory: parsing each line here would take CPU from the
    # workers while they play, and the Elo table reads the tables the run writes as it stops.
    result = run(
        cfg,
        force=force,
        new=new,
        progress=show,
        observer=standings.observe,
        meanwhile=end_of_run_imports,
        on_plan=lambda plan: _echo("\n".join(plan.messages()), err=True),
        seats_written=None if ahead is None else ahead.go,
    )
    if result.note:
        _echo(result.note, err=True)
    if result.already:
        again = _command_line(["arena", "run", config], [("--matches", matches), ("--set", sets), ("--out", out)])
        fresh = (
            "with a new secret seed"
            if cfg.seed is None
            else f"(seed {cfg.seed} is set, so the same dice again; leave it out for a new secret one)"
        )
        _echo(
            f"{cfg.out}: this run is already complete ({result.total} matches recorded, ended "
            f"{result.ended or '?'}); nothing to play. Its result is below. A new run {fresh}: {again} --new",
            err=True,
        )
    elif result.skipped:
        _echo(f"resumed: {result.skipped} matches were already recorded", err=True)
    # The per-bot summary (matches, wins, mean place, faults by kind) is part of the Elo table,
    # from the folder's tables (written from memory as the run stopped).
    steps = _StepProgress()
    text = None if ahead is None else ahead.table(note=_note, progress=steps)
    if text is None:  # no helper, or it failed: made here, as it would have been there
        from arena.analysis.commands import end_of_run_text

        text = end_of_run_text(cfg.out, note=_note, progress=steps)
    steps.finish()
    _echo("\n" + text)
    if html_report and result.status == "complete":
        from arena.analysis.report import write_report

        _echo(f"report: {write_report(cfg.out)}", err=True)
    if not result.already:
        rate = result.played / result.seconds if result.seconds else 0.0
        _echo(
            f"\n{result.played} matches played in {result.seconds:.1f} s ({rate:.1f} matches/s); run folder: {cfg.out}",
            err=True,
        )
    if result.replayed:
        _echo(_replayed(result), err=True)
    if result.status == "interrupted":
        _echo(
            f"interrupted{_by(result)}: {result.skipped + result.played}/{result.total} matches recorded. "
            f"Resume with: {resume}",
            err=True,
        )
        sys.exit(_interrupted_status(result))
    if result.status == "failed":
        raise click.ClickException(printable(f"{result.error}\nResume with: {resume}"))


def _replayed(result: RunResult) -> str:
    return (
        f"the host was overloaded: {result.replayed} matches replayed after a bot was held up by other work "
        f'past its wall-clock limit (not charged to it; run.json "replays" says which, docs/sandbox.md)'
    )


def _by(result: RunResult) -> str:
    """What stopped an interrupted run, where it was not a Ctrl-C."""
    return " by SIGTERM" if result.stopped_by == signal.SIGTERM else ""


def _interrupted_status(result: RunResult) -> int:
    """The shell's status for a run stopped by a signal: 128 + its number (130 for Ctrl-C, 143 for SIGTERM)."""
    return 128 + (result.stopped_by or signal.SIGINT)


def _write_err(text: str) -> None:
    """Standings text as it is: LiveStandings made the bots' words printable itself."""
    click.echo(text, nl=False, err=True)


@main.command("sprt")
@click.argument("a")
@click.argument("b")
@click.option(
    "--field",
    "field",
    multiple=True,
    metavar="BOT",
    help="An opponent at every table (repeat it): A and B then play paired deals in the same seat "
    "against the same opponents. Without it, A and B play heads up.",
)
@click.option("--players", type=click.IntRange(2, 10), help="Table size (default: 2 heads up, else 4).")
@click.option("--preset", default="classic", show_default=True, help="Rule preset; see `arena rules`.")
@click.option("--elo0", type=float, default=0.0, show_default=True, help="H0: A stronger by at most this.")
@click.option("--elo1", type=float, default=20.0, show_default=True, help="H1: A stronger by at least this.")
@click.option(
    "--alpha",
    type=click.FloatRange(0, 0.5, min_open=True, max_open=True),
    default=0.05,
    show_default=True,
    help="The chance of accepting H1 when H0 holds.",
)
@click.option(
    "--beta",
    type=click.FloatRange(0, 0.5, min_open=True, max_open=True),
    default=0.05,
    show_default=True,
    help="The chance of accepting H0 when H1 holds.",
)
@click.option(
    "--max-matches",
    type=click.IntRange(min=2),
    default=4000,
    show_default=True,
    help="Stop undecided after this many matches.",
)
@click.option("--seed", type=click.IntRange(min=0), help="Run seed (default: a new secret one).")
@click.option("--out", type=click.Path(file_okay=False), help="Run folder (default: results/sprt-A-B).")
@click.option("--workers", type=click.IntRange(min=1), help="Worker processes (default: every core).")
@click.option("--new", "new", is_flag=True, help="Start a new test: move the run folder aside, a new secret seed.")
@_friendly
def sprt_cmd(
    a: str,
    b: str,
    field: tuple[str, ...],
    players: int | None,
    preset: str,
    elo0: float,
    elo1: float,
    alpha: float,
    beta: float,
    max_matches: int,
    seed: int | None,
    out: str | None,
    workers: int | None,
    new: bool,
) -> None:
    """Sequential test: is bot A stronger than bot B by ELO1 rather than ELO0? (docs/sprt.md)

    Matches are played in pairs on one deal (A, then B, in the same seat
    against the same opponents) until the log-likelihood ratio crosses a
    bound. The run folder is an ordinary one (ratings, stats, report); the
    same command resumes it.
    """
    from pathlib import Path

    from arena.running.config import build_config
    from arena.running.runner import run
    from arena.running.sprt import sprt_config_data

    data = sprt_config_data(
        a,
        b,
        field,
        players=players,
        preset=preset,
        elo0=elo0,
        elo1=elo1,
        alpha=alpha,
        beta=beta,
        max_matches=max_matches,
        seed=seed,
        out=out,
        workers=workers,
    )
    cfg = build_config(data, Path("arena sprt"))
    assert cfg.sprt is not None
    from arena.running.sprt import SprtTest

    test = SprtTest(cfg.sprt, (cfg.matches + 1) // 2, heads_up=cfg.players[0] == 2 and not field)
    lower, upper = test.bounds
    _echo(
        f"sprt: {test.params.a} against {test.params.b}, "
        + ("heads up" if not field else f"tables of {cfg.players[0]} with {', '.join(field)}")
        + f"; H0 Elo {elo0:g}, H1 Elo {elo1:g}, alpha {alpha:g}, beta {beta:g}: bounds {lower:+.2f} {upper:+.2f}"
        f" -> {cfg.out}",
        err=True,
    )
    tty = sys.stderr.isatty()
    last = [0.0]

    started = [False]

    def progress(done: int, total: int, elapsed: float) -> None:
        if not started[0]:  # the first call: what the folder already held (fed to the test before it)
            started[0] = True
            if done:
                _echo(
                    f"resumed: {done} matches were already recorded; the test so far: {test.status()}; "
                    f"{test.outcomes()}",
                    err=True,
                )
        if tty:
            click.echo("\r" + printable(f"{done} matches  {test.status()}", newlines=False) + "   ", nl=False, err=True)
        elif elapsed - last[0] >= 60:  # a log keeps every line: one a minute
            last[0] = elapsed
            _echo(f"{done} matches  {test.status()}; {test.outcomes()}", err=True)

    resume = _command_line(
        ["arena", "sprt", a, b],
        [
            ("--field", field),
            ("--players", players),
            ("--preset", preset if preset != "classic" else None),
            ("--elo0", elo0 if elo0 != 0.0 else None),
            ("--elo1", elo1 if elo1 != 20.0 else None),
            ("--alpha", alpha if alpha != 0.05 else None),
            ("--beta", beta if beta != 0.05 else None),
            ("--max-matches", max_matches if max_matches != 4000 else None),
            ("--seed", seed),
            ("--out", out),
            ("--workers", workers),
        ],
    )
    result = run(cfg, new=new, progress=progress, sprt_test=test)
    if tty:
        click.echo("", err=True)
    if result.note:
        _echo(result.note, err=True)
    if result.already:
        _echo(
            f"{cfg.out}: this test is already decided; for a new one with a new secret seed: {resume} --new", err=True
        )
    _echo(test.summary())
    _echo(test.outcomes())
    _echo(f"{result.skipped + result.played} matches recorded in {cfg.out} (arena ratings {cfg.out})")
    if result.replayed:
        _echo(_replayed(result), err=True)
    if result.status == "interrupted":
        _echo(f"interrupted{_by(result)}. Resume with: {resume}", err=True)
        sys.exit(_interrupted_status(result))
    if result.status == "failed":
        raise click.ClickException(printable(f"{result.error}\nResume with: {resume}"))


@main.command("replay")
@click.argument("run_folder", type=click.Path(exists=True, file_okay=False))
@click.argument("match")
@click.option("--no-dice-check", is_flag=True, help="Do not re-derive the dice from the seed.")
@_friendly
def replay_cmd(run_folder: str, match: str, no_dice_check: bool) -> None:
    """Print MATCH of RUN_FOLDER round by round, re-checking every rule."""
    from pathlib import Path

    from arena.engine.replay import render
    from arena.running.store import read_records

    wanted = match if match.startswith("m-") else f"m-{int(match):06d}" if match.isdigit() else match
    read = read_records(Path(run_folder))
    note = read.note()
    if note is not None:
        _note(note)
    for rec in read.records:
        if rec.match == wanted:
            for line in render(rec, check_dice=not no_dice_check):
                _echo(line)
            return
    raise ArenaError(f"{run_folder}: no match {wanted!r} recorded (ids look like m-000042)")


# --- arena ratings / arena stats ---------------------------------------------


def _anchor(value: str | None) -> tuple[str | None, float]:
    """``--anchor BOT`` or ``--anchor BOT=ELO`` (default 1500)."""
    if value is None:
        return None, 1500.0
    name, eq, elo = value.partition("=")
    try:
        return name.strip(), float(elo) if eq else 1500.0
    except ValueError:
        raise ArenaError(f"--anchor {value!r}: write BOT or BOT=ELO, e.g. --anchor random=1000") from None


def _analysis_options(csv_file: str, resamples_for: str, run_required: bool = True) -> Callable[[F], F]:
    """The options `arena ratings` and `arena stats` share."""

    def decorate(fn: F) -> F:
        for option in reversed(
            [
                click.argument("run", type=click.Path(file_okay=False), required=run_required),
                click.option("--variant", help=f"One variant only ({csv_file} is then not written)."),
                click.option(
                    "--drop-admin-faults",
                    is_flag=True,
                    help="Leave out matches with a fault the bot is not to blame for (docs/ratings.md).",
                ),
                click.option(
                    "--resamples",
                    type=click.IntRange(2),
                    default=200,
                    show_default=True,
                    help=f"Bootstrap resamples for {resamples_for}.",
                ),
                click.option("--seed", type=int, default=0, show_default=True, help="Bootstrap seed."),
            ]
        ):
            fn = option(fn)
        return fn

    return decorate


@main.command("ratings")
@_analysis_options(RATINGS, "the 95% intervals")
@click.option("--anchor", metavar="BOT[=ELO]", help="Fix BOT at ELO (default: the mean is 1500).")
@click.option("--h2h", "h2h", is_flag=True, help="Also print head-to-head and likelihood-of-superiority tables.")
@click.option("--csv", "as_csv", is_flag=True, help="Print the table as CSV.")
@click.option("--json", "as_json", is_flag=True, help="Print ratings, head to head and LOS as JSON.")
@click.option("--no-write", is_flag=True, help=f"Do not write {RATINGS} into the run folder.")
@click.option(
    "--luck",
    is_flag=True,
    help="Also print heads-up win shares with the luck of the deal removed (docs/ratings.md, Luck).",
)
@_friendly
def ratings_cmd(
    run: str,
    variant: str | None,
    drop_admin_faults: bool,
    resamples: int,
    seed: int,
    anchor: str | None,
    h2h: bool,
    as_csv: bool,
    as_json: bool,
    no_write: bool,
    luck: bool,
) -> None:
    """Plackett-Luce Elo ratings of the bots in run folder RUN, per variant and overall."""
    import json

    from arena.analysis.commands import luck_run, rate_run
    from arena.analysis.format import csv_text, format_ratings, ratings_json

    if luck and (as_csv or as_json):
        raise click.UsageError("--luck prints a text table after the ratings; use it without --csv and --json")

    name, elo = _anchor(anchor)
    steps = _StepProgress(since=_STARTED)
    report = rate_run(
        run,
        write=not no_write,
        variant=variant,
        drop_admin_faults=drop_admin_faults,
        resamples=resamples,
        seed=seed,
        anchor=name,
        anchor_elo=elo,
        note=_note,
        progress=steps,
    )
    steps.finish()
    if as_json:
        _echo(json.dumps(ratings_json(report), indent=1))
    elif as_csv:
        _echo(csv_text(report.table), nl=False)
    else:
        _echo(format_ratings(report, head_to_head=h2h))
        if luck:
            _echo("\n" + luck_run(run, variant=variant, note=_note))


@main.command("stats")
@_analysis_options(VARIANT_STATS, "the rating-based rows (skill, between-variant changes)", run_required=False)
@click.option("--csv", "as_csv", is_flag=True, help="Print the table as CSV.")
@click.option("--json", "as_json", is_flag=True, help="Print the table as JSON records.")
@click.option("--no-write", is_flag=True, help=f"Do not write {VARIANT_STATS} into the run folder.")
@click.option("--explain", is_flag=True, help="Print what each statistic is, and nothing else (RUN is not read).")
@_friendly
def stats_cmd(
    run: str | None,
    variant: str | None,
    drop_admin_faults: bool,
    resamples: int,
    seed: int,
    as_csv: bool,
    as_json: bool,
    no_write: bool,
    explain: bool,
) -> None:
    """Rule-variant statistics of run folder RUN, each with a 95% interval:
    one row per statistic, one column per variant (the long table, one row
    per variant and statistic, is written to the run folder and printed by --csv)."""
    import shutil

    from arena.analysis.commands import stats_run
    from arena.analysis.format import csv_text, explain_text, format_stats, stats_json

    if explain:
        _echo(explain_text())
        return
    if run is None:
        raise click.UsageError("Missing argument 'RUN' (a run folder, e.g. results/variants).")
    steps = _StepProgress(since=_STARTED)
    table = stats_run(
        run,
        write=not no_write,
        variant=variant,
        drop_admin_faults=drop_admin_faults,
        resamples=resamples,
        seed=seed,
        note=_note,
        progress=steps,
    )
    steps.finish()
    if as_json:
        _echo(stats_json(table))
    elif as_csv:
        _echo(csv_text(table), nl=False)
    else:
        _echo(format_stats(table, width=max(80, shutil.get_terminal_size((120, 24)).columns)))


# --- arena export ------------------------------------------------------------


@main.command("export")
@click.argument("run", type=click.Path(file_okay=False))
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["rankings", "pairwise", "pgn"]),
    required=True,
    help="rankings: a JSON line per match, bots best first (openskill, choix); pairwise: CSV "
    "winner,loser for every two bots of a match; pgn: those pairs as games (Ordo, BayesElo).",
)
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write to this file (default: stdout).")
@_friendly
def export_cmd(run: str, fmt: str, output: str | None) -> None:
    """Export the results of run folder RUN for outside raters (docs/ratings.md)."""
    from pathlib import Path

    from arena.analysis.export import export_text
    from arena.running.store import write_text

    text = export_text(run, fmt)
    if output is None:
        _echo(text, nl=False)
    else:
        write_text(Path(output), text)
        _echo(output, err=True)


# --- arena check -------------------------------------------------------------


def _bot_limit_options(fn: F) -> F:
    """``--time-ms`` and ``--sandbox``: the limits a command's own bot processes run under."""
    fn = click.option(
        "--sandbox",
        type=click.Choice(["auto", "strict", "off"]),
        default="auto",
        show_default=True,
        help="Sandbox mode (docs/sandbox.md).",
    )(fn)
    return click.option(
        "--time-ms",
        type=click.IntRange(1),
        default=1000,
        show_default=True,
        help="Per-decision CPU budget (sent as time_ms).",
    )(fn)


@main.command("check")
@click.argument("bot", type=click.Path(dir_okay=False))
@click.option(
    "--turns",
    type=click.IntRange(1),
    default=2000,
    show_default=True,
    help="Fuzzed turns to ask for (the run is then repeated to compare actions).",
)
@click.option(
    "--seed",
    type=click.IntRange(min=0),
    help="Seed of the fuzzed matches (default: a new secret one, shown in the report).",
)
@_bot_limit_options
@click.option("--show", type=click.IntRange(0), default=10, show_default=True, help="Problems to print in full.")
@click.option(
    "--preset",
    "presets",
    multiple=True,
    metavar="NAME[,NAME]",
    help="Fuzz only these presets (repeat it, or a comma list).",
)
@click.option(
    "--players",
    "players",
    multiple=True,
    metavar="N[,N|N-M]",
    help="Fuzz only these table sizes (repeat it, a comma list, or a range 2-4).",
)
@click.option(
    "--dice",
    "dice",
    multiple=True,
    metavar="N[,N|N-M]",
    help="Fuzz only these starting dice per player (like --players).",
)
@_friendly
def check_cmd(
    bot: str,
    turns: int,
    seed: int | None,
    time_ms: int,
    sandbox: str,
    show: int,
    presets: tuple[str, ...],
    players: tuple[str, ...],
    dice: tuple[str, ...],
) -> None:
    """Check bot file BOT: handshake, fuzzed legal turns, determinism, latency.

    Only what BOT supports is fuzzed (its `supports` declaration; every
    supported preset is covered in turn); --preset, --players and --dice narrow
    that further, and a narrowing that leaves nothing to play is refused. The
    report's `fuzzed:` line says which space was played. Exit status 1 on any
    problem; each is printed with the message that caused it.
    """
    from arena.apps.check import check_bot, parse_narrowing

    report = check_bot(
        bot,
        turns=turns,
        seed=seed,
        time_ms=time_ms,
        sandbox=sandbox,
        presets=parse_narrowing(presets, "--preset", False),
        players=parse_narrowing(players, "--players", True),
        dice=parse_narrowing(dice, "--dice", True),
    )
    _echo(report.render(show))
    if not report.ok:
        sys.exit(1)


# --- arena play / arena report -----------------------------------------------


@main.command("play")
@click.option(
    "--bots",
    "bots",
    multiple=True,
    metavar="NAME",
    help="An opponent (built-in name or bot file); repeat for more. Default: probabilistic, "
    "cautious, bluffer (or the config's bots).",
)
@click.option("--preset", help="Rule preset (default classic); see `arena rules`.")
@click.option(
    "--config",
    "config",
    type=click.Path(dir_okay=False),
    help="A run config: its first variant (or --variant), time and sandbox limits, and bots.",
)
@click.option("--variant", help="With --config: the variant to play.")
@click.option("--set", "sets", multiple=True, metavar="KEY=VALUE", help="Override a rule key (dice=3).")
@click.option("--assist", is_flag=True, help="Show the odds of the standing bid and of a few raises.")
@click.option(
    "--seed", type=click.IntRange(min=0), help="Dice seed (default: a new secret one, shown after the match)."
)
@click.option("--name", default="human", show_default=True, help="Your name at the table.")
@click.option("--out", type=click.Path(dir_okay=False), help="Append the match record to this JSON-lines file.")
@_friendly
def play_cmd(
    bots: tuple[str, ...],
    preset: str | None,
    config: str | None,
    variant: str | None,
    sets: tuple[str, ...],
    assist: bool,
    seed: int | None,
    name: str,
    out: str | None,
) -> None:
    """Play one match in the terminal against sandboxed bots (docs/play.md).

    \b
    Type a bid as QxF: 5x3 claims at least five 3s on the whole table. Raise
    with more dice, or as many of a higher face; dudo doubts the standing
    bid, calza says it is exact; help at your turn says it again.
    \b
    Bids on aces (1s), classic rules (ones: convert): aces count double.
      6x3 -> 3x1   to switch to aces, halve the quantity, rounding up
      5x4 -> 3x1   (5 / 2 = 2.5, so 3)
      3x1 -> 7x2   to leave aces, double it and add one (7 of any face)
      3x1 -> 4x1   staying on aces, any higher quantity
    With ones: rank_high aces rank above 6s (4x6 -> 4x1 -> 5x2); with ones:
    plain they are the lowest face (4x6 -> 5x1). `arena rules` lists the keys.
    """
    from arena.apps.play import HumanPlayer, play_human, play_setup

    setup = play_setup(bots=bots, preset=preset, config=config, variant=variant, sets=sets, seed=seed, name=name)
    human = HumanPlayer(sys.stdin, sys.stdout, assist=assist)
    try:
        play_human(setup, human, out)
    except KeyboardInterrupt:
        _echo("\ninterrupted: the match was abandoned", err=True)
        sys.exit(130)


@main.command("serve")
@click.argument("run", required=False, type=click.Path(file_okay=False))
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="The address to listen on; any but 127.0.0.1/localhost needs the key (--token).",
)
@click.option("--port", type=click.IntRange(1, 65535), default=8000, show_default=True, help="The port.")
@click.option("--token", help="The key every page needs (default off 127.0.0.1: a new random one, printed).")
@click.option(
    "--out",
    type=click.Path(file_okay=False),
    help="The run folder the games are recorded in (default: results/table-DATE-TIME).",
)
@click.option(
    "--away",
    type=click.FloatRange(5),
    default=300,
    show_default=True,
    help="Seconds a person may be gone on their turn before the fallback bot takes their seat.",
)
@click.option(
    "--fallback",
    default="probabilistic",
    show_default=True,
    help="The bot that takes a gone person's seat ('none': the seat forfeits instead).",
)
@click.option("--run-pending", is_flag=True, hidden=True, help="RUN may not be written yet (arena run --serve).")
@_friendly
def serve_cmd(
    run: str | None,
    host: str,
    port: int,
    token: str | None,
    out: str | None,
    away: float,
    fallback: str,
    run_pending: bool = False,
) -> None:
    """Play at a table in the browser, with sandboxed bots and other people; with
    RUN, also follow that run folder as it plays (docs/serve.md)."""
    import secrets
    from pathlib import Path

    from arena.serve.records import default_folder

    try:
        from arena.serve.app import LOOPBACK, ServeOptions, serve
    except ModuleNotFoundError as exc:
        if exc.name in ("starlette", "uvicorn", "websockets"):
            raise click.ClickException(
                f"arena serve needs {exc.name}, which is not installed: pip install -e '.[serve]'"
            ) from None
        raise
    if run is not None and not run_pending and not Path(run).is_dir():
        raise click.BadParameter(
            f"{run}: no such folder; give the folder a run writes (results/NAME)", param_hint="RUN"
        )
    key = token or (None if host in LOOPBACK else secrets.token_urlsafe(16))
    opts = ServeOptions(
        host=host,
        port=port,
        key=key,
        out=Path(out) if out else default_folder(),
        away_s=away,
        fallback=None if fallback.lower() == "none" else fallback,
        run=Path(run) if run else None,
        run_pending=run_pending,
    )
    try:
        serve(opts, _echo)
    except KeyboardInterrupt:
        pass


@main.command("report")
@click.argument("run", type=click.Path(file_okay=False))
@click.option("-o", "--output", type=click.Path(dir_okay=False), help=f"The HTML file (default: RUN/{REPORT}).")
@_friendly
def report_cmd(run: str, output: str | None) -> None:
    """Write one self-contained HTML page about run folder RUN (docs/report.md)."""
    from arena.analysis.report import write_report

    steps = _StepProgress(since=_STARTED)
    path = write_report(run, output, progress=steps)
    steps.finish()
    _echo(str(path))


# --- arena solve / arena exploit ---------------------------------------------


@main.command("solve")
@click.argument("preset")
@click.option("--set", "sets", multiple=True, metavar="KEY=VALUE", help="Override a rule key (dice=2).")
@click.option(
    "--iterations", type=click.IntRange(1), default=1000, show_default=True, help="CFR+ iterations per round."
)
@click.option(
    "--every",
    type=click.IntRange(1),
    default=100,
    show_default=True,
    help="Print value and exact exploitability every this many iterations.",
)
@click.option(
    "--recall",
    type=click.IntRange(1),
    default=3,
    show_default=True,
    help="Bids remembered in an abstracted round (the last RECALL bids of the round).",
)
@click.option(
    "--abstract-from",
    "abstract_from",
    type=click.IntRange(2),
    default=4,
    show_default=True,
    help="Rounds with this many dice in play or more are solved in the imperfect-recall abstraction "
    "(4: those beyond the exact tree; 3: the 1-2 round too, for a small policy).",
)
@click.option(
    "--out",
    type=click.Path(dir_okay=False),
    help="Write the policy file here (.json, .json.gz, or packed .npz for a bot to read fast).",
)
@click.option("--curve", type=click.Path(dir_okay=False), help="Write the convergence table here (CSV).")
@_friendly
def solve_cmd(
    preset: str,
    sets: tuple[str, ...],
    iterations: int,
    every: int,
    recall: int,
    abstract_from: int,
    out: str | None,
    curve: str | None,
) -> None:
    """Solve the two-player game PRESET (with --set overrides) by CFR+ (docs/solver.md).

    Every round of the match is solved, fewest dice first: exactly where the
    tree fits, else in an abstraction remembering the last RECALL bids. The
    value is the opener's, in matches (+1 won, -1 lost), and the
    exploitability is exact, over the full tree: what a best response wins
    per match, seats drawn at random.
    """
    from arena.engine.rules import Rules, parse_sets
    from arena.solve.match import solve_match, to_policy
    from arena.solve.policy import write_policy

    rules = Rules.preset(preset, parse_sets(sets))
    rows: list[str] = ["round,iterations,seconds,value,br_opener,br_other,exploitability"]

    def progress(counts: tuple[int, int], cp: Any) -> None:
        rate = cp.iterations / cp.seconds if cp.seconds else 0.0
        tag = f" (last {recall} bids)" if sum(counts) >= abstract_from else ""
        _echo(
            f"round {counts[0]}-{counts[1]}{tag}  it {cp.iterations:>6}  {cp.seconds:8.1f} s  ({rate:6.1f} it/s)  "
            f"value {cp.value:+.6f}  exploitability {cp.exploitability:.6f}"
        )
        rows.append(
            f"{counts[0]}-{counts[1]},{cp.iterations},{cp.seconds:.3f},{cp.value:.9f},"
            f"{cp.br_opener:.9f},{cp.br_other:.9f},{cp.exploitability:.9f}"
        )

    sol = solve_match(rules, iterations, every=every, progress=progress, recall=recall, abstract_from=abstract_from)
    data = to_policy(sol)
    for name, entry in data["rounds"].items():
        how = f", remembering the last {entry['recall']} bids" if "recall" in entry else ""
        if "ran" in entry:
            how += f"; kept the least exploitable checkpoint of {entry['ran']} iterations"
        _echo(
            f"round {name} (opener's dice - other's{how}): value {entry['value']:+.6f}, exploitability "
            f"{entry['exploitability']:.6f} after {entry['iterations']} iterations "
            f"({len(entry['infosets'])} information sets written)"
        )
    for name, why in data["unsolved"].items():
        _echo(f"round {name}: not solved: {why}")
    if "value" in data:
        _echo(f"match: value to the first opener {data['value']:+.6f}, exploitability {data['exploitability']:.6f}")
    if out:
        _echo(f"policy: {write_policy(out, data)}", err=True)
    if curve:
        from pathlib import Path

        Path(curve).write_text("\n".join(rows) + "\n")
        _echo(f"curve: {curve}", err=True)


@main.command("train")
@click.argument("preset")
@click.option("--set", "sets", multiple=True, metavar="KEY=VALUE", help="Override a rule key (dice=3).")
@click.option(
    "--dir",
    "folder",
    required=True,
    type=click.Path(file_okay=False),
    help="Training folder: checkpoints, the curve; run the same command again to resume.",
)
@click.option("--iterations", type=click.IntRange(1), default=500, show_default=True, help="Iterations per round.")
@click.option(
    "--every",
    type=click.IntRange(1),
    default=100,
    show_default=True,
    help="Checkpoint (save, measure the exploitability) every this many iterations.",
)
@click.option(
    "--recall",
    type=click.IntRange(1),
    default=4,
    show_default=True,
    help="Bids remembered in rounds with more than --exact-upto dice in play.",
)
@click.option(
    "--exact-upto",
    "exact_upto",
    type=click.IntRange(1),
    default=2,
    show_default=True,
    help="Rounds with at most this many dice in play are trained with perfect recall (1: none).",
)
@click.option(
    "--br-recall",
    "br_recall",
    type=click.IntRange(0),
    default=0,
    show_default=True,
    help="Where the exact best response does not fit: the bids the lower-bound responder remembers (0: recall + 1).",
)
@click.option(
    "--out",
    type=click.Path(dir_okay=False),
    help="Write the policy here at the end (.npz packed for a bot, .json, .json.gz); default DIR/policy.npz.",
)
@click.option(
    "--snapshot",
    is_flag=True,
    help="Do not train: write the policy of DIR's last checkpoints now (a round still training at its "
    "last checkpoint; rounds not reached are left out).",
)
@_friendly
def train_cmd(
    preset: str,
    sets: tuple[str, ...],
    folder: str,
    iterations: int,
    every: int,
    recall: int,
    exact_upto: int,
    br_recall: int,
    out: str | None,
    snapshot: bool,
) -> None:
    """Train a two-player strategy for PRESET (with --set overrides) by self-play CFR+ (docs/bots.md).

    Round by round, fewest dice first, with checkpoints in DIR: Ctrl-C, then
    the same command resumes (the result is the same bytes). The exploitability
    is logged at each checkpoint: exact where the best response fits, else a
    lower bound. The same settings give the same policy file.
    """
    from pathlib import Path

    from arena.engine.rules import Rules, parse_sets
    from arena.solve.train import TrainCheckpoint, TrainConfig, Trainer, write_trained

    rules = Rules.preset(preset, parse_sets(sets))
    cfg = TrainConfig(rules, iterations, every, recall, exact_upto, br_recall)
    curve = Path(folder) / "curve.csv"

    def progress(cp: TrainCheckpoint, what: str) -> None:
        rate = cp.iterations / cp.seconds if cp.seconds else 0.0
        bound = "" if cp.exact else " (lower bound)"
        _echo(
            f"{what}  it {cp.iterations:>6}  {cp.seconds:8.1f} s  ({rate:6.2f} it/s)  "
            f"value {cp.value:+.6f}  exploitability {cp.exploitability:.6f}{bound}"
        )
        rows = ["round,iterations,seconds,value,br_opener,br_other,exploitability,exact"]
        for c in trainer.curve:
            rows.append(
                f"{c.counts[0]}-{c.counts[1]},{c.iterations},{c.seconds:.3f},{c.value:.9f},"
                f"{c.br_opener:.9f},{c.br_other:.9f},{c.exploitability:.9f},{int(c.exact)}"
            )
        curve.write_text("\n".join(rows) + "\n")

    trainer = Trainer(cfg, folder, progress)
    try:
        trainer.train(snapshot=snapshot)
    except KeyboardInterrupt:
        _echo(
            f"interrupted: the last checkpoint is saved in {folder}; run the same command to resume from it",
            err=True,
        )
        raise SystemExit(130) from None
    for name, at in trainer.resumed_at.items():
        _echo(f"round {name}: {'snapshot at' if snapshot else 'resumed from'} iteration {at}", err=True)
    target = out or str(Path(folder) / "policy.npz")
    data = write_trained(trainer, target, partial=snapshot)
    for name, entry in data["rounds"].items():
        how = f", remembering the last {entry['recall']} bids" if "recall" in entry else ", perfect recall"
        if "ran" in entry:
            how += f"; kept the least exploitable checkpoint of {entry['ran']} iterations"
        bound = " (a lower bound)" if "exploitability_bound" in entry else ""
        _echo(
            f"round {name} (opener's dice - other's{how}): value {entry['value']:+.6f}, exploitability "
            f"{entry['exploitability']:.6f}{bound} after {entry['iterations']} iterations "
            f"({len(entry['infosets'])} information sets written)"
        )
    for name, why in data["unsolved"].items():
        _echo(f"round {name}: {why}")
    bound = " (a lower bound)" if "exploitability_bound" in data else ""
    if "value" in data:
        _echo(
            f"match: value to the first opener {data['value']:+.6f}, exploitability {data['exploitability']:.6f}{bound}"
        )
    _echo(f"policy: {target}", err=True)


@main.command("convert")
@click.argument("policy", type=click.Path(exists=True, dir_okay=False))
@click.argument("out", type=click.Path(dir_okay=False))
@_friendly
def convert_cmd(policy: str, out: str) -> None:
    """Convert policy file POLICY into OUT, between the JSON form (.json, .json.gz)
    and the packed form (.npz) a bot reads in milliseconds (docs/solver.md).

    Nothing is lost either way: the same information sets and probabilities.
    """
    from arena.solve.policy import read_policy, write_policy

    if not out.endswith((".json", ".json.gz", ".npz")):
        raise click.BadParameter(
            f"{out!r}: name it .json, .json.gz or .npz (the form follows the name)", param_hint="OUT"
        )
    data = read_policy(policy)
    n = sum(len(r.get("infosets", {})) for r in data.get("rounds", {}).values())
    _echo(f"{policy} -> {write_policy(out, data)}: {len(data.get('rounds', {}))} rounds, {n} information sets")


@main.command("exploit")
@click.argument("bot", type=click.Path(dir_okay=False))
@click.option("--preset", default="neller", show_default=True, help="Rule preset of the two-player game.")
@click.option("--set", "sets", multiple=True, metavar="KEY=VALUE", help="Override a rule key (default dice=1).")
@click.option(
    "--method",
    type=click.Choice(["auto", "exact", "lbr"]),
    default="auto",
    show_default=True,
    help="exact: ask everywhere and solve (one die each); lbr: local best response in real matches, "
    "a lower bound with an interval (any dice); auto: exact with one die each, else lbr.",
)
@click.option(
    "--samples",
    type=click.IntRange(1),
    default=None,
    help="Times each question is asked, each with another match seed [default: 4 exact, 2 lbr].",
)
@click.option(
    "--focus",
    type=click.IntRange(0),
    default=8,
    show_default=True,
    help="exact: a stochastic bot is then asked FOCUS x (information sets) more times, where its own "
    "play reaches most often.",
)
@click.option("--matches", type=int, default=200, show_default=True, help="lbr: matches played against the bot.")
@click.option(
    "--hands",
    type=int,
    default=64,
    show_default=True,
    help="lbr: the heaviest hands of the range asked how the bot answers each candidate raise.",
)
@click.option(
    "--raises",
    type=int,
    default=2,
    show_default=True,
    help="lbr: candidate raises per face, from the lowest legal quantity up.",
)
@click.option(
    "--neutral",
    type=float,
    default=0.0,
    show_default=True,
    help="lbr: value (dice) of a raise the bot answers with a raise.",
)
@click.option(
    "--depth",
    type=click.IntRange(1, 2),
    default=1,
    show_default=True,
    help="lbr: 2 values the bot's counter-raise by doubting it (or calza) where that beats --neutral.",
)
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True, help="Seed of the match seeds.")
@_bot_limit_options
@click.option("--out", type=click.Path(dir_okay=False), help="Write the report as JSON here.")
@click.option(
    "--run",
    "run",
    type=click.Path(file_okay=False),
    help="Also write it into run folder RUN (exploit/BOT-PRESET-DICE[-lbr].json), where `arena report` shows it.",
)
@_friendly
def exploit_cmd(
    bot: str,
    preset: str,
    sets: tuple[str, ...],
    method: str,
    samples: int | None,
    focus: int,
    matches: int,
    hands: int,
    raises: int,
    neutral: float,
    depth: int,
    seed: int,
    time_ms: int,
    sandbox: str,
    out: str | None,
    run: str | None,
) -> None:
    """How exploitable BOT is in a two-player game (docs/solver.md).

    BOT runs sandboxed and is asked, through the protocol, what it plays.
    exact: at every information set, and the best response to that strategy
    is computed exactly. lbr: a local best responder plays real matches
    against it, modelling it from questions to a second process; what it wins
    is a lower bound on the exploitability. Both count per match (+1 won,
    -1 lost), seats drawn at random.
    """
    import json
    from pathlib import Path

    from arena.botfile.spec import load_bot
    from arena.engine.rules import Rules, parse_sets
    from arena.exploit.text import format_report
    from arena.match.process import BotProcess, TimeControl
    from arena.sandbox import SandboxLimits

    over = parse_sets(sets)
    over.setdefault("dice", 1)
    rules = Rules.preset(preset, over)
    if method == "auto":
        method = "exact" if rules.dice == 1 else "lbr"
    spec = load_bot(bot)
    limits = SandboxLimits(mode=sandbox).for_bot(spec.limits, f"bot {spec.name} ({spec.path})")  # type: ignore[arg-type]
    clock = TimeControl(budget_ms=time_ms)
    tty = sys.stderr.isatty()

    def factory() -> BotProcess:
        return BotProcess(spec, limits, clock)

    if method == "exact":
        from arena.exploit.measure import measure

        def progress(done: int, total: int) -> None:
            if tty:
                click.echo(f"\rasked {done}/{total}", nl=False, err=True)

        rep = measure(
            rules,
            factory,
            bot=spec.name,
            samples=samples or 4,
            seed=seed,
            time_ms=time_ms,
            focus=focus,
            progress=progress,
        ).to_json()
    else:
        from arena.exploit.lbr import lbr

        def played(done: int, total: int, mean: float) -> None:
            if tty:
                click.echo(f"\rmatch {done}/{total}  LBR {mean:+.3f} per match", nl=False, err=True)

        rep = lbr(
            rules,
            factory,
            bot=spec.name,
            matches=matches,
            samples=samples or 2,
            hands=hands,
            raises=raises,
            neutral=neutral,
            depth=depth,
            seed=seed,
            time_ms=time_ms,
            preset=preset,
            progress=played,
        ).to_json()
    if tty:
        click.echo("", err=True)
    _echo(format_report(rep))
    data = json.dumps(rep, indent=1)
    if out:
        Path(out).write_text(data)
    if run:
        folder = Path(run) / "exploit"
        folder.mkdir(parents=True, exist_ok=True)
        tag = "-lbr" if method == "lbr" else ""
        (folder / f"{spec.name}-{preset}-{rules.dice}{tag}.json").write_text(data)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
