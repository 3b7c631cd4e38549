// graph.js: one step's op graph as SVG. A layered layout: a node's row is
// one more than the deepest of its inputs' rows (the graph's node ids are
// already in execution order, so one pass does it); nodes in a row sit side
// by side. Each box shows the op, its shape, dtype and the bytes it wrote;
// repeat_kv nodes are drawn in vermillion with a thick border, the K/V cache
// nodes in blue and dashed, with the step they come from. Boxes narrow to fit
// the width given; an edge between adjacent rows runs in the gap between
// them, an edge that skips rows goes down a lane right of every box, so no
// edge crosses a box.
"use strict";

const SVG_NS = "http://www.w3.org/2000/svg";

function svgEl(tag, attrs, text) {
  const e = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  return e;
}

// nodes: the step's graph nodes; show(node) says which to draw; links:
// {incoming: Map(node id -> cache link), outgoing: Map(node id -> link)}.
// onSelect(node) is called on click or Enter; maxWidth: CSS pixels the
// graph may take. Returns the SVG element.
function drawGraph(nodes, show, links, selectedId, onSelect, maxWidth) {
  const boxH = 58,
    gapX = 24,
    gapY = 34,
    pad = 16;
  const depth = new Map(),
    rows = [];
  for (const n of nodes) {
    if (!show(n)) continue;
    let d = 0;
    for (const i of n.inputs) if (depth.has(i)) d = Math.max(d, depth.get(i) + 1);
    depth.set(n.id, d);
    (rows[d] = rows[d] || []).push(n);
  }
  // The edges that skip rows, one lane each.
  let lanes = 0;
  for (const n of nodes)
    if (depth.has(n.id))
      for (const i of n.inputs) if (depth.has(i) && depth.get(n.id) - depth.get(i) > 1) lanes++;
  const across = Math.max(1, ...rows.map((r) => (r ? r.length : 0)));
  const full = maxWidth || 1000;
  // Lanes 8 px apart, closer when there are many: together at most a quarter.
  const laneGap = Math.min(8, (full * 0.25) / (lanes + 1));
  const room = full - 2 * pad - (lanes + 1) * laneGap - (across - 1) * gapX;
  const boxW = Math.max(150, Math.min(230, Math.floor(room / across)));
  const pos = new Map();
  rows.forEach((row, d) => {
    row.forEach((n, k) =>
      pos.set(n.id, { x: pad + k * (boxW + gapX), y: pad + d * (boxH + gapY) }),
    );
  });
  const boxesRight = pad + across * (boxW + gapX) - gapX;
  const width = boxesRight + (lanes + 1) * laneGap + pad;
  const height = pad * 2 + rows.length * (boxH + gapY);
  const svg = svgEl("svg", {
    width,
    height,
    viewBox: "0 0 " + width + " " + height,
    role: "img",
    "aria-label": t("graph.aria"),
  });
  svg.append(svgEl("defs", {}));
  svg.firstChild.append(
    (() => {
      const m = svgEl("marker", {
        id: "arrow",
        viewBox: "0 0 10 10",
        refX: 10,
        refY: 5,
        markerWidth: 7,
        markerHeight: 7,
        orient: "auto-start-reverse",
      });
      m.append(svgEl("path", { d: "M 0 0 L 10 5 L 0 10 z", fill: "#888888" }));
      return m;
    })(),
  );
  const edges = svgEl("g", {});
  svg.append(edges);
  let lane = 0;
  for (const n of nodes) {
    const p = pos.get(n.id);
    if (!p) continue;
    for (const i of n.inputs) {
      const q = pos.get(i);
      if (!q) continue;
      const x1 = q.x + boxW / 2,
        y1 = q.y + boxH,
        x2 = p.x + boxW / 2,
        y2 = p.y;
      let d;
      if (y2 - y1 <= gapY + 1)
        // Adjacent rows: a curve inside the gap between them.
        d = "M" + x1 + " " + y1 + " C" + x1 + " " + (y1 + gapY / 2) + " " + x2 + " ";
      else {
        // Out into the gap under the source, right to a lane, down, and
        // left in the gap over the target.
        const x = boxesRight + ++lane * laneGap,
          ya = y1 + gapY / 2 - (lane % 5) * 2,
          yb = y2 - gapY / 2 + (lane % 5) * 2;
        d = "M" + x1 + " " + y1 + " L" + x1 + " " + ya + " L" + x + " " + ya;
        d += " L" + x + " " + yb + " L" + x2 + " " + yb + " L" + x2 + " " + y2;
      }
      if (y2 - y1 <= gapY + 1) d += y2 - gapY / 2 + " " + x2 + " " + y2;
      edges.append(
        svgEl("path", {
          d,
          fill: "none",
          stroke: "#888888",
          "stroke-width": 1.5,
          "marker-end": "url(#arrow)",
        }),
      );
    }
  }
  for (const n of nodes) {
    const p = pos.get(n.id);
    if (!p) continue;
    const isRepeat = n.op === "repeat_kv",
      isCache = n.op === "kv_cache";
    const out = links.outgoing.get(n.id),
      inc = links.incoming.get(n.id);
    const g = svgEl("g", {
      transform: "translate(" + p.x + "," + p.y + ")",
      tabindex: 0,
      role: "button",
      class: "gnode",
      "data-node": n.id,
      "data-op": n.op,
      "aria-label": t("graph.node_aria", { op: n.op, id: n.id }),
    });
    const stroke = isRepeat ? "#D55E00" : isCache || out ? "#0072B2" : "#888888";
    g.append(
      svgEl("rect", {
        width: boxW,
        height: boxH,
        rx: 6,
        fill:
          n.id === selectedId
            ? "#fff3c4"
            : isRepeat
              ? "#fde0cc"
              : isCache
                ? "#d6ecf8"
                : "transparent",
        stroke,
        "stroke-width": isRepeat ? 4 : isCache || out ? 3 : 1.5,
        "stroke-dasharray": isCache ? "7 4" : "none",
      }),
    );
    // Highlighted boxes have light fills in both themes: black text on them.
    const ink = n.id === selectedId || isRepeat || isCache ? "#000000" : cssVar("--fg");
    const title =
      n.op +
      (n.name ? " " + shortName(n.name) : "") +
      roleOf(n, nodes) +
      (isRepeat ? t("graph.copy") : "");
    g.append(
      svgEl(
        "text",
        { x: 8, y: 18, "font-size": 14, "font-weight": "bold", fill: ink },
        clip(title, Math.floor((boxW - 16) / 8.5)),
      ),
    );
    g.append(
      svgEl(
        "text",
        { x: 8, y: 35, "font-size": 12, fill: ink },
        clip("[" + n.shape.join(", ") + "] " + n.dtype, Math.floor((boxW - 16) / 7.3)),
      ),
    );
    let third =
      formatBytes(n.bytes) +
      (n.bytes === 0
        ? n.op === "param" || n.op === "input" || isCache
          ? t("graph.read")
          : t("graph.view")
        : t("graph.written"));
    if (inc) third = t("graph.from", { step: inc.from.step, node: inc.from.node });
    else if (out) third += t("graph.to", { step: out.to.step });
    g.append(
      svgEl(
        "text",
        { x: 8, y: 51, "font-size": 12, fill: ink },
        clip(third, Math.floor((boxW - 16) / 7.3)),
      ),
    );
    g.append(
      svgEl(
        "title",
        {},
        title + "\n" + t("graph.node_title", { id: n.id, inputs: n.inputs.join(", ") }),
      ),
    );
    g.addEventListener("click", () => onSelect(n));
    g.addEventListener("keydown", (ev) => {
      if (ev.key === "Enter" || ev.key === " ") {
        ev.preventDefault();
        onSelect(n);
      }
    });
    svg.append(g);
  }
  return svg;
}

// A weight's short name: model.layers.0.self_attn.q_proj.weight -> q_proj.
function shortName(name) {
  const m = /([a-z_]+_proj|embed_tokens|lm_head|[a-z_]*norm)\.weight$/.exec(name);
  return m ? m[1] : name;
}

// What an op computes, when one of its inputs is a named weight: the
// product with q_proj's weight is " q_proj".
function roleOf(n, nodes) {
  if (n.op === "param" || n.op === "kv_cache" || n.op === "input") return "";
  for (const i of n.inputs) {
    const x = nodes[i];
    if (x && x.op === "param" && x.name) return " \u2192 " + shortName(x.name);
  }
  return "";
}

function clip(s, n) {
  return s.length > n ? s.slice(0, n - 1) + "\u2026" : s;
}
