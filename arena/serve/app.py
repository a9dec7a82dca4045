"""``arena serve``: the browser table's web server (Starlette, uvicorn; docs/serve.md).

Safe by default, since a page at a table is a player's hand:

- it listens on 127.0.0.1; on any other address every request needs the
  server's key (:class:`ServeOptions` ``key``), given once as ``?key=`` and
  then kept in a same-site cookie;
- on 127.0.0.1 a request must name this server as its ``Host`` (a page of
  another site that resolves its name to 127.0.0.1, DNS rebinding, is refused);
- a WebSocket must come from a page of this server (its ``Origin``); a new
  table only from a JSON request (a form of another site cannot send one);
- every page is static, its script a file (``Content-Security-Policy``:
  nothing inline, nothing from elsewhere), and it draws bot and player text
  with ``textContent`` only;
- each person's seat is a secret link (in the fragment: never sent in a
  ``Referer`` or a log); a page without one is a spectator; what each page is
  sent is chosen in :mod:`arena.serve.table`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import secrets
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, PlainTextResponse, Response
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

from arena.botfile.builtin import BUILTIN_BOTS
from arena.botfile.spec import BotSpec
from arena.engine.rules import PRESETS, Rules
from arena.errors import ArenaError, RunError
from arena.running.store import REPORT, RunFolder
from arena.serve.live import RunWatch
from arena.serve.matchview import view_data
from arena.serve.records import TableRecords
from arena.serve.seating import check_name, refuse_undeclared, resolve_opponents, seat_names
from arena.serve.table import AWAY_S, Event, Table, TableSeat

__all__ = ["LOOPBACK", "ServeOptions", "bot_files", "can_listen", "make_app", "serve"]

STATIC = Path(__file__).resolve().parent / "static"
ASSETS = {
    "lobby.js": "text/javascript",
    "table.js": "text/javascript",
    "dice.js": "text/javascript",
    "run.js": "text/javascript",
    "matches.js": "text/javascript",
    "match.js": "text/javascript",
    "style.css": "text/css",
    "favicon.svg": "image/svg+xml",
}
LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-store",
}
KEY_COOKIE = "arena_key"
MAX_TABLES = 16  # tables playing at once: each runs its bots' sandboxed processes
MAX_KEPT = 64  # finished tables kept for their pages
MAX_FRAME = 4096  # bytes of one message from a page (a move is a few)

Scope = MutableMapping[str, Any]
ASGIApp = Callable[[Scope, Callable[[], Awaitable[Any]], Callable[[Any], Awaitable[None]]], Awaitable[None]]


@dataclass
class ServeOptions:
    """What ``arena serve`` was asked for."""

    host: str = "127.0.0.1"
    port: int = 8000
    key: str | None = None  # required on any address but loopback (made up when not given)
    out: Path = Path("results/table")
    away_s: float = AWAY_S
    fallback: str | None = "probabilistic"  # the bot that takes a gone person's seat; None: the seat forfeits
    time: Any = None  # arena.match.process.TimeControl; None = the defaults
    sandbox: Any = None  # arena.sandbox.SandboxLimits; None = the defaults
    bots_dirs: tuple[Path, ...] = (Path("bots"), BUILTIN_BOTS)
    run: Path | None = None  # a run folder to follow on /run
    run_pending: bool = False  # the run folder may not be written yet (arena run --serve)
    tables: dict[str, Table] = field(default_factory=dict)

    @property
    def loopback(self) -> bool:
        return self.host in LOOPBACK


def bot_files(dirs: tuple[Path, ...]) -> dict[str, Path]:
    """The bots a seat may be given, by name: every bot file in ``dirs``
    (./bots, then the built-ins: a name in the first hides the second's)."""
    found: dict[str, Path] = {}
    for folder in dirs:
        if folder.is_dir():
            for p in sorted(folder.iterdir()):
                if p.suffix in (".py", ".yaml", ".yml") and not p.name.startswith("_"):
                    found.setdefault(p.stem, p)
    return dict(sorted(found.items()))


def _security(app: ASGIApp, opts: ServeOptions) -> ASGIApp:
    """The checks every request passes before the routes: the Host on loopback,
    the key elsewhere, the Origin of a WebSocket."""
    allowed_hosts = {f"{h}:{opts.port}" for h in ("127.0.0.1", "localhost", "[::1]")}

    async def guard(
        scope: Scope, receive: Callable[[], Awaitable[Any]], send: Callable[[Any], Awaitable[None]]
    ) -> None:
        if scope["type"] not in ("http", "websocket"):
            await app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        host = headers.get("host", "")
        refusal = None
        if opts.loopback and host not in allowed_hosts:
            refusal = f"this server answers as 127.0.0.1:{opts.port} or localhost:{opts.port} only"
        if refusal is None and opts.key is not None:
            query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
            given = (query.get("key") or [None])[0] or _cookie(headers.get("cookie", ""), KEY_COOKIE)
            if given is None or not secrets.compare_digest(given.encode(), opts.key.encode()):
                refusal = "this server needs its key: open the link arena serve printed"
        if refusal is None and scope["type"] == "websocket":
            origin = headers.get("origin")
            if origin not in (f"http://{host}", f"https://{host}"):
                refusal = "a WebSocket must come from a page of this server"
        if refusal is not None:
            if scope["type"] == "websocket":
                await send({"type": "websocket.close", "code": 1008, "reason": refusal[:120]})
                return
            await PlainTextResponse(refusal, status_code=403, headers=HEADERS)(scope, receive, send)
            return
        await app(scope, receive, send)

    return guard


def _cookie(header: str, name: str) -> str | None:
    for part in header.split(";"):
        k, _, v = part.strip().partition("=")
        if k == name:
            return v
    return None


def _page(name: str, opts: ServeOptions, request: Request) -> Response:
    """One of the static pages (lobby.html, table.html, run.html), with the headers."""
    resp = FileResponse(STATIC / name, media_type="text/html; charset=utf-8", headers=HEADERS)
    if opts.key is not None and request.query_params.get("key"):
        # Keep the key for the page's script, its WebSocket and the next pages.
        resp.set_cookie(KEY_COOKIE, opts.key, httponly=True, samesite="strict")
    return resp


def make_app(opts: ServeOptions) -> ASGIApp:
    """The web app: pages, assets, the table API and each table's WebSocket."""
    records = TableRecords(opts.out)
    records.check()
    watches: list[RunWatch] = []
    if opts.run is not None and not opts.run_pending:
        watches.append(RunWatch(opts.run))  # not a run folder: refused now, in one line

    def run_watch() -> RunWatch | None:
        """The run followed; with ``run_pending`` (``arena run --serve``), made
        once the run has written its folder."""
        if not watches and opts.run is not None and RunFolder(opts.run).is_run():
            watches.append(RunWatch(opts.run))
        return watches[0] if watches else None

    bots = bot_files(opts.bots_dirs)
    fallback = None
    if opts.fallback is not None:
        if opts.fallback not in bots:
            raise RunError(f"--fallback {opts.fallback!r}: no such bot; the bots are {', '.join(bots)}")
        fallback = resolve_opponents([str(bots[opts.fallback])])[0]

    async def lobby(request: Request) -> Response:
        return _page("lobby.html", opts, request)

    async def table_page(request: Request) -> Response:
        if request.path_params["tid"] not in opts.tables:
            return PlainTextResponse(
                "no such table (the server keeps the last few; start a new one)", status_code=404, headers=HEADERS
            )
        return _page("table.html", opts, request)

    async def asset(request: Request) -> Response:
        name = request.path_params["name"]
        if name not in ASSETS:
            return PlainTextResponse("not found", status_code=404, headers=HEADERS)
        return FileResponse(STATIC / name, media_type=ASSETS[name], headers=HEADERS)

    async def options(request: Request) -> Response:
        return JSONResponse(
            {"presets": list(PRESETS), "bots": list(bots), "away_s": opts.away_s, "fallback": opts.fallback},
            headers=HEADERS,
        )

    async def new_table(request: Request) -> Response:
        if request.headers.get("content-type", "").split(";")[0].strip() != "application/json":
            return JSONResponse({"error": "send the table as JSON"}, status_code=415, headers=HEADERS)
        try:
            data = json.loads((await request.body())[:65536])
            table = _table_from(data, opts, bots, records, fallback)
        except (ValueError, ArenaError) as exc:
            return JSONResponse({"error": str(exc)}, status_code=400, headers=HEADERS)
        playing = sum(1 for t in opts.tables.values() if not t.done.is_set())
        if playing >= MAX_TABLES:
            return JSONResponse(
                {"error": f"{playing} tables are playing: wait for one to finish"}, status_code=429, headers=HEADERS
            )
        _forget_old(opts)
        opts.tables[table.id] = table
        table.start()
        return JSONResponse(
            {
                "table": table.id,
                "watch": f"/table/{table.id}",
                "seats": [
                    {
                        "name": s.name,
                        "bot": s.bot is not None,
                        "link": None if s.bot is not None else f"/table/{table.id}#seat={table.seat_token(i)}",
                    }
                    for i, s in enumerate(table.seats)
                ],
            },
            headers=HEADERS,
        )

    async def run_page(request: Request) -> Response:
        return _run_page("run.html", opts, request)

    async def run_state(request: Request) -> Response:
        if opts.run is None:
            return JSONResponse({"error": "this server follows no run"}, status_code=404, headers=HEADERS)
        watch = run_watch()
        if watch is None:
            return JSONResponse(_starting(opts.run), headers=HEADERS)
        return JSONResponse(await asyncio.to_thread(watch.snapshot), headers=HEADERS)

    async def matches_page(request: Request) -> Response:
        return _run_page("matches.html", opts, request)

    async def match_page(request: Request) -> Response:
        return _run_page("match.html", opts, request)

    async def matches_state(request: Request) -> Response:
        watch = run_watch()
        if watch is None:
            return JSONResponse({"error": "no match recorded yet"}, status_code=404, headers=HEADERS)
        query = request.query_params
        try:
            page = int(query.get("page", "0"))
        except ValueError:
            return JSONResponse({"error": "page: give a whole number"}, status_code=400, headers=HEADERS)
        got = await asyncio.to_thread(
            watch.matches,
            page=page,
            bot=query.get("bot", ""),
            variant=query.get("variant", ""),
            fault=query.get("fault", ""),
            q=query.get("q", "")[:200],
            order=query.get("order", ""),
        )
        return JSONResponse(got, headers=HEADERS)

    async def match_state(request: Request) -> Response:
        watch = run_watch()
        if watch is None:
            return JSONResponse({"error": "no match recorded yet"}, status_code=404, headers=HEADERS)
        mid = request.path_params["mid"]
        rec = await asyncio.to_thread(watch.record, mid)
        if rec is None:
            return JSONResponse(
                {"error": f"no match {mid[:80]!r} is recorded in this run (yet)"}, status_code=404, headers=HEADERS
            )
        return JSONResponse(await asyncio.to_thread(view_data, rec), headers=HEADERS)

    async def report_page(request: Request) -> Response:
        path = opts.run / REPORT if opts.run is not None else None
        if path is None or not path.is_file():
            return PlainTextResponse(
                "no report yet: arena report RUN_FOLDER writes it", status_code=404, headers=HEADERS
            )
        # The report's own policy (its one script allowed by its hash, its plots as data: images).
        csp = await asyncio.to_thread(_report_csp)
        return FileResponse(
            path, media_type="text/html; charset=utf-8", headers={**HEADERS, "Content-Security-Policy": csp}
        )

    async def table_socket(ws: WebSocket) -> None:
        await _serve_socket(ws, opts)

    app = Starlette(
        routes=[
            Route("/", lobby),
            Route("/table/{tid}", table_page),
            Route("/static/{name}", asset),
            Route("/api/options", options),
            Route("/api/tables", new_table, methods=["POST"]),
            Route("/run", run_page),
            Route("/api/run", run_state),
            Route("/matches", matches_page),
            Route("/match/{mid}", match_page),
            Route("/api/matches", matches_state),
            Route("/api/match/{mid}", match_state),
            Route("/report", report_page),
            WebSocketRoute("/ws/{tid}", table_socket),
        ]
    )
    return _security(app, opts)


def _table_from(
    data: Any, opts: ServeOptions, bots: dict[str, Path], records: TableRecords, fallback: tuple[str, BotSpec] | None
) -> Table:
    """A lobby's request as a table, each value checked with one clear error."""
    if not isinstance(data, dict):
        raise RunError('a table is a JSON object: {"preset": ..., "seats": [...]}')
    preset = data.get("preset", "classic")
    if preset not in PRESETS:
        raise RunError(f"preset {preset!r} does not exist; use one of {', '.join(PRESETS)}")
    overrides: dict[str, Any] = {}
    dice = data.get("dice")
    if dice is not None:
        if type(dice) is not int or not 1 <= dice <= 10:
            raise RunError(f"dice {dice!r}: give a number of dice per player from 1 to 10")
        overrides["dice"] = dice
    for key in ("dead_mans_calza", "veteran_palifico"):  # the variants a preset leaves off (docs/rules.md)
        value = data.get(key)
        if value is not None:
            if type(value) is not bool:
                raise RunError(f"{key} {json.dumps(value)[:40]}: give true or false")
            overrides[key] = value
    rules = Rules.preset(preset, overrides)
    seats = data.get("seats")
    if not isinstance(seats, list) or not 2 <= len(seats) <= 10:
        raise RunError('seats: give 2 to 10 seats, each {"bot": NAME} or {"person": NAME}')
    people, bot_list, order = [], [], []
    for i, seat in enumerate(seats):
        if isinstance(seat, dict) and isinstance(seat.get("bot"), str):
            if seat["bot"] not in bots:
                raise RunError(f"seat {i + 1}: no bot {seat['bot']!r}; the bots are {', '.join(bots)}")
            bot_list.append(str(bots[seat["bot"]]))
            order.append("bot")
        elif isinstance(seat, dict) and isinstance(seat.get("person"), str):
            people.append(check_name(seat["person"], f"seat {i + 1}: name"))
            order.append("person")
        else:
            raise RunError(f'seat {i + 1}: {json.dumps(seat)[:60]} is neither {{"bot": NAME}} nor {{"person": NAME}}')
    if not people:
        raise RunError("no seat is a person: a table needs at least one (arena run plays bots against bots)")
    resolved = resolve_opponents(bot_list) if bot_list else ()
    refuse_undeclared(rules, resolved, "choose other bots")
    person_names, labels = seat_names(people, [label for label, _ in resolved])
    pi, bi = iter(person_names), iter(zip(labels, resolved))
    table_seats = []
    for kind in order:
        if kind == "person":
            table_seats.append(TableSeat(next(pi)))
        else:
            label, (_, spec) = next(bi)
            table_seats.append(TableSeat(label, spec))
    return Table(
        table_seats,
        rules,
        preset,
        record=records,
        away_s=opts.away_s,
        time=opts.time,
        sandbox=opts.sandbox,
        fallback=fallback,
    )


def _run_page(name: str, opts: ServeOptions, request: Request) -> Response:
    """A page of the run followed (the live page, the match list, the viewer)."""
    if opts.run is None:
        return PlainTextResponse("this server follows no run: arena serve RUN_FOLDER", status_code=404, headers=HEADERS)
    return _page(name, opts, request)


def _report_csp() -> str:
    from arena.analysis.report import CSP  # pandas and all: imported only when the report is asked for

    return CSP


def _starting(folder: Path) -> dict[str, Any]:
    """The live page's state before the run has written its folder."""
    return {
        "name": folder.name,
        "status": "starting",
        "recorded": 0,
        "total": None,
        "per_second": 0.0,
        "standings": [],
        "fault_kinds": {},
        "faults": [],
        "warnings": [],
        "variants": [],
        "ratings": None,
        "elo": None,
    }


def _forget_old(opts: ServeOptions) -> None:
    done = [tid for tid, t in opts.tables.items() if t.done.is_set()]
    for tid in done[: max(0, len(done) - MAX_KEPT + 1)]:
        del opts.tables[tid]


async def _serve_socket(ws: WebSocket, opts: ServeOptions) -> None:
    """One page at a table: the first message names its seat (or none:
    a spectator); then events go out and moves come in."""
    table = opts.tables.get(ws.path_params["tid"])
    await ws.accept()
    if table is None:
        await ws.close(code=1008, reason="no such table")
        return
    try:
        first = json.loads((await ws.receive_text())[:MAX_FRAME])
        token = first.get("seat") if isinstance(first, dict) else None
        entrant = table.entrant_of(token if isinstance(token, str) and token else None)
    except (ValueError, ArenaError, WebSocketDisconnect, KeyError, RuntimeError) as exc:
        with contextlib.suppress(Exception):
            await ws.send_text(json.dumps({"type": "error", "text": str(exc) or "a page must say its seat first"}))
            await ws.close(code=1008)
        return
    loop = asyncio.get_running_loop()
    out: asyncio.Queue[Event] = asyncio.Queue()

    def listener(event: Event) -> None:
        loop.call_soon_threadsafe(out.put_nowait, event)

    for event in table.join(entrant, listener):
        out.put_nowait(event)
    await ws.send_text(
        json.dumps(
            {
                "type": "hello",
                "you": entrant,
                "name": table.seats[entrant].name if entrant is not None else None,
                "away_s": opts.away_s,
                "fallback": table.fallback[0] if table.fallback else None,
            }
        )
    )

    async def send_events() -> None:
        while True:
            await ws.send_text(json.dumps(await out.get()))

    sender = asyncio.create_task(send_events())
    try:
        while True:
            text = await ws.receive_text()
            if entrant is None or len(text) > MAX_FRAME:
                continue  # a spectator has nothing to say; a huge frame is not a move
            try:
                msg = json.loads(text)
            except ValueError:
                continue
            if isinstance(msg, dict) and msg.get("type") == "move" and isinstance(msg.get("text"), str):
                await asyncio.to_thread(table.move, entrant, msg["text"])
            elif isinstance(msg, dict) and msg.get("type") == "leave":
                await asyncio.to_thread(table.move, entrant, "leave")
    except (WebSocketDisconnect, KeyError, RuntimeError):
        pass  # the page went away, or sent a binary frame (no page of ours does): the socket ends
    finally:
        sender.cancel()
        table.leave(entrant, listener)


def can_listen(opts: ServeOptions) -> None:
    """Refuse an address or port the server cannot listen on, in one line
    (uvicorn would log it and exit)."""
    import socket

    try:
        infos = socket.getaddrinfo(opts.host, opts.port, type=socket.SOCK_STREAM)
    except OSError as exc:
        raise RunError(f"--host {opts.host!r}: not an address of this machine ({exc.strerror})") from None
    family, kind, proto, _, addr = infos[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(addr)
        except OSError as exc:
            raise RunError(
                f"--host {opts.host} --port {opts.port}: cannot listen there ({exc.strerror}); "
                f"another program may have it: pick another --port"
            ) from None


def serve(opts: ServeOptions, announce: Callable[[str], None]) -> None:
    """Run the server until Ctrl-C; ``announce`` is told where to open it."""
    import uvicorn

    app = make_app(opts)
    can_listen(opts)
    host = f"[{opts.host}]" if ":" in opts.host else opts.host
    link = f"http://{host}:{opts.port}/" + (f"?key={opts.key}" if opts.key else "")
    if not opts.loopback:
        announce(
            f"listening on {opts.host}: every page needs the server's key, in this link; share it only with the players"
        )
    announce(f"open {link}  (games are recorded in {opts.out}; Ctrl-C stops)")
    if opts.run is not None:
        run_link = f"http://{host}:{opts.port}/run" + (f"?key={opts.key}" if opts.key else "")
        announce(f"the run in {opts.run}: {run_link}")
    uvicorn.run(
        app,
        host=opts.host,
        port=opts.port,
        log_level="warning",
        access_log=False,
        ws_max_size=MAX_FRAME * 4,
        ws="websockets-sansio",
    )
