// export.js: PNG export of the current view, titled with the prompt, the
// step, and the layer and head when one is chosen.
"use strict";

// The title line of an exported image: the view, the prompt, the step, and
// the layer and head when one is chosen.
function exportTitle() {
  const tab = document.querySelector("[role=tab][aria-selected=true]").textContent.trim();
  if (!state.trace) return "GlassLM inspector \u2014 " + tab;
  const d = state.trace.doc;
  const prompt = d.steps[0].kind === "prefill" ? d.steps[0].tokens.map((t) => t.text).join("") : "";
  let where = "";
  if (state.tab === "attention" && state.zoom)
    where = ", layer " + state.zoom.layer + ", head " + state.zoom.head;
  else if (state.tab === "qk")
    where = ", layer " + $("qk-layer").value + ", head " + $("qk-head").value;
  else if (state.tab === "attention") where = ", all heads";
  return (
    "GlassLM \u2014 " +
    tab +
    " \u2014 prompt " +
    JSON.stringify(prompt) +
    " \u2014 step " +
    state.step +
    " (" +
    stepLabels(d)[state.step] +
    ")" +
    where +
    (state.tab === "attention" ? ", " + MODE_NAMES[state.mode] : "")
  );
}

// Export: the current view drawn into one PNG, twice the screen's pixels,
// with a title line. Canvases are copied, the op graph's SVG rendered, and
// the text, backgrounds and borders of every other element painted where
// the page lays them out.
async function exportPng() {
  const panel = $("panel-" + state.tab);
  document.body.classList.add("exporting");
  try {
    const root = panel.getBoundingClientRect();
    const W = Math.ceil(Math.max(panel.scrollWidth, root.width, 900)),
      H = Math.min(16000, Math.ceil(panel.scrollHeight) + 44);
    const k = 2;
    const out = document.createElement("canvas");
    out.width = W * k;
    out.height = H * k;
    const ctx = out.getContext("2d");
    ctx.scale(k, k);
    ctx.fillStyle = cssVar("--bg");
    ctx.fillRect(0, 0, W, H);
    ctx.fillStyle = cssVar("--fg");
    ctx.font = 'bold 18px "DejaVu Sans", sans-serif';
    ctx.textBaseline = "top";
    const title = exportTitle();
    ctx.fillText(title, 4, 8, W - 8);
    ctx.translate(0, 44);
    const at = (r) => [r.left - root.left, r.top - root.top];
    const all = [panel, ...panel.querySelectorAll("*")];
    for (const e of all) {
      if (e.closest("[hidden]") || (e.closest("svg") && e.tagName !== "svg")) continue;
      const r = e.getBoundingClientRect();
      if (r.width === 0 || r.height === 0) continue;
      const [x, y] = at(r);
      const cs = getComputedStyle(e);
      if (cs.backgroundColor && cs.backgroundColor !== "rgba(0, 0, 0, 0)" && e !== panel) {
        ctx.fillStyle = cs.backgroundColor;
        ctx.fillRect(x, y, r.width, r.height);
      }
      const bw = parseFloat(cs.borderTopWidth);
      if (bw > 0 && cs.borderTopStyle !== "none") {
        ctx.strokeStyle = cs.borderTopColor;
        ctx.lineWidth = bw;
        ctx.strokeRect(x + bw / 2, y + bw / 2, r.width - bw, r.height - bw);
      }
      if (e.tagName === "CANVAS") ctx.drawImage(e, x, y, r.width, r.height);
      else if (e.tagName === "svg") {
        const xml = new XMLSerializer().serializeToString(e);
        const img = new Image();
        img.src = "data:image/svg+xml;charset=utf-8," + encodeURIComponent(xml);
        await img.decode();
        ctx.drawImage(img, x, y, r.width, r.height);
      } else if (e.tagName === "INPUT" && (e.type === "radio" || e.type === "checkbox")) {
        ctx.strokeStyle = cssVar("--fg");
        ctx.lineWidth = 1.5;
        ctx.strokeRect(x + 1, y + 1, r.width - 2, r.height - 2);
        if (e.checked) {
          ctx.fillStyle = cssVar("--fg");
          ctx.fillRect(x + 4, y + 4, r.width - 8, r.height - 8);
        }
      }
      ctx.font = cs.fontWeight + " " + cs.fontSize + " " + cs.fontFamily;
      ctx.fillStyle = cs.color;
      ctx.textBaseline = "middle";
      ctx.textAlign = "left";
      for (const node of e.childNodes) {
        if (node.nodeType !== Node.TEXT_NODE || !node.textContent.trim()) continue;
        const range = document.createRange();
        range.selectNodeContents(node);
        const rects = [...range.getClientRects()];
        if (rects.length === 0) continue;
        if (e.tagName === "OPTION") continue;
        const words = node.textContent.split(/(\s+)/);
        // One line: draw it; several: fill each line box with as many words as fit.
        let wi = 0;
        for (const lr of rects) {
          let line = "";
          while (wi < words.length && ctx.measureText(line + words[wi]).width <= lr.width + 2)
            line += words[wi++];
          if (!line && wi < words.length) line = words[wi++];
          const [lx, ly] = at(lr);
          ctx.fillText(line.trim() ? line : "", lx, ly + lr.height / 2);
        }
      }
      if (e.tagName === "SELECT") {
        const [sx, sy] = at(r);
        ctx.fillText(
          e.options[e.selectedIndex] ? e.options[e.selectedIndex].text : "",
          sx + 6,
          sy + r.height / 2,
        );
      }
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
    return { width: out.width, height: out.height, bytes: blob.size, title };
  } finally {
    document.body.classList.remove("exporting");
  }
}
