"""A bare referee: the floor a sandboxed, rule-complete, recorded league is compared with.

    python benchmarks/bare_referee.py DECISIONS [--par 2] [--pin] [--players 5] [--dice 5]
                                      [--sandbox [--no-freeze]]

It plays 5-player, 5-dice Dudo with wild aces (bids and dudo, nothing else:
no calza, no palifico, no faults, no records) against bots that are plain
child processes of the referee, started once and reused for every game, each
speaking one stdlib-JSON line each way over pipes (``readline``), with no
sandbox of any kind. The bots play :func:`decide`, the heuristic that
``benchmarks/bots/heuristic.py`` plays through the SDK in the project's league.

``--sandbox`` starts each bot in the project's sandbox instead (bubblewrap,
the seccomp filter, cgroups, rlimits: ``arena.sandbox``, what ``arena run``
gives every bot) and does per decision what the project's referee does for
the sandbox: thaw the bot, write, read the reply, read its CPU counter,
freeze it. Everything else stays bare, so the difference between the two is
the price of the protections alone, the floor under any referee that keeps
them (benchmarks/league_vs_bare.py reports it). ``--no-freeze`` (with
``--sandbox``) leaves the bots running between their turns, all else the
same: what freezing costs, apart from the rest of the sandbox.

``--par K`` runs K referees at once (each with its own bots), ``--pin`` puts
referee i and its bots on core i (mod the cores), as the project's local
backend pins its workers. Each referee plays games until it has made
DECISIONS/K decisions. Printed (one JSON object): decisions, games, the wall
seconds of the whole command, and of the match phase (from the moment every
referee's bots answered ``ready`` to the moment the last referee finished), and
the CPU seconds of the match phase: the referees' own (``referee_user``,
``referee_system``) and their bots' (``bots_cpu``).

Written for this project's benchmarks (benchmarks/league_vs_bare.py); it is a
baseline, so it is kept as bare as a referee can honestly be.
"""

from __future__ import annotations

import json
import os
import random
import resource
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def decide(rng: random.Random, dice: list[int], counts: list[int], bid: list[int] | None) -> dict[str, object]:
    """The heuristic: bid the best face near the expected count; doubt a bid above it."""
    aces = dice.count(1)
    others = (sum(counts) - len(dice)) / 3.0
    best = max(range(2, 7), key=lambda f: dice.count(f) + aces)
    if bid is None:
        return {"action": "bid", "bid": [max(1, int(dice.count(best) + aces + others) - 2), best]}
    qty, face = bid
    if qty > dice.count(face) + aces + others + rng.random() * 1.2 - 0.3:
        return {"action": "dudo"}
    return {"action": "bid", "bid": [qty, best] if best > face else [qty + 1, best]}


def bot_main(seed: int) -> None:
    """A bot process: ``ready``, then one reply line per request line until EOF."""
    rng = random.Random(seed)
    inp, out = sys.stdin.buffer, sys.stdout.buffer
    out.write(b"ready\n")
    out.flush()
    for line in inp:
        req = json.loads(line)
        out.write(json.dumps(decide(rng, req["dice"], req["counts"], req["bid"])).encode() + b"\n")
        out.flush()


def start_bots(n: int) -> list[subprocess.Popen[bytes]]:
    argv = [sys.executable, "-I", "-S", os.path.abspath(__file__), "--bot"]
    bots = [subprocess.Popen(argv + [str(i)], stdin=subprocess.PIPE, stdout=subprocess.PIPE) for i in range(n)]
    for b in bots:
        assert b.stdout is not None and b.stdout.readline() == b"ready\n"
    return bots


class Boxed:
    """The bots of ``--sandbox``: each in the project's sandbox, frozen between its turns."""

    def __init__(self, n: int, folder: str, freeze: bool = True) -> None:
        import shutil

        sys.path.insert(0, os.path.dirname(HERE))
        from arena.botfile.spec import load_bot
        from arena.sandbox import SandboxLimits
        from arena.sandbox.box import Sandbox

        self.freeze = freeze
        self.boxes, self.bots = [], []
        for i in range(n):
            # A bot sees only its own files (bare0.yaml, the folder bare0/): a copy of this file each.
            os.makedirs(os.path.join(folder, f"bare{i}"), exist_ok=True)
            shutil.copy(os.path.abspath(__file__), os.path.join(folder, f"bare{i}", f"bare{i}.py"))
            manifest = os.path.join(folder, f"bare{i}.yaml")
            with open(manifest, "w") as f:
                f.write(f'command: [python3, -I, -S, ./bare{i}/bare{i}.py, --bot, "{i}"]\nversion: "1"\n')
            spec = load_bot(manifest)
            box = Sandbox(spec, SandboxLimits(mode="strict").for_bot(spec.limits, manifest))
            argv, env, cwd = box.command()
            proc = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                env=env,
                cwd=cwd,
                close_fds=True,
                pass_fds=box.pass_fds,
                start_new_session=box.new_session,
                process_group=None if box.new_session else 0,
                preexec_fn=box.preexec(),
            )
            box.started(proc.pid)
            self.boxes.append(box)
            self.bots.append(proc)
        for proc, box in zip(self.bots, self.boxes):
            assert proc.stdout is not None and proc.stdout.readline() == b"ready\n"
            box.cpu_ns()
            if freeze:
                box.settle()  # frozen from here on, as the project's bots are between turns

    def close(self) -> None:
        for box in self.boxes:
            box.thaw()
        for proc in self.bots:
            assert proc.stdin is not None
            proc.stdin.close()
            proc.wait()
        for box in self.boxes:
            box.cleanup()


def play(
    bots: list[subprocess.Popen[bytes]], rng: random.Random, game: int, ndice: int, boxed: Boxed | None = None
) -> int:
    """One game; returns the decisions made."""
    n = len(bots)
    pipes = []
    for b in bots:
        assert b.stdin is not None and b.stdout is not None
        pipes.append((b.stdin, b.stdout))
    counts = [ndice] * n
    opener = 0
    decisions = 0
    rnd = 0
    while sum(1 for c in counts if c) > 1:
        rnd += 1
        dice = [[rng.randint(1, 6) for _ in range(c)] for c in counts]
        bid: list[int] | None = None
        bidder = -1
        seat = opener
        while True:
            w, r = pipes[seat]
            if boxed is not None and boxed.freeze:
                boxed.boxes[seat].thaw()
            w.write(
                json.dumps(
                    {
                        "type": "decide",
                        "game": game,
                        "round": rnd,
                        "seat": seat,
                        "dice": dice[seat],
                        "counts": counts,
                        "bid": bid,
                    }
                ).encode()
                + b"\n"
            )
            w.flush()
            line = r.readline()
            if boxed is not None:  # what the project's referee does around a reply: charge, freeze
                boxed.boxes[seat].cpu_ns()
                if boxed.freeze:
                    boxed.boxes[seat].freeze()
            reply = json.loads(line)
            decisions += 1
            if reply.get("action") == "dudo" and bid is not None:
                qty, face = bid
                held = sum(1 for hand in dice for d in hand if d == face or d == 1)
                loser = seat if held >= qty else bidder
                counts[loser] -= 1
                opener = loser
                while counts[opener] == 0:
                    opener = (opener + 1) % n
                break
            new = reply.get("bid")
            if bid is not None and not (new and (new[0], new[1]) > (bid[0], bid[1])):
                new = [bid[0] + 1, bid[1]]  # not a raise: the smallest raise is forced
            bid, bidder = new, seat
            seat = (seat + 1) % n
            while counts[seat] == 0:
                seat = (seat + 1) % n
    return decisions


def bots_cpu(bots: list[subprocess.Popen[bytes]], boxed: Boxed | None) -> float:
    """CPU seconds the bots have used so far: their cgroups' counters in the
    sandbox (exact), else each process's own count in /proc (clock ticks)."""
    if boxed is not None:
        return sum(box.cpu_ns() for box in boxed.boxes) / 1e9
    tick = os.sysconf("SC_CLK_TCK")
    total = 0
    for b in bots:
        with open(f"/proc/{b.pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / tick


def referee(
    decisions: int,
    players: int,
    ndice: int,
    seed: int,
    ready_fd: int | None,
    sandbox: bool = False,
    freeze: bool = True,
) -> None:
    import tempfile

    tmp = tempfile.TemporaryDirectory(prefix="bare-referee-")
    boxed = Boxed(players, tmp.name, freeze) if sandbox else None
    bots = boxed.bots if boxed is not None else start_bots(players)
    if ready_fd is not None:  # tell the parent the bots are up, wait for the go
        os.write(ready_fd, b"r")
        sys.stdin.buffer.read(1)
    rng = random.Random(seed)
    made = games = 0
    bots0 = bots_cpu(bots, boxed)
    self0 = resource.getrusage(resource.RUSAGE_SELF)
    t0 = time.perf_counter()
    while made < decisions:
        made += play(bots, rng, games, ndice, boxed)
        games += 1
    wall = time.perf_counter() - t0
    self1 = resource.getrusage(resource.RUSAGE_SELF)
    spent = bots_cpu(bots, boxed) - bots0
    if boxed is not None:
        boxed.close()
    else:
        for b in bots:
            assert b.stdin is not None
            b.stdin.close()
        for b in bots:
            b.wait()
    tmp.cleanup()
    print(
        json.dumps(
            {
                "decisions": made,
                "games": games,
                "wall": wall,
                "referee_user": self1.ru_utime - self0.ru_utime,
                "referee_system": self1.ru_stime - self0.ru_stime,
                "bots_cpu": spent,
            }
        ),
        flush=True,
    )


def main() -> None:
    import argparse

    if len(sys.argv) > 1 and sys.argv[1] == "--bot":
        bot_main(int(sys.argv[2]))
        return
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("decisions", type=int)
    ap.add_argument("--par", type=int, default=1)
    ap.add_argument("--pin", action="store_true")
    ap.add_argument("--players", type=int, default=5)
    ap.add_argument("--dice", type=int, default=5)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--sandbox", action="store_true", help="bots in the project's sandbox, frozen between turns")
    ap.add_argument("--no-freeze", action="store_true", help="with --sandbox: not frozen between turns")
    ap.add_argument("--child", type=int, default=None, help=argparse.SUPPRESS)  # fd to say 'ready' on
    ap.add_argument("--cpu", type=int, default=None, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.no_freeze and not a.sandbox:
        ap.error("--no-freeze is about the sandbox's bots: give --sandbox too")
    if a.cpu is not None:
        os.sched_setaffinity(0, {a.cpu})
    if a.child is not None:
        referee(a.decisions, a.players, a.dice, a.seed, a.child, a.sandbox, not a.no_freeze)
        return
    t0 = time.perf_counter()
    cores = sorted(os.sched_getaffinity(0))
    kids = []
    for i in range(a.par):
        r, w = os.pipe()
        share = a.decisions // a.par + (1 if i < a.decisions % a.par else 0)
        argv = [
            sys.executable,
            os.path.abspath(__file__),
            str(share),
            "--players",
            str(a.players),
            "--dice",
            str(a.dice),
            "--seed",
            str(a.seed + i),
            "--child",
            str(w),
        ]
        argv += ["--sandbox"] * a.sandbox + ["--no-freeze"] * a.no_freeze
        if a.pin:
            argv += ["--cpu", str(cores[i % len(cores)])]
        kids.append((subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, pass_fds=(w,)), r))
        os.close(w)
    for _, r in kids:
        assert os.read(r, 1) == b"r"
        os.close(r)
    t1 = time.perf_counter()  # every referee's bots are up: the match phase starts
    for p, _ in kids:
        assert p.stdin is not None
        p.stdin.write(b"g")
        p.stdin.close()
    outs = []
    for p, _ in kids:
        assert p.stdout is not None
        outs.append(json.loads(p.stdout.read()))
        p.wait()
    t2 = time.perf_counter()
    print(
        json.dumps(
            {
                "decisions": sum(o["decisions"] for o in outs),
                "games": sum(o["games"] for o in outs),
                "match_wall": t2 - t1,
                "whole_wall": t2 - t0,
                **{k: sum(o[k] for o in outs) for k in ("referee_user", "referee_system", "bots_cpu")},
            }
        )
    )


if __name__ == "__main__":
    main()
