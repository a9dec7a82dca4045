"""The report's step-through match viewer: notable matches, bid by bid, in the page itself.

:func:`viewer_html` returns the viewer's markup, its data (the matches as
plain JSON in a ``<script type="application/json">`` block, which a browser
never executes) and its one inline script. The script is the page's only
code: the report's Content-Security-Policy allows exactly this script by
its SHA-256 (:data:`SCRIPT_HASH`), so nothing a bot manages to put in the
page can run, and the script writes bot-controlled text (names, fault
details) with ``textContent`` only, never as HTML.

The viewer shows one match at a time: a step is a round's deal (hands
hidden, dice counts shown), then each bid or call in order, then the reveal
(every hand, the count of the standing bid's face, who lost or regained a
die, or the fault that voided the round). Prev/next buttons, the left and
right arrow keys (or j/k) step; Home/End jump to the ends. When the report
is served by ``arena serve RUN`` (``/report``), a link opens the step shown
in the server's match viewer (``/match/ID#step=N``, the same steps); opened
as a file, the report has no such link and stays self-contained.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
from collections.abc import Sequence
from typing import Any

from arena.engine.records import MatchRecord
from arena.engine.rules import Bid, aces_count_as, count_matching

__all__ = ["SCRIPT_HASH", "match_data", "viewer_html"]


def match_data(rec: MatchRecord, why: str) -> dict[str, Any]:
    """One match as the viewer's JSON: players, rounds (dice, actions, outcome), placements."""
    rounds = []
    for rnd in rec.rounds:
        acts: list[dict[str, Any]] = []
        standing: Bid | None = None
        for seat, action in rnd.actions:
            if type(action) is Bid:
                standing = action
                acts.append({"seat": seat, "bid": [action.quantity, action.face]})
            else:
                acts.append({"seat": seat, "call": str(action)})
        entry: dict[str, Any] = {
            "round": rnd.round,
            "opener": rnd.opener,
            "palifico": bool(rnd.palifico),
            "dice": [list(h) for h in rnd.dice],
            "actions": acts,
        }
        if rnd.fault is not None:
            entry["fault"] = {"seat": rnd.fault.seat, "kind": str(rnd.fault.kind.value), "detail": rnd.fault.detail}
        if rnd.count is not None:
            entry["count"] = rnd.count
        elif standing is not None and rnd.fault is None:
            wild = aces_count_as(rec.rules, rnd.palifico, standing.face)
            entry["count"] = count_matching(rnd.dice, standing.face, wild)
        if rnd.change is not None:
            entry["change"] = {"seat": rnd.change.seat, "delta": rnd.change.delta}
        rounds.append(entry)
    return {
        "match": rec.match,
        "variant": rec.variant,
        "why": why,
        "players": list(rec.bots),
        "placements": list(rec.placements),
        "rounds": rounds,
    }


def _json_for_script(data: Any) -> str:
    """JSON that cannot end its <script> element: every '<', '>' and '&' escaped."""
    text = json.dumps(data, ensure_ascii=True, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


_SCRIPT = r"""
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("viewer-data").textContent);
  var root = document.getElementById("viewer");
  var pick = document.getElementById("viewer-pick");
  var stage = document.getElementById("viewer-stage");
  var where = document.getElementById("viewer-where");
  var current = 0, steps = [], at = 0;
  // Served by arena serve (over http), the same step opens in the browser viewer; as a file, not.
  var served = /^https?:$/.test(location.protocol) ? document.getElementById("viewer-served") : null;

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) { e.className = cls; }
    if (text !== undefined) { e.textContent = text; }
    return e;
  }
  function plural(n, word) { return n + " " + word + (n === 1 ? "" : "s"); }
  function actionText(a) {
    return a.bid ? ("bids " + a.bid[0] + " x " + a.bid[1]) : ("calls " + a.call);
  }
  function build(m) {
    var out = [];
    m.rounds.forEach(function (r, ri) {
      out.push({round: ri, shown: 0, reveal: false});
      r.actions.forEach(function (_, ai) { out.push({round: ri, shown: ai + 1, reveal: false}); });
      out.push({round: ri, shown: r.actions.length, reveal: true});
    });
    return out;
  }
  function draw() {
    var m = data[current], s = steps[at], r = m.rounds[s.round];
    stage.textContent = "";
    var head = el("p", "viewer-round", "Round " + r.round + (r.palifico ? " (palifico)" : "") +
      ", opened by " + m.players[r.opener]);
    stage.appendChild(head);
    var table = el("table", "viewer-hands");
    var hrow = el("tr");
    ["seat", "player", "dice", s.reveal ? "hand" : "hand (hidden until the call)"].forEach(function (h) {
      hrow.appendChild(el("th", "", h));
    });
    table.appendChild(hrow);
    r.dice.forEach(function (hand, seat) {
      var tr = el("tr");
      if (!hand.length) { tr.className = "viewer-out"; }
      tr.appendChild(el("td", "n", String(seat)));
      tr.appendChild(el("td", "", m.players[seat]));
      tr.appendChild(el("td", "n", String(hand.length)));
      tr.appendChild(el("td", "viewer-dice", s.reveal ? hand.join(" ") : hand.map(function () { return "?"; }).join(" ")));
      table.appendChild(tr);
    });
    stage.appendChild(table);
    var list = el("ol", "viewer-bids");
    r.actions.slice(0, s.shown).forEach(function (a, i) {
      var li = el("li", i === s.shown - 1 && !s.reveal ? "viewer-last" : "", m.players[a.seat] + " " + actionText(a));
      list.appendChild(li);
    });
    stage.appendChild(s.shown ? list : el("p", "muted", "(no bid yet)"));
    if (s.reveal) {
      var res = el("p", "viewer-result");
      if (r.fault) {
        res.textContent = "FAULT: " + m.players[r.fault.seat] + ": " + r.fault.kind + ": " + r.fault.detail +
          " (the round is void)";
      } else {
        var parts = [];
        if (r.count !== undefined) { parts.push("count " + r.count); }
        if (r.change) {
          var who = m.players[r.change.seat];
          parts.push(r.change.delta < 0 ? who + " loses " + plural(-r.change.delta, "die").replace("dies", "dice")
                     : r.change.delta > 0 ? who + " regains a die" : who + " is right (already at the maximum)");
        }
        res.textContent = parts.join(": ");
      }
      stage.appendChild(res);
      if (s.round === m.rounds.length - 1) {
        var order = m.players.map(function (p, i) { return [m.placements[i], p]; }).sort(function (a, b) { return a[0] - b[0]; });
        stage.appendChild(el("p", "viewer-final", "Final: " + order.map(function (o) { return o[0] + ". " + o[1]; }).join(", ")));
      }
    }
    where.textContent = m.match + " (" + m.variant + "): step " + (at + 1) + " of " + steps.length;
    if (served) {
      served.href = "/match/" + encodeURIComponent(m.match) + "#step=" + (at + 1);
      served.hidden = false;
    }
  }
  function open(i) {
    current = i; steps = build(data[i]); at = 0;
    Array.prototype.forEach.call(pick.children, function (b, j) { b.setAttribute("aria-pressed", j === i ? "true" : "false"); });
    draw();
  }
  function go(d) { at = Math.max(0, Math.min(steps.length - 1, at + d)); draw(); }
  data.forEach(function (m, i) {
    var b = el("button", "viewer-match", m.match + ": " + m.why);
    b.type = "button";
    b.addEventListener("click", function () { open(i); root.focus(); });
    pick.appendChild(b);
  });
  document.getElementById("viewer-prev").addEventListener("click", function () { go(-1); });
  document.getElementById("viewer-next").addEventListener("click", function () { go(1); });
  root.addEventListener("keydown", function (e) {
    if (e.key === "ArrowRight" || e.key === "j") { go(1); e.preventDefault(); }
    else if (e.key === "ArrowLeft" || e.key === "k") { go(-1); e.preventDefault(); }
    else if (e.key === "Home") { go(-steps.length); e.preventDefault(); }
    else if (e.key === "End") { go(steps.length); e.preventDefault(); }
  });
  if (data.length) { open(0); }
})();
"""

SCRIPT_HASH = "sha256-" + base64.b64encode(hashlib.sha256(_SCRIPT.encode("utf-8")).digest()).decode("ascii")
"""The CSP source that allows the viewer's script and nothing else."""

STYLE = """
#viewer{outline:none;border:1px solid #d0d5dc;border-radius:6px;padding:8px 12px}
#viewer:focus{border-color:#2b6cb0}
#viewer-pick{display:flex;flex-wrap:wrap;gap:6px;margin:6px 0}
.viewer-match{font-size:13px;padding:3px 8px;border:1px solid #c3c9d1;border-radius:4px;background:#f6f7f9;cursor:pointer}
.viewer-match[aria-pressed=true]{background:#2b6cb0;color:#fff}
.viewer-dice{font-family:ui-monospace,monospace}.viewer-out{color:#999}
.viewer-last{font-weight:600}.viewer-result{font-weight:600;color:#8a2b0c}
"""


def viewer_html(matches: Sequence[tuple[MatchRecord, str]]) -> str:
    """The viewer for ``matches`` (record, why it is notable): markup, data and script."""
    data = [match_data(rec, why) for rec, why in matches]
    if not data:
        return '<p id="viewer-none">No match to step through.</p>'
    return (
        '<div id="viewer" tabindex="0" aria-label="match viewer: left and right arrows step">'
        '<div id="viewer-pick"></div>'
        '<p><button type="button" id="viewer-prev">&larr; prev</button> '
        '<button type="button" id="viewer-next">next &rarr;</button> '
        '<span id="viewer-where" class="muted"></span> '
        '<a id="viewer-served" hidden>open this step in the match viewer</a></p>'
        '<div id="viewer-stage"></div>'
        '<p class="muted">Click the viewer, then step with the left/right arrow keys (or j/k; Home/End).</p></div>'
        f'<script type="application/json" id="viewer-data">{_json_for_script(data)}</script>'
        f"<script>{_SCRIPT}</script>"
        f"<noscript>{html.escape('The viewer needs JavaScript; the matches are also printed below.')}</noscript>"
    )
