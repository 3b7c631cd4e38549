// export.js: PNG export of the view on the screen, titled with the prompt,
// the step, and the layer and head when one is chosen.
"use strict";

// The title line of an exported image: the view, the prompt, the step, and
// the layer and head when one is chosen.
function exportTitle() {
  const tab = document.querySelector("[role=tab][aria-selected=true]").textContent.trim();
  if (!state.trace) return t("page.title") + " \u2014 " + tab;
  const d = state.trace.doc;
  const prompt = d.steps[0].kind === "prefill" ? d.steps[0].tokens.map((t) => t.text).join("") : "";
  let where = "";
  const p = state.pres;
  if (state.tab === "attention" && state.present)
    where =
      p.head !== null
        ? t("export.layer_head", { layer: p.layer, head: p.head })
        : t("export.layer_group", {
            layer: p.layer,
            g: p.group,
            heads: d.head_groups[p.group].join(", "),
          });
  else if (state.tab === "attention" && state.zoom)
    where = t("export.layer_head", { layer: state.zoom.layer, head: state.zoom.head });
  else if (state.tab === "qk")
    where = t("export.layer_head", { layer: $("qk-layer").value, head: $("qk-head").value });
  else if (state.tab === "attention") where = t("export.all_heads");
  return (
    t("export.title", {
      tab,
      prompt: JSON.stringify(prompt),
      step: state.step,
      label: stepLabels(d)[state.step],
    }) +
    where +
    (state.tab === "attention" ? ", " + modeName(state.mode) : "")
  );
}

// The title split into lines that fit `width` at the context's font.
function titleLines(ctx, title, width) {
  const lines = [""];
  for (const word of title.split(" ")) {
    const line = lines[lines.length - 1];
    const next = line ? line + " " + word : word;
    if (line && ctx.measureText(next).width > width) lines.push(word);
    else lines[lines.length - 1] = next;
  }
  return lines;
}

// The rectangle e is seen through: its own, cut by every ancestor (up to
// `root`) that clips what overflows it; null when nothing of it shows.
function seenRect(e, root, view) {
  let r = e.getBoundingClientRect();
  let x0 = Math.max(r.left, view.left),
    y0 = Math.max(r.top, view.top),
    x1 = Math.min(r.right, view.right),
    y1 = Math.min(r.bottom, view.bottom);
  for (let a = e.parentElement; a && a !== root.parentElement; a = a.parentElement) {
    if (getComputedStyle(a).overflow === "visible") continue;
    const b = a.getBoundingClientRect();
    [x0, y0, x1, y1] = [
      Math.max(x0, b.left),
      Math.max(y0, b.top),
      Math.min(x1, b.right),
      Math.min(y1, b.bottom),
    ];
  }
  return x1 > x0 && y1 > y0 ? { x0, y0, x1, y1 } : null;
}

// Paints a text node as the page set it: character by character the page's
// boxes say where each line starts and what it holds (spaces the page
// collapsed have no box and are left out).
function paintText(ctx, node, at) {
  const text = node.textContent,
    range = document.createRange();
  let line = null;
  const flush = () => {
    if (!line || !line.text.trim()) return;
    const [lx, ly] = at(line.left, line.top);
    ctx.fillText(line.text, lx, ly + line.height / 2);
  };
  for (let i = 0; i < text.length; i++) {
    range.setStart(node, i);
    range.setEnd(node, i + 1);
    const box = range.getClientRects()[0];
    if (!box) continue;
    if (!line || Math.abs(box.top - line.top) > 2 || box.left < line.right - 1) {
      flush();
      line = { top: box.top, left: box.left, height: box.height, text: "" };
    }
    line.text += text[i];
    line.right = box.right;
  }
  flush();
}

// Whether the page shows e: not hidden, not in a closed <details> (its
// summary aside), not the 1-pixel box of a visually hidden label.
function shown(e) {
  if (!e.checkVisibility({ visibilityProperty: true })) return false;
  if (e.closest(".visually-hidden")) return false;
  const d = e.closest("details");
  return !d || d.open || e === d || Boolean(e.closest("summary"));
}

// Paints one element where the page shows it: background, border, canvas,
// SVG, a field's value, its own text nodes.
async function paintElement(ctx, e, at) {
  const r = e.getBoundingClientRect();
  const [x, y] = at(r.left, r.top);
  const cs = getComputedStyle(e);
  if (cs.backgroundColor && cs.backgroundColor !== "rgba(0, 0, 0, 0)") {
    // Snapped to whole screen pixels, as the browser paints it.
    const [x0, y0] = at(Math.round(r.left), Math.round(r.top));
    ctx.fillStyle = cs.backgroundColor;
    ctx.fillRect(
      x0,
      y0,
      Math.round(r.right) - Math.round(r.left),
      Math.round(r.bottom) - Math.round(r.top),
    );
  }
  const bw = parseFloat(cs.borderTopWidth);
  if (bw > 0 && cs.borderTopStyle !== "none") {
    ctx.strokeStyle = cs.borderTopColor;
    ctx.lineWidth = bw;
    ctx.strokeRect(x + bw / 2, y + bw / 2, r.width - bw, r.height - bw);
  }
  // Canvases where the browser puts them: snapped to whole screen pixels.
  const [sx, sy] = at(Math.round(r.left), Math.round(r.top));
  if (e.tagName === "CANVAS") ctx.drawImage(e, sx, sy, r.width, r.height);
  else if (e.tagName === "svg") {
    const xml = new XMLSerializer().serializeToString(e);
    const img = new Image();
    img.src = "data:image/svg+xml;charset=utf-8," + encodeURIComponent(xml);
    await img.decode();
    ctx.drawImage(img, sx, sy, r.width, r.height);
  }
  ctx.font = cs.fontWeight + " " + cs.fontSize + " " + cs.fontFamily;
  ctx.fillStyle = cs.color;
  ctx.textBaseline = "middle";
  ctx.textAlign = "left";
  if (e.tagName === "SELECT" || (e.tagName === "INPUT" && /text|number/.test(e.type))) {
    const text = e.tagName === "SELECT" ? (e.options[e.selectedIndex] || {}).text : e.value;
    ctx.fillText(text || "", x + parseFloat(cs.paddingLeft) + bw, y + r.height / 2);
  } else if (e.tagName === "INPUT" && (e.type === "radio" || e.type === "checkbox")) {
    ctx.strokeStyle = cs.color;
    ctx.lineWidth = 1;
    ctx.beginPath();
    if (e.type === "radio") ctx.arc(x + r.width / 2, y + r.height / 2, r.width / 2 - 0.5, 0, 7);
    else ctx.rect(x + 0.5, y + 0.5, r.width - 1, r.height - 1);
    ctx.stroke();
    if (e.checked) {
      ctx.beginPath();
      if (e.type === "radio") ctx.arc(x + r.width / 2, y + r.height / 2, r.width / 4, 0, 7);
      else ctx.rect(x + 3, y + 3, r.width - 6, r.height - 6);
      ctx.fill();
    }
  }
  if (e.tagName === "SELECT") {
    // The drop-down's chevron.
    const cx = x + r.width - 14,
      cy = y + r.height / 2;
    ctx.lineWidth = 1.5;
    ctx.beginPath();
    ctx.moveTo(cx - 4, cy - 2);
    ctx.lineTo(cx, cy + 2);
    ctx.lineTo(cx + 4, cy - 2);
    ctx.stroke();
  }
  if (e.tagName === "SUMMARY") {
    // The disclosure triangle the browser draws before a summary.
    const open = e.parentElement.open;
    ctx.fillText(open ? "\u25be" : "\u25b8", x, y + r.height / 2);
  }
  if (e.tagName === "OPTION" || e.tagName === "SELECT") return;
  for (const node of e.childNodes)
    if (node.nodeType === Node.TEXT_NODE && node.textContent.trim()) paintText(ctx, node, at);
}

// Export: exactly the part of the current view that is on the screen, at
// twice the screen's pixels, under its title (prompt, step, layer, head).
// The view is drawn again with its canvases at 2x, then every element that
// shows is painted where the page lays it out, clipped as the page clips it;
// hidden elements (a closed explanation, another tab) are not painted.
async function exportPng() {
  const panel = $("panel-" + state.tab);
  const k = 2;
  exportScale = k;
  renderTab();
  try {
    const box = panel.getBoundingClientRect();
    const view = {
      left: Math.max(0, box.left),
      top: Math.max(0, box.top),
      right: Math.min(document.documentElement.clientWidth, box.right),
      bottom: Math.min(window.innerHeight, box.bottom),
    };
    const W = Math.max(1, Math.round(view.right - view.left));
    const title = exportTitle();
    const probe = document.createElement("canvas").getContext("2d");
    probe.font = 'bold 18px "DejaVu Sans", sans-serif';
    const lines = titleLines(probe, title, W - 12);
    const titleH = 10 + lines.length * 24;
    const H = titleH + Math.max(1, Math.round(view.bottom - view.top));
    const out = document.createElement("canvas");
    out.width = W * k;
    out.height = H * k;
    const ctx = out.getContext("2d");
    ctx.scale(k, k);
    ctx.fillStyle = cssVar("--bg");
    ctx.fillRect(0, 0, W, H);
    ctx.fillStyle = cssVar("--fg");
    ctx.font = probe.font;
    ctx.textBaseline = "top";
    lines.forEach((line, i) => ctx.fillText(line, 6, 6 + i * 24));
    const at = (x, y) => [x - view.left, y - view.top + titleH];
    for (const e of [panel, ...panel.querySelectorAll("*")]) {
      if (e.closest("svg") && e.tagName !== "svg") continue;
      if (!shown(e)) continue;
      const seen = seenRect(e, panel, view);
      if (!seen) continue;
      ctx.save();
      const [cx, cy] = at(seen.x0, seen.y0);
      ctx.beginPath();
      ctx.rect(cx, cy, seen.x1 - seen.x0, seen.y1 - seen.y0);
      ctx.clip();
      await paintElement(ctx, e, at);
      ctx.restore();
    }
    const blob = await new Promise((resolve) => out.toBlob(resolve, "image/png"));
    const url = URL.createObjectURL(blob);
    const a = el("a", {
      href: url,
      download:
        "glassllm-" +
        state.tab +
        (state.trace ? "-step" + state.step : "") +
        (state.tab === "attention" && state.zoom
          ? "-layer" + state.zoom.layer + "-head" + state.zoom.head
          : "") +
        ".png",
    });
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10000);
    return { width: out.width, height: out.height, bytes: blob.size, title, titleH, blob };
  } finally {
    exportScale = 1;
    renderTab();
  }
}
