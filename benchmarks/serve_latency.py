"""How soon a bot's move reaches a page at the browser table (``arena serve``).

    python benchmarks/serve_latency.py [--matches 5] [--dice 5] [--bots probabilistic cautious]

A real server (in this process, on a free 127.0.0.1 port) plays ``--matches``
tables of one person and sandboxed bots, as `arena serve` does. The person
is a WebSocket client, as a page is (it joins with its seat link and, on its
turn, calls dudo when it may, else makes the smallest bid). Measured, on one
clock: from the moment the referee has a bot's reply in hand (the table's
watched player returns it) to the moment the client has received the frame
that shows it (the next ``turn`` or the ``reveal``). Reported: the number of
bot moves, median, 95th percentile and largest latency in milliseconds.

What it leaves out: the browser's own work once a frame arrived (parsing
and drawing the page), which tests/test_serve.py exercises in Chromium.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import socket
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import uvicorn  # noqa: E402
import websockets  # noqa: E402

from arena.serve import table as table_mod  # noqa: E402
from arena.serve.app import ServeOptions, make_app  # noqa: E402


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# (round, number of bids so far or -1 at the reveal) -> when the referee had the move that made it
replies: dict[tuple[int, int], float] = {}


def watch_replies() -> None:
    """Note the time each bot's reply is in the referee's hands, keyed by what it shows next."""
    original = table_mod._Watched.request

    def request(self: Any, msg: Any) -> Any:
        out = original(self, msg)
        if self.entrant not in self.table.people:
            reply = out[0]
            key = (
                (msg["round"], -1)
                if reply.get("action") in ("dudo", "calza")
                else (msg["round"], len(msg["history"]) + 1)
            )
            replies[key] = time.monotonic()
        return out

    table_mod._Watched.request = request  # type: ignore[method-assign]


async def play(base: str, port: int, link: str, tid: str) -> list[tuple[tuple[int, int], float]]:
    seen: list[tuple[tuple[int, int], float]] = []
    url = f"ws://127.0.0.1:{port}/ws/{tid}"
    async with websockets.connect(url, origin=base) as ws:
        await ws.send(json.dumps({"type": "join", "seat": link.split("#seat=")[1]}))
        history: list[Any] = []
        while True:
            ev = json.loads(await ws.recv())
            now = time.monotonic()
            kind = ev.get("type")
            if kind == "turn":
                history = ev["history"]
                seen.append(((ev["round"], len(history)), now))
            elif kind == "reveal":
                seen.append(((ev["round"], -1), now))
            elif kind == "your_turn":
                legal = ev["legal"]
                if legal["dudo"]:
                    text = "dudo"
                else:
                    face, q = min(((int(f), q) for f, q in legal["min_quantity"].items()), key=lambda fq: fq[1])
                    text = f"{q}x{face}"
                await ws.send(json.dumps({"type": "move", "text": text}))
            elif kind in ("over", "error"):
                return seen


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--matches", type=int, default=5)
    ap.add_argument("--dice", type=int, default=5)
    ap.add_argument("--bots", nargs="+", default=["probabilistic", "cautious"])
    args = ap.parse_args()
    watch_replies()
    port = free_port()
    with tempfile.TemporaryDirectory() as tmp:
        opts = ServeOptions(port=port, out=Path(tmp) / "table-bench")
        server = uvicorn.Server(
            uvicorn.Config(
                make_app(opts),
                host="127.0.0.1",
                port=port,
                log_level="warning",
                access_log=False,
                ws="websockets-sansio",
            )
        )
        thread = threading.Thread(target=server.run, daemon=True)
        thread.start()
        while not server.started:
            time.sleep(0.02)
        base = f"http://127.0.0.1:{port}"
        import urllib.request

        lat: list[float] = []
        for _ in range(args.matches):
            body = json.dumps(
                {
                    "preset": "classic",
                    "dice": args.dice,
                    "seats": [{"person": "bench"}] + [{"bot": b} for b in args.bots],
                }
            ).encode()
            req = urllib.request.Request(
                base + "/api/tables", data=body, method="POST", headers={"Content-Type": "application/json"}
            )
            with urllib.request.urlopen(req, timeout=60) as resp:
                table = json.loads(resp.read())
            replies.clear()
            seen = asyncio.run(play(base, port, table["seats"][0]["link"], table["table"]))
            for key, at in seen:
                if key in replies:
                    lat.append((at - replies[key]) * 1000)
        server.should_exit = True
        thread.join(10)
    lat.sort()
    p95 = lat[min(len(lat) - 1, int(0.95 * len(lat)))] if lat else float("nan")
    print(
        f"$ python benchmarks/serve_latency.py --matches {args.matches} --dice {args.dice} --bots {' '.join(args.bots)}"
    )
    print(
        f"bot moves seen by the page: {len(lat)}; from the referee's hands to the page's socket: "
        f"median {statistics.median(lat) if lat else float('nan'):.2f} ms, 95th percentile {p95:.2f} ms, "
        f"largest {max(lat) if lat else float('nan'):.2f} ms"
    )


if __name__ == "__main__":
    main()
