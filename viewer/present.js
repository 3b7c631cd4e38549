// present.js: presentation mode's Attention view, for a class in front of a
// projector. One view at a time, sized to the window: one layer's K/V group
// (its query heads side by side, or one above the other when that makes the
// cells larger) or one head; every query and key labelled at 20 px where the
// cells leave room for it, else every n-th with the rest in the hover
// readout. Keys: ↑ ↓ layer, G group, H head, ← → step (app.js).
"use strict";

const PRESENT_FONT = 20; // px of every label on a presented map
const PRESENT_ROW_FLOOR = 48; // px: a one-row map is a band, never a line

// The state's presentation part, taken from what the grid showed.
function startPresenting() {
  const t = state.trace;
  if (!t) return;
  const z = state.zoom;
  const layers = shownLayers();
  state.pres = {
    layer: z ? z.layer : layers.length ? layers[0] : t.layers[0],
    head: z ? z.head : null,
    group: z ? t.groupOf.get(z.head) : 0,
  };
}

// The heads presented now: one, or the K/V group's.
function presentedHeads() {
  const d = state.trace.doc;
  if (state.pres.head !== null) return [state.pres.head];
  return d.head_groups[state.pres.group] || d.head_groups[0];
}

// Moves through layers (dl), K/V groups (dg) or heads (dh).
function presentMove(dl, dg, dh) {
  const t = state.trace,
    d = t.doc,
    p = state.pres;
  const wrap = (i, n) => ((i % n) + n) % n;
  if (dl) {
    const i = t.layers.indexOf(p.layer);
    p.layer = t.layers[Math.max(0, Math.min(t.layers.length - 1, i + dl))];
  }
  if (dg) {
    if (p.head === null) p.group = wrap(p.group + dg, d.head_groups.length);
    p.head = null;
  }
  if (dh) {
    if (p.head === null)
      p.head = dh > 0 ? d.head_groups[p.group][0] : d.head_groups[p.group].at(-1);
    else p.head = wrap(p.head + dh, d.config.n_heads);
    p.group = t.groupOf.get(p.head);
  }
  renderTab();
}

// The keys of presentation mode's Attention view; true when one was used.
function presentKey(ev) {
  if (!state.present || state.tab !== "attention" || !state.trace) return false;
  const k = ev.key;
  if (k === "ArrowUp" || k === "ArrowDown") presentMove(k === "ArrowUp" ? -1 : 1, 0, 0);
  else if (k === "g" || k === "G") presentMove(0, k === "G" ? -1 : 1, 0);
  else if (k === "h" || k === "H") presentMove(0, 0, k === "H" ? -1 : 1);
  else if (k === "Escape" && state.pres.head !== null) {
    // Back from one head to its group.
    state.pres.head = null;
    renderTab();
  } else return false;
  ev.preventDefault();
  return true;
}

// How many maps across: the arrangement whose cells are largest.
function stageLayout(n, rows, cols, width, height) {
  let best = { across: n, cell: 0 };
  for (let across = 1; across <= n; across++) {
    const down = Math.ceil(n / across);
    const w = width / across - 16 - 90, // gap; the row labels
      h = height / down - 46 - 8; // the caption and the key labels
    const cell = Math.min(w / cols, h / rows);
    if (cell > best.cell) best = { across, cell };
  }
  return best.across;
}

// The stage's title: layer, K/V group or head, step and what is shown.
function stageTitle(heads, g) {
  const p = state.pres;
  return t("stage.title", {
    layer: p.layer,
    who:
      p.head === null
        ? t("stage.group", { g, heads: heads.join(", ") })
        : t("qk.head_option", { head: p.head, g }),
    step: state.step,
    label: stepLabels(state.trace.doc)[state.step],
    mode: modeName(state.mode),
  });
}

// The colour scale under the maps, beside the keys: softmax on 0..1,
// scores symmetric around 0 over the maps shown.
function stageLegend(lim) {
  const legend = el("div", { class: "legend stage-legend" });
  if (isScores())
    drawLegend(legend, "diverging", -(lim || 1), lim || 1, modeName(state.mode) + ":");
  else drawLegend(legend, state.scale, 0, 1, modeName("attn.softmax") + ":");
  return legend;
}

function renderStage() {
  const tr = state.trace,
    p = state.pres;
  const stage = $("stage");
  const heads = presentedHeads();
  const g = p.head === null ? p.group : tr.groupOf.get(p.head);
  const mats = heads.map((h) => [h, matrixFor(state.step, p.layer, h)]).filter(([, m]) => m);
  const title = el("h2", { class: "stage-title", id: "stage-title", text: stageTitle(heads, g) });
  let lim = 0;
  if (isScores())
    for (const [, m] of mats) {
      const [lo, hi] = matrixRange(m);
      lim = Math.max(lim, Math.abs(lo), Math.abs(hi));
    }
  const keys = el(
    "div",
    { class: "stage-foot" },
    el("p", {
      class: "stage-keys",
      text: t("stage.keys"),
    }),
    stageLegend(lim),
  );
  const box = el("div", { class: "stage-maps", style: "border-color:" + groupColor(g) });
  stage.replaceChildren(title, box, keys);
  stage.hidden = false;
  if (mats.length === 0) {
    box.append(el("p", { text: t("stage.none", { mode: state.mode }) }));
    return;
  }
  const width = box.clientWidth - 16;
  const height = window.innerHeight - box.getBoundingClientRect().top - keys.offsetHeight - 24;
  const { rows, cols } = mats[0][1];
  const across = stageLayout(mats.length, rows, cols, width, height);
  const down = Math.ceil(mats.length / across);
  const tileW = Math.floor(width / across) - 16,
    tileH = Math.floor(height / down) - 8;
  box.style.gridTemplateColumns = "repeat(" + across + ", auto)";
  for (const [head, mat] of mats) {
    const tile = mapTile(
      p.layer,
      head,
      mat,
      rangeFor(mat, lim || undefined),
      tileW,
      tileH,
      t("stage.caption", { layer: p.layer, head }),
      () => {
        p.head = head;
        p.group = tr.groupOf.get(head);
        renderTab();
      },
      "h" + head,
      { font: PRESENT_FONT, maxCell: 160, rowFloor: PRESENT_ROW_FLOOR },
    );
    tile.classList.add("stage-map");
    box.append(tile);
  }
}
