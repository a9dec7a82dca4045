#!/usr/bin/env node
// Probabilistic, in JavaScript: a program bot that speaks the player protocol
// (docs/protocol.md) itself, with nothing but Node's standard library.
//
// Strategy (the same as bots/probabilistic.py): each unseen die counts for a
// face with probability 1/3 when aces are wild (1/6 for aces, in palifico
// rounds, or with wild_ones off), so the chance that a bid is true is an
// exact binomial tail given our own dice.
//  - Opening: the face with the most expected dice, at the largest quantity
//    still true with probability >= OPEN_CONFIDENCE.
//  - Later: the most likely true raise is the smallest legal quantity of the
//    face with the best odds; call dudo when the standing bid is true with
//    probability below DOUBT_BELOW and less likely than that raise.
//  - Out of the match, asked for a dead man's calza (protocol 2: a turn whose
//    legal has "pass"): calza when the standing bid is exact with probability
//    >= DEAD_CONFIDENT, or >= DEAD_LAST_CHANCE when the match may end this
//    round (arena.sdk.dead_mans_call's rule); else pass.
// Deterministic: it uses no randomness at all, so the same match is played
// the same way every time. It writes to stdout only in answer to hello and
// turn, and exits when stdin closes.
"use strict";

const readline = require("readline");

const OPEN_CONFIDENCE = 0.6;
const DOUBT_BELOW = 0.5;
const DEAD_CONFIDENT = 0.4;
const DEAD_LAST_CHANCE = 0.15;

let rules = null; // the match_start rules
const tailCache = new Map();

function choose(n, k) {
  let c = 1;
  for (let i = 1; i <= k; i++) c = (c * (n - k + i)) / i;
  return c;
}

// P(X >= k) for X ~ Binomial(n, p), summed exactly term by term.
function pAtLeast(k, n, p) {
  if (k <= 0) return 1;
  if (k > n) return 0;
  const key = k + "," + n + "," + p;
  let v = tailCache.get(key);
  if (v === undefined) {
    v = 0;
    for (let i = k; i <= n; i++) v += choose(n, i) * Math.pow(p, i) * Math.pow(1 - p, n - i);
    v = Math.min(1, v);
    tailCache.set(key, v);
  }
  return v;
}

function view(turn) {
  const wild = rules !== null && rules.wild_ones && !turn.palifico;
  const total = turn.counts.reduce((a, b) => a + b, 0);
  const unseen = total - turn.dice.length;
  const mine = (face) =>
    turn.dice.filter((d) => d === face || (wild && d === 1 && face !== 1)).length;
  const pFace = (face) => (wild && face !== 1 ? 1 / 3 : 1 / 6);
  return {
    probability: (q, face) => pAtLeast(q - mine(face), unseen, pFace(face)),
    expected: (face) => mine(face) + unseen * pFace(face),
  };
}

// A dead man's turn: no dice of our own, so the chance of an exact count is binomial over all dice in play.
function deadMan(turn) {
  const legal = turn.legal;
  const history = turn.history;
  if (!legal.calza || history.length === 0) return { action: "pass" };
  const [, q, face] = history[history.length - 1];
  const wild = rules !== null && rules.wild_ones && !turn.palifico;
  const p = wild && face !== 1 ? 1 / 3 : 1 / 6;
  const total = turn.counts.reduce((a, b) => a + b, 0);
  const exact = q > total ? 0 : choose(total, q) * Math.pow(p, q) * Math.pow(1 - p, total - q);
  const alive = turn.counts.filter((c) => c > 0);
  const last = alive.length <= 2 && Math.min(...alive) === 1;
  return exact >= DEAD_CONFIDENT || (last && exact >= DEAD_LAST_CHANCE) ? { action: "calza" } : { action: "pass" };
}

function decide(turn) {
  const legal = turn.legal;
  if (legal.pass === true) return deadMan(turn);
  const v = view(turn);
  const faces = Object.keys(legal.min_quantity).map(Number).sort((a, b) => a - b);
  const history = turn.history;
  if (history.length === 0) {
    let face = faces[0];
    for (const f of faces) if (v.expected(f) >= v.expected(face)) face = f;
    let q = legal.min_quantity[String(face)];
    while (q < legal.max_quantity && v.probability(q + 1, face) >= OPEN_CONFIDENCE) q++;
    return { action: "bid", quantity: q, face: face };
  }
  if (faces.length === 0) return { action: "dudo" };
  let best = null;
  let pBest = -1;
  for (const f of faces) {
    const q = legal.min_quantity[String(f)];
    const p = v.probability(q, f);
    if (p >= pBest) {
      best = { action: "bid", quantity: q, face: f };
      pBest = p;
    }
  }
  const [, sq, sf] = history[history.length - 1];
  const pStanding = v.probability(sq, sf);
  if (legal.dudo && pStanding < DOUBT_BELOW && pStanding < pBest) return { action: "dudo" };
  return best;
}

function send(obj) {
  process.stdout.write(JSON.stringify(obj) + "\n");
}

const input = readline.createInterface({ input: process.stdin, terminal: false });
input.on("line", (line) => {
  let msg;
  try {
    msg = JSON.parse(line);
  } catch (err) {
    process.stderr.write("node_probabilistic: not JSON: " + line.slice(0, 200) + "\n");
    return;
  }
  switch (msg.type) {
    case "hello":
      send({ type: "ready", name: "node_probabilistic", version: "1.0" });
      break;
    case "match_start":
      rules = msg.rules;
      break;
    case "turn":
      send(decide(msg));
      break;
    case "match_end":
      rules = null;
      break;
    default:
      break; // round_end and unknown messages need no reply
  }
});
input.on("close", () => process.exit(0));
