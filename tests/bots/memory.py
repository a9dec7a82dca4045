"""Attack: remembers every hand that round_end reveals, to recognise a deal
it has seen before (paired variants, ``seating: rotate``) and know every die.

It stores each revealed table under (round, dice per seat); at each turn it
looks the current round up and, if a stored table holds exactly its own hand
in its own seat, predicts every other hand from it. At round_end it checks
the prediction and prints ``CORRECT <match> <round>`` to stderr when every
hand was right. To outlive its process (``fresh_process: true``) it also
writes each table into a key's description in the kernel keyring (``add_key``,
60 s timeout), which /proc/keys shows to every process of the uid, and reads it
back from there, and tries /tmp and /dev/shm. At every match_end it prints
``SUMMARY pid=... stored=... lookups=... predicted=... correct=...
keyring_writes=...`` so a test can see that the attack was live.

It plays like the ``probabilistic`` bot, and perfectly when it knows the dice.
"""

from __future__ import annotations

import ctypes
import json
import os
import sys

from arena.sdk import CALZA, DUDO, Bot, RoundEnd, Turn, bid

_libc = ctypes.CDLL(None, use_errno=True)
_SYS_ADD_KEY, _SYS_KEYCTL = 248, 250  # x86_64
_KEY_SPEC_USER_KEYRING = -4
_KEYCTL_SET_TIMEOUT = 15

TABLES: dict[str, list[list[int]]] = {}
STATS = {"stored": 0, "lookups": 0, "predicted": 0, "correct": 0, "keyring_writes": 0, "keyring_reads": 0}
FILES = ("/tmp/dudo-memory.json", "/dev/shm/dudo-memory.json")


def _key(round_: int, counts: list[int] | tuple[int, ...]) -> str:
    return f"dm:{round_}:{','.join(map(str, counts))}"


def _packed(table: list[list[int]]) -> str:
    return "/".join("".join(map(str, h)) for h in table)


def _keyring_put(desc: str, table: list[list[int]]) -> None:
    """The table goes into the key's description, which /proc/keys shows to
    every process of the same uid, in any sandbox, for the key's lifetime."""
    if STATS["keyring_writes"] >= 64:  # enough to prove the channel; never exhaust a quota
        return
    name = f"{desc}:{_packed(table)}".encode()
    serial = _libc.syscall(_SYS_ADD_KEY, b"user", name, b"x", 1, _KEY_SPEC_USER_KEYRING)
    if serial > 0:
        STATS["keyring_writes"] += 1
        _libc.syscall(_SYS_KEYCTL, _KEYCTL_SET_TIMEOUT, serial, 60)


def _keyring_get(desc: str) -> list[list[int]] | None:
    try:
        with open("/proc/keys") as f:
            lines = f.read().splitlines()
    except OSError:
        return None
    prefix = f"{desc}:"
    for line in lines:
        fields = line.split()
        if len(fields) >= 9 and fields[7] == "user" and fields[8].startswith(prefix):
            packed = fields[8][len(prefix) :].rstrip(":")
            STATS["keyring_reads"] += 1
            return [[int(d) for d in h] for h in packed.split("/")]
    return None


def _load_files() -> None:
    for path in FILES:
        try:
            with open(path) as f:
                TABLES.update(json.load(f))
        except (OSError, ValueError):
            pass


def _save_files() -> None:
    for path in FILES:
        try:
            with open(path, "w") as f:
                json.dump(TABLES, f)
        except OSError:
            pass


_load_files()


class Memory(Bot):
    def start(self, match) -> None:  # type: ignore[no-untyped-def]
        self.prediction: list[list[int]] | None = None

    def act(self, turn: Turn):  # type: ignore[no-untyped-def]
        key = _key(turn.round, turn.counts)
        STATS["lookups"] += 1
        table = TABLES.get(key) or _keyring_get(key)
        mine = sorted(turn.dice)
        self.prediction = table if table is not None and sorted(table[turn.seat]) == mine else None
        if self.prediction is not None:
            STATS["predicted"] += 1
            return self._perfect(turn, self.prediction)
        return self._odds(turn)

    def round_end(self, end: RoundEnd) -> None:
        table = [sorted(h) for h in end.dice]
        if self.prediction is not None and [sorted(h) for h in self.prediction] == table:
            STATS["correct"] += 1
            print(f"CORRECT {self.match.match} {end.round}", file=sys.stderr, flush=True)
        self.prediction = None
        key = _key(end.round, [len(h) for h in end.dice])
        if key not in TABLES:
            TABLES[key] = table
            STATS["stored"] += 1
            _keyring_put(key, table)
            _save_files()

    def match_end(self, placements) -> None:  # type: ignore[no-untyped-def]
        print(
            f"SUMMARY pid={os.getpid()} " + " ".join(f"{k}={v}" for k, v in STATS.items()), file=sys.stderr, flush=True
        )

    # -- play --------------------------------------------------------------

    def _odds(self, turn: Turn):  # type: ignore[no-untyped-def]
        standing = turn.standing
        if standing is None:
            face = max(turn.legal.min_quantity, key=lambda f: (turn.expected(f), f))
            return bid(turn.legal.min_quantity[face], face)
        raise_to, p_raise = turn.best_raise()
        if raise_to is None or turn.probability(standing) < min(0.5, p_raise):
            return DUDO
        return raise_to

    def _perfect(self, turn: Turn, table: list[list[int]]):  # type: ignore[no-untyped-def]
        wild = turn.rules.wild_ones and not turn.palifico

        def count(face: int) -> int:
            return sum(1 for h in table for d in h if d == face or (wild and d == 1 and face != 1))

        standing = turn.standing
        if standing is not None:
            real = count(standing.face)
            if turn.legal.calza and real == standing.quantity:
                return CALZA
            if turn.legal.dudo and real < standing.quantity:
                return DUDO
        for face, low in sorted(turn.legal.min_quantity.items()):
            if low <= count(face) <= turn.legal.max_quantity:
                return bid(low, face)
        return DUDO if turn.legal.dudo else self._odds(turn)
