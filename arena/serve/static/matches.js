"use strict";
// The match list: /api/matches, a page at a time, filtered; each match links
// to its viewer. The filter is kept in the address, so a list can be linked.
// Bot names and fault kinds are bot-controlled text: textContent only.
const $ = (id) => document.getElementById(id);
function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined && text !== null) e.textContent = String(text);
  return e;
}
function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); }
const FIELDS = ["q", "bot", "variant", "fault", "order"];
let page = 0, pages = 1, asked = 0;

function options(select, values) {
  const keep = new Set(Array.from(select.options).map((o) => o.value));
  for (const v of values) {
    if (keep.has(v)) continue;
    const o = el("option", null, v);
    o.value = v;
    select.appendChild(o);
  }
}

function query() {
  const p = new URLSearchParams();
  for (const f of FIELDS) if ($(f).value) p.set(f, $(f).value);
  if (page) p.set("page", String(page));
  return p;
}

function draw(s) {
  options($("bot"), s.bots);
  options($("variant"), s.variants);
  options($("fault"), s.fault_kinds);
  page = s.page; pages = s.pages;
  $("count").textContent = s.total + " of " + s.recorded + " matches recorded" +
    ($("order").value === "upset" && !s.rated ? " (no Elo table yet: as recorded)" : "");
  $("page").textContent = "page " + (s.page + 1) + " of " + s.pages;
  $("prev").disabled = s.page === 0;
  $("next").disabled = s.page >= s.pages - 1;
  const body = $("matches").querySelector("tbody");
  clear(body);
  for (const r of s.rows) {
    const tr = el("tr");
    const td = el("td");
    const a = el("a", null, r.match);
    a.href = "/match/" + encodeURIComponent(r.match);
    td.appendChild(a);
    tr.appendChild(td);
    tr.appendChild(el("td", null, r.variant));
    const players = el("td", "players");
    r.players.forEach((p, i) => {
      if (i) players.appendChild(document.createTextNode(", "));
      players.appendChild(el(p.place === 1 ? "strong" : "span", null, p.bot + " (" + p.place + ")"));
    });
    tr.appendChild(players);
    tr.appendChild(el("td", null, r.rounds === null ? "" : r.rounds));
    tr.appendChild(el("td", null, r.faults.map((f) => f.bot + ": " + f.kind).join(", ")));
    tr.appendChild(el("td", null, r.upset === undefined ? "" : r.upset));
    body.appendChild(tr);
  }
}

async function load() {
  const p = query(), mine = ++asked;  // a later request's answer wins, whatever order they arrive in
  history.replaceState(null, "", "/matches" + (p.toString() ? "?" + p : ""));
  $("status").textContent = "loading...";
  try {
    const resp = await fetch("/api/matches?" + p, { cache: "no-store" });
    const body = await resp.json();
    if (mine !== asked) return;
    if (!resp.ok) { $("status").textContent = body.error || ("the server answered " + resp.status); return; }
    draw(body);
    $("status").textContent = "";
  } catch (err) {
    $("status").textContent = "the server is not answering";
  }
}

const start = new URLSearchParams(location.search);
for (const f of FIELDS) {
  const v = start.get(f);
  if (v === null) continue;
  if ($(f).tagName === "SELECT" && !Array.from($(f).options).some((o) => o.value === v)) options($(f), [v]);
  $(f).value = v;
}
page = parseInt(start.get("page") || "0", 10) || 0;
$("find").addEventListener("submit", (e) => { e.preventDefault(); page = 0; load(); });
for (const f of ["bot", "variant", "fault", "order"]) $(f).addEventListener("change", () => { page = 0; load(); });
$("prev").addEventListener("click", () => { page = Math.max(0, page - 1); load(); });
$("next").addEventListener("click", () => { page = Math.min(pages - 1, page + 1); load(); });
load();
