"use strict";
// The lobby: choose the rules and the seats, start a table, hand out its links.
const $ = (id) => document.getElementById(id);
let OPTIONS = { presets: ["classic"], bots: [] };

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

function addSeat(kind, value) {
  const li = el("li", "seat-row");
  const sel = el("select");
  sel.setAttribute("aria-label", "who sits here");
  const person = el("option", null, "a person");
  person.value = "person";
  sel.appendChild(person);
  for (const b of OPTIONS.bots) {
    const o = el("option", null, "bot: " + b);
    o.value = "bot:" + b;
    sel.appendChild(o);
  }
  sel.value = kind === "person" ? "person" : "bot:" + value;
  const name = el("input");
  name.setAttribute("aria-label", "the person's name");
  name.maxLength = 40;
  name.value = kind === "person" ? value : "";
  name.hidden = kind !== "person";
  sel.addEventListener("change", () => { name.hidden = sel.value !== "person"; });
  const rm = el("button", null, "remove");
  rm.type = "button";
  rm.addEventListener("click", () => li.remove());
  li.append(sel, name, rm);
  $("seats").appendChild(li);
}

function people() { return [...$("seats").querySelectorAll("li")].filter((li) => li.querySelector("select").value === "person").length; }

async function create() {
  $("error").textContent = "";
  const seats = [...$("seats").querySelectorAll("li")].map((li) => {
    const v = li.querySelector("select").value;
    return v === "person" ? { person: li.querySelector("input").value } : { bot: v.slice(4) };
  });
  const body = { preset: $("preset").value, seats: seats };
  if ($("dice").value) body.dice = Number($("dice").value);
  if ($("dead-man").checked) body.dead_mans_calza = true;
  if ($("veteran").checked) body.veteran_palifico = true;
  const resp = await fetch("/api/tables", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
  const data = await resp.json();
  if (!resp.ok) { $("error").textContent = data.error; return; }
  const list = $("link-list");
  while (list.firstChild) list.removeChild(list.firstChild);
  for (const s of data.seats) {
    if (s.bot) continue;
    const li = el("li");
    const a = el("a", "seat-link", "Sit as " + s.name);
    a.href = s.link;
    li.appendChild(a);
    li.appendChild(el("code", "link-text", location.origin + s.link));
    list.appendChild(li);
  }
  const li = el("li");
  const w = el("a", "watch-link", "Watch (no hidden dice)");
  w.href = data.watch;
  li.appendChild(w);
  list.appendChild(li);
  $("links").hidden = false;
}

async function init() {
  const resp = await fetch("/api/options");
  OPTIONS = await resp.json();
  for (const p of OPTIONS.presets) {
    const o = el("option", null, p);
    o.value = p;
    $("preset").appendChild(o);
  }
  addSeat("person", "person 1");
  const defaults = ["probabilistic", "cautious", "bluffer"].filter((b) => OPTIONS.bots.includes(b));
  for (const b of defaults) addSeat("bot", b);
  $("add-person").addEventListener("click", () => addSeat("person", "person " + (people() + 1)));
  $("add-bot").addEventListener("click", () => addSeat("bot", OPTIONS.bots[0]));
  $("create").addEventListener("click", create);
}
init();
