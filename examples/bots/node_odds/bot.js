#!/usr/bin/env node
// A program bot in plain Node.js (no npm packages): the protocol by hand.
//
// Strategy: every unseen die shows a face with probability 1/6, or 1/3 for a
// non-ace face when aces are wild. Call dudo when the standing bid is less
// likely to be true than the best raise; otherwise bid the likeliest face at
// its smallest legal quantity. Never calza; no randomness.
"use strict";
const readline = require("readline");

const tailCache = new Map();
// P(X >= k) for X ~ Binomial(n, p), k = 0..n+1
function tails(n, p) {
  const key = n + ":" + p;
  if (tailCache.has(key)) return tailCache.get(key);
  const pmf = [Math.pow(1 - p, n)];
  for (let k = 1; k <= n; k++) pmf.push(pmf[k - 1] * (n - k + 1) / k * p / (1 - p));
  const t = new Array(n + 2).fill(0);
  for (let k = n; k >= 0; k--) t[k] = t[k + 1] + pmf[k];
  tailCache.set(key, t);
  return t;
}

function probability(quantity, face, dice, unseen, wild) {
  const mine = dice.filter((d) => d === face || (wild && face !== 1 && d === 1)).length;
  const need = quantity - mine;
  if (need <= 0) return 1;
  if (need > unseen) return 0;
  return tails(unseen, wild && face !== 1 ? 1 / 3 : 1 / 6)[need];
}

function decide(turn, wildOnes) {
  const dice = turn.dice;
  const unseen = turn.counts.reduce((a, b) => a + b, 0) - dice.length;
  const wild = wildOnes && !turn.palifico;
  let best = null;
  for (const [f, q] of Object.entries(turn.legal.min_quantity)) {
    const face = Number(f);
    const p = probability(q, face, dice, unseen, wild);
    if (best === null || p > best.p || (p === best.p && face > best.face)) best = { p, face, q };
  }
  if (turn.history.length > 0 && turn.legal.dudo) {
    const [, quantity, face] = turn.history[turn.history.length - 1];
    if (best === null || 1 - probability(quantity, face, dice, unseen, wild) > best.p) return { action: "dudo" };
  }
  return { action: "bid", quantity: best.q, face: best.face };
}

let wildOnes = true;
const rl = readline.createInterface({ input: process.stdin });
rl.on("line", (line) => {
  const msg = JSON.parse(line);
  let reply = null;
  if (msg.type === "hello") reply = { type: "ready", name: "node_odds", version: "1.0" };
  else if (msg.type === "match_start") wildOnes = Boolean(msg.rules.wild_ones);
  else if (msg.type === "turn") reply = decide(msg, wildOnes);
  if (reply !== null) process.stdout.write(JSON.stringify(reply) + "\n");
});
rl.on("close", () => process.exit(0));
