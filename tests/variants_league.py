"""A league of the built-in Python bots under classic and under dead man's
calza with veteran palifico, played in this process by the real referee
(:func:`arena.match.referee.play_match`, each bot behind the host's own
driver: no sandbox, trusted code only) and written as a run folder that
``arena stats`` and ``arena replay`` read.

Every table is played under every variant with the same dice seed and the
same entrants, so the variants are paired (``rounds_change[classic]``).
Used by tests/test_variants_run.py; by hand, for a larger run::

    python tests/variants_league.py OUT --tables 20 && arena stats OUT --no-write
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from arena.engine.records import MatchRecord, MatchSpec, derive_seed, match_id, record_line  # noqa: E402
from arena.engine.rules import Rules  # noqa: E402
from arena.match.inprocess import InProcessTransport  # noqa: E402
from arena.match.referee import play_match  # noqa: E402
from arena.protocol.loader import load_python_bot  # noqa: E402

# Ten entrants, so that a table of ten seats distinct labels.
ENTRANTS = (
    "random",
    "random#2",
    "probabilistic",
    "probabilistic#2",
    "cautious",
    "cautious#2",
    "bluffer",
    "calza",
    "equilibrium",
    "bayes",
)
VARIANTS: dict[str, dict[str, Any]] = {
    "classic": Rules.preset("classic").to_dict(),
    "both": Rules.preset("classic", {"dead_mans_calza": True, "veteran_palifico": True}).to_dict(),
}


def league(
    folder: Path,
    tables: int = 1,
    sizes: tuple[int, ...] = tuple(range(2, 11)),
    seed: int = 1,
    variants: dict[str, dict[str, Any]] | None = None,
    time_ms: int = 1000,
) -> list[MatchRecord]:
    """Play ``tables`` tables of each size under every variant; write the run
    folder (run.json, games.jsonl, matches.parquet, tables/); return the records."""
    variants = VARIANTS if variants is None else variants
    factories = {label: load_python_bot(ROOT / "bots" / f"{label.split('#')[0]}.py") for label in ENTRANTS}
    rng = random.Random(seed)
    records: list[MatchRecord] = []
    index = 0
    for t in range(tables * len(sizes)):
        size = sizes[t % len(sizes)]
        entrants = tuple(sorted(rng.sample(range(len(ENTRANTS)), size)))
        dice_seed = derive_seed("variants-league", seed, t)
        for name, rules in variants.items():
            spec = MatchSpec(
                index=index,
                match=match_id(index),
                variant=name,
                rules=rules,
                entrants=entrants,
                seed=derive_seed("match", seed, index),
                dice_seed=dice_seed,
                table=t,
                rotation=0,
            )
            labels = [ENTRANTS[e] for e in entrants]
            players = [InProcessTransport(factories[label], label) for label in labels]
            records.append(play_match(spec, players, labels, time_ms).record)
            index += 1
    write_folder(folder, records, variants)
    return records


def write_folder(folder: Path, records: list[MatchRecord], variants: dict[str, dict[str, Any]]) -> Path:
    from arena.running.store import write_matches_parquet, write_tables

    folder.mkdir(parents=True, exist_ok=True)
    run = {
        "name": folder.name,
        "seed": 1,
        "status": "complete",
        "version": "0.1.0",
        "config": {"name": folder.name},
        "variants": variants,
        "bots": [{"name": b, "path": f"bots/{b.split('#')[0]}.py", "sha256": "0" * 64} for b in ENTRANTS],
    }
    (folder / "run.json").write_text(json.dumps(run, indent=2))
    (folder / "games.jsonl").write_bytes(b"".join(record_line(r) for r in records))
    write_matches_parquet(folder)
    write_tables(folder)
    return folder


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--tables", type=int, default=1, help="tables of each size (2 to 10) under each variant")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    records = league(args.out, args.tables, seed=args.seed)
    sys.stdout.write(f"{len(records)} matches -> {args.out}\n")


if __name__ == "__main__":
    main()
