// i18n.js: every word the page shows, in English and in Brazilian
// Portuguese. The static text of index.html names its message with
// data-i18n (the element's text), data-i18n-title, data-i18n-aria-label,
// data-i18n-value (an input's word, such as "all", while it still holds one
// of the languages' words) or data-i18n-html (text with <b> and <code>, from
// this file only); the
// scripts build their sentences with t(id, {name: value}), whose {name}
// placeholders take the data (numbers, token text, tensor and op names).
// The language is the fragment's lang=pt or lang=en, else the browser's
// (navigator.languages starting with "pt"), else English; the EN | PT switch
// in the header changes it and writes it into the fragment (link.js).
// A new message goes into both tables under the same id with the same
// placeholders: tests/viewer/i18n_tables.test.mjs checks that.
"use strict";

const MESSAGES = {
  en: {
    "page.title": "GlassLM inspector",
    "summary.none": "No trace loaded: open one with the button or drop a file on the page.",
    "toolbar.open": "Open trace…",
    "toolbar.live": "Generate live…",
    "toolbar.colours": "Colours",
    "toolbar.theme": "Theme",
    "toolbar.light": "light",
    "toolbar.dark": "dark",
    "toolbar.present_title": "Presentation mode (P)",
    "toolbar.present": "Present",
    "toolbar.export": "Export PNG",
    "toolbar.language": "Language",
    "live.prompt": "Prompt",
    "live.steps": "Steps",
    "live.temperature": "Temperature",
    "live.generate": "Generate",
    "tokens.title": "Tokens",
    "steps.title": "Steps",
    "steps.play_title": "Play the steps (Space)",
    "steps.play": "▶ Play",
    "steps.keys": "← → Home End, Space plays",
    "tabs.label": "Views",
    "tabs.attention": "Attention",
    "tabs.qk": "Q·K",
    "tabs.cache": "K/V cache",
    "tabs.graph": "Op graph",
    "tabs.compare": "Compare",
    "tabs.grads": "Gradients",
    "tabs.metrics": "Training",
    "explain.title": "What am I looking at?",
    "explain.attention.see":
      '<b>What you see:</b> one map per layer (rows) and query head. In a map, each row is a query (a token asking "what should I look at?"), each column a key (a token it can look at); the colour is how much the query attends to the key. Heads in one coloured box share one K/V head. A prefill map is a triangle: no token sees a later one. A decode step has one row: the one new token looking at every cached key.',
    "explain.attention.look":
      '<b>What to look for:</b> a bright diagonal (each token looks at itself), a bright first column (everything looks at the first token, an "attention sink"), a bright cell that moves one key to the right at every step (a head that copies). Near-uniform rows, all one dark colour on the shared scale, mean the head attends to nothing in particular: an untrained model looks like that.',
    "explain.qk.see":
      "<b>What you see:</b> the arithmetic of one attention row with the trace's numbers. The query vector q of one head and one token; the key vector k of every token it can see; their dot product q·k; divided by √d (d = head_dim) that is the score; the softmax of the scores is the attention.",
    "explain.qk.look":
      "<b>What to look for:</b> the key whose vector points the same way as q (similar colour pattern) gets the largest dot product. Differences of a few units in the score become large differences after the softmax, because it exponentiates. The recorded and the recomputed columns agree to the trace's precision.",
    "explain.cache.see":
      "<b>What you see:</b> the K/V cache of one layer as a tensor [batch, K/V heads, positions, head_dim]: one column per position it holds, one row per K/V head, coloured by K/V head, with the query heads that read each row. Below, its bytes after each step next to what multi-head attention would hold, and what repeat_kv copies.",
    "explain.cache.look":
      "<b>What to look for:</b> one new column per decode step; the cache is n_heads / n_kv_heads times smaller than multi-head attention's; at a window reset (dashed line) the cache is full and is rebuilt from position 0.",
    "explain.graph.see":
      "<b>What you see:</b> every op the step ran, top to bottom, with its output shape, dtype and the bytes it wrote. Weights are params (hidden unless asked for); the cache the previous step left is a blue dashed box.",
    "explain.graph.look":
      "<b>What to look for:</b> the q_proj, k_proj and v_proj products and their different output sizes (fewer K/V heads); the vermillion repeat_kv copies on the repeat_kv path, absent on the grouped one; reshapes that write 0 bytes.",
    "explain.compare.see":
      "<b>What you see:</b> trace A (the one shown) against a trace B you open: every recorded row matched by what it computes (snapshot, layer, head, position), the largest |A − B| per snapshot and layer, and the difference of one of them as a map.",
    "explain.compare.look":
      "<b>What to look for:</b> zero for identical runs, differences around 1e-7 (float32 rounding) between two correct paths such as repeat_kv and grouped, anything much larger is a real difference.",
    "explain.grads.see":
      "<b>What you see:</b> for the token chosen at this step, how much each key position's attention weight moved its log-probability: |p · ∂ log p(next) / ∂p| summed over heads.",
    "explain.grads.look":
      "<b>What to look for:</b> the few positions the choice depended on, e.g. the character being copied.",
    "explain.metrics.see":
      "<b>What you see:</b> the loss and accuracy that <code>glassllm train</code> wrote to metrics.jsonl, against the step.",
    "explain.metrics.look":
      "<b>What to look for:</b> on the logarithmic loss axis, a straight stretch is steady exponential progress; a flat stretch is a plateau.",
    "attn.show": "Show",
    "attn.raw": "raw scores",
    "attn.masked": "masked scores",
    "attn.softmax": "softmax",
    "attn.scale": "Scale",
    "attn.shared": "shared",
    "attn.each": "per map",
    "attn.layers": "Layers",
    "attn.heads": "Heads",
    "attn.mean_title": "One map per layer: the mean over the heads shown",
    "attn.mean": "mean per layer",
    "zoom.fill": "Fill the screen",
    "zoom.close": "Back to all heads (Esc)",
    "zoom.canvas": "Enlarged attention map",
    "zoom.keys": "Arrow keys move the cell cursor while the map has focus.",
    "attn.hover": "Hover a cell to read its value.",
    "ctl.layer": "Layer",
    "ctl.head": "Head",
    "ctl.query": "Query",
    "cache.canvas": "The K/V cache as a tensor",
    "cache.table": "Every step as a table",
    "graph.weights": "show weights",
    "compare.open": "Open trace B…",
    "compare.drop": "… or drop trace B here. Trace A is the one shown above.",
    "compare.canvas": "Difference heatmap",
    "target.label": "Target continuation",
    "target.button": "Loss and gradients",
    "metrics.open": "Open metrics.jsonl…",
    "metrics.log": "logarithmic loss axis",
    "metrics.none":
      "Plots the loss and accuracy that <code>glassllm train</code> writes to metrics.jsonl.",
    "present.exit": "Exit presentation (P)",
    "drop.mask": "Drop a trace (.json) or a metrics.jsonl file",
    "mode.raw": "raw score",
    "mode.masked": "masked score",
    "mode.softmax": "softmax",
    "step.prefill": "prefill",
    "step.decode_label": "d{n}",
    "step.reset_label": "r{n}",
    "summary.trace":
      "{name}: {layers} layers, {heads} query heads sharing {kv} K/V heads (G = {rep}), head_dim {hd}, {dtype}, {path} path, {steps} steps, {tokens} tokens",
    "token.generated": "{tok}: index {i}, id {id} (generated)",
    "token.prompt": "{tok}: index {i}, id {id} (prompt)",
    "step.aria": "step {i}: {kind}",
    "kind.prefill": "prefill",
    "kind.decode": "decode",
    "kind.window_reset": "window reset",
    "layer.n": "layer {layer}",
    "layer.outside": "outside the blocks",
    "layer.all": "all",
    "layer.all_layers": "all layers",
    "step.words_prefill": "prefill of the prompt",
    "step.words_decode": "decode step",
    "step.words_reset":
      "window reset {label}: the cache was full, so the last {n} tokens ran again from position 0",
    "step.words_reset_row": " (the trace keeps the new token's row, position {pos})",
    "step.info": "Step {step} of {last}: {words}; ",
    "step.info_one": "1 token at position {pos}",
    "step.info_many": "{n} tokens at positions {from}-{to}",
    "step.info_keys": "; m = {m} keys",
    "step.info_chose": "; chose {tok} (id {id}, p = {p})",
    "step.info_top": "; top: {top}",
    "steps.pause": "⏸ Pause",
    "pick.help": ". Write all, or numbers and ranges such as 0,2,5-7.",
    "name.embedded": "the embedded trace",
    "pick.all": "all",
    "pick.not_number": '{what}: "{part}" is not a number or a range like 2-5',
    "pick.outside": "{what}: {part} is outside 0-{last}",
    "cell.mean": "layer {layer} mean of heads {heads}",
    "cell.head": "layer {layer} head {head} (K/V head {g})",
    "cell.query": "query {tok} (pos {pos})",
    "cell.key": "→ key {tok} (pos {pos})",
    "attn.enlarge": "{caption}; enlarge",
    "legend.shared": "{what}, all maps:",
    "legend.each_abs": "{what} / each map's largest |value|:",
    "legend.each_max": "{what} / each map's maximum:",
    "attn.mean_caption": "layer {layer} (mean of {n} heads)",
    "attn.caption": "layer {layer} head {head}, shares K/V head {g}",
    "attn.group": "K/V head {g} ← query heads {heads}",
    "attn.no_map": "No map to show: the trace holds no {mode} for the layers and heads chosen.",
    "zoom.missing": "layer {layer} head {head}: not in this trace",
    "zoom.title":
      "Layer {layer}, head {head} (K/V head {g}), step {step} ({kind}), {mode}, {rows} × {cols}",
    "axis.queries": "queries",
    "axis.keys": "keys",
    "chart.p": "P",
    "cache.this_model": "this model ({kv} K/V heads)",
    "cache.multi_head": "multi-head ({kv} K/V heads)",
    "cache.held": "K+V held",
    "cache.x_title": "step (P prefill, d decode, r window reset: dashed line)",
    "cache.repeat_path": "repeat_kv path",
    "cache.repeat_path_computed": "repeat_kv path (computed: this trace ran grouped)",
    "cache.grouped_path": "grouped path",
    "cache.repeat_writes": "repeat_kv writes",
    "cache.step": "step",
    "cache.no_cache": "This step ran without a cache. ",
    "cache.holds":
      "After step {step} ({kind}) the {mode} cache holds {n} positions: K and V of {shape} in each of {layers} layers = ",
    "bytes.n": "{n} bytes",
    "cache.per_layer": " ({all}; {per} per layer). Multi-head attention would hold ",
    "cache.grouped_ran":
      "This trace ran the grouped path: repeat_kv wrote nothing; the repeat_kv path would have written {n} bytes in this step (computed from the config).",
    "cache.repeat_ran":
      "repeat_kv ran {ops} times in this step and wrote {n} bytes (read again: {read} bytes); the grouped path writes 0.",
    "cache.col_step": "step",
    "cache.col_kind": "kind",
    "cache.col_shape": "cache shape (one layer's K)",
    "cache.col_positions": "positions",
    "cache.col_bytes": "K+V bytes, all layers",
    "cache.col_per_layer": "per layer",
    "cache.col_mha": "MHA would hold",
    "cache.col_repeat_ops": "repeat_kv ops",
    "cache.col_repeat_bytes": "repeat_kv bytes written",
    "cache.col_read": "read again",
    "cache.col_grouped": "grouped path",
    "graph.shown": "{shown} of {all} nodes shown, {written} written; ",
    "graph.repeat.one": "{n} repeat_kv node ({bytes}).",
    "graph.repeat.other": "{n} repeat_kv nodes ({bytes}).",
    "graph.node": "node {id}: {op} [{shape}] {dtype}, {bytes} bytes written, inputs [{inputs}]",
    "graph.node_layer": ", layer {layer}",
    "graph.link_from": "← layer {layer} {tensor} cache: from step {step}, node {node}",
    "graph.link_to": "layer {layer} {tensor} cache → step {step}, node {node}",
    "compare.none": "Open or drop a second trace (B) to compare it with the one shown (A).",
    "compare.summary": "A: {a} ({pathA}), B: {b} ({pathB}). Largest |A − B| over every snapshot: ",
    "compare.worst": " ({name}, layer {layer}, position {pos})",
    "compare.worst_head": " ({name}, layer {layer}, head {head}, position {pos})",
    "compare.rows": ". Rows matched by snapshot, layer, head and position: {n}",
    "compare.only": "; only in A: {a}, only in B: {b}",
    "compare.col_layer": "layer",
    "compare.col_snapshot": "snapshot",
    "compare.col_rows": "rows",
    "compare.col_max": "max |A − B|",
    "compare.no_heads": "(no heads)",
    "head.n": "head {head}",
    "compare.title":
      "A − B: {name}, layer {layer} (rows: query positions; columns: {cols}; blue negative, red positive, white zero; scale ±{lim})",
    "compare.title_head":
      "A − B: {name}, layer {layer}, head {head} (rows: query positions; columns: {cols}; blue negative, red positive, white zero; scale ±{lim})",
    "compare.query_position": "query position",
    "compare.cell_key": "position {pos}, key {c}: A − B = {v}",
    "compare.cell_feature": "position {pos}, feature {c}: A − B = {v}",
    "grads.none":
      "This trace has no gradients. Make one with glassllm trace --grads to see which positions each chosen token depended on.",
    "grads.none_live":
      " Or type a target continuation below: the page computes its loss and gradients itself.",
    "grads.bars": "Σ over heads of |p · ∂ log p(next) / ∂p| at the last query",
    "grads.chose": "Step {step} chose {tok}",
    "grads.bars_in":
      ". Bars: how much each key position's attention weight moved that choice, in {where}.",
    "grads.most": "Most: ",
    "grads.pos": "pos {pos}",
    "metrics.summary": "{name}: {n} records, x axis: {x}",
    "metrics.open_file": "Open a metrics.jsonl file",
    "metrics.loss": "loss",
    "metrics.no_acc": "No accuracy field in this file",
    "metrics.acc": "accuracy",
    "qk.head_option": "head {head} (K/V head {g})",
    "qk.no_q":
      "This trace holds no query vectors for layer {layer}, head {head} (made with --lean, or without this layer or head): only the recorded scores and softmax are shown.",
    "qk.summary":
      "Layer {layer}, head {head} (reads K/V head {kv}), query {tok} at position {pos}: score = q · k / √{hd} = q · k / {sqrt}; softmax over the keys at positions up to {pos}.",
    "qk.col_pos": "pos",
    "qk.col_pos_title": "the key's position",
    "qk.col_key": "key",
    "qk.col_key_title": "the key's token",
    "qk.col_k_title": "the key vector k: {hd} numbers",
    "qk.col_dot_title": "the dot product of q and k",
    "qk.col_score_title": "score = q · k / √{hd}",
    "qk.col_recorded": "recorded",
    "qk.col_recorded_score_title": "the score the trace recorded",
    "qk.col_softmax_title": "the softmax of the scores, recomputed",
    "qk.col_recorded_softmax_title": "the softmax the trace recorded",
    "qk.col_bar_title": "the softmax as a bar",
    "qk.not_recorded": "not recorded",
    "qk.q_vector": "the query vector of head {head}",
    "qk.masked": "masked",
    "tensor.row": "{name}, K/V head {g} ← q heads {heads}",
    "tensor.title":
      "One layer's cache after step {step}: K and V, each [batch, K/V heads, positions, head_dim] = {shape}",
    "tensor.reset": "  (window reset: rebuilt from position 0)",
    "tensor.axis":
      "position → (one column per token: position, then token; {held} held, room for {room})",
    "tensor.solid": "solid: written by this step; light: kept from before",
    "tensor.window_row": "layers {layers} (window {w})",
    "tensor.window":
      "layers {layers}, window {w}: no query reads the {n} hatched positions again; they could be dropped",
    "stage.title": "Layer {layer}, {who} — step {step} ({label}) — {mode}",
    "stage.keys": "↑ ↓ layer · G group · H head · ← → step · P leaves",
    "stage.none": "No {mode} for these heads in this trace.",
    "stage.group": "K/V head {g} ← query heads {heads}",
    "stage.caption": "layer {layer} head {head}",
    "export.layer_head": ", layer {layer}, head {head}",
    "export.layer_group": ", layer {layer}, K/V head {g} (query heads {heads})",
    "export.all_heads": ", all heads",
    "export.title": "GlassLM — {tab} — prompt {prompt} — step {step} ({label})",
    "legend.masked": "grey: masked",
    "legend.causal": "light grey: a later key (causal mask)",
    "legend.causal_zero": "a later key: probability 0 (causal mask)",
    "legend.window":
      "hatched: behind the sliding window, masked (layers {layers}: each query sees only its last {w} keys)",
    "cell.outside_window": "(behind the window of {w} keys)",
    "fmt.masked": "masked (-inf)",
    "chart.log": " (log scale)",
    "open.no_trace_in_html": "this HTML file holds no GlassLM trace",
    "open.kept": " The trace shown before ({name}) is still shown.",
    "open.failed": "Could not open {name}: {why}.",
    "open.unknown.one":
      "{n} token is \u27e8unk\u27e9: characters outside the model's vocabulary, which it reads as one unknown token.",
    "open.unknown.other":
      "{n} tokens are \u27e8unk\u27e9: characters outside the model's vocabulary, which it reads as one unknown token.",
    "compare.first": "Open trace A first, then trace B to compare.",
    "compare.failed": "Could not open trace B ({name}): {why}.",
    "link.bad_number": "The link's {key}={value} is not one of 0-{last}: ignored.",
    "link.bad_view": "The link's view={view} is not one of {views}.",
    "graph.aria": "Op graph of the step",
    "graph.node_aria": "{op} node {id}",
    "graph.copy": "  (copy)",
    "graph.read": " (read)",
    "graph.view": " (view)",
    "graph.written": " written",
    "graph.from": "from step {step}, node {node}",
    "graph.to": "  → step {step}",
    "graph.node_title": "id {id}  inputs [{inputs}]",
    "live.no_engine":
      "this page has no engine; build it with scripts/build-wasm.sh, then scripts/build.sh",
    "live.weights_bytes": "weights must be bytes",
    "live.too_big": "the model's weights are {size}; a page runs a model of at most {limit}",
    "live.no_model": "this page has no model; write one with glassllm inspector",
    "live.nul_prompt": "the prompt holds a NUL character (U+0000), which the model cannot take",
    "live.nul_target": "the target holds a NUL character (U+0000), which the model cannot take",
    "live.generating": "Generating…",
    "name.live": "the live trace",
    "live.generated": "Generated in {ms} ms.",
    "live.gen_failed": "Could not generate: {why}.",
    "target.summary":
      "Target {target}: loss {loss} nats, the mean of {n} tokens' −log p ({per}). Bars: how much each input token moved that loss.",
    "target.bars": "‖∂ loss / ∂ embedding‖ per input token",
    "target.failed": "Could not compute the gradients: {why}.",
    "live.off_refused": "Off: {why}",
    "live.starting": "Starting the engine…",
    "live.ready": "Ready: {folder}.",
    "live.ready_unnamed": "Ready: the model.",
    "live.off": "Live generation is off.",
    "live.start_failed": "The live engine did not start: {why}.",
    "live.load_failed": "Could not load the model: {why}.",
    "prompt.unknown": "Not in the model's vocabulary: {chars} (each reads as ⟨unk⟩).",
    "prompt.no_task":
      "Not a task the model was trained on: it will write something, but not an answer.",
    "prompt.examples": "Examples:",
    "task.copy": "copy",
    "task.reverse": "reverse",
    "task.sort": "sort",
    "task.add": "add",
    "prompt.format":
      "Task format: C (copy), R (reverse) or S (sort), a space, 1-16 letters or digits, then =; or A, a space, two numbers of up to 6 digits joined by +, then =. The model writes the answer.",
    "lang.en": "English",
    "lang.pt": "Português",
    "lang.en_short": "EN",
    "lang.pt_short": "PT",
    "axis.features_model": "features (d_model)",
    "axis.features_hd": "features (head_dim)",
    "check.too_deep": "{what} nests deeper than {n} levels; at most {n} are allowed",
    "check.not_json": "{what} is not valid JSON ({why})",
    "check.nothing": "nothing",
    "check.index": "{where} must be a non-negative integer, not {v}",
    "check.range": "{where} is {v}, out of range [0, {limit})",
    "check.list": "{where} must be a list, not {v}",
    "check.object": "{where} must be an object, not {v}",
    "check.string": "{where} must be a string, not {v}",
    "check.number": "{where} must be a number, not {v}",
    "check.not_object": "this is not a GlassLM trace: the file holds JSON but not an object",
    "check.format": 'this is not a GlassLM trace: its "format" is {v}, expected "{format}"',
    "check.version":
      "unsupported trace version {v}: this inspector reads versions {versions}; make the trace again with the matching glassllm",
    "check.and": " and ",
    "check.no_field": 'the trace has no "{key}" field',
    "check.positive": "config.{key} must be a positive integer, not {v}",
    "check.too_many": "config.{key} is {v}; the page shows at most {limit}",
    "check.n_rep": "config.n_heads ({heads}) must be n_kv_heads ({kv}) times n_rep ({rep})",
    "check.layer_window": "config.layer_window has {n} entries; the model has {layers} layers",
    "check.dtype": '"dtype" must be "float32" or "float64", not {v}',
    "check.head_groups": "head_groups has {n} entries for {kv} K/V heads",
    "check.precision": "options.precision must be an integer 0..17, not {v}",
    "check.grads": "options.grads must be true or false, not {v}",
    "check.too_long": "sequence has {n} tokens; the page shows at most {limit}",
    "check.cells":
      "config.n_layers × config.n_heads × tokens² is {layers} × {heads} × {tokens}² = {cells} attention cells ({gib} GiB); the page's budget is {budget} cells (1 GiB)",
    "check.no_steps": "the trace has no steps",
    "check.step_field": '{where} has no "{key}" field',
    "check.kind": '{where}.kind must be "prefill", "decode" or "window_reset", not {v}',
    "check.positions": "{where} has {n} tokens but {p} positions",
    "check.no_tokens": "{where} has no tokens",
    "check.keys_past": "{where} attends over sequence tokens up to {last} but the sequence has {n}",
    "check.rows_past": "{where}.rows run past the end of the sequence",
    "check.snap_name": "{at}.name must be one of {names}, not {v}",
    "check.snap_heads": "{at} lists {n} heads for shape [{shape}]",
    "check.snap_rows": "{at} has {n} query rows, but the step records {rows}",
    "check.snap_keys": "{at} has {n} keys, but the step attends over {keys}",
    "check.base64": "{at} is neither a list of numbers nor base64 of {dtype} values",
    "check.value_count": "{at} ({name}, layer {layer}) has {n} values for shape [{shape}]",
    "check.grad_count": "{at} ({name}, layer {layer}) has {n} values of grad for shape [{shape}]",
    "check.no": "no",
    "check.value": "{at} must be a number or null, not {v}",
    "check.node_id": "{at}.id must be {k}, not {v}",
    "check.the_file": "the file",
    "metrics.empty": "the metrics file is empty",
    "metrics.line_of": "line {n} of the metrics file",
    "metrics.not_object": "line {n} of the metrics file is not a JSON object",
    "metrics.no_field": 'the metrics file has no field named like "loss" or "accuracy"',
    "metrics.line": "line",
    "live.page_model": "the page's model",
  },
  pt: {
    "page.title": "Inspetor GlassLM",
    "summary.none": "Nenhum trace aberto: abra um com o botão ou solte um arquivo na página.",
    "toolbar.open": "Abrir trace…",
    "toolbar.live": "Gerar ao vivo…",
    "toolbar.colours": "Cores",
    "toolbar.theme": "Tema",
    "toolbar.light": "claro",
    "toolbar.dark": "escuro",
    "toolbar.present_title": "Modo de apresentação (P)",
    "toolbar.present": "Apresentar",
    "toolbar.export": "Exportar PNG",
    "toolbar.language": "Idioma",
    "live.prompt": "Prompt",
    "live.steps": "Passos",
    "live.temperature": "Temperatura",
    "live.generate": "Gerar",
    "tokens.title": "Tokens",
    "steps.title": "Passos",
    "steps.play_title": "Reproduzir os passos (Espaço)",
    "steps.play": "▶ Reproduzir",
    "steps.keys": "← → Home End, Espaço reproduz",
    "tabs.label": "Visões",
    "tabs.attention": "Atenção",
    "tabs.qk": "Q·K",
    "tabs.cache": "Cache K/V",
    "tabs.graph": "Grafo de operações",
    "tabs.compare": "Comparar",
    "tabs.grads": "Gradientes",
    "tabs.metrics": "Treino",
    "explain.title": "O que estou vendo?",
    "explain.attention.see":
      '<b>O que aparece:</b> um mapa por camada (linhas) e por cabeça de consulta. Em cada mapa, cada linha é uma consulta (um token que pergunta "para onde devo olhar?") e cada coluna é uma chave (um token para o qual ele pode olhar); a cor diz quanto a consulta presta atenção na chave. As cabeças dentro de uma mesma caixa colorida compartilham uma cabeça K/V. O mapa do prefill é um triângulo, por causa da máscara causal: nenhum token enxerga um token posterior. Um passo de decodificação tem uma única linha: o token novo olhando para todas as chaves guardadas no cache.',
    "explain.attention.look":
      '<b>O que procurar:</b> uma diagonal clara (cada token olha para si mesmo), uma primeira coluna clara (todos olham para o primeiro token, um "sorvedouro de atenção"), uma célula clara que anda uma chave para a direita a cada passo (uma cabeça que copia). Linhas quase uniformes, todas de uma mesma cor escura na escala compartilhada, indicam que a cabeça não presta atenção em nada em especial: é assim que um modelo sem treino aparece.',
    "explain.qk.see":
      "<b>O que aparece:</b> a conta de uma linha de atenção com os números do trace. O vetor de consulta q de uma cabeça e de um token; o vetor de chave k de cada token que ele enxerga; o produto escalar q·k; dividido por √d (d = head_dim), isso é o score; a softmax dos scores é a atenção.",
    "explain.qk.look":
      "<b>O que procurar:</b> a chave cujo vetor aponta na mesma direção que q (padrão de cores parecido) recebe o maior produto escalar. Diferenças de poucas unidades no score viram diferenças grandes depois da softmax, porque ela exponencia. As colunas registradas e as recalculadas coincidem até a precisão do trace.",
    "explain.cache.see":
      "<b>O que aparece:</b> o cache K/V de uma camada como um tensor [batch, cabeças K/V, posições, head_dim]: uma coluna por posição guardada, uma linha por cabeça K/V, colorida pela cabeça K/V, com as cabeças de consulta que leem cada linha. Abaixo, os bytes do cache depois de cada passo ao lado do que a atenção multi-cabeça guardaria, e o que repeat_kv copia.",
    "explain.cache.look":
      "<b>O que procurar:</b> uma coluna nova a cada passo de decodificação; o cache é n_heads / n_kv_heads vezes menor que o da atenção multi-cabeça; num reinício da janela (linha tracejada) o cache está cheio e é refeito a partir da posição 0.",
    "explain.graph.see":
      "<b>O que aparece:</b> cada operação que o passo executou, de cima para baixo, com a forma da saída, o dtype e os bytes que escreveu. Os pesos são parâmetros (ocultos, a não ser que você peça); o cache deixado pelo passo anterior é uma caixa azul tracejada.",
    "explain.graph.look":
      "<b>O que procurar:</b> os produtos q_proj, k_proj e v_proj e os tamanhos diferentes das suas saídas (menos cabeças K/V); as cópias de repeat_kv em vermelhão no caminho repeat_kv, ausentes no caminho agrupado; reshapes que escrevem 0 bytes.",
    "explain.compare.see":
      "<b>O que aparece:</b> o trace A (o que está na tela) contra um trace B que você abre: cada linha registrada emparelhada pelo que calcula (snapshot, camada, cabeça, posição), o maior |A − B| por snapshot e camada, e a diferença de um deles como mapa.",
    "explain.compare.look":
      "<b>O que procurar:</b> zero para execuções idênticas, diferenças por volta de 1e-7 (arredondamento de float32) entre dois caminhos corretos como repeat_kv e agrupado; qualquer coisa bem maior é uma diferença de verdade.",
    "explain.grads.see":
      "<b>O que aparece:</b> para o token escolhido neste passo, quanto o peso de atenção de cada posição de chave mexeu na sua log-probabilidade: |p · ∂ log p(próximo) / ∂p| somado sobre as cabeças.",
    "explain.grads.look":
      "<b>O que procurar:</b> as poucas posições das quais a escolha dependeu, por exemplo o caractere que está sendo copiado.",
    "explain.metrics.see":
      "<b>O que aparece:</b> a perda e a acurácia que <code>glassllm train</code> escreveu em metrics.jsonl, em função do passo.",
    "explain.metrics.look":
      "<b>O que procurar:</b> no eixo logarítmico da perda, um trecho reto é progresso exponencial constante; um trecho plano é um platô.",
    "attn.show": "Mostrar",
    "attn.raw": "scores brutos",
    "attn.masked": "scores mascarados",
    "attn.softmax": "softmax",
    "attn.scale": "Escala",
    "attn.shared": "compartilhada",
    "attn.each": "por mapa",
    "attn.layers": "Camadas",
    "attn.heads": "Cabeças",
    "attn.mean_title": "Um mapa por camada: a média das cabeças mostradas",
    "attn.mean": "média por camada",
    "zoom.fill": "Tela cheia",
    "zoom.close": "Todas as cabeças (Esc)",
    "zoom.canvas": "Mapa de atenção ampliado",
    "zoom.keys": "As setas movem o cursor de célula enquanto o mapa tem o foco.",
    "attn.hover": "Passe o mouse sobre uma célula para ler o seu valor.",
    "ctl.layer": "Camada",
    "ctl.head": "Cabeça",
    "ctl.query": "Consulta",
    "cache.canvas": "O cache K/V como tensor",
    "cache.table": "Todos os passos em uma tabela",
    "graph.weights": "mostrar os pesos",
    "compare.open": "Abrir trace B…",
    "compare.drop": "… ou solte o trace B aqui. O trace A é o que aparece acima.",
    "compare.canvas": "Mapa de calor da diferença",
    "target.label": "Continuação-alvo",
    "target.button": "Perda e gradientes",
    "metrics.open": "Abrir metrics.jsonl…",
    "metrics.log": "eixo logarítmico da perda",
    "metrics.none":
      "Traça a perda e a acurácia que <code>glassllm train</code> escreve em metrics.jsonl.",
    "present.exit": "Sair da apresentação (P)",
    "drop.mask": "Solte um trace (.json) ou um arquivo metrics.jsonl",
    "mode.raw": "score bruto",
    "mode.masked": "score mascarado",
    "mode.softmax": "softmax",
    "step.prefill": "prefill",
    "step.decode_label": "d{n}",
    "step.reset_label": "r{n}",
    "summary.trace":
      "{name}: {layers} camadas, {heads} cabeças de consulta que compartilham {kv} cabeças K/V (G = {rep}), head_dim {hd}, {dtype}, caminho {path}, {steps} passos, {tokens} tokens",
    "token.generated": "{tok}: índice {i}, id {id} (gerado)",
    "token.prompt": "{tok}: índice {i}, id {id} (prompt)",
    "step.aria": "passo {i}: {kind}",
    "kind.prefill": "prefill",
    "kind.decode": "decodificação",
    "kind.window_reset": "reinício da janela",
    "layer.n": "camada {layer}",
    "layer.outside": "fora dos blocos",
    "layer.all": "todas",
    "layer.all_layers": "todas as camadas",
    "step.words_prefill": "prefill do prompt",
    "step.words_decode": "passo de decodificação",
    "step.words_reset":
      "reinício da janela {label}: o cache estava cheio, então os últimos {n} tokens rodaram de novo a partir da posição 0",
    "step.words_reset_row": " (o trace guarda a linha do token novo, posição {pos})",
    "step.info": "Passo {step} de {last}: {words}; ",
    "step.info_one": "1 token na posição {pos}",
    "step.info_many": "{n} tokens nas posições {from}-{to}",
    "step.info_keys": "; m = {m} chaves",
    "step.info_chose": "; escolheu {tok} (id {id}, p = {p})",
    "step.info_top": "; mais prováveis: {top}",
    "steps.pause": "⏸ Pausar",
    "pick.help": ". Escreva todas, ou números e intervalos como 0,2,5-7.",
    "name.embedded": "o trace embutido",
    "pick.all": "todas",
    "pick.not_number": '{what}: "{part}" não é um número nem um intervalo como 2-5',
    "pick.outside": "{what}: {part} está fora de 0-{last}",
    "cell.mean": "camada {layer}, média das cabeças {heads}",
    "cell.head": "camada {layer} cabeça {head} (cabeça K/V {g})",
    "cell.query": "consulta {tok} (pos {pos})",
    "cell.key": "→ chave {tok} (pos {pos})",
    "attn.enlarge": "{caption}; ampliar",
    "legend.shared": "{what}, todos os mapas:",
    "legend.each_abs": "{what} / maior |valor| de cada mapa:",
    "legend.each_max": "{what} / máximo de cada mapa:",
    "attn.mean_caption": "camada {layer} (média de {n} cabeças)",
    "attn.caption": "camada {layer} cabeça {head}, compartilha a cabeça K/V {g}",
    "attn.group": "cabeça K/V {g} ← cabeças de consulta {heads}",
    "attn.no_map":
      "Nenhum mapa para mostrar: o trace não tem {mode} para as camadas e cabeças escolhidas.",
    "zoom.missing": "camada {layer} cabeça {head}: não está neste trace",
    "zoom.title":
      "Camada {layer}, cabeça {head} (cabeça K/V {g}), passo {step} ({kind}), {mode}, {rows} × {cols}",
    "axis.queries": "consultas",
    "axis.keys": "chaves",
    "chart.p": "P",
    "cache.this_model": "este modelo ({kv} cabeças K/V)",
    "cache.multi_head": "multi-cabeça ({kv} cabeças K/V)",
    "cache.held": "K+V guardados",
    "cache.x_title": "passo (P prefill, d decodificação, r reinício da janela: linha tracejada)",
    "cache.repeat_path": "caminho repeat_kv",
    "cache.repeat_path_computed": "caminho repeat_kv (calculado: este trace usou o agrupado)",
    "cache.grouped_path": "caminho agrupado",
    "cache.repeat_writes": "escritas de repeat_kv",
    "cache.step": "passo",
    "cache.no_cache": "Este passo rodou sem cache. ",
    "cache.holds":
      "Depois do passo {step} ({kind}), o cache {mode} guarda {n} posições: K e V de {shape} em cada uma das {layers} camadas = ",
    "bytes.n": "{n} bytes",
    "cache.per_layer": " ({all}; {per} por camada). A atenção multi-cabeça guardaria ",
    "cache.grouped_ran":
      "Este trace usou o caminho agrupado: repeat_kv não escreveu nada; o caminho repeat_kv teria escrito {n} bytes neste passo (calculado a partir da configuração).",
    "cache.repeat_ran":
      "repeat_kv rodou {ops} vezes neste passo e escreveu {n} bytes (lidos de novo: {read} bytes); o caminho agrupado escreve 0.",
    "cache.col_step": "passo",
    "cache.col_kind": "tipo",
    "cache.col_shape": "forma do cache (K de uma camada)",
    "cache.col_positions": "posições",
    "cache.col_bytes": "bytes de K+V, todas as camadas",
    "cache.col_per_layer": "por camada",
    "cache.col_mha": "MHA guardaria",
    "cache.col_repeat_ops": "operações repeat_kv",
    "cache.col_repeat_bytes": "bytes escritos por repeat_kv",
    "cache.col_read": "lidos de novo",
    "cache.col_grouped": "caminho agrupado",
    "graph.shown": "{shown} de {all} nós mostrados, {written} escritos; ",
    "graph.repeat.one": "{n} nó repeat_kv ({bytes}).",
    "graph.repeat.other": "{n} nós repeat_kv ({bytes}).",
    "graph.node": "nó {id}: {op} [{shape}] {dtype}, {bytes} bytes escritos, entradas [{inputs}]",
    "graph.node_layer": ", camada {layer}",
    "graph.link_from": "← cache {tensor} da camada {layer}: do passo {step}, nó {node}",
    "graph.link_to": "cache {tensor} da camada {layer} → passo {step}, nó {node}",
    "compare.none":
      "Abra ou solte um segundo trace (B) para compará-lo com o que está na tela (A).",
    "compare.summary": "A: {a} ({pathA}), B: {b} ({pathB}). Maior |A − B| em todos os snapshots: ",
    "compare.worst": " ({name}, camada {layer}, posição {pos})",
    "compare.worst_head": " ({name}, camada {layer}, cabeça {head}, posição {pos})",
    "compare.rows": ". Linhas emparelhadas por snapshot, camada, cabeça e posição: {n}",
    "compare.only": "; só em A: {a}, só em B: {b}",
    "compare.col_layer": "camada",
    "compare.col_snapshot": "snapshot",
    "compare.col_rows": "linhas",
    "compare.col_max": "máx. |A − B|",
    "compare.no_heads": "(sem cabeças)",
    "head.n": "cabeça {head}",
    "compare.title":
      "A − B: {name}, camada {layer} (linhas: posições das consultas; colunas: {cols}; azul negativo, vermelho positivo, branco zero; escala ±{lim})",
    "compare.title_head":
      "A − B: {name}, camada {layer}, cabeça {head} (linhas: posições das consultas; colunas: {cols}; azul negativo, vermelho positivo, branco zero; escala ±{lim})",
    "compare.query_position": "posição da consulta",
    "compare.cell_key": "posição {pos}, chave {c}: A − B = {v}",
    "compare.cell_feature": "posição {pos}, componente {c}: A − B = {v}",
    "grads.none":
      "Este trace não tem gradientes. Gere um com glassllm trace --grads para ver de quais posições cada token escolhido dependeu.",
    "grads.none_live":
      " Ou digite uma continuação-alvo abaixo: a própria página calcula a perda e os gradientes.",
    "grads.bars": "Σ sobre as cabeças de |p · ∂ log p(próximo) / ∂p| na última consulta",
    "grads.chose": "O passo {step} escolheu {tok}",
    "grads.bars_in":
      ". Barras: quanto o peso de atenção de cada posição de chave mexeu nessa escolha, em {where}.",
    "grads.most": "Maiores: ",
    "grads.pos": "pos {pos}",
    "metrics.summary": "{name}: {n} registros, eixo x: {x}",
    "metrics.open_file": "Abra um arquivo metrics.jsonl",
    "metrics.loss": "perda",
    "metrics.no_acc": "Nenhum campo de acurácia neste arquivo",
    "metrics.acc": "acurácia",
    "qk.head_option": "cabeça {head} (cabeça K/V {g})",
    "qk.no_q":
      "Este trace não tem vetores de consulta para a camada {layer}, cabeça {head} (foi gerado com --lean, ou sem esta camada ou cabeça): só aparecem os scores e a softmax registrados.",
    "qk.summary":
      "Camada {layer}, cabeça {head} (lê a cabeça K/V {kv}), consulta {tok} na posição {pos}: score = q · k / √{hd} = q · k / {sqrt}; softmax sobre as chaves nas posições até {pos}.",
    "qk.col_pos": "pos",
    "qk.col_pos_title": "a posição da chave",
    "qk.col_key": "chave",
    "qk.col_key_title": "o token da chave",
    "qk.col_k_title": "o vetor de chave k: {hd} números",
    "qk.col_dot_title": "o produto escalar de q e k",
    "qk.col_score_title": "score = q · k / √{hd}",
    "qk.col_recorded": "registrado",
    "qk.col_recorded_score_title": "o score que o trace registrou",
    "qk.col_softmax_title": "a softmax dos scores, recalculada",
    "qk.col_recorded_softmax_title": "a softmax que o trace registrou",
    "qk.col_bar_title": "a softmax como barra",
    "qk.not_recorded": "não registrado",
    "qk.q_vector": "o vetor de consulta da cabeça {head}",
    "qk.masked": "mascarado",
    "tensor.row": "{name}, cabeça K/V {g} ← cabeças q {heads}",
    "tensor.title":
      "Cache de uma camada depois do passo {step}: K e V, cada um [batch, cabeças K/V, posições, head_dim] = {shape}",
    "tensor.reset": "  (reinício da janela: refeito a partir da posição 0)",
    "tensor.axis":
      "posição → (uma coluna por token: posição, depois o token; {held} guardadas, espaço para {room})",
    "tensor.solid": "cheio: escrito por este passo; claro: mantido de antes",
    "tensor.window_row": "camadas {layers} (janela {w})",
    "tensor.window":
      "camadas {layers}, janela {w}: nenhuma consulta volta a ler as {n} posições hachuradas; poderiam ser descartadas",
    "stage.title": "Camada {layer}, {who} — passo {step} ({label}) — {mode}",
    "stage.keys": "↑ ↓ camada · G grupo · H cabeça · ← → passo · P sai",
    "stage.none": "Nenhum {mode} para estas cabeças neste trace.",
    "stage.group": "cabeça K/V {g} ← cabeças q {heads}",
    "stage.caption": "camada {layer} cabeça {head}",
    "export.layer_head": ", camada {layer}, cabeça {head}",
    "export.layer_group": ", camada {layer}, cabeça K/V {g} (cabeças de consulta {heads})",
    "export.all_heads": ", todas as cabeças",
    "export.title": "GlassLM — {tab} — prompt {prompt} — passo {step} ({label})",
    "legend.masked": "cinza: mascarado",
    "legend.causal": "cinza-claro: uma chave posterior (máscara causal)",
    "legend.causal_zero": "uma chave posterior: probabilidade 0 (máscara causal)",
    "legend.window":
      "hachurado: atrás da janela deslizante, mascarado (camadas {layers}: cada consulta vê só suas últimas {w} chaves)",
    "cell.outside_window": "(atrás da janela de {w} chaves)",
    "fmt.masked": "mascarado (-inf)",
    "chart.log": " (escala logarítmica)",
    "open.no_trace_in_html": "este arquivo HTML não contém nenhum trace do GlassLM",
    "open.kept": " O trace que estava na tela ({name}) continua na tela.",
    "open.failed": "Não foi possível abrir {name}: {why}.",
    "open.unknown.one":
      "{n} token é \u27e8unk\u27e9: caracteres fora do vocabulário do modelo, que ele lê como um único token desconhecido.",
    "open.unknown.other":
      "{n} tokens são \u27e8unk\u27e9: caracteres fora do vocabulário do modelo, que ele lê como um único token desconhecido.",
    "compare.first": "Abra primeiro o trace A, depois o trace B para comparar.",
    "compare.failed": "Não foi possível abrir o trace B ({name}): {why}.",
    "link.bad_number": "O {key}={value} do link não está em 0-{last}: ignorado.",
    "link.bad_view": "O view={view} do link não é um destes: {views}.",
    "graph.aria": "Grafo de operações do passo",
    "graph.node_aria": "nó {op} {id}",
    "graph.copy": "  (cópia)",
    "graph.read": " (lido)",
    "graph.view": " (visão)",
    "graph.written": " escritos",
    "graph.from": "do passo {step}, nó {node}",
    "graph.to": "  → passo {step}",
    "graph.node_title": "id {id}  entradas [{inputs}]",
    "live.no_engine":
      "esta página não tem o motor; compile-o com scripts/build-wasm.sh e depois scripts/build.sh",
    "live.weights_bytes": "os pesos precisam ser bytes",
    "live.too_big": "os pesos do modelo têm {size}; uma página roda um modelo de no máximo {limit}",
    "live.no_model": "esta página não tem modelo; escreva um com glassllm inspector",
    "live.nul_prompt": "o prompt contém um caractere NUL (U+0000), que o modelo não aceita",
    "live.nul_target":
      "a continuação-alvo contém um caractere NUL (U+0000), que o modelo não aceita",
    "live.generating": "Gerando…",
    "name.live": "o trace ao vivo",
    "live.generated": "Gerado em {ms} ms.",
    "live.gen_failed": "Não foi possível gerar: {why}.",
    "target.summary":
      "Alvo {target}: perda {loss} nats, a média do −log p de {n} tokens ({per}). Barras: quanto cada token de entrada mexeu nessa perda.",
    "target.bars": "‖∂ perda / ∂ embedding‖ por token de entrada",
    "target.failed": "Não foi possível calcular os gradientes: {why}.",
    "live.off_refused": "Desligado: {why}",
    "live.starting": "Iniciando o motor…",
    "live.ready": "Pronto: {folder}.",
    "live.ready_unnamed": "Pronto: o modelo.",
    "live.off": "A geração ao vivo está desligada.",
    "live.start_failed": "O motor ao vivo não iniciou: {why}.",
    "live.load_failed": "Não foi possível carregar o modelo: {why}.",
    "prompt.unknown": "Fora do vocabulário do modelo: {chars} (cada um é lido como ⟨unk⟩).",
    "prompt.no_task":
      "Não é uma tarefa em que o modelo foi treinado: ele vai gerar alguma coisa, mas não uma resposta.",
    "prompt.examples": "Exemplos:",
    "task.copy": "copiar",
    "task.reverse": "inverter",
    "task.sort": "ordenar",
    "task.add": "somar",
    "prompt.format":
      "Formato das tarefas: C (copiar), R (inverter) ou S (ordenar), um espaço, de 1 a 16 letras ou dígitos e depois =; ou A, um espaço, dois números de até 6 dígitos unidos por + e depois =. O modelo escreve a resposta.",
    "lang.en": "English",
    "lang.pt": "Português",
    "lang.en_short": "EN",
    "lang.pt_short": "PT",
    "axis.features_model": "componentes (d_model)",
    "axis.features_hd": "componentes (head_dim)",
    "check.too_deep": "{what} tem mais de {n} níveis de aninhamento; o máximo é {n}",
    "check.not_json": "{what} não é um JSON válido ({why})",
    "check.nothing": "nada",
    "check.index": "{where} precisa ser um inteiro não negativo, e não {v}",
    "check.range": "{where} é {v}, fora do intervalo [0, {limit})",
    "check.list": "{where} precisa ser uma lista, e não {v}",
    "check.object": "{where} precisa ser um objeto, e não {v}",
    "check.string": "{where} precisa ser uma string, e não {v}",
    "check.number": "{where} precisa ser um número, e não {v}",
    "check.not_object": "isto não é um trace do GlassLM: o arquivo contém JSON, mas não um objeto",
    "check.format":
      'isto não é um trace do GlassLM: o seu "format" é {v}, e o esperado é "{format}"',
    "check.version":
      "versão de trace não suportada {v}: este inspetor lê as versões {versions}; gere o trace de novo com o glassllm correspondente",
    "check.and": " e ",
    "check.no_field": 'o trace não tem o campo "{key}"',
    "check.positive": "config.{key} precisa ser um inteiro positivo, e não {v}",
    "check.too_many": "config.{key} é {v}; a página mostra no máximo {limit}",
    "check.n_rep": "config.n_heads ({heads}) precisa ser n_kv_heads ({kv}) vezes n_rep ({rep})",
    "check.layer_window": "config.layer_window tem {n} entradas; o modelo tem {layers} camadas",
    "check.dtype": '"dtype" precisa ser "float32" ou "float64", e não {v}',
    "check.head_groups": "head_groups tem {n} entradas para {kv} cabeças K/V",
    "check.precision": "options.precision precisa ser um inteiro de 0 a 17, e não {v}",
    "check.grads": "options.grads precisa ser true ou false, e não {v}",
    "check.too_long": "sequence tem {n} tokens; a página mostra no máximo {limit}",
    "check.cells":
      "config.n_layers × config.n_heads × tokens² dá {layers} × {heads} × {tokens}² = {cells} células de atenção ({gib} GiB); o orçamento da página é de {budget} células (1 GiB)",
    "check.no_steps": "o trace não tem passos",
    "check.step_field": '{where} não tem o campo "{key}"',
    "check.kind": '{where}.kind precisa ser "prefill", "decode" ou "window_reset", e não {v}',
    "check.positions": "{where} tem {n} tokens, mas {p} posições",
    "check.no_tokens": "{where} não tem tokens",
    "check.keys_past":
      "{where} presta atenção em tokens da sequência até {last}, mas a sequência tem {n}",
    "check.rows_past": "{where}.rows passa do fim da sequência",
    "check.snap_name": "{at}.name precisa ser um destes: {names}, e não {v}",
    "check.snap_heads": "{at} lista {n} cabeças para a forma [{shape}]",
    "check.snap_rows": "{at} tem {n} linhas de consulta, mas o passo registra {rows}",
    "check.snap_keys": "{at} tem {n} chaves, mas o passo presta atenção em {keys}",
    "check.base64": "{at} não é nem uma lista de números nem base64 de valores {dtype}",
    "check.value_count": "{at} ({name}, camada {layer}) tem {n} valores para a forma [{shape}]",
    "check.grad_count":
      "{at} ({name}, camada {layer}) tem {n} valores de grad para a forma [{shape}]",
    "check.no": "nenhum",
    "check.value": "{at} precisa ser um número ou null, e não {v}",
    "check.node_id": "{at}.id precisa ser {k}, e não {v}",
    "check.the_file": "o arquivo",
    "metrics.empty": "o arquivo de métricas está vazio",
    "metrics.line_of": "a linha {n} do arquivo de métricas",
    "metrics.not_object": "a linha {n} do arquivo de métricas não é um objeto JSON",
    "metrics.no_field":
      'o arquivo de métricas não tem nenhum campo com nome como "loss" ou "accuracy"',
    "metrics.line": "linha",
    "live.page_model": "o modelo da página",
  },
};
const LANGS = Object.keys(MESSAGES);

let lang = "en";
let langChosen = false; // true once a link or the switch named the language

// The message `id` in the page's language with its {placeholders} filled.
function t(id, params) {
  const text = MESSAGES[lang][id];
  if (text === undefined) throw new Error("no message " + id + " in the " + lang + " table");
  return text.replace(/\{(\w+)\}/g, (whole, name) =>
    params && name in params ? String(params[name]) : whole,
  );
}

// t() for a count: the id + ".one" message for 1, id + ".other" otherwise.
function tn(id, n, params) {
  return t(id + (n === 1 ? ".one" : ".other"), Object.assign({ n }, params));
}

// The language the browser asks for, when the fragment names none.
function browserLang() {
  const asked = navigator.languages && navigator.languages.length ? navigator.languages : [];
  const first = asked[0] || navigator.language || "";
  return /^pt\b/i.test(first) ? "pt" : "en";
}

// The fragment's lang=..., or null.
function fragmentLang(hash) {
  const v = new URLSearchParams(String(hash || "").replace(/^#/, "")).get("lang");
  return LANGS.includes(v) ? v : null;
}

// Fills index.html's marked elements from the table.
function translateStatic() {
  document.documentElement.lang = lang === "pt" ? "pt-BR" : "en";
  document.title = t("page.title");
  for (const e of document.querySelectorAll("[data-i18n]")) e.textContent = t(e.dataset.i18n);
  for (const e of document.querySelectorAll("[data-i18n-html]"))
    e.innerHTML = t(e.dataset.i18nHtml);
  for (const e of document.querySelectorAll("[data-i18n-title]")) e.title = t(e.dataset.i18nTitle);
  for (const e of document.querySelectorAll("[data-i18n-aria-label]"))
    e.setAttribute("aria-label", t(e.dataset.i18nAriaLabel));
  for (const e of document.querySelectorAll("[data-i18n-value]")) {
    const id = e.dataset.i18nValue;
    if (LANGS.some((l) => MESSAGES[l][id] === e.value)) e.value = t(id);
  }
  for (const b of document.querySelectorAll("#lang-switch [data-lang]"))
    b.setAttribute("aria-pressed", String(b.dataset.lang === lang));
}

// Changes the language; `relabel` (app.js) then redraws what the scripts wrote.
let relabel = () => {};
function setLang(next, chosen) {
  if (!LANGS.includes(next)) return;
  if (chosen) langChosen = true;
  if (next === lang && document.documentElement.dataset.lang === lang) return;
  lang = next;
  document.documentElement.dataset.lang = lang;
  translateStatic();
  relabel();
}

{
  const fromLink = fragmentLang(location.hash);
  setLang(fromLink || browserLang(), fromLink !== null);
}
