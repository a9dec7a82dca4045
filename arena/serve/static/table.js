"use strict";
// The browser table: draws what the server sends, sends moves. The server is
// the referee: this page only offers the legal moves it was told of, and every
// name, reply and error is text (textContent), never markup.

const S = {
  you: null, // entrant position of this page's seat, or null (spectator)
  myName: null,
  seat: null, // this page's referee seat
  names: [], bots: [], ownNames: [], rules: null, variant: "",
  round: 0, counts: [], palifico: false, toAct: null, history: [],
  myDice: [], myRound: 0,
  turn: null, // {legal, assist} while it is this seat's turn
  turnNo: 0, // turns this page was asked for (body[data-turn], "0" while it is not its turn)
  face: null, quantity: 0,
  reveal: null, placements: null, over: null, error: null, starting: null,
  refused: "", awayS: null, connected: false,
  replaced: {}, // seat -> the fallback bot that took it
};

const $ = (id) => document.getElementById(id);
function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined && text !== null) e.textContent = String(text);
  return e;
}
function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); }
function nameOf(seat) {
  if (seat === S.seat && S.seat !== null) return "you";
  return S.names[seat] !== undefined ? S.names[seat] : "seat " + seat;
}
function ordinal(n) {
  const s = (n % 100 >= 10 && n % 100 <= 20) ? "th" : ({ 1: "st", 2: "nd", 3: "rd" }[n % 10] || "th");
  return n + s;
}

// --- events from the server ---------------------------------------------------

function onEvent(ev) {
  switch (ev.type) {
    case "hello": S.you = ev.you; S.myName = ev.name; S.awayS = ev.away_s; break;
    case "starting": S.starting = ev; break;
    case "seat": S.seat = ev.seat; break;
    case "start":
      S.names = ev.names; S.bots = ev.bots; S.ownNames = ev.own_names; S.rules = ev.rules; S.variant = ev.variant;
      break;
    case "round":
      S.round = ev.round; S.counts = ev.counts; S.palifico = ev.palifico; S.history = []; S.toAct = null;
      break;
    case "dice": S.myDice = ev.dice; S.myRound = ev.round; break;
    case "turn":
      S.round = ev.round; S.counts = ev.counts; S.palifico = ev.palifico; S.history = ev.history; S.toAct = ev.to_act;
      S.turn = null; S.refused = "";
      break;
    case "your_turn":
      S.turn = { legal: ev.legal, assist: ev.assist };
      S.turnNo += 1;
      pickDefault();
      break;
    case "refused": S.refused = ev.text; break;
    case "replaced": S.replaced[ev.seat] = ev.by; if (ev.seat === S.seat) S.turn = null; break;
    case "reveal":
      S.reveal = ev; S.counts = ev.counts; S.turn = null; S.toAct = null; S.history = ev.history;
      break;
    case "placements": S.placements = ev.placements; break;
    case "over": S.over = ev; S.placements = ev.placements; S.turn = null; break;
    case "error": S.error = ev.text; break;
    default: return;
  }
  render();
}

// --- the move being made ------------------------------------------------------

function legalFaces() {
  if (!S.turn) return [];
  const mq = S.turn.legal.min_quantity;
  return Object.keys(mq).map(Number).filter((f) => mq[String(f)] <= S.turn.legal.max_quantity).sort();
}
function pickDefault() {
  const faces = legalFaces();
  if (S.face === null || !faces.includes(S.face)) {
    // The face of the standing bid if it may be raised, else the first legal face.
    const last = S.history.length ? S.history[S.history.length - 1][2] : null;
    S.face = faces.includes(last) ? last : (faces.length ? faces[0] : null);
  }
  S.quantity = S.face === null ? 0 : S.turn.legal.min_quantity[String(S.face)];
}
function chooseFace(f) {
  if (!S.turn || !legalFaces().includes(f)) return;
  S.face = f;
  S.quantity = S.turn.legal.min_quantity[String(f)];
  render();
}
function stepQuantity(d) {
  if (!S.turn || S.face === null) return;
  const lo = S.turn.legal.min_quantity[String(S.face)], hi = S.turn.legal.max_quantity;
  S.quantity = Math.min(hi, Math.max(lo, S.quantity + d));
  render();
}
function send(obj) {
  if (socket && socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify(obj));
}
function move(text) {
  if (!S.turn) return;
  send({ type: "move", text: text });
}
function bid() { if (S.turn && S.face !== null) move(S.quantity + "x" + S.face); }

// --- drawing ----------------------------------------------------------------

function render() {
  document.body.dataset.turn = S.turn ? String(S.turnNo) : "0";
  document.body.dataset.over = S.over || S.error ? "1" : "0";
  const rules = S.rules;
  if (rules) {
    const bits = [S.variant, rules.dice + " dice each", rules.wild_ones ? "1s wild" : "1s not wild",
      rules.calza ? "calza" : "no calza", rules.palifico ? "palifico" : "no palifico"];
    if (rules.dead_mans_calza) bits.push("dead man's calza");
    if (rules.veteran_palifico) bits.push("veteran palifico");
    $("rules").textContent = bits.join(" · ") + (S.you === null ? " · watching" : " · you are " + S.myName);
  }
  let status = S.connected ? "" : "connecting...";
  if (S.error) status = "The table stopped: " + S.error;
  else if (S.over) status = "The match is over.";
  else if (!S.rules && S.starting) status = "Starting the bots' sandboxes...";
  else if (S.turn) status = "Your turn.";
  else if (S.toAct !== null) status = "Waiting for " + nameOf(S.toAct) + ".";
  $("status").textContent = status;
  renderSeats();
  renderCentre();
  renderControls();
  renderAssist();
  renderReveal();
  renderOver();
}

function renderSeats() {
  const box = $("seats");
  clear(box);
  S.names.forEach((name, seat) => {
    const count = S.counts.length ? S.counts[seat] : (S.rules ? S.rules.dice : 0);
    const card = el("div", "seat");
    if (seat === S.toAct) card.classList.add("to-act");
    if (seat === S.seat) card.classList.add("mine");
    if (count === 0 && S.counts.length) card.classList.add("out");
    const head = el("div", "seat-head");
    head.appendChild(el("span", "seat-name", name + (seat === S.seat ? " (you)" : "")));
    head.appendChild(el("span", "badge", S.bots[seat] ? "bot" : "person"));
    card.appendChild(head);
    if (S.bots[seat] && S.ownNames[seat]) card.appendChild(el("div", "own-name", "calls itself " + S.ownNames[seat]));
    if (S.replaced[String(seat)]) card.appendChild(el("div", "replaced", "away: played by " + S.replaced[String(seat)]));
    const dice = el("div", "seat-dice");
    dice.appendChild(drawCup(false));
    if (seat === S.seat && S.myRound === S.round) {
      S.myDice.forEach((d) => dice.appendChild(drawDie(d, ["small"])));
    } else {
      for (let i = 0; i < count; i++) dice.appendChild(drawDie(null, ["small"]));
    }
    card.appendChild(dice);
    card.appendChild(el("div", "seat-count", count === 0 && S.counts.length ? "out" : count + (count === 1 ? " die" : " dice")));
    if (S.placements) card.appendChild(el("div", "seat-place", ordinal(S.placements[seat])));
    box.appendChild(card);
  });
}

function renderCentre() {
  $("round").textContent = S.round ? "Round " + S.round : "";
  $("palifico").hidden = !S.palifico;
  const st = $("standing");
  clear(st);
  if (S.history.length) {
    const [seat, q, f] = S.history[S.history.length - 1];
    st.appendChild(el("span", "standing-label", "Standing bid"));
    const b = el("span", "standing-bid");
    b.appendChild(el("span", "q", q + " ×"));
    b.appendChild(drawDie(f, ["mid"]));
    st.appendChild(b);
    st.appendChild(el("span", "standing-by", "by " + nameOf(seat)));
  } else if (S.round && !S.over) {
    const opener = S.toAct === null ? "the opener opens" : (S.toAct === S.seat ? "you open" : nameOf(S.toAct) + " opens");
    st.appendChild(el("span", "standing-label", "No bid yet: " + opener + " the round"));
  }
  const h = $("history");
  clear(h);
  S.history.forEach(([seat, q, f]) => {
    const li = el("li", "bid-line");
    li.appendChild(el("span", "who", nameOf(seat)));
    li.appendChild(el("span", "what", q + " × "));
    li.appendChild(drawDie(f, ["tiny"]));
    h.appendChild(li);
  });
}

function renderControls() {
  const mine = S.you !== null;
  $("controls").hidden = !(mine && S.turn);
  $("waiting").hidden = !(mine && !S.turn && !S.over && !S.error);
  if (!mine) return;
  for (const box of [$("my-dice"), $("my-dice-wait")]) {
    clear(box);
    if (S.myRound === S.round) {
      box.appendChild(el("span", "label", "Your dice"));
      S.myDice.forEach((d) => box.appendChild(drawDie(d, ["big"])));
    }
  }
  const standIn = S.seat !== null ? S.replaced[String(S.seat)] : undefined;
  $("wait-text").textContent = standIn ? "You were away too long: " + standIn + " plays your seat."
    : (S.toAct !== null ? "Waiting for " + nameOf(S.toAct) + "." : "Waiting for the table.");
  $("refused").textContent = S.refused;
  if (!S.turn) return;
  const faces = legalFaces();
  const fb = $("faces");
  clear(fb);
  for (let f = 1; f <= 6; f++) {
    const b = el("button", "face");
    b.type = "button";
    b.disabled = !faces.includes(f);
    b.setAttribute("aria-pressed", String(S.face === f));
    b.setAttribute("aria-label", "face " + f + " (key " + f + ")");
    b.appendChild(drawDie(f, ["mid"]));
    b.addEventListener("click", () => chooseFace(f));
    fb.appendChild(b);
  }
  const canBid = S.face !== null;
  $("quantity").textContent = canBid ? String(S.quantity) : "-";
  $("bid-text").textContent = canBid ? S.quantity + "x" + S.face : "";
  $("bid").disabled = !canBid;
  $("q-down").disabled = !canBid || S.quantity <= S.turn.legal.min_quantity[String(S.face)];
  $("q-up").disabled = !canBid || S.quantity >= S.turn.legal.max_quantity;
  $("dudo").disabled = !S.turn.legal.dudo;
  $("calza").disabled = !S.turn.legal.calza;
  $("calza").hidden = !(S.rules && (S.rules.calza || S.rules.dead_mans_calza));
  $("pass").disabled = !S.turn.legal.pass;
  $("pass").hidden = !S.turn.legal.pass;
}

function renderAssist() {
  const box = $("assist-box");
  box.hidden = !(S.you !== null && S.turn);
  if (box.hidden) return;
  const out = $("assist");
  clear(out);
  if (!$("assist-on").checked) return;
  const a = S.turn.assist;
  out.appendChild(el("p", "muted", "Your dice, " + a.unseen + " unseen dice, " + (a.wild ? "1s wild" : "1s not wild") + "."));
  const t = el("table", "odds");
  const rows = [["face", (o) => drawDie(o.face, ["tiny"])], ["expected", (o) => o.expected_text],
    ["50% up to", (o) => (o.likely ? o.likely + "x" + o.face : "-")]];
  for (const [label, cell] of rows) {
    const tr = el("tr");
    tr.appendChild(el("th", null, label));
    for (const o of a.faces) {
      const td = el("td");
      const v = cell(o);
      if (typeof v === "string") td.textContent = v; else td.appendChild(v);
      tr.appendChild(td);
    }
    t.appendChild(tr);
  }
  out.appendChild(t);
  out.appendChild(el("p", "muted small", "expected: dice counting for the face on the whole table; 50% up to: the largest bid on it still at least 50% likely"));
  const ul = el("ul", "odds-list");
  if (a.standing) {
    const s = a.standing[0] + "x" + a.standing[1];
    ul.appendChild(el("li", null, "standing " + s + ": P(true) " + a.p_standing_text + " (dudo wins " + a.p_dudo_text + ")"));
    if (a.p_calza_text !== null) ul.appendChild(el("li", null, "calza on " + s + ": P(exactly) " + a.p_calza_text));
  }
  if (a.standing) {  // as arena play --assist: at an opening the table above is what to open from
    for (const [q, f, , txt] of a.raises) ul.appendChild(el("li", null, "raise " + q + "x" + f + ": P(true) " + txt));
    if (!a.raises.length && a.any_bid) ul.appendChild(el("li", null, "no raise can be true: every legal bid needs more dice than you hold and cannot see"));
  }
  out.appendChild(ul);
}

function counts(d, face, wild) { return d === face || (wild && d === 1 && face !== 1); }

function renderReveal() {
  const r = S.reveal;
  $("reveal").hidden = !r;
  if (!r) return;
  $("reveal-title").textContent = "Round " + r.round + (r.palifico ? " (palifico)" : "") + ": the reveal";
  let text = "";
  if (r.fault) {
    text = nameOf(r.fault.seat) + " is out of the match (" + r.fault.kind + "); the round is void.";
  } else if (r.call && r.bid) {
    const [bidder, q, f] = r.bid;
    text = nameOf(r.call.seat) + " called " + r.call.kind + " on " + nameOf(bidder) + "'s " + q + "x" + f + ": there were " + r.count + ". ";
    const you = r.change.seat === S.seat && S.seat !== null;
    const who = you ? "You" : nameOf(r.change.seat);
    if (r.change.delta < 0) text += who + (you ? " lose " : " loses ") + (-r.change.delta) + (r.change.delta === -1 ? " die." : " dice.");
    else if (r.change.delta > 0) text += who + (you ? " regain" : " regains") + " a die.";
    else text += who + (you ? " are" : " is") + " right, but already at the most dice.";
  }
  $("reveal-text").textContent = text.startsWith("you ") ? "Y" + text.slice(1) : text;  // names stay as written
  const hands = $("reveal-hands");
  clear(hands);
  const face = r.bid ? r.bid[2] : null;
  r.dice.forEach((hand, seat) => {
    if (!hand.length) return;
    const row = el("div", "hand");
    if (r.change && r.change.seat === seat) row.classList.add(r.change.delta < 0 ? "lost" : "gained");
    row.appendChild(el("span", "hand-name", nameOf(seat)));
    hand.forEach((d) => row.appendChild(drawDie(d, face !== null && counts(d, face, r.wild) ? ["small", "counted"] : ["small"])));
    hands.appendChild(row);
  });
}

function renderOver() {
  const box = $("over");
  box.hidden = !(S.placements && (S.over || S.placements));
  if (box.hidden) return;
  const ol = $("placements");
  clear(ol);
  S.placements.map((p, seat) => [p, seat]).sort((a, b) => a[0] - b[0]).forEach(([p, seat]) => {
    ol.appendChild(el("li", seat === S.seat ? "me" : null, ordinal(p) + ": " + nameOf(seat)));
  });
  const fl = $("faults");
  clear(fl);
  if (S.over) {
    for (const f of S.over.faults) fl.appendChild(el("li", null, nameOf(f.seat) + ", round " + f.round + ", " + f.kind + ": " + f.detail));
    $("recorded").textContent = "Match " + S.over.match + " recorded in " + S.over.recorded;
  }
}

// --- input ------------------------------------------------------------------

function wire() {
  $("q-up").addEventListener("click", () => stepQuantity(1));
  $("q-down").addEventListener("click", () => stepQuantity(-1));
  $("bid").addEventListener("click", bid);
  $("dudo").addEventListener("click", () => move("dudo"));
  $("calza").addEventListener("click", () => move("calza"));
  $("pass").addEventListener("click", () => move("pass"));
  $("leave").addEventListener("click", () => send({ type: "leave" }));
  $("assist-on").addEventListener("change", render);
  $("typed").addEventListener("submit", (e) => {
    e.preventDefault();
    const text = $("move").value.trim();
    if (text) { move(text); $("move").value = ""; }
  });
  document.addEventListener("keydown", (e) => {
    if (e.target && e.target.tagName === "INPUT" && e.target.type !== "checkbox") {
      if (e.key === "Escape") e.target.blur();
      return;
    }
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    const k = e.key;
    if (k === "a" || k === "A") { if (S.turn) { $("assist-on").checked = !$("assist-on").checked; render(); } return; }
    if (!S.turn) return;
    if (k >= "1" && k <= "6") chooseFace(Number(k));
    else if (k === "ArrowUp" || k === "+" || k === "=") stepQuantity(1);
    else if (k === "ArrowDown" || k === "-") stepQuantity(-1);
    else if (k === "Enter") bid();
    else if ((k === "d" || k === "D") && S.turn.legal.dudo) move("dudo");
    else if ((k === "c" || k === "C") && S.turn.legal.calza) move("calza");
    else if ((k === "p" || k === "P") && S.turn.legal.pass) move("pass");
    else if (k === "/") $("move").focus();
    else return;
    e.preventDefault();
  });
}

// --- the connection ------------------------------------------------------------

let socket = null;
function seatToken() {
  const m = /(?:^|[#&])seat=([A-Za-z0-9_-]+)/.exec(location.hash);
  return m ? m[1] : null;
}
function connect() {
  const tid = location.pathname.split("/").pop();
  const scheme = location.protocol === "https:" ? "wss://" : "ws://";
  socket = new WebSocket(scheme + location.host + "/ws/" + encodeURIComponent(tid));
  socket.addEventListener("open", () => {
    S.connected = true;
    socket.send(JSON.stringify({ type: "join", seat: seatToken() }));
  });
  socket.addEventListener("message", (m) => {
    let ev;
    try { ev = JSON.parse(m.data); } catch (err) { return; }
    onEvent(ev);
  });
  socket.addEventListener("close", () => {
    S.connected = false;
    render();
    if (!S.over && !S.error) setTimeout(reconnect, 1500);
  });
}
function reconnect() {
  // A fresh page state: the server replays what this seat may see.
  const keep = { you: S.you };
  Object.assign(S, { names: [], counts: [], history: [], turn: null, turnNo: 0, reveal: null, placements: null, over: null,
    seat: null, myDice: [], myRound: 0, round: 0, toAct: null, refused: "", replaced: {} }, keep);
  connect();
}

wire();
connect();
render();
