"use strict";
// The match viewer: one recorded match from /api/match/ID, stepped through:
// per round its deal, each action, then the reveal (the steps of the report's
// viewer, so a link #step=N opens the same place in either). A finished
// match's record is public: the hands are shown face up unless hidden.
// Bot names and fault reasons are bot-controlled text: textContent only.
const $ = (id) => document.getElementById(id);
function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined && text !== null) e.textContent = String(text);
  return e;
}
function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); }
function pct(p) { return (100 * p).toFixed(1) + "%"; }

const mid = decodeURIComponent(location.pathname.slice("/match/".length));
let m = null, steps = [], at = 0, timer = null;

function build(match) {
  const out = [];
  match.rounds.forEach((r, ri) => {
    out.push({ round: ri, shown: 0, reveal: false });
    r.actions.forEach((_, ai) => out.push({ round: ri, shown: ai + 1, reveal: false }));
    out.push({ round: ri, shown: r.actions.length, reveal: true });
  });
  return out;
}

function counts(r, face) {  // which dice counted for the standing bid's face
  return (d) => d === face || (r.wild && face !== 1 && d === 1);
}

function standingOf(r, shown) {
  let bid = null;
  for (const a of r.actions.slice(0, shown)) if (a.bid) bid = a.bid;
  return bid;
}

function bidNode(q, face, size) {
  const span = el("span", "bid");
  span.appendChild(el("span", "bid-q", q + " \u00d7"));
  span.appendChild(drawDie(face, [size || "small"]));
  return span;
}

function actionNode(a) {
  const li = el("li", "bid-line");
  li.appendChild(el("span", "who", m.players[a.seat]));
  if (a.bid) li.appendChild(bidNode(a.bid[0], a.bid[1], "tiny"));
  else li.appendChild(el("span", "call", a.call));
  return li;
}

function toAct(r, s) {  // the seat whose decision this step shows (at the deal: the first to act)
  if (s.reveal || !r.actions.length) return null;
  return r.actions[Math.max(0, s.shown - 1)].seat;
}

function drawSeats(r, s, final) {
  const box = $("seats");
  clear(box);
  const bid = s.reveal ? standingOf(r, s.shown) : null;
  const counted = bid && !r.fault ? counts(r, bid[1]) : null;
  const hide = $("hide").checked && !s.reveal;
  const acting = toAct(r, s);
  r.dice.forEach((hand, seat) => {
    const cls = ["seat"];
    if (!hand.length) cls.push("out");
    if (seat === acting) cls.push("to-act");
    const div = el("div", cls.join(" "));
    div.dataset.seat = String(seat);
    const head = el("div", "seat-head");
    head.appendChild(el("span", "seat-name", m.players[seat]));
    head.appendChild(el("span", "badge", seat === r.opener ? "opens" : "seat " + (seat + 1)));
    div.appendChild(head);
    const dice = el("div", "seat-dice");
    dice.appendChild(drawCup(!hide));
    for (const d of hand) dice.appendChild(drawDie(hide ? null : d, ["mid"].concat(counted && counted(d) ? ["counted"] : [])));
    if (!hand.length) dice.appendChild(el("span", "seat-count", "out"));
    div.appendChild(dice);
    div.appendChild(el("span", "seat-count", hand.length + (hand.length === 1 ? " die" : " dice")));
    if (final) div.appendChild(el("span", "seat-place", " · place " + m.placements[seat]));
    box.appendChild(div);
  });
}

function drawCentre(r, s) {
  $("round").textContent = "Round " + r.round + (s.reveal ? ": the reveal" : "");
  $("palifico").hidden = !r.palifico;
  const standing = $("standing");
  clear(standing);
  const bid = standingOf(r, s.shown);
  standing.appendChild(el("span", "standing-label", bid ? "Standing bid" : "No bid yet"));
  if (bid) standing.appendChild(bidNode(bid[0], bid[1], "big"));
  const hist = $("history");
  clear(hist);
  r.actions.slice(0, s.shown).forEach((a, i) => {
    const li = actionNode(a);
    if (i === s.shown - 1 && !s.reveal) li.classList.add("last");
    hist.appendChild(li);
  });
}

function drawOdds(r, s) {
  const box = $("odds");
  clear(box);
  if (s.shown === 0 || s.reveal) {
    $("odds-title").textContent = "The odds";
    box.appendChild(el("p", "muted", s.reveal ? "The round is revealed: step back to see each decision's odds."
      : "Step forward: each decision shows the odds its player faced, from its own dice."));
    return;
  }
  const a = r.actions[s.shown - 1], o = a.odds;
  $("odds-title").textContent = "What " + m.players[a.seat] + " faced";
  const mine = el("div", "my-dice");
  mine.appendChild(el("span", "label", "Its dice"));
  if (!o.own.length) mine.appendChild(el("span", "muted", "none (out: a dead man's call)"));
  for (const d of o.own) mine.appendChild(drawDie(d, ["small"]));
  mine.appendChild(el("span", "muted", " and " + o.unseen + " unseen"));
  box.appendChild(mine);
  const list = el("ul", "odds-list");
  if (o.standing) {
    list.appendChild(el("li", null, "standing bid " + o.standing[0] + "x" + o.standing[1] + " true: " + pct(o.p_standing) +
      " (a dudo wins " + pct(1 - o.p_standing) + ")"));
    list.appendChild(el("li", null, "exactly right (a calza wins): " + pct(o.p_exact)));
  } else {
    list.appendChild(el("li", null, "no standing bid: the opening bid"));
  }
  list.appendChild(el("li", "chosen", a.bid ? ("it bid " + a.bid[0] + "x" + a.bid[1] + ": true with " + pct(o.p_bid))
    : ("it called " + a.call)));
  box.appendChild(list);
  const t = el("table", "odds");
  const hr = el("tr"), lr = el("tr");
  hr.appendChild(el("th", null, "face"));
  lr.appendChild(el("th", null, "at least even odds up to"));
  o.likely.forEach((q, i) => {
    const th = el("th");
    th.appendChild(drawDie(i + 1, ["tiny"]));
    hr.appendChild(th);
    lr.appendChild(el("td", null, q));
  });
  t.appendChild(hr); t.appendChild(lr);
  box.appendChild(t);
}

function drawReveal(r, s) {
  $("reveal-box").hidden = !s.reveal;
  if (!s.reveal) return;
  const bid = standingOf(r, s.shown);
  let text;
  if (r.fault) {
    text = "Fault: " + m.players[r.fault.seat] + ": " + r.fault.kind + ": " + r.fault.detail + " (the round is void)";
  } else {
    const parts = [];
    if (bid && r.count !== undefined) parts.push(r.count + " dice count for " + bid[0] + "x" + bid[1]);
    if (r.change) {
      const who = m.players[r.change.seat], d = r.change.delta;
      parts.push(d < 0 ? who + " loses " + (-d === 1 ? "a die" : -d + " dice") : d > 0 ? who + " regains a die" : who + " is right (already at the maximum)");
    }
    text = parts.join("; ");
  }
  $("reveal-text").textContent = text;
  const hands = $("hands");
  clear(hands);
  const counted = bid && !r.fault ? counts(r, bid[1]) : null;
  r.dice.forEach((hand, seat) => {
    if (!hand.length) return;
    const cls = ["hand"];
    if (r.change && r.change.seat === seat) cls.push(r.change.delta < 0 ? "lost" : "gained");
    const row = el("div", cls.join(" "));
    row.appendChild(el("span", "hand-name", m.players[seat]));
    for (const d of hand) row.appendChild(drawDie(d, ["small"].concat(counted && counted(d) ? ["counted"] : [])));
    hands.appendChild(row);
  });
}

function drawOver(final) {
  $("over-box").hidden = !final;
  if (!final) return;
  const pl = $("placements");
  clear(pl);
  m.players.map((p, i) => [m.placements[i], p]).sort((a, b) => a[0] - b[0])
    .forEach(([place, p]) => pl.appendChild(el("li", null, place + ". " + p)));
  const fl = $("faults");
  clear(fl);
  for (const f of m.faults) fl.appendChild(el("li", null, f.bot + ", round " + f.round + ", " + f.kind + ": " + f.detail));
}

function draw() {
  const s = steps[at], r = m.rounds[s.round];
  const final = s.reveal && s.round === m.rounds.length - 1;
  drawSeats(r, s, final);
  drawCentre(r, s);
  drawOdds(r, s);
  drawReveal(r, s);
  drawOver(final);
  $("where").textContent = "step " + (at + 1) + " of " + steps.length + " · round " + r.round + " of " + m.rounds.length;
  $("slider").value = String(at + 1);
  $("step-link").href = "#step=" + (at + 1);
  history.replaceState(null, "", "#step=" + (at + 1));
  $("prev").disabled = $("first").disabled = at === 0;
  $("next").disabled = $("last").disabled = at === steps.length - 1;
}

function go(n) {
  at = Math.max(0, Math.min(steps.length - 1, n));
  draw();
}

function play(on) {
  if (timer) { clearInterval(timer); timer = null; }
  if (on) {
    if (at === steps.length - 1) go(0);
    timer = setInterval(() => { if (at >= steps.length - 1) play(false); else go(at + 1); }, 900);
  }
  $("play").textContent = timer ? "Pause" : "Play";
}

function fromHash() {
  const hit = /step=(\d+)/.exec(location.hash);
  return hit ? parseInt(hit[1], 10) - 1 : 0;
}

function wire() {
  $("first").addEventListener("click", () => go(0));
  $("prev").addEventListener("click", () => go(at - 1));
  $("next").addEventListener("click", () => go(at + 1));
  $("last").addEventListener("click", () => go(steps.length - 1));
  $("play").addEventListener("click", () => play(!timer));
  $("slider").addEventListener("input", () => go(parseInt($("slider").value, 10) - 1));
  $("hide").addEventListener("change", draw);
  window.addEventListener("hashchange", () => go(fromHash()));
  document.addEventListener("keydown", (e) => {
    if (e.target && e.target.tagName === "INPUT" && e.target.type !== "range" && e.target.type !== "checkbox") return;
    if (e.key === "ArrowRight" || e.key === "j") go(at + 1);
    else if (e.key === "ArrowLeft" || e.key === "k") go(at - 1);
    else if (e.key === "Home") go(0);
    else if (e.key === "End") go(steps.length - 1);
    else if (e.key === " ") play(!timer);
    else return;
    e.preventDefault();
  });
}

async function load() {
  try {
    const resp = await fetch("/api/match/" + encodeURIComponent(mid), { cache: "no-store" });
    const body = await resp.json();
    if (!resp.ok) { $("status").textContent = body.error || ("the server answered " + resp.status); return; }
    m = body;
  } catch (err) {
    $("status").textContent = "the server is not answering";
    return;
  }
  document.title = "Dudo Arena: " + m.match;
  $("title").textContent = m.match + " · " + m.variant + " · " + m.players.length + " players · " + m.dice + " dice each";
  $("status").textContent = "ended by " + m.end;
  steps = build(m);
  if (!steps.length) { $("status").textContent = "this match has no round to show"; return; }
  $("slider").max = String(steps.length);
  wire();
  go(fromHash());
}
load();
