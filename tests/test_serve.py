"""``arena serve``: the browser table (docs/serve.md).

The assisted-mode figures against ``arena play --assist`` and a brute-force
count; the server's guards (host, key, origin, seat links, bad tables) against
a real server; and whole matches in real headless Chromium (Playwright):
played by clicking and by keyboard against sandboxed bots, with the WebSocket
frames each page received checked for dice that are not its own, a spectator,
a reconnect, two people at one table, and a hostile bot's name and stderr.
"""

from __future__ import annotations

import contextlib
import io
import itertools
import json
import math
import os
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("starlette", reason="pip install -e '.[serve]' installs the web server")
pytest.importorskip("uvicorn", reason="pip install -e '.[serve]' installs the web server")

from arena.apps.play import HumanPlayer  # noqa: E402
from arena.engine.records import MatchRecord  # noqa: E402
from arena.engine.replay import check  # noqa: E402
from arena.engine.rules import PASS, Bid, Rules, apply, deal, new_match  # noqa: E402
from arena.protocol import parse  # noqa: E402
from arena.protocol.messages import match_start_message, turn_message  # noqa: E402
from arena.sdk import Turn  # noqa: E402
from arena.serve.seating import assist  # noqa: E402
from arena.serve.table import assist_json, move_refusal  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]
# The screenshots of docs/serve.md: written there only when asked
# (ARENA_SERVE_SHOTS=docs/serve), so a test run leaves the repository as it was.
# One folder per user, made only when a test takes screenshots (and overwritten the next time).
SHOTS = Path(os.environ.get("ARENA_SERVE_SHOTS") or Path(tempfile.gettempdir()) / f"arena-serve-shots-{os.getuid()}")


# --- positions -------------------------------------------------------------------


def _turn(rules: Rules, hands: list[list[int]], bids: list[tuple[int, int]], opener: int = 0) -> Turn:
    """The turn of the seat to act after ``bids`` from ``opener``, built by the
    engine (so its legal summary is the referee's)."""
    rules = Rules.from_dict({**rules.to_dict(), "dice": len(hands[0])})
    state = deal(new_match(rules, len(hands), opener), hands)
    for q, f in bids:
        state = apply(state, Bid(q, f))
    msg = turn_message("t-1", state, 1000)
    start = match_start_message("t-1", state.to_act, [f"p{i}" for i in range(len(hands))], rules.to_dict(), 7)
    import random

    return parse.parse_turn(msg, parse.parse_match_start(start), random.Random(0))


def _palifico_turn() -> Turn:
    """A palifico round (1s not wild, the face fixed), as the referee sends it."""
    rules = Rules.preset("classic")
    msg = {
        "type": "turn",
        "match": "t-1",
        "round": 4,
        "seat": 1,
        "dice": [1, 3, 3, 6],
        "counts": [1, 4, 3],
        "palifico": True,
        "history": [[0, 2, 3]],
        "legal": {"dudo": True, "calza": False, "min_quantity": {"3": 3}, "max_quantity": 8},
        "time_ms": 1000,
    }
    start = match_start_message("t-1", 1, ["a", "b", "c"], rules.to_dict(), 7)
    import random

    return parse.parse_turn(msg, parse.parse_match_start(start), random.Random(0))  # type: ignore[arg-type]


def positions() -> list[Turn]:
    classic, lizumo, plain = Rules.preset("classic"), Rules.preset("lizumo"), Rules.preset("plain")
    return [
        _turn(classic, [[1, 3, 3], [2, 4, 4], [5, 5, 2]], []),  # an opening
        _turn(classic, [[1, 3, 3], [2, 4, 4], [5, 5, 1]], [(2, 3)]),
        _turn(classic, [[6, 6], [1, 2], [3, 4]], [(2, 6), (3, 6)]),
        _turn(lizumo, [[1, 1], [3, 4], [6, 6], [2, 2]], [(3, 2), (4, 2)]),
        _turn(plain, [[1, 2, 3, 4], [4, 4, 1, 1]], [(2, 4)]),
        _palifico_turn(),
    ]


_COUNTS: dict[tuple[tuple[int, ...], int, bool, int], list[int]] = {}


def _count_rolls(dice: tuple[int, ...], unseen: int, wild: bool, face: int) -> list[int]:
    """Of the 6**unseen rolls of the unseen dice, how many put exactly k dice
    counting for ``face`` on the table, for each k (your own dice included):
    every roll counted, grouped by how many of each face it shows (a group of
    c1..c6 is unseen! / (c1! ... c6!) rolls)."""
    key = (dice, unseen, wild, face)
    if key not in _COUNTS:
        mine = sum(1 for d in dice if d == face or (wild and d == 1 and face != 1))
        tally = [0] * (len(dice) + unseen + 1)
        for faces in itertools.combinations_with_replacement(range(1, 7), unseen):
            shown = [faces.count(f) for f in range(1, 7)]
            rolls = math.factorial(unseen)
            for c in shown:
                rolls //= math.factorial(c)
            n = shown[face - 1] + (shown[0] if wild and face != 1 else 0)
            tally[mine + n] += rolls
        assert sum(tally) == 6**unseen
        _COUNTS[key] = tally
    return _COUNTS[key]


def brute_force(turn: Turn, q: int, face: int, exact: bool = False) -> float:
    """P(bid q x face true), or P(exactly q), by counting every roll of the unseen dice."""
    tally = _count_rolls(tuple(turn.dice), turn.unseen, turn.wild, face)
    hits = (tally[q] if 0 <= q < len(tally) else 0) if exact else sum(tally[max(q, 0) :])
    return hits / 6**turn.unseen


def test_assist_figures_are_those_of_play_and_of_a_brute_force_count() -> None:
    for turn in positions():
        assert turn.unseen <= 7  # the brute force below is 6**unseen rolls
        a = assist(turn)
        page = assist_json(a)
        # arena play --assist's own lines, for the same turn
        out = io.StringIO()
        HumanPlayer(io.StringIO(), out, assist=True)._show_assist(turn)
        text = out.getvalue()
        assert f"{turn.unseen} unseen dice" in text and page["unseen"] == turn.unseen
        assert re.search(r"expected +" + " +".join(re.escape(f["expected_text"]) for f in page["faces"]), text)
        likely = [f"{f['likely']}x{f['face']}" if f["likely"] else "-" for f in page["faces"]]
        assert re.search(r"50% up to +" + " +".join(re.escape(x) for x in likely), text)
        if a.standing is not None:
            q, f = page["standing"]
            assert f"standing {q}x{f}: P(true) {page['p_standing_text']}" in text
            assert a.p_standing == pytest.approx(brute_force(turn, q, f), abs=1e-12)
            if page["p_calza_text"] is not None:
                assert f"calza on {q}x{f}: P(exactly) {page['p_calza_text']}" in text
                assert a.p_calza == pytest.approx(brute_force(turn, q, f, exact=True), abs=1e-12)
        shown = re.findall(r"raise (\d+)x(\d): P\(true\) ([\d.]+%)", text)
        assert shown == [(str(q), str(f), t) for q, f, _, t in page["raises"][: len(shown)]]
        for q, f, p, _ in page["raises"]:
            assert p == pytest.approx(brute_force(turn, q, f), abs=1e-12)
        for o in a.faces:  # the largest quantity still at >= 50%, and the next one below it
            if o.likely:
                assert brute_force(turn, o.likely, o.face) >= 0.5
            assert brute_force(turn, o.likely + 1, o.face) < 0.5 or o.likely + 1 > turn.total
            expected = sum(brute_force(turn, k, o.face, exact=True) * k for k in range(turn.total + 1))
            assert o.expected == pytest.approx(expected, abs=1e-9)


def test_a_refused_move_gets_the_words_of_arena_play() -> None:
    turn = positions()[1]
    for typed in ("1x3", "2x3", "10x5", "calza x", "banana"):
        refused = move_refusal(typed, turn.legal, turn)
        out = io.StringIO()
        human = HumanPlayer(io.StringIO(typed + "\ndudo\n"), out)
        assert human._read_action(turn) is not None
        assert refused is not None and refused in out.getvalue()
    assert move_refusal("3x3", turn.legal, turn) is None


# --- a real server -------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    def __init__(self, out: Path, *, key: str | None = None, away_s: float = 300.0, run: Path | None = None) -> None:
        import uvicorn

        from arena.serve.app import ServeOptions, make_app

        self.port = _free_port()
        self.out = out
        self.opts = ServeOptions(
            port=self.port, out=out, key=key, away_s=away_s, run=run, bots_dirs=(ROOT / "bots", ROOT / "tests" / "bots")
        )
        config = uvicorn.Config(
            make_app(self.opts),
            host="127.0.0.1",
            port=self.port,
            log_level="warning",
            access_log=False,
            ws="websockets-sansio",
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("the test server did not start")
            time.sleep(0.02)
        self.base = f"http://127.0.0.1:{self.port}"

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(15)

    def new_table(self, seats: list[dict[str, str]], dice: int = 2, preset: str = "classic") -> dict[str, Any]:
        status, body = post(self.base + "/api/tables", {"preset": preset, "dice": dice, "seats": seats})
        assert status == 200, body
        return body  # type: ignore[no-any-return]


def post(url: str, data: Any, headers: dict[str, str] | None = None) -> tuple[int, Any]:
    req = urllib.request.Request(
        url,
        data=json.dumps(data).encode(),
        method="POST",
        headers={"Content-Type": "application/json", **(headers or {})},
    )
    try:
        with urllib.request.urlopen(req, timeout=20) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"null")


def get(url: str, headers: dict[str, str] | None = None) -> tuple[int, str, dict[str, str]]:
    req = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=20) as resp:
            return resp.status, resp.read().decode(), dict(resp.headers)
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode(), dict(exc.headers)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    srv = Server(tmp_path_factory.mktemp("serve") / "table-test")
    yield srv
    srv.stop()


def test_pages_are_locked_down_and_bad_tables_get_one_clear_error(server: Server) -> None:
    status, body, headers = get(server.base + "/")
    assert status == 200
    csp = headers["content-security-policy"]
    assert "script-src 'self'" in csp and "default-src 'none'" in csp and "unsafe-inline" not in csp
    assert "<script>" not in body and '<script src="/static/lobby.js"' in body  # no inline script
    assert headers["x-content-type-options"] == "nosniff" and headers["referrer-policy"] == "no-referrer"
    # DNS rebinding: a page of another name that resolves to 127.0.0.1
    assert get(server.base + "/api/options", {"Host": f"evil.example:{server.port}"})[0] == 403
    # a form of another site cannot start a table (no JSON without CORS)
    req = urllib.request.Request(
        server.base + "/api/tables",
        data=b"preset=classic",
        method="POST",
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    )
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(req, timeout=10)
    assert err.value.code == 415
    for seats, words in [
        ([{"bot": "probabilistic"}, {"bot": "cautious"}], "no seat is a person"),
        ([{"person": "ana"}, {"bot": "nosuchbot"}], "seat 2: no bot 'nosuchbot'"),
        ([{"person": "ana"}, {"person": "ana"}], "two people have the same name"),
        ([{"person": "ana"}], "give 2 to 10 seats"),
        ([{"person": "a\u0007b"}, {"bot": "random"}], "seat 1: name"),
    ]:
        status, body = post(server.base + "/api/tables", {"preset": "classic", "seats": seats})
        assert status == 400 and words in body["error"], body
    status, body = post(server.base + "/api/tables", {"preset": "nope", "seats": [{"person": "a"}, {"bot": "random"}]})
    assert status == 400 and "preset 'nope' does not exist" in body["error"]


def test_off_loopback_every_request_needs_the_key(tmp_path: Path) -> None:
    srv = Server(tmp_path / "table-key", key="sekrit-key")
    try:
        assert get(srv.base + "/")[0] == 403
        assert get(srv.base + "/?key=wrong")[0] == 403
        status, _, headers = get(srv.base + "/?key=sekrit-key")
        assert status == 200 and "arena_key=sekrit-key" in headers.get("set-cookie", "")
        assert get(srv.base + "/api/options", {"Cookie": "arena_key=sekrit-key"})[0] == 200
    finally:
        srv.stop()


def test_a_websocket_from_another_origin_or_a_wrong_seat_link_is_refused(server: Server) -> None:
    import asyncio

    import websockets

    table = server.new_table([{"person": "ana"}, {"bot": "random"}])
    url = f"ws://127.0.0.1:{server.port}/ws/{table['table']}"

    async def attempt(origin: str, seat: str | None) -> list[Any]:
        got: list[Any] = []
        try:
            async with websockets.connect(url, origin=origin) as ws:  # type: ignore[arg-type]
                await ws.send(json.dumps({"type": "join", "seat": seat}))
                while not got or got[-1].get("type") not in ("hello", "error"):
                    got.append(json.loads(await asyncio.wait_for(ws.recv(), 10)))
        except (websockets.ConnectionClosed, websockets.InvalidStatus, TimeoutError) as exc:
            got.append(("closed", type(exc).__name__))
        return got

    evil = asyncio.run(attempt("http://evil.example", None))
    assert all(isinstance(x, tuple) for x in evil), evil  # closed before anything was sent
    wrong = asyncio.run(attempt(server.base, "not-a-seat"))
    assert wrong[-1]["type"] == "error" and "not one of this table's" in wrong[-1]["text"]
    spectator = asyncio.run(attempt(server.base, None))
    assert spectator[-1] == {"type": "hello", "you": None, "name": None, "away_s": 300.0, "fallback": "probabilistic"}

    seat = table["seats"][0]["link"].split("#seat=")[1]

    async def misbehave() -> list[Any]:
        async with websockets.connect(url, origin=server.base) as ws:
            await ws.send(json.dumps({"type": "join", "seat": seat}))
            await ws.send(json.dumps({"type": "move", "text": "x" * 10000}))  # too big: not read
            await ws.send(b"\x00binary")  # no page of ours sends one: the socket ends
            with contextlib.suppress(websockets.ConnectionClosed):
                while True:
                    await asyncio.wait_for(ws.recv(), 10)
        # the seat is still there: a page that comes back gets it and may play
        got: list[Any] = []
        async with websockets.connect(url, origin=server.base) as ws:
            await ws.send(json.dumps({"type": "join", "seat": seat}))
            while not got or got[-1].get("type") not in ("your_turn", "over"):
                got.append(json.loads(await asyncio.wait_for(ws.recv(), 60)))
        return got

    back = asyncio.run(misbehave())
    assert back[0]["type"] == "hello" and back[0]["name"] == "ana"
    assert not [ev for ev in back if ev["type"] == "refused"]


# --- in the browser -------------------------------------------------------------------


def _chromium_or_skip() -> None:
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} is not installed (apt-get install -y chromium; .ci/run installs it)")
    pytest.importorskip("playwright.sync_api", reason="pip install -e '.[test]' installs playwright")


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    _chromium_or_skip()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


class Page:
    """A page at the table with the frames it received and its problems."""

    def __init__(self, browser: Any, url: str, width: int = 1400, context: Any = None) -> None:
        self.context = context or browser.new_context(viewport={"width": width, "height": 1000})
        self.page = self.context.new_page()
        self.frames: list[dict[str, Any]] = []
        self.problems: list[str] = []
        self.page.on(
            "console",
            lambda m: self.problems.append(f"console {m.type}: {m.text}") if m.type in ("error", "warning") else None,
        )
        self.page.on("pageerror", lambda e: self.problems.append(f"page error: {e}"))
        self.page.on("websocket", lambda ws: ws.on("framereceived", self._frame))
        self.page.goto(url)

    def _frame(self, payload: Any) -> None:
        self.frames.append(json.loads(payload if isinstance(payload, str) else payload.decode()))

    def events(self, kind: str) -> list[dict[str, Any]]:
        return [f for f in self.frames if f.get("type") == kind]


def _keys(value: Any) -> Iterator[str]:
    if isinstance(value, dict):
        for k, v in value.items():
            yield k
            yield from _keys(v)
    elif isinstance(value, list):
        for v in value:
            yield from _keys(v)


def _no_foreign_dice(frames: list[dict[str, Any]], my_seat: int | None) -> None:
    """Outside a reveal, the only dice a page is ever sent are its own seat's."""
    assert frames
    for f in frames:
        if f.get("type") == "reveal":
            continue
        if f.get("type") == "dice":
            assert my_seat is not None and f["seat"] == my_seat, f
            continue
        assert "dice" not in set(_keys({k: v for k, v in f.items() if k != "rules"})), f


def next_turn(p: Page, last: str, timeout_s: float = 60) -> str | None:
    """Wait until page ``p`` draws a turn after turn ``last`` (the page's own
    count, ``body[data-turn]``) or the end; the turn's number, or None at the end."""
    p.page.wait_for_selector(
        f'body[data-over="1"], body:not([data-turn="0"]):not([data-turn="{last}"])', timeout=timeout_s * 1000
    )
    if p.page.get_attribute("body", "data-over") == "1":
        return None
    return p.page.get_attribute("body", "data-turn")


def move(p: Page, by_key: bool) -> None:
    """Call dudo when the page offers it, else bid what it offers (the smallest bid)."""
    page = p.page
    if page.locator("#dudo").is_enabled():
        page.keyboard.press("d") if by_key else page.locator("#dudo").click()
    elif by_key:
        page.keyboard.press("ArrowUp")
        page.keyboard.press("ArrowDown")
        page.keyboard.press("Enter")
    else:
        page.locator("#bid").click()


def play_out(
    p: Page,
    *,
    keyboard_every: int = 2,
    at_reveal: Callable[[], None] | None = None,
    at_bid: Callable[[], None] | None = None,
) -> int:
    """Play the seat of page ``p`` to the end, every ``keyboard_every``-th move
    by keyboard, the others by mouse. Returns the number of moves made."""
    moves, last, refused = 0, "0", len(p.events("refused"))
    while (turn := next_turn(p, last)) is not None:
        last = turn
        if at_reveal is not None and p.events("reveal"):
            at_reveal()  # the person's turn, a reveal above it: mid-match
            at_reveal = None
        if at_bid is not None and p.events("turn")[-1]["history"]:
            at_bid()  # the person's turn, a bid standing: mid-round
            at_bid = None
        move(p, by_key=moves % keyboard_every == 1)
        moves += 1
    p.page.wait_for_selector("#recorded:not(:empty)", timeout=30000)
    assert len(p.events("refused")) == refused, p.events("refused")  # every move offered was taken
    return moves


def _record(folder: Path, match: str) -> MatchRecord:
    from arena.running.store import read_matches

    return read_matches(folder, [match])[match]


@pytest.mark.slow
def test_a_person_plays_a_whole_match_by_mouse_and_keyboard(server: Server, browser: Any) -> None:
    table = server.new_table([{"person": "ana"}, {"bot": "probabilistic"}, {"bot": "cautious"}])
    me = Page(browser, server.base + table["seats"][0]["link"])
    watcher = Page(browser, server.base + table["watch"])
    page = me.page
    page.wait_for_selector("#controls:not([hidden])", timeout=60000)
    SHOTS.mkdir(parents=True, exist_ok=True)

    def mid_round_shots() -> None:  # mid-round, with the assist panel, at two widths
        page.screenshot(path=str(SHOTS / "table-1400.png"), full_page=True)
        page.locator("#assist-box").screenshot(path=str(SHOTS / "assist-1400.png"))
        page.set_viewport_size({"width": 800, "height": 1000})
        page.screenshot(path=str(SHOTS / "table-800.png"), full_page=True)
        page.locator("#assist-box").screenshot(path=str(SHOTS / "assist-800.png"))
        page.set_viewport_size({"width": 1400, "height": 1000})

    # a refused move: the words of arena play, and the seat is asked again
    page.fill("#move", "99x2")  # more dice than there are: never legal
    page.press("#move", "Enter")
    page.wait_for_selector("#refused:not(:empty)", timeout=30000)
    refused = page.text_content("#refused") or ""
    assert refused.startswith("Not allowed: ") and ". Legal: " in refused, refused  # the words of arena play

    def reveal_shots() -> None:
        page.set_viewport_size({"width": 1400, "height": 1000})
        page.screenshot(path=str(SHOTS / "reveal-1400.png"), full_page=True)
        page.set_viewport_size({"width": 800, "height": 1000})
        page.screenshot(path=str(SHOTS / "reveal-800.png"), full_page=True)
        page.set_viewport_size({"width": 1400, "height": 1000})

    moves = play_out(me, at_reveal=reveal_shots, at_bid=mid_round_shots)
    assert moves >= 1
    over = me.events("over")[-1]
    rec = _record(server.out, over["match"])
    check(rec)  # the record re-plays under the rules
    # what was shown is what was recorded: every reveal, and the placements
    reveals = me.events("reveal")
    assert [r["dice"] for r in reveals] == [[sorted(h) for h in rr.dice] for rr in rec.rounds]
    assert [r["history"] for r in reveals] == [
        [[a.seat, a.action.quantity, a.action.face] for a in rr.actions if isinstance(a.action, Bid)]
        for rr in rec.rounds
    ]
    assert over["placements"] == list(rec.placements)
    seat = me.events("seat")[0]["seat"]
    assert rec.bots[seat] == "ana"
    assert rec.think is not None and rec.think[seat] == 0.0  # a person's thinking time is not counted
    shown = [li.strip() for li in page.locator("#placements li").all_text_contents()]
    assert len(shown) == 3 and any(s.endswith(": you") for s in shown)
    # the person's own dice each round are the record's, and they saw every turn they had
    assert moves == sum(1 for rr in rec.rounds for a in rr.actions if a.seat == seat)
    for d in me.events("dice"):
        assert d["dice"] == sorted(rec.rounds[d["round"] - 1].dice[seat])
    _no_foreign_dice(me.frames, seat)
    watcher.page.wait_for_selector("#recorded:not(:empty)", timeout=30000)
    _no_foreign_dice(watcher.frames, None)
    assert not watcher.events("your_turn") and not watcher.events("dice")
    assert watcher.page.locator("#controls").is_hidden()
    assert not me.problems and not watcher.problems, me.problems + watcher.problems
    page.screenshot(path=str(SHOTS / "over-1400.png"), full_page=True)
    assert me.events("over")[-1]["recorded"] == server.out.name
    me.context.close()
    watcher.context.close()


@pytest.mark.slow
def test_the_lobby_starts_a_table_and_hands_out_its_links(server: Server, browser: Any) -> None:
    lobby = Page(browser, server.base + "/", width=800)
    page = lobby.page
    page.wait_for_selector("#seats li")
    assert page.locator("#seats li").count() == 4  # you and the three default bots
    page.locator("#dice").select_option("2")
    page.locator("#create").click()
    page.wait_for_selector("#links:not([hidden]) .seat-link")
    link = page.locator(".seat-link").first.get_attribute("href") or ""
    assert re.fullmatch(r"/table/[\w-]+#seat=[\w-]+", link), link
    assert page.locator(".watch-link").get_attribute("href") == link.split("#")[0]
    page.screenshot(path=str(SHOTS / "lobby-800.png"), full_page=True)
    tid = link.split("/")[2].split("#")[0]
    table = server.opts.tables[tid]
    assert [s.name for s in table.seats] == ["person 1", "probabilistic", "cautious", "bluffer"]
    assert table.rules.dice == 2
    page.locator(".seat-link").first.click()  # sit down, then leave: the seat forfeits on its turn
    page.wait_for_selector("#controls:not([hidden]), #waiting:not([hidden])", timeout=60000)
    page.locator("#leave").click() if page.is_visible("#leave") else None
    page.keyboard.press("/")
    page.keyboard.type("leave")  # typed: the same as the button
    page.keyboard.press("Enter")
    assert table.done.wait(120)
    assert table.outcome is not None
    rec = table.outcome.record
    seat = rec.bots.index("person 1")
    assert [(f.seat, str(f.kind), f.detail) for f in rec.faults] == [
        (seat, "crash", repr("the person left the table (the seat forfeits)"))
    ]  # quoted, as every detail
    assert not lobby.problems, lobby.problems
    lobby.context.close()


@pytest.mark.slow
def test_the_command_says_how_it_listens(tmp_path: Path) -> None:
    port = _free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "arena",
            "serve",
            "--host",
            "0.0.0.0",
            "--port",
            str(port),
            "--out",
            str(tmp_path / "t"),
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline() + proc.stdout.readline()
        assert "listening on 0.0.0.0: every page needs the server's key" in first, first
        key = re.search(r"\?key=([\w-]+)", first)
        assert key, first
        deadline = time.monotonic() + 30
        while True:
            try:
                status = get(f"http://127.0.0.1:{port}/")[0]
                break
            except OSError:
                assert time.monotonic() < deadline
                time.sleep(0.1)
        assert status == 403
        assert get(f"http://127.0.0.1:{port}/?key={key.group(1)}")[0] == 200
    finally:
        proc.terminate()
        proc.wait(20)
    bad = subprocess.run(
        [
            sys.executable,
            "-m",
            "arena",
            "serve",
            "--fallback",
            "nosuch",
            "--port",
            str(port),
            "--out",
            str(tmp_path / "t"),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bad.returncode == 1 and "--fallback 'nosuch': no such bot" in bad.stderr, bad.stderr
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        busy = taken.getsockname()[1]
        bad = subprocess.run(
            [sys.executable, "-m", "arena", "serve", "--port", str(busy), "--out", str(tmp_path / "t")],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert bad.returncode == 1 and f"--port {busy}: cannot listen there" in bad.stderr, bad.stderr


@pytest.mark.slow
def test_a_reconnect_keeps_the_seat(server: Server, browser: Any) -> None:
    table = server.new_table([{"person": "bo"}, {"bot": "random"}, {"bot": "cautious"}])
    link = server.base + table["seats"][0]["link"]
    first = Page(browser, link)
    first.page.wait_for_selector("#controls:not([hidden])", timeout=60000)
    seat = first.events("seat")[0]["seat"]
    dice = first.events("dice")[-1]["dice"]
    first.context.close()  # the tab is closed on the person's turn
    again = Page(browser, link)
    again.page.wait_for_selector("#controls:not([hidden])", timeout=30000)  # still their turn
    assert again.events("seat")[0]["seat"] == seat and again.events("dice")[-1]["dice"] == dice
    assert again.events("hello")[0]["name"] == "bo"
    play_out(again)
    _no_foreign_dice(again.frames, seat)
    again.context.close()


@pytest.mark.slow
def test_two_people_at_one_table_with_a_bot(server: Server, browser: Any) -> None:
    table = server.new_table([{"person": "cy"}, {"person": "di"}, {"bot": "probabilistic"}])
    pages = [Page(browser, server.base + s["link"]) for s in table["seats"][:2]]
    done: list[int] = []
    last = ["0", "0"]
    # Two pages, one thread (Playwright's sync API): whichever page is to act moves.
    deadline = time.monotonic() + 180
    while len(done) < 2 and time.monotonic() < deadline:
        for i, p in enumerate(pages):
            if i in done:
                continue
            if p.page.get_attribute("body", "data-over") == "1":
                done.append(i)
                continue
            turn = p.page.get_attribute("body", "data-turn")
            if turn not in ("0", last[i]):
                last[i] = turn or "0"
                move(p, by_key=i == 1)
        pages[0].page.wait_for_timeout(30)
    assert len(done) == 2
    seats = [p.events("seat")[0]["seat"] for p in pages]
    assert seats[0] != seats[1]
    for p, s in zip(pages, seats):
        _no_foreign_dice(p.frames, s)
        assert not p.problems, p.problems
    rec = _record(server.out, pages[0].events("over")[-1]["match"])
    assert {rec.bots[seats[0]], rec.bots[seats[1]]} == {"cy", "di"}
    for p in pages:
        p.context.close()


def test_a_hostile_bot_name_and_stderr_render_as_text(server: Server, browser: Any) -> None:
    table = server.new_table([{"person": "ed"}, {"bot": "html_liar"}, {"bot": "random"}])
    p = Page(browser, server.base + table["seats"][0]["link"])
    page = p.page
    play_out(p)
    seats = page.locator(".own-name").all_text_contents()
    assert any('<img src=x onerror="document.title=1"> <script>document.title=2</script>' in s for s in seats), seats
    faults = " ".join(page.locator("#faults li").all_text_contents())
    assert '<b id="bold">stderr markup</b>' in faults
    assert page.locator("img").count() == 0 and page.locator("#bold").count() == 0
    assert page.locator("#faults script, .own-name script").count() == 0
    assert page.title() == "Dudo Arena: table"
    p.context.close()


def test_a_person_gone_too_long_is_replaced_by_the_named_fallback_bot(tmp_path: Path) -> None:
    srv = Server(tmp_path / "table-away", away_s=1.0)
    try:
        table = srv.new_table([{"person": "ghost"}, {"bot": "random"}, {"bot": "cautious"}])
        t = srv.opts.tables[table["table"]]
        assert t.done.wait(120), "the match did not end"
        assert t.outcome is not None
        rec = t.outcome.record
        check(rec)
        seat = next(s for s, name in enumerate(rec.bots) if name.startswith("ghost"))
        assert rec.bots[seat] == "ghost then probabilistic"  # the record says who played the seat
        assert not rec.faults  # the seat was played on, not forfeited
        assert any(a.seat == seat for rr in rec.rounds for a in rr.actions)
        replaced = [ev for who, ev in t._log if ev["type"] == "replaced"]
        assert replaced == [
            {"type": "replaced", "seat": seat, "by": "probabilistic", "why": "the person was away longer than 1 s"}
        ]
        assert _record(srv.out, rec.match).bots == rec.bots
    finally:
        srv.stop()


def test_the_live_page_reads_a_record_as_a_full_parse_would() -> None:
    """Its fields but the rounds, parsed around them: equal to parsing the
    whole line, compact or spaced, and not fooled by a fault's detail that
    spells the keys it looks for."""
    import random

    import orjson

    sys.path.insert(0, str(ROOT / "tests"))
    import synth_records

    from arena.serve.live import _outline

    rng = random.Random(3)
    rules = Rules.preset("classic")
    for i in range(60):
        rec = synth_records.play(
            f"d-{i}",
            "classic",
            rules,
            rng.sample(list(synth_records.POLICIES), rng.randint(2, 4)),
            rng.randrange(2**31),
            fault=(0, 2, "timeout") if i % 3 == 0 else None,
        )
        for f in rec["faults"]:
            f["detail"] = '],"placements":[9,9,9,9],"faults":[],"x":",\\"rounds":'
        for r in rec["rounds"]:
            if "fault" in r:
                r["fault"]["detail"] = rec["faults"][0]["detail"]
        for line in (json.dumps(rec).encode(), orjson.dumps(rec)):
            whole = orjson.loads(line)
            del whole["rounds"]
            assert _outline(line) == whole
    assert _outline(b"[1, 2]") is None and _outline(b'{"match": "m", "rounds": [') is None


def test_the_live_page_follows_a_run_as_its_records_arrive(tmp_path: Path, browser: Any) -> None:
    sys.path.insert(0, str(ROOT / "tests"))
    import synth_records

    from arena.engine.rules import Rules as R

    rules = R.preset("classic")
    hostile = '<img src=x onerror="document.title=9">'
    records = [
        synth_records.play(
            f"m-{i:03d}",
            "classic",
            rules,
            ["random", "cautious", hostile if i % 2 else "sharp"],
            100 + i,
            fault=(0, 2, "timeout") if i == 3 else None,
            policy_of={hostile: "random"},
        )
        for i in range(12)
    ]
    folder = tmp_path / "run"
    synth_records.write_run(folder, [], {"classic": rules.to_dict()}, status="running")
    meta = json.loads((folder / "run.json").read_text())
    meta["schedule"] = {"total": 12}
    (folder / "run.json").write_text(json.dumps(meta))
    lines = [json.dumps(r) + "\n" for r in records]
    (folder / "games.jsonl").write_text("".join(lines[:5]) + lines[5][:40])  # a line being written
    srv = Server(tmp_path / "table-live", run=folder)
    try:
        status, body, _ = get(srv.base + "/api/run")
        first = json.loads(body)
        assert status == 200 and first["recorded"] == 5 and first["total"] == 12 and first["status"] == "running"
        with open(folder / "games.jsonl", "a") as fh:
            fh.write(lines[5][40:] + "".join(lines[6:]))
        p = Page(browser, srv.base + "/run")
        p.page.wait_for_selector("#standings tbody tr")
        deadline = time.monotonic() + 20
        while "12 of 12 matches recorded" not in (p.page.text_content("#progress") or ""):
            assert time.monotonic() < deadline, p.page.text_content("#progress")
            p.page.wait_for_timeout(200)
        state = json.loads(get(srv.base + "/api/run")[1])
        typed = synth_records.typed(records)
        for row in state["standings"]:
            mine = [(r, r.bots.index(row["bot"])) for r in typed if row["bot"] in r.bots]
            assert row["matches"] == len(mine)
            assert row["wins"] == sum(1 for r, s in mine if r.placements[s] == 1)
            assert row["mean_place"] == pytest.approx(sum(r.placements[s] for r, s in mine) / len(mine))
        assert state["fault_kinds"] == {"timeout": 1} and state["faults"][0]["match"] == "m-003"
        cells = p.page.locator("#standings td").all_text_contents()
        assert hostile in cells and p.page.locator("img").count() == 0
        assert p.page.title() == "Dudo Arena: a run"  # (its screenshots: tests/test_serve_viewer.py, a larger run)
        assert not p.problems, p.problems
        p.context.close()
    finally:
        srv.stop()


@pytest.mark.slow
def test_a_persons_games_are_rated_beside_the_bots(server: Server, browser: Any) -> None:
    """Runs after the matches above (pytest keeps the file's order): their folder is a run folder."""
    proc = subprocess.run(
        [sys.executable, "-m", "arena", "ratings", str(server.out)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr
    for name in ("ana", "bo", "probabilistic", "cautious"):
        assert re.search(rf"^\s*\d+\s+{re.escape(name)}\s+\d+", proc.stdout, re.M), proc.stdout


def dead_man_table(srv: Server, seats: list[dict[str, str]]) -> tuple[bool, MatchRecord]:
    """A 1-die table with both variants on, ed's seat played from here: whether
    ed was offered a dead man's turn (it passes), and the record."""
    status, body = post(
        srv.base + "/api/tables",
        {"preset": "classic", "dice": 1, "seats": seats, "dead_mans_calza": True, "veteran_palifico": True},
    )
    assert status == 200, body
    t = srv.opts.tables[body["table"]]
    assert t.rules.dead_mans_calza and t.rules.veteran_palifico
    offered_pass, answered = False, 0
    deadline = time.monotonic() + 120
    while not t.done.is_set() and time.monotonic() < deadline:
        mine = [ev for who, ev in t._log if who == 0 and ev["type"] == "your_turn"]
        if len(mine) > answered:
            legal = mine[-1]["legal"]
            answered = len(mine)
            if legal["pass"]:
                offered_pass = True
                assert not legal["dudo"] and not legal["min_quantity"] and legal["calza"]
                t.move(0, "pass")
            elif legal["min_quantity"]:  # the most ed may bid: doubted, so ed is soon out
                face = max(int(f) for f in legal["min_quantity"])
                t.move(0, f"{legal['max_quantity']}x{face}")
            else:
                t.move(0, "dudo")
        time.sleep(0.02)
    assert t.done.is_set() and t.outcome is not None
    return offered_pass, t.outcome.record


def test_the_browser_table_plays_dead_mans_calza_and_refuses_bots_that_do_not_declare_it(tmp_path: Path) -> None:
    """The lobby's two variant switches reach the rules; a bot that does not
    declare a variant is refused as `arena play` refuses it; a person who is
    out is offered `pass` (and calza) and nothing else, and the record replays."""
    srv = Server(tmp_path / "table-dead")
    try:
        seats = [{"person": "ed"}, {"bot": "probabilistic"}, {"bot": "cautious"}]
        # ed bids the most it may, is doubted and is soon out; a table where a bot's wrong call leaves ed
        # last but one ends before ed is out of it (about one in five): then another table.
        for _ in range(8):
            offered_pass, record = dead_man_table(srv, seats)
            check(record)
            if offered_pass:
                break
        assert offered_pass, "ed was never asked as a dead man in eight tables"
        seat = record.bots.index("ed")
        assert any(a.seat == seat and a.action == PASS for rr in record.rounds for a in rr.actions)
        status, body = post(
            srv.base + "/api/tables",
            {"preset": "classic", "dice": 1, "dead_mans_calza": True, "seats": [{"person": "ed"}, {"bot": "counter"}]},
        )
        assert status == 400 and "dead_mans_calza: counter does not declare that it plays it" in body["error"], body
        status, body = post(srv.base + "/api/tables", {"preset": "classic", "dead_mans_calza": "yes", "seats": seats})
        assert status == 400 and "dead_mans_calza" in body["error"] and "true or false" in body["error"], body
    finally:
        srv.stop()
