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

function draw(s) {
  $("run-name").textContent = s.name;
  $("status").textContent = "status: " + s.status;
  const of = s.total ? " of " + s.total : "";
  $("progress").textContent = s.recorded + of + " matches recorded · " + s.per_second.toFixed(1) + " matches/s";
  const pct = s.total ? Math.min(100, Math.round(100 * s.recorded / s.total)) : 0;
  $("bar-fill").dataset.pct = String(pct);
  $("bar-fill").style.width = pct + "%";  // CSSOM, allowed by the page's policy (no inline style attribute)
  const body = $("standings").querySelector("tbody");
  clear(body);
  for (const r of s.standings) {
    const tr = el("tr");
    for (const v of [r.bot, r.matches, r.wins, (100 * r.win_rate).toFixed(1) + "%", r.mean_place.toFixed(2), r.faults]) {
      tr.appendChild(el("td", null, v));
    }
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
  for (const f of s.faults) fl.appendChild(el("li", null, f.match + ", " + f.bot + ", round " + f.round + ", " + f.kind + ": " + f.detail));
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
