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

// Token text as shown in a chip: control characters made visible (the
// end-of-text token U+0003 as the symbol for END OF TEXT); every other
// character, including < > & and quotes, exactly as it is.
function showText(text) {
  return text
    .replace(/\n/g, "\u21b5")
    .replace(/\t/g, "\u2192")
    .replace(/\r/g, "\u240d")
    .replace(/\u0003/g, "\u2403");
}

// Numbers as the trace wrote them: JavaScript prints the shortest text that
// reads back as the same double, which is the JSON's text.
function showValue(v) {
  if (v === null) return "masked (-inf)";
  if (v === undefined) return "-";
  return String(v);
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

// Draws mat into canvas at cssWidth x cssHeight CSS pixels. null cells
// (masked) are grey, undefined cells (no data) the background.
function drawHeatmap(canvas, mat, scale, range, cssWidth, cssHeight) {
  const [lo, hi] = range;
  const img = new ImageData(Math.max(1, mat.cols), Math.max(1, mat.rows));
  const masked = hexRgb(cssVar("--masked") || "#bdbdbd");
  const bg = hexRgb(cssVar("--bg") || "#ffffff");
  const inf = hexRgb("#000000");
  for (let r = 0; r < mat.rows; r++)
    for (let c = 0; c < mat.cols; c++) {
      const v = mat.at(r, c);
      let rgb;
      if (v === null) rgb = masked;
      else if (v === undefined) rgb = bg;
      else if (!Number.isFinite(v)) rgb = inf;
      else rgb = colorOf(scale, v, lo, hi);
      const k = (r * mat.cols + c) * 4;
      img.data[k] = rgb[0];
      img.data[k + 1] = rgb[1];
      img.data[k + 2] = rgb[2];
      img.data[k + 3] = 255;
    }
  const dpr = window.devicePixelRatio || 1;
  canvas.style.width = cssWidth + "px";
  canvas.style.height = cssHeight + "px";
  canvas.width = Math.round(cssWidth * dpr);
  canvas.height = Math.round(cssHeight * dpr);
  const src = document.createElement("canvas");
  src.width = img.width;
  src.height = img.height;
  src.getContext("2d").putImageData(img, 0, 0);
  const ctx = canvas.getContext("2d");
  ctx.imageSmoothingEnabled = false;
  ctx.drawImage(src, 0, 0, canvas.width, canvas.height);
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

// A colour bar from lo to hi.
function drawLegend(container, scale, lo, hi, label) {
  container.replaceChildren();
  const c = el("canvas", { width: 256, height: 14, "aria-hidden": "true" });
  const ctx = c.getContext("2d");
  for (let i = 0; i < 256; i++) {
    const [r, g, b] = lut(scale)[i];
    ctx.fillStyle = "rgb(" + r + "," + g + "," + b + ")";
    ctx.fillRect(i, 0, 1, 14);
  }
  container.append(
    el("span", { text: label }),
    el("span", { text: fmt(lo) }),
    c,
    el("span", { text: fmt(hi) }),
    el("span", { class: "hint", text: "grey: masked (key after the query)" }),
  );
}

function fmt(v) {
  if (!Number.isFinite(v)) return String(v);
  const a = Math.abs(v);
  if (a !== 0 && (a < 1e-3 || a >= 1e5)) return v.toExponential(2);
  return String(Math.round(v * 1000) / 1000);
}

// A labelled heatmap for the enlarged view: token labels on both axes.
// Returns the inset of the cells inside the canvas (CSS pixels) for cellAt.
function drawLabelledHeatmap(canvas, mat, scale, range, rowLabels, colLabels, maxWidth) {
  const left = 110,
    top = 60;
  const cell = Math.max(
    4,
    Math.min(40, Math.floor((maxWidth - left - 10) / Math.max(1, mat.cols))),
  );
  const w = cell * mat.cols,
    h = Math.max(cell, Math.min(cell * mat.rows, 900));
  const cssW = left + w + 10,
    cssH = top + h + 10;
  const dpr = window.devicePixelRatio || 1;
  canvas.width = Math.round(cssW * dpr);
  canvas.height = Math.round(cssH * dpr);
  canvas.style.width = cssW + "px";
  canvas.style.height = cssH + "px";
  const tmp = document.createElement("canvas");
  drawHeatmap(tmp, mat, scale, range, w, h);
  const ctx = canvas.getContext("2d");
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.fillStyle = cssVar("--bg");
  ctx.fillRect(0, 0, cssW, cssH);
  ctx.imageSmoothingEnabled = false;
  ctx.drawImage(tmp, left, top, w, h);
  ctx.fillStyle = cssVar("--fg");
  const font = Math.max(9, Math.min(16, cell - 2));
  ctx.font = font + 'px "DejaVu Sans Mono", monospace';
  const rh = h / Math.max(1, mat.rows);
  if (rh >= 9) {
    ctx.textAlign = "right";
    ctx.textBaseline = "middle";
    for (let r = 0; r < mat.rows; r++) ctx.fillText(rowLabels(r), left - 4, top + (r + 0.5) * rh);
  }
  if (cell >= 9) {
    ctx.save();
    ctx.textAlign = "left";
    ctx.textBaseline = "middle";
    for (let c = 0; c < mat.cols; c++) {
      ctx.save();
      ctx.translate(left + (c + 0.5) * cell, top - 4);
      ctx.rotate(-Math.PI / 3);
      ctx.fillText(colLabels(c), 0, 0);
      ctx.restore();
    }
    ctx.restore();
  }
  ctx.font = '13px "DejaVu Sans", sans-serif';
  ctx.textAlign = "left";
  ctx.textBaseline = "top";
  ctx.fillStyle = cssVar("--muted");
  ctx.fillText("keys \u2192", 4, 4);
  ctx.fillText("queries \u2193", 4, 22);
  return { left, top, width: w, height: h };
}

// ---- charts -------------------------------------------------------------------

function setupChart(canvas) {
  const dpr = window.devicePixelRatio || 1;
  const rect = canvas.getBoundingClientRect();
  const w = Math.max(300, Math.round(rect.width || 900)),
    h = Math.max(160, Math.round(rect.height || 260));
  canvas.width = w * dpr;
  canvas.height = h * dpr;
  const ctx = canvas.getContext("2d");
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.fillStyle = cssVar("--bg");
  ctx.fillRect(0, 0, w, h);
  ctx.font = '14px "DejaVu Sans", sans-serif';
  return { ctx, w, h };
}

// Grouped bars: categories along x, one bar per series. series: [{name,
// color, values, outline}]; highlight: index of the current category.
function drawBars(canvas, labels, series, highlight, yFormat) {
  const { ctx, w, h } = setupChart(canvas);
  const left = 90,
    right = 10,
    top = 30,
    bottom = 34;
  const max = Math.max(0, ...series.flatMap((s) => s.values)) || 1;
  const n = labels.length,
    slot = (w - left - right) / Math.max(1, n);
  const bw = Math.max(1, (slot * 0.8) / series.length);
  ctx.strokeStyle = cssVar("--line");
  ctx.fillStyle = cssVar("--muted");
  ctx.textAlign = "right";
  ctx.textBaseline = "middle";
  for (let k = 0; k <= 4; k++) {
    const v = (max * k) / 4,
      y = h - bottom - ((h - top - bottom) * k) / 4;
    ctx.beginPath();
    ctx.moveTo(left, y);
    ctx.lineTo(w - right, y);
    ctx.stroke();
    ctx.fillText(yFormat(v), left - 6, y);
  }
  if (highlight !== null && highlight !== undefined) {
    ctx.fillStyle = cssVar("--current");
    ctx.fillRect(left + highlight * slot, top, slot, h - top - bottom);
  }
  series.forEach((s, k) => {
    s.values.forEach((v, i) => {
      const bh = ((h - top - bottom) * v) / max;
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
  const every = Math.ceil(n / Math.max(1, Math.floor((w - left) / 40)));
  labels.forEach((l, i) => {
    if (i % every === 0) ctx.fillText(l, left + (i + 0.5) * slot, h - bottom + 6);
  });
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
    x += 30 + ctx.measureText(s.name).width;
  }
}

// Line chart of series [{name, points: [[x, y]]}].
function drawLines(canvas, series, xLabel, emptyText) {
  const { ctx, w, h } = setupChart(canvas);
  const pts = series.flatMap((s) => s.points);
  if (pts.length === 0) {
    ctx.fillStyle = cssVar("--muted");
    ctx.fillText(emptyText, 20, h / 2);
    return;
  }
  const left = 70,
    right = 14,
    top = 30,
    bottom = 40;
  let x0 = Math.min(...pts.map((p) => p[0])),
    x1 = Math.max(...pts.map((p) => p[0]));
  let y0 = Math.min(...pts.map((p) => p[1])),
    y1 = Math.max(...pts.map((p) => p[1]));
  if (x1 === x0) x1 = x0 + 1;
  if (y1 === y0) {
    y1 += 0.5;
    y0 -= 0.5;
  }
  const X = (x) => left + ((x - x0) / (x1 - x0)) * (w - left - right);
  const Y = (y) => h - bottom - ((y - y0) / (y1 - y0)) * (h - top - bottom);
  ctx.strokeStyle = cssVar("--line");
  ctx.fillStyle = cssVar("--muted");
  ctx.textAlign = "right";
  ctx.textBaseline = "middle";
  for (let k = 0; k <= 4; k++) {
    const v = y0 + ((y1 - y0) * k) / 4;
    ctx.beginPath();
    ctx.moveTo(left, Y(v));
    ctx.lineTo(w - right, Y(v));
    ctx.stroke();
    ctx.fillText(fmt(v), left - 6, Y(v));
  }
  ctx.textAlign = "center";
  ctx.textBaseline = "top";
  for (let k = 0; k <= 5; k++) {
    const v = x0 + ((x1 - x0) * k) / 5;
    ctx.fillText(fmt(v), X(v), h - bottom + 6);
  }
  ctx.fillText(xLabel, (left + w) / 2, h - 16);
  const dashes = [[], [8, 4], [2, 3], [10, 3, 2, 3]];
  let lx = left;
  series.forEach((s, k) => {
    const color = OKABE_ITO[(k + 4) % OKABE_ITO.length];
    ctx.strokeStyle = color;
    ctx.lineWidth = 2.5;
    ctx.setLineDash(dashes[k % dashes.length]);
    ctx.beginPath();
    s.points.forEach(([x, y], i) => (i ? ctx.lineTo(X(x), Y(y)) : ctx.moveTo(X(x), Y(y))));
    ctx.stroke();
    ctx.beginPath();
    ctx.moveTo(lx, 15);
    ctx.lineTo(lx + 26, 15);
    ctx.stroke();
    ctx.setLineDash([]);
    ctx.lineWidth = 1;
    ctx.fillStyle = cssVar("--fg");
    ctx.textAlign = "left";
    ctx.textBaseline = "middle";
    ctx.fillText(s.name, lx + 32, 15);
    lx += 50 + ctx.measureText(s.name).width;
  });
}
