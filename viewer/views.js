// views.js: drawing. Heatmaps (one canvas pixel per cell, scaled up without
// smoothing), bar and line charts, and the small DOM helpers every view
// uses. Token text only ever reaches the page through textContent or canvas
// fillText, never as HTML. The page's state and controls are in app.js.
"use strict";

// An element with attributes and children; strings become text nodes.
function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") e.className = v;
    else if (k === "text") e.textContent = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else if (v !== undefined && v !== null && v !== false) e.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children) if (c !== null && c !== undefined) e.append(c);
  return e;
}

function cssVar(name) {
  return getComputedStyle(document.documentElement).getPropertyValue(name).trim();
}

// Special tokens by name: the end-of-text control character of GlassLM's
// tokenizer, its unknown-character token, and the usual names of other
// tokenizers' special tokens.
const SPECIAL_TOKENS = {
  "\u0003": "\u27e8eos\u27e9",
  "\u0002": "\u27e8bos\u27e9",
  "\ufffd": "\u27e8unk\u27e9",
  "<s>": "\u27e8bos\u27e9",
  "</s>": "\u27e8eos\u27e9",
  "<unk>": "\u27e8unk\u27e9",
  "<|endoftext|>": "\u27e8eos\u27e9",
  "<|begin_of_text|>": "\u27e8bos\u27e9",
  "<|end_of_text|>": "\u27e8eos\u27e9",
  "<|eot_id|>": "\u27e8eot\u27e9",
};
function specialName(text) {
  return Object.prototype.hasOwnProperty.call(SPECIAL_TOKENS, text) ? SPECIAL_TOKENS[text] : null;
}

// Token text as shown in a chip or on an axis: a special token by name
// (\u27e8eos\u27e9), the space as \u2423, other control characters made
// visible; every other character, including < > & and quotes, exactly as it is.
function showText(text) {
  const name = specialName(String(text));
  if (name) return name;
  return String(text)
    .replace(/ /g, "\u2423")
    .replace(/\n/g, "\u21b5")
    .replace(/\t/g, "\u2192")
    .replace(/\r/g, "\u240d");
}

// ---- heatmaps -----------------------------------------------------------------

// Range of a matrix's finite values.
function matrixRange(mat) {
  let lo = Infinity,
    hi = -Infinity;
  for (let r = 0; r < mat.rows; r++)
    for (let c = 0; c < mat.cols; c++) {
      const v = mat.at(r, c);
      if (typeof v === "number" && Number.isFinite(v)) {
        if (v < lo) lo = v;
        if (v > hi) hi = v;
      }
    }
  if (lo === Infinity) return [0, 1];
  return [lo, hi];
}

// Round tick values covering [lo, hi]: steps of 1, 2 or 5 times a power of
// ten, about `count` of them.
function niceTicks(lo, hi, count) {
  if (!(hi > lo)) return [lo];
  const raw = (hi - lo) / Math.max(1, count);
  const p = Math.pow(10, Math.floor(Math.log10(raw)));
  const step = [1, 2, 5, 10].map((k) => k * p).find((s) => s >= raw * 0.999) || 10 * p;
  const out = [];
  for (let v = Math.ceil(lo / step - 1e-9) * step; v <= hi + step * 1e-9; v += step)
    out.push(Math.abs(v) < step * 1e-9 ? 0 : Number(v.toPrecision(12)));
  return out;
}

// Paints mat into a new offscreen canvas, one pixel per cell. null cells
// (masked) are grey, undefined cells (no data) the background; cells for
// which mat.outside(r, c) holds (keys behind a sliding window) are a grey of
// their own, which drawMap also hatches.
function heatImage(mat, scale, range) {
  const [lo, hi] = range;
  const img = new ImageData(Math.max(1, mat.cols), Math.max(1, mat.rows));
  const masked = hexRgb(cssVar("--masked") || "#bdbdbd");
  const windowMasked = hexRgb(cssVar("--window-masked") || "#6e6e6e");
  const bg = hexRgb(cssVar("--bg") || "#ffffff");
  const inf = hexRgb("#000000");
  for (let r = 0; r < mat.rows; r++)
    for (let c = 0; c < mat.cols; c++) {
      const v = mat.at(r, c);
      let rgb;
      if (mat.outside && mat.outside(r, c)) rgb = windowMasked;
      else if (v === null) rgb = masked;
      else if (v === undefined) rgb = bg;
      else if (!Number.isFinite(v)) rgb = inf;
      else rgb = colorOf(scale, v, lo, hi);
      const k = (r * mat.cols + c) * 4;
      img.data[k] = rgb[0];
      img.data[k + 1] = rgb[1];
      img.data[k + 2] = rgb[2];
      img.data[k + 3] = 255;
    }
  const src = document.createElement("canvas");
  src.width = img.width;
  src.height = img.height;
  src.getContext("2d").putImageData(img, 0, 0);
  return src;
}

// Every canvas is drawn at this many times the screen's pixels while an
// export (export.js) draws the view again for a PNG at twice the size.
let exportScale = 1;

// Sizes a canvas to cssWidth x cssHeight CSS pixels at the screen's
// resolution and returns its context, drawing in CSS pixels.
function sizeCanvas(canvas, cssWidth, cssHeight) {
  const dpr = (window.devicePixelRatio || 1) * exportScale;
  canvas.style.width = cssWidth + "px";
  canvas.style.height = cssHeight + "px";
  canvas.width = Math.round(cssWidth * dpr);
  canvas.height = Math.round(cssHeight * dpr);
  const ctx = canvas.getContext("2d");
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  return ctx;
}

// The cell under a mouse event on a heatmap canvas drawn over rows x cols.
function cellAt(canvas, ev, rows, cols, inset) {
  const rect = canvas.getBoundingClientRect();
  const i = inset || { left: 0, top: 0, width: rect.width, height: rect.height };
  const x = ev.clientX - rect.left - i.left,
    y = ev.clientY - rect.top - i.top;
  if (x < 0 || y < 0 || x >= i.width || y >= i.height) return null;
  return { r: Math.floor((y / i.height) * rows), c: Math.floor((x / i.width) * cols) };
}

// Every k-th label: all up to 32, then as few as keep them 32 or fewer, and
// never closer than the font allows.
function labelStride(n, cellSize, need) {
  return Math.max(1, Math.ceil(n / 32), Math.ceil(need / Math.max(0.01, cellSize)));
}

// A heatmap with token labels on both axes, fitted into width x height CSS
// pixels (height optional: then cells are square). Column labels are
// horizontal where they fit and turned upright where they do not. Returns
// the cells' inset inside the canvas (CSS pixels) for cellAt.
//   opts: {scale, range, rowLabel(r), colLabel(c), width, height, font,
//          maxCell, rowFloor (least height of a row of a one- or two-row
//          map), titles: {rows, cols} (axis names, optional)}
function drawMap(canvas, mat, opts) {
  const font = opts.font || 14;
  const mono = font + 'px "DejaVu Sans Mono", monospace';
  const measure = sizeCanvas(canvas, 1, 1);
  measure.font = mono;
  const clipText = (t) => (t.length > 10 ? t.slice(0, 9) + "\u2026" : t);
  const rowText = Array.from({ length: mat.rows }, (_, r) => clipText(opts.rowLabel(r)));
  const colText = Array.from({ length: mat.cols }, (_, c) => clipText(opts.colLabel(c)));
  const widest = (xs) => xs.reduce((m, t) => Math.max(m, measure.measureText(t).width), 0);
  const titleH = opts.titles ? font + 8 : 0;
  let left = Math.ceil(widest(rowText)) + 8 + titleH;
  if (opts.corner) {
    measure.font = "bold " + font + 'px "DejaVu Sans", sans-serif';
    left = Math.max(left, Math.ceil(measure.measureText(opts.corner).width) + 4);
    measure.font = mono;
  }
  const colW = Math.ceil(widest(colText));
  const maxCell = opts.maxCell || 64;
  let cellW = Math.max(1, Math.min(maxCell, (opts.width - left - 4) / Math.max(1, mat.cols)));
  const horizontal = cellW >= colW + 4 || labelStride(mat.cols, cellW, colW + 6) === 1;
  let top = (horizontal ? font + 6 : Math.min(colW, 90) + 8) + titleH;
  let cellH = cellW;
  if (opts.height) cellH = Math.max(1, Math.min(cellW, (opts.height - top - 4) / mat.rows));
  // A map of one or two rows (a decode step) is a band at least rowFloor
  // high, never a line of a few pixels, however many keys share its width.
  if (opts.rowFloor && mat.rows <= 2 && opts.height)
    cellH = Math.max(cellH, Math.min(opts.rowFloor, (opts.height - top - 4) / mat.rows));
  cellW = Math.floor(cellW * 100) / 100;
  const w = Math.round(cellW * mat.cols),
    h = Math.max(1, Math.round(cellH * mat.rows));
  const cssW = left + w + 4,
    cssH = top + h + 4;
  const ctx = sizeCanvas(canvas, cssW, cssH);
  ctx.fillStyle = cssVar("--bg");
  ctx.fillRect(0, 0, cssW, cssH);
  ctx.imageSmoothingEnabled = false;
  ctx.drawImage(heatImage(mat, opts.scale, opts.range), left, top, w, h);
  canvas.dataset.outside = String(hatchOutside(ctx, mat, left, top, w, h));
  ctx.fillStyle = cssVar("--fg");
  ctx.font = mono;
  const rowStep = labelStride(mat.rows, h / mat.rows, font);
  ctx.textAlign = "right";
  ctx.textBaseline = "middle";
  for (let r = 0; r < mat.rows; r += rowStep)
    ctx.fillText(rowText[r], left - 4, top + (r + 0.5) * (h / mat.rows));
  const cw = w / mat.cols;
  if (horizontal) {
    const colStep = labelStride(mat.cols, cw, colW + 6);
    ctx.textAlign = "center";
    ctx.textBaseline = "bottom";
    for (let c = 0; c < mat.cols; c += colStep)
      ctx.fillText(colText[c], left + (c + 0.5) * cw, top - 3);
  } else {
    const colStep = labelStride(mat.cols, cw, font);
    ctx.textAlign = "left";
    ctx.textBaseline = "middle";
    for (let c = 0; c < mat.cols; c += colStep) {
      ctx.save();
      ctx.translate(left + (c + 0.5) * cw, top - 4);
      ctx.rotate(-Math.PI / 2);
      ctx.fillText(colText[c], 0, 0);
      ctx.restore();
    }
  }
  if (opts.corner) {
    // The map's name in the empty corner between the two label axes.
    ctx.font = "bold " + font + 'px "DejaVu Sans", sans-serif';
    ctx.textAlign = "left";
    ctx.textBaseline = "top";
    ctx.fillText(opts.corner, 0, 0);
  }
  if (opts.titles) {
    ctx.font = font + 'px "DejaVu Sans", sans-serif';
    ctx.fillStyle = cssVar("--muted");
    ctx.textAlign = "left";
    ctx.textBaseline = "top";
    ctx.fillText(opts.titles.cols + " \u2192", left, 2);
    ctx.save();
    ctx.translate(2, top);
    ctx.rotate(Math.PI / 2);
    ctx.textBaseline = "bottom";
    ctx.fillText(opts.titles.rows + " \u2192", 0, 0);
    ctx.restore();
  }
  // What was labelled, for tests and for reading the page without pixels.
  canvas.dataset.inset = [left, top, w, h].join(",");
  canvas.dataset.font = String(font);
  canvas.dataset.rowStride = String(rowStep);
  canvas.dataset.colStride = String(
    horizontal ? labelStride(mat.cols, cw, colW + 6) : labelStride(mat.cols, cw, font),
  );
  canvas.dataset.colLabels = horizontal ? "horizontal" : "upright";
  canvas.dataset.range = opts.range.join(",");
  return { left, top, width: w, height: h };
}

// Hatches the cells of mat (drawn at left, top, w x h) for which
// mat.outside(r, c) holds, so that keys behind a sliding window differ from
// the causal mask's grey by more than a shade. Returns how many there are.
function hatchOutside(ctx, mat, left, top, w, h) {
  if (!mat.outside) return 0;
  const cw = w / mat.cols,
    ch = h / mat.rows;
  let n = 0;
  ctx.save();
  ctx.beginPath();
  for (let r = 0; r < mat.rows; r++)
    for (let c = 0; c < mat.cols; c++)
      if (mat.outside(r, c)) {
        n++;
        ctx.rect(left + c * cw, top + r * ch, cw, ch);
      }
  ctx.clip();
  ctx.strokeStyle = cssVar("--bg");
  ctx.lineWidth = 2;
  ctx.beginPath();
  for (let d = -h; d < w; d += 8) {
    ctx.moveTo(left + d, top + h);
    ctx.lineTo(left + d + h, top);
  }
  ctx.stroke();
  ctx.restore();
  return n;
}

// A colour bar from lo to hi with numbered round ticks under it; `label`
// says what the numbers are. diverging scales put 0 in the middle.
function drawLegend(container, scale, lo, hi, label, note) {
  const width = 240,
    barH = 16,
    font = 14;
  const c = el("canvas", { "aria-hidden": "true", class: "legend-bar" });
  const ctx = sizeCanvas(c, width + 40, barH + font + 10);
  const table = lut(scale);
  for (let i = 0; i < width; i++) {
    const [r, g, b] = table[Math.round((i / (width - 1)) * 255)];
    ctx.fillStyle = "rgb(" + r + "," + g + "," + b + ")";
    ctx.fillRect(20 + i, 0, 1, barH);
  }
  ctx.strokeStyle = cssVar("--line");
  ctx.strokeRect(20.5, 0.5, width - 1, barH - 1);
  ctx.fillStyle = cssVar("--fg");
  ctx.strokeStyle = cssVar("--fg");
  ctx.font = font + 'px "DejaVu Sans", sans-serif';
  ctx.textAlign = "center";
  ctx.textBaseline = "top";
  const ticks = niceTicks(lo, hi, 4);
  for (const v of ticks) {
    const x = 20 + ((v - lo) / (hi - lo || 1)) * (width - 1);
    ctx.beginPath();
    ctx.moveTo(x, barH - 4);
    ctx.lineTo(x, barH + 3);
    ctx.stroke();
    ctx.fillText(fmt(v), x, barH + 5);
  }
  container.replaceChildren(
    el("span", { class: "legend-label", text: label }),
    c,
    el("span", { class: "hint", text: note || t("legend.masked") }),
  );
  container.dataset.lo = String(lo);
  container.dataset.hi = String(hi);
  container.dataset.ticks = ticks.join(",");
}

// Every number the page shows, in one format: 4 significant digits, in
// scientific notation (3 digits) under 1e-3 and from 1e5 up; null is a
// masked score.
function fmt(v) {
  if (v === null) return t("fmt.masked");
  if (v === undefined) return "-";
  if (typeof v !== "number") return String(v);
  if (!Number.isFinite(v)) return v > 0 ? "inf" : v < 0 ? "-inf" : "nan";
  if (v === 0) return "0";
  const a = Math.abs(v);
  if (a < 1e-3 || a >= 1e5)
    return v
      .toExponential(2)
      .replace(/\.?0+e/, "e")
      .replace("e+", "e");
  return String(Number(v.toPrecision(4)));
}

// ---- charts -------------------------------------------------------------------

function setupChart(canvas) {
  const rect = canvas.getBoundingClientRect();
  const w = Math.max(300, Math.round(rect.width || 900)),
    h = Math.max(160, Math.round(rect.height || 260));
  const ctx = sizeCanvas(canvas, w, h);
  canvas.style.width = "";
  canvas.style.height = "";
  ctx.fillStyle = cssVar("--bg");
  ctx.fillRect(0, 0, w, h);
  ctx.font = '14px "DejaVu Sans", sans-serif';
  return { ctx, w, h };
}

// Bytes as round ticks: the unit (B, KiB or MiB) chosen from the largest
// value, ticks at 1, 2 or 5 times a power of ten of that unit.
function byteAxis(max) {
  const unit = max >= 1024 * 1024 ? ["MiB", 1024 * 1024] : max >= 1024 ? ["KiB", 1024] : ["B", 1];
  const ticks = niceTicks(0, max / unit[1], 4);
  const step = ticks.length > 1 ? ticks[1] - ticks[0] : 1;
  while (ticks[ticks.length - 1] * unit[1] < max)
    ticks.push(Number((ticks[ticks.length - 1] + step).toPrecision(12)));
  return { unit: unit[0], scale: unit[1], ticks };
}

// Grouped bars: categories along x, one bar per series. series: [{name,
// color, values, outline}]; highlight: index of the current category;
// opts: {yTitle, xTitle, bytes (round byte ticks), marks: [{at, text}]
// (dashed vertical lines before a category, e.g. window resets)}.
function drawBars(canvas, labels, series, highlight, yFormat, opts) {
  opts = opts || {};
  const { ctx, w, h } = setupChart(canvas);
  const left = 86,
    right = 10,
    top = 34,
    bottom = opts.xTitle ? 52 : 34;
  const max = Math.max(0, ...series.flatMap((s) => s.values)) || 1;
  let ticks, scale, unit;
  if (opts.bytes) ({ ticks, scale, unit } = byteAxis(max));
  else {
    ticks = niceTicks(0, max, 4);
    while (ticks[ticks.length - 1] < max)
      ticks.push(2 * ticks[ticks.length - 1] - ticks[ticks.length - 2]);
    scale = 1;
  }
  const yMax = ticks[ticks.length - 1] * scale || 1;
  const n = labels.length,
    slot = (w - left - right) / Math.max(1, n);
  const bw = Math.max(1, (slot * 0.8) / series.length);
  const Y = (v) => h - bottom - ((h - top - bottom) * v) / yMax;
  if (highlight !== null && highlight !== undefined) {
    ctx.fillStyle = cssVar("--current");
    ctx.fillRect(left + highlight * slot, top, slot, h - top - bottom);
  }
  ctx.strokeStyle = cssVar("--line");
  ctx.fillStyle = cssVar("--muted");
  ctx.textAlign = "right";
  ctx.textBaseline = "middle";
  for (const t of ticks) {
    const y = Y(t * scale);
    ctx.beginPath();
    ctx.moveTo(left, y);
    ctx.lineTo(w - right, y);
    ctx.stroke();
    ctx.fillText(opts.bytes ? fmt(t) + " " + unit : yFormat(t), left - 6, y);
  }
  series.forEach((s, k) => {
    s.values.forEach((v, i) => {
      const bh = ((h - top - bottom) * v) / yMax;
      const x = left + i * slot + slot * 0.1 + k * bw,
        y = h - bottom - bh;
      if (s.outline) {
        ctx.strokeStyle = s.color;
        ctx.lineWidth = 2;
        ctx.strokeRect(x + 1, y + 1, bw - 2, Math.max(0, bh - 1));
        ctx.lineWidth = 1;
      } else {
        ctx.fillStyle = s.color;
        ctx.fillRect(x, y, bw, bh);
      }
    });
  });
  ctx.fillStyle = cssVar("--fg");
  ctx.textAlign = "center";
  ctx.textBaseline = "top";
  const widestLabel = labels.reduce((m, l) => Math.max(m, ctx.measureText(l).width), 0);
  const every = Math.max(1, Math.ceil((widestLabel + 8) / slot));
  labels.forEach((l, i) => {
    if (i % every === 0) ctx.fillText(l, left + (i + 0.5) * slot, h - bottom + 6);
  });
  for (const m of opts.marks || []) {
    const x = left + m.at * slot;
    ctx.save();
    ctx.strokeStyle = cssVar("--fg");
    ctx.setLineDash([5, 4]);
    ctx.beginPath();
    ctx.moveTo(x, top - 4);
    ctx.lineTo(x, h - bottom);
    ctx.stroke();
    ctx.restore();
  }
  if (opts.xTitle) ctx.fillText(opts.xTitle, (left + w - right) / 2, h - 20);
  if (opts.yTitle) {
    ctx.save();
    ctx.translate(14, (top + h - bottom) / 2);
    ctx.rotate(-Math.PI / 2);
    ctx.textBaseline = "middle";
    ctx.fillText(opts.yTitle + (opts.bytes ? " (" + unit + ")" : ""), 0, 0);
    ctx.restore();
  }
  let x = left;
  ctx.textAlign = "left";
  ctx.textBaseline = "middle";
  for (const s of series) {
    if (s.outline) {
      ctx.strokeStyle = s.color;
      ctx.lineWidth = 2;
      ctx.strokeRect(x, 8, 14, 14);
      ctx.lineWidth = 1;
    } else {
      ctx.fillStyle = s.color;
      ctx.fillRect(x, 8, 14, 14);
    }
    ctx.fillStyle = cssVar("--fg");
    ctx.fillText(s.name, x + 20, 15);
    x += 34 + ctx.measureText(s.name).width;
  }
}

// Colours and dashes of line charts: blue, vermillion, green, purple of
// Okabe-Ito (no yellow: it vanishes on a white projector screen).
const LINE_COLORS = ["#0072B2", "#D55E00", "#009E73", "#CC79A7"];
const LINE_DASHES = [[], [10, 5], [3, 3], [12, 4, 3, 4]];

// Line chart of series [{name, points: [[x, y]]}]; opts.log: logarithmic y
// axis (positive values only), opts.yTitle.
function drawLines(canvas, series, xLabel, emptyText, opts) {
  opts = opts || {};
  const { ctx, w, h } = setupChart(canvas);
  const log = !!opts.log;
  const pts = series.flatMap((s) => s.points).filter((p) => !log || p[1] > 0);
  if (pts.length === 0) {
    ctx.fillStyle = cssVar("--muted");
    ctx.fillText(emptyText, 20, h / 2);
    return null;
  }
  const left = 80,
    right = 24,
    top = 36,
    bottom = 48;
  let x0 = Math.min(...pts.map((p) => p[0])),
    x1 = Math.max(...pts.map((p) => p[0]));
  let y0 = Math.min(...pts.map((p) => p[1])),
    y1 = Math.max(...pts.map((p) => p[1]));
  if (x1 === x0) x1 = x0 + 1;
  let yTicks;
  const f = log ? Math.log10 : (v) => v;
  if (log) {
    // The axis runs over whole decades, ticks at 1 (and 2 and 5 when there
    // are few decades) times each power of ten.
    const lo = Math.floor(Math.log10(y0)),
      hi = Math.max(lo + 1, Math.ceil(Math.log10(y1)));
    yTicks = [];
    for (let e = lo; e <= hi; e++)
      for (const k of hi - lo > 3 ? [1] : [1, 2, 5]) {
        const v = Number((k * Math.pow(10, e)).toPrecision(6));
        if (v <= Math.pow(10, hi) * 1.0001) yTicks.push(v);
      }
    y0 = Math.pow(10, lo);
    y1 = Math.pow(10, hi);
  } else {
    if (y1 === y0) {
      y1 += 0.5;
      y0 -= 0.5;
    }
    yTicks = niceTicks(y0, y1, 4);
    const step = yTicks.length > 1 ? yTicks[1] - yTicks[0] : 1;
    y0 = Math.min(y0, yTicks[0]);
    if (yTicks[yTicks.length - 1] < y1)
      yTicks.push(Number((yTicks[yTicks.length - 1] + step).toPrecision(12)));
    y1 = yTicks[yTicks.length - 1];
    y0 = Math.min(y0, yTicks[0]);
  }
  const X = (x) => left + ((x - x0) / (x1 - x0)) * (w - left - right);
  const Y = (y) => h - bottom - ((f(y) - f(y0)) / (f(y1) - f(y0) || 1)) * (h - top - bottom);
  ctx.strokeStyle = cssVar("--line");
  ctx.fillStyle = cssVar("--muted");
  ctx.textAlign = "right";
  ctx.textBaseline = "middle";
  for (const v of yTicks) {
    ctx.beginPath();
    ctx.moveTo(left, Y(v));
    ctx.lineTo(w - right, Y(v));
    ctx.stroke();
    ctx.fillText(fmt(v), left - 6, Y(v));
  }
  ctx.textAlign = "center";
  ctx.textBaseline = "top";
  for (const v of niceTicks(x0, x1, 6)) ctx.fillText(fmt(v), X(v), h - bottom + 6);
  ctx.fillStyle = cssVar("--fg");
  ctx.fillText(xLabel, (left + w) / 2, h - 22);
  if (opts.yTitle) {
    ctx.save();
    ctx.translate(16, (top + h - bottom) / 2);
    ctx.rotate(-Math.PI / 2);
    ctx.textBaseline = "middle";
    ctx.fillText(opts.yTitle + (log ? t("chart.log") : ""), 0, 0);
    ctx.restore();
  }
  let lx = left;
  series.forEach((s, k) => {
    ctx.strokeStyle = LINE_COLORS[k % LINE_COLORS.length];
    ctx.lineWidth = 3;
    ctx.setLineDash(LINE_DASHES[k % LINE_DASHES.length]);
    ctx.beginPath();
    let first = true;
    for (const [x, y] of s.points) {
      if (log && !(y > 0)) continue;
      if (first) ctx.moveTo(X(x), Y(y));
      else ctx.lineTo(X(x), Y(y));
      first = false;
    }
    ctx.stroke();
    ctx.beginPath();
    ctx.moveTo(lx, 16);
    ctx.lineTo(lx + 30, 16);
    ctx.stroke();
    ctx.setLineDash([]);
    ctx.lineWidth = 1;
    ctx.fillStyle = cssVar("--fg");
    ctx.textAlign = "left";
    ctx.textBaseline = "middle";
    ctx.fillText(s.name, lx + 36, 16);
    lx += 60 + ctx.measureText(s.name).width;
  });
  return { yTicks, log };
}
