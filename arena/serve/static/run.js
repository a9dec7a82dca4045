"use strict";
// The live page of a run: polls /api/run and draws it. Bot names and fault
// reasons are bot-controlled text: textContent only.
const $ = (id) => document.getElementById(id);
function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined && text !== null) e.textContent = String(text);
  return e;
}
function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); }

function cells(tr, values) { for (const v of values) tr.appendChild(el("td", null, v)); }
function interval(v, digits, scale, unit) {
  const f = (x) => (scale * x).toFixed(digits);
  return f(v[0]) + (unit || "") + " [" + f(v[1]) + ", " + f(v[2]) + "]";
}
function botCell(name) {  // a bot's matches in the list
  const td = el("td"), a = el("a", null, name);
  a.href = "/matches?" + new URLSearchParams({ bot: name });
  td.appendChild(a);
  return td;
}
function matchLink(id) {
  const a = el("a", null, id);
  a.href = "/match/" + encodeURIComponent(id);
  return a;
}

function drawElo(s) {
  const body = $("elo").querySelector("tbody");
  if (!s.elo) return;  // not fitted yet: the last table stays
  clear(body);
  $("elo-note").textContent = "Plackett-Luce fit over the first " + s.elo.after + " matches (mean 1500), with a rough 95% " +
    "interval from " + s.elo.resamples + " bootstrap fits; refitted as matches arrive. arena ratings gives the full table.";
  for (const r of s.elo.rows) {
    const tr = el("tr");
    tr.appendChild(botCell(r.bot));
    cells(tr, [r.elo.toFixed(0), r.half === null ? "\u00b1 ?" : "\u00b1 " + r.half.toFixed(0), r.matches]);
    body.appendChild(tr);
  }
}

function drawVariants(s) {
  $("variants-box").hidden = !s.variants.length;
  const body = $("variants").querySelector("tbody");
  clear(body);
  for (const v of s.variants) {
    const tr = el("tr");
    cells(tr, [v.variant, v.matches, v.rounds ? interval(v.rounds, 1, 1) : "",
      v.first_wins ? interval(v.first_wins, 1, 100, "%") : "", interval(v.faulted, 1, 100, "%")]);
    body.appendChild(tr);
  }
}

function draw(s) {
  drawElo(s);
  drawVariants(s);
  $("warnings-box").hidden = !s.warnings.length;
  clear($("warnings"));
  for (const w of s.warnings) $("warnings").appendChild(el("li", null, w));
  $("run-name").textContent = s.name;
  $("status").textContent = "status: " + s.status;
  const of = s.total ? " of " + s.total : "";
  $("progress").textContent = s.recorded + of + " matches recorded · " + s.per_second.toFixed(1) + " matches/s";
  const pct = s.total ? Math.min(100, Math.round(100 * s.recorded / s.total)) : (s.status === "complete" ? 100 : 0);
  $("bar-fill").dataset.pct = String(pct);
  $("bar-fill").style.width = pct + "%";  // CSSOM, allowed by the page's policy (no inline style attribute)
  const body = $("standings").querySelector("tbody");
  clear(body);
  for (const r of s.standings) {
    const tr = el("tr");
    tr.appendChild(botCell(r.bot));
    cells(tr, [r.matches, r.wins, (100 * r.win_rate).toFixed(1) + "%", r.mean_place.toFixed(2), r.faults]);
    body.appendChild(tr);
  }
  $("ratings-box").hidden = !s.ratings;
  if (s.ratings && s.ratings.length) {
    const cols = Object.keys(s.ratings[0]);
    const head = $("ratings").querySelector("thead"), rb = $("ratings").querySelector("tbody");
    clear(head); clear(rb);
    const hr = el("tr");
    for (const c of cols) hr.appendChild(el("th", null, c));
    head.appendChild(hr);
    for (const r of s.ratings) {
      const tr = el("tr");
      for (const c of cols) tr.appendChild(el("td", null, r[c]));
      rb.appendChild(tr);
    }
  }
  const kinds = Object.entries(s.fault_kinds).map(([k, n]) => k + ": " + n).join(", ");
  $("fault-kinds").textContent = kinds ? "By kind: " + kinds + ". The latest:" : "No fault so far.";
  const fl = $("faults");
  clear(fl);
  for (const f of s.faults) {
    const li = el("li");
    li.appendChild(matchLink(f.match));
    li.appendChild(document.createTextNode(", " + f.bot + ", round " + f.round + ", " + f.kind + ": " + f.detail));
    fl.appendChild(li);
  }
}

async function poll() {
  try {
    const resp = await fetch("/api/run", { cache: "no-store" });
    if (resp.ok) draw(await resp.json());
    else $("status").textContent = "the server answered " + resp.status;
  } catch (err) {
    $("status").textContent = "the server is not answering";
  }
  setTimeout(poll, 2000);
}
poll();
