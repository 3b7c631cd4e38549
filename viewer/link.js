// link.js: the URL fragment is the page's address. It names the view, the
// step and what the view shows, so a lesson plan can link to one exact view:
//   #view=attention&step=2&layer=3&head=2&present=1
// views: attention, qk, cache, graph, compare, gradients, training; step 0
// is the prefill; mode=raw|masked (softmax unless said); group=G picks a
// K/V group in presentation mode; query=R a row of the Q·K view. Every
// change of that state writes a new fragment (a history entry), and the
// browser's back button walks them: hashchange reads the fragment back.
"use strict";

const VIEW_TABS = {
  attention: "attention",
  qk: "qk",
  cache: "cache",
  graph: "graph",
  compare: "compare",
  gradients: "grads",
  training: "metrics",
};
const TAB_VIEWS = Object.fromEntries(Object.entries(VIEW_TABS).map(([v, t]) => [t, v]));
const LINK_MODES = { raw: "attn.scores", masked: "attn.scores_masked", softmax: "attn.softmax" };

let applyingLink = false; // true while the page follows a fragment: no new entry
let linksReady = false; // false until the page has read the fragment it opened on

// The fragment of the state shown now.
function linkOf() {
  const p = new URLSearchParams();
  p.set("view", TAB_VIEWS[state.tab]);
  if (state.trace) p.set("step", String(state.step));
  const put = (k, v) => {
    if (v !== null && v !== undefined && v !== "") p.set(k, String(v));
  };
  if (state.tab === "attention" && state.trace) {
    if (state.present) {
      put("layer", state.pres.layer);
      if (state.pres.head !== null) put("head", state.pres.head);
      else put("group", state.pres.group);
    } else if (state.zoom) {
      put("layer", state.zoom.layer);
      put("head", state.zoom.head);
    } else if (state.layerPick && state.layerPick.length === 1) put("layer", state.layerPick[0]);
    if (state.mode !== "attn.softmax")
      put(
        "mode",
        Object.keys(LINK_MODES).find((k) => LINK_MODES[k] === state.mode),
      );
  } else if (state.tab === "qk" && state.trace) {
    put("layer", $("qk-layer").value);
    put("head", $("qk-head").value);
    put("query", $("qk-row").value);
  } else if (state.tab === "graph" && /^\d+$/.test($("graph-layer").value))
    put("layer", $("graph-layer").value);
  else if (state.tab === "grads" && /^\d+$/.test($("grads-layer").value))
    put("layer", $("grads-layer").value);
  if (state.present) p.set("present", "1");
  if (langChosen) p.set("lang", lang); // i18n.js
  return p.toString();
}

// Writes the state into the fragment: a new history entry, or (while the
// steps play) the same entry, so that back does not walk every frame.
function writeLink() {
  if (applyingLink || !linksReady) return;
  const hash = "#" + linkOf();
  if (location.hash === hash) return;
  if (state.playing) location.replace(hash);
  else location.hash = hash;
}

// A whole number in 0..limit-1 from the fragment, or null.
function linkNumber(p, key, limit) {
  if (!p.has(key)) return null;
  const v = Number(p.get(key));
  if (!Number.isInteger(v) || v < 0 || v >= limit) {
    showMessage(t("link.bad_number", { key, value: p.get(key), last: limit - 1 }));
    return null;
  }
  return v;
}

// Follows a fragment: the tab, the step, then what the view shows.
function applyLink(hash) {
  const p = new URLSearchParams(String(hash || "").replace(/^#/, ""));
  if (![...p.keys()].length) return;
  applyingLink = true;
  try {
    const linkLang = fragmentLang(hash);
    if (linkLang) setLang(linkLang, true);
    const view = p.get("view");
    if (view !== null && !(view in VIEW_TABS))
      showMessage(t("link.bad_view", { view, views: Object.keys(VIEW_TABS).join(", ") }));
    const tab = VIEW_TABS[view] || state.tab;
    state.present = p.get("present") === "1";
    document.body.classList.toggle("present", state.present);
    document.documentElement.classList.toggle("present", state.present);
    if (state.trace) applyTraceLink(p, tab);
    selectTab(tab);
    syncPresentButtons();
    if (state.trace) renderStep();
  } finally {
    applyingLink = false;
  }
}

function applyTraceLink(p, tab) {
  const d = state.trace.doc,
    c = d.config;
  const step = linkNumber(p, "step", d.steps.length);
  if (step !== null) state.step = step;
  const layer = linkNumber(p, "layer", c.n_layers);
  const head = linkNumber(p, "head", c.n_heads);
  if (p.has("mode") && LINK_MODES[p.get("mode")]) {
    state.mode = LINK_MODES[p.get("mode")];
    for (const r of document.querySelectorAll("input[name=mode]"))
      r.checked = r.value === state.mode;
  }
  if (tab === "attention") {
    const group = linkNumber(p, "group", c.n_kv_heads);
    if (state.present) {
      state.pres.layer = layer !== null ? layer : state.pres.layer;
      state.pres.head = head;
      if (head !== null) state.pres.group = state.trace.groupOf.get(head);
      else if (group !== null) state.pres.group = group;
    } else if (head !== null) {
      state.zoom = { layer: layer !== null ? layer : state.trace.layers[0], head };
      state.cursor = { r: 0, c: 0 };
    } else {
      state.zoom = null;
      state.layerPick = layer !== null ? [layer] : null;
      $("layer-select").value = layer !== null ? String(layer) : t("pick.all");
    }
  } else if (tab === "qk") {
    if (layer !== null) $("qk-layer").value = String(layer);
    if (head !== null) $("qk-head").value = String(head);
    state.qkQuery = p.has("query") ? Number(p.get("query")) : null;
  } else if (tab === "graph" && layer !== null) $("graph-layer").value = String(layer);
  else if (tab === "grads" && layer !== null) $("grads-layer").value = String(layer);
}

function setupLinks() {
  window.addEventListener("hashchange", () => {
    if (location.hash !== "#" + linkOf()) applyLink(location.hash);
  });
}
