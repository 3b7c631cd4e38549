// prompt.js: the live bar's help for a class -- example prompts of the four
// tasks GlassLM's models are trained on, one line on their format, a warning
// for characters outside the vocabulary and for a prompt in no task format,
// and, after Generate, the step and head that show the answer.
"use strict";

// The tasks of glassllm/train/tasks.cpp: a letter, a space, the question, "=".
const TASK_EXAMPLES = [
  ["copy", "C GlassLM2026="],
  ["reverse", "R stressed="],
  ["sort", "S glassllm="],
  ["add", "A 123+4567="],
];
// The strings' characters: digits, ASCII letters, and the Latin-1 letters and
// marks of the default vocabulary (Tokenizer::kLatin1Letters in tokenizer.h).
const TASK_CHARS =
  "0-9A-Za-z\u00a1\u00aa\u00ab\u00ba\u00bb\u00bf\u00c0-\u00c3\u00c7-\u00cb\u00cd-\u00cf\u00d1\u00d3-\u00d5\u00d9-\u00dc\u00e0-\u00e3\u00e7-\u00eb\u00ed-\u00ef\u00f1\u00f3-\u00f5\u00f9-\u00fc";
const TASK_PATTERN = new RegExp(
  "^(?:[CRS] [" + TASK_CHARS + "]{1,16}|A \\d{1,6}\\+\\d{1,6})=$",
  "u",
);

// The characters of a character tokenizer (GlassLM's own), or null for a
// tokenizer that reads every character (a Hugging Face one): then neither
// the vocabulary nor the task format is checked.
function promptVocabulary() {
  const model = pageModel();
  if (!model || !model.tokenizer) return null;
  try {
    const tok = JSON.parse(model.tokenizer);
    return tok.format === "glassllm-char-tokenizer" && Array.isArray(tok.tokens)
      ? new Set(tok.tokens)
      : null;
  } catch {
    return null;
  }
}

// The warnings for a prompt: characters outside the vocabulary, then a
// prompt in no task format. Empty when the prompt is fine.
function promptWarnings(prompt, vocab) {
  if (!vocab || prompt === "") return [];
  const out = [];
  const unknown = [...new Set([...prompt].filter((ch) => !vocab.has(ch)))];
  if (unknown.length)
    out.push(t("prompt.unknown", { chars: unknown.map((ch) => JSON.stringify(ch)).join(", ") }));
  if (!TASK_PATTERN.test(prompt)) out.push(t("prompt.no_task"));
  return out;
}

function checkPrompt() {
  const warnings = promptWarnings($("live-prompt").value, live.vocab);
  $("live-check").textContent = warnings.join(" ");
  $("live-check").hidden = warnings.length === 0;
  $("live-prompt").setAttribute("aria-invalid", String(warnings.length > 0));
}

// The examples and the format line in the page's language (again after a
// change of language).
function setupPromptText() {
  $("live-examples").replaceChildren(
    el("span", { class: "examples-title", text: t("prompt.examples") }),
    ...TASK_EXAMPLES.map(([task, prompt]) =>
      el("button", {
        type: "button",
        class: "example",
        "data-task": task,
        text: t("task." + task) + ": " + prompt,
        onclick: () => {
          $("live-prompt").value = prompt;
          checkPrompt();
          $("live-prompt").focus();
        },
      }),
    ),
  );
  $("live-format").textContent = t("prompt.format");
  if (live.vocab !== undefined) checkPrompt();
}

function setupPromptHelp() {
  live.vocab = promptVocabulary();
  setupPromptText();
  $("live-prompt").addEventListener("input", checkPrompt);
}

// The step and head that show the answer: at the first decode step (the
// prefill when there is none), the head of any layer that puts the most
// weight on one key of the question (not the task letter, not "=") -- for
// copy, the head that reads the character it copies next.
function answerView(trace) {
  const d = trace.doc;
  const step = d.steps.length > 1 ? 1 : 0;
  const s = d.steps[step];
  const promptLen = d.steps[0].tokens.length;
  let best = { step, layer: trace.layers[0], head: 0, weight: -1 };
  for (const layer of trace.layers) {
    const snap = snapshot(trace, step, "attn.softmax", layer);
    if (!snap) continue;
    snapshotHeads(snap).forEach((head, hi) => {
      const mat = headMatrix(snap, hi);
      const r = mat.rows - 1; // the query that chose the next token
      for (let c = 0; c < mat.cols; c++) {
        const pos = s.window_offset + s.keys.start + c;
        if (pos < 2 || pos >= promptLen - 1) continue;
        const w = mat.at(r, c);
        if (typeof w === "number" && w > best.weight) best = { step, layer, head, weight: w };
      }
    });
  }
  return best;
}

// After Generate: the answer's step, its head enlarged; Esc shows every layer.
function showAnswer() {
  const a = answerView(state.trace);
  state.step = a.step;
  state.zoom = { layer: a.layer, head: a.head };
  state.cursor = { r: 0, c: 0 };
  selectTab("attention");
  renderStep();
}
