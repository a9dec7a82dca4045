"use strict";
// Dice drawn as dice: an SVG per die, built with DOM calls only (no markup strings).
const SVG_NS = "http://www.w3.org/2000/svg";
const PIPS = {
  1: [[50, 50]],
  2: [[28, 28], [72, 72]],
  3: [[28, 28], [50, 50], [72, 72]],
  4: [[28, 28], [72, 28], [28, 72], [72, 72]],
  5: [[28, 28], [72, 28], [50, 50], [28, 72], [72, 72]],
  6: [[28, 25], [72, 25], [28, 50], [72, 50], [28, 75], [72, 75]],
};

// face: 1-6, or null for a hidden die. classes: extra class names (e.g. "counted").
function drawDie(face, classes) {
  const svg = document.createElementNS(SVG_NS, "svg");
  svg.setAttribute("viewBox", "0 0 100 100");
  svg.setAttribute("class", ["die"].concat(classes || []).join(" "));
  svg.setAttribute("role", "img");
  svg.setAttribute("aria-label", face ? "die showing " + face : "hidden die");
  const body = document.createElementNS(SVG_NS, "rect");
  body.setAttribute("x", "4"); body.setAttribute("y", "4");
  body.setAttribute("width", "92"); body.setAttribute("height", "92");
  body.setAttribute("rx", "18");
  body.setAttribute("class", face ? "die-body" : "die-body hidden-die");
  svg.appendChild(body);
  if (face) {
    for (const [cx, cy] of PIPS[face]) {
      const pip = document.createElementNS(SVG_NS, "circle");
      pip.setAttribute("cx", String(cx)); pip.setAttribute("cy", String(cy));
      pip.setAttribute("r", face === 1 ? "13" : "9");
      pip.setAttribute("class", face === 1 ? "pip ace" : "pip");
      svg.appendChild(pip);
    }
  } else {
    const q = document.createElementNS(SVG_NS, "text");
    q.setAttribute("x", "50"); q.setAttribute("y", "66");
    q.setAttribute("text-anchor", "middle");
    q.setAttribute("class", "die-q");
    q.textContent = "?";
    svg.appendChild(q);
  }
  return svg;
}

// A cup (the player's dice under it), drawn as a small SVG.
function drawCup(lifted) {
  const svg = document.createElementNS(SVG_NS, "svg");
  svg.setAttribute("viewBox", "0 0 60 50");
  svg.setAttribute("class", lifted ? "cup lifted" : "cup");
  svg.setAttribute("aria-hidden", "true");
  const p = document.createElementNS(SVG_NS, "path");
  p.setAttribute("d", "M8 46 L14 6 Q30 0 46 6 L52 46 Q30 52 8 46 Z");
  p.setAttribute("class", "cup-body");
  svg.appendChild(p);
  return svg;
}
