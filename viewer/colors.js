// colors.js: the colour scales of the inspector. Sequential scales are
// viridis (default) and cividis, both readable with any colour-vision
// deficiency and in greyscale; differences use ColorBrewer's RdBu (blue for
// negative, red for positive, white for zero); K/V head groups use the
// Okabe-Ito palette.
"use strict";

const SCALES = {
  viridis: [
    "#440154",
    "#472d7b",
    "#3b528b",
    "#2c728e",
    "#21918c",
    "#28ae80",
    "#5ec962",
    "#addc30",
    "#fde725",
  ],
  cividis: [
    "#00224e",
    "#123570",
    "#3b496c",
    "#575d6d",
    "#707173",
    "#8a8779",
    "#a69d75",
    "#c4b56c",
    "#e4cf5b",
    "#fee838",
  ],
  diverging: [
    "#053061",
    "#2166ac",
    "#4393c3",
    "#92c5de",
    "#d1e5f0",
    "#f7f7f7",
    "#fddbc7",
    "#f4a582",
    "#d6604d",
    "#b2182b",
    "#67001f",
  ],
};

const OKABE_ITO = [
  "#E69F00",
  "#56B4E9",
  "#009E73",
  "#CC79A7",
  "#0072B2",
  "#D55E00",
  "#F0E442",
  "#999999",
];

function groupColor(g) {
  return OKABE_ITO[g % OKABE_ITO.length];
}

function hexRgb(hex) {
  const n = parseInt(hex.slice(1), 16);
  return [(n >> 16) & 255, (n >> 8) & 255, n & 255];
}

// A 256-entry lookup table of [r, g, b] for a scale name.
const lutCache = new Map();
function lut(name) {
  if (lutCache.has(name)) return lutCache.get(name);
  const stops = SCALES[name].map(hexRgb);
  const table = [];
  for (let i = 0; i < 256; i++) {
    const t = (i / 255) * (stops.length - 1);
    const k = Math.min(stops.length - 2, Math.floor(t));
    const f = t - k;
    table.push(stops[k].map((v, c) => Math.round(v + (stops[k + 1][c] - v) * f)));
  }
  lutCache.set(name, table);
  return table;
}

// Colour of value v in [lo, hi] on a scale, as [r, g, b].
function colorOf(name, v, lo, hi) {
  const table = lut(name);
  const t = hi > lo ? (v - lo) / (hi - lo) : 0.5;
  return table[Math.max(0, Math.min(255, Math.round(t * 255)))];
}
