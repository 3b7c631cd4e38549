// live.test.mjs: the live inspector -- the page `glassllm inspector` writes,
// running the bundled demo model in WebAssembly -- in headless Debian
// Chromium, against the command line's own trace. Every request the page
// makes is routed and counted: there must be none. Run by CTest as part of
// viewer_browser_tests; when the binary was built without the engine
// (GLASSLLM_HAS_ENGINE=0, scripts/build-wasm.sh not run) these tests are
// skipped and tests/cli_inspector.sh checks the message instead.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { launch, glassllm, fileUrl, readTrace, openPage } from "./browser.mjs";

const skip =
  process.env.GLASSLLM_HAS_ENGINE === "0" &&
  "this glassllm has no WebAssembly engine (scripts/build-wasm.sh)";
const work = fs.mkdtempSync(path.join(os.tmpdir(), "glassllm-live-"));
const at = (name) => path.join(work, name);
const PROMPT = "C hello=";
let browser;
const requests = []; // every request any page made

before(async () => {
  if (skip) return;
  glassllm("inspector", "--out", at("live.html"));
  glassllm("trace", "--prompt", PROMPT, "--steps", "16", "--out", at("cli.json"));
  glassllm("trace", "--prompt", "C abcd=", "--steps", "2", "--html", at("trace.html"));
  browser = await launch();
  // The pages themselves are the only requests allowed: opening them from disk.
  const pages = [fileUrl(at("live.html")), fileUrl(at("trace.html"))];
  await browser.context.route("**/*", (route) => {
    if (pages.includes(route.request().url())) return route.continue();
    requests.push(route.request().url());
    return route.abort();
  });
});

after(async () => {
  if (browser) await browser.close();
  fs.rmSync(work, { recursive: true, force: true });
});

async function openLive(name = "live.html") {
  const page = await openPage(browser.context, fileUrl(at(name)));
  await page.evaluate(() => window.glassllm.ready);
  return page;
}

async function generateByHand(page, prompt, steps) {
  await page.fill("#live-prompt", prompt);
  await page.fill("#live-steps", String(steps));
  await page.click("#live-generate");
  await page.waitForFunction(() => /^Generated in/.test($("live-status").textContent));
}

// A trace object from the page, read as the tests read the command line's.
function asRead(doc, name) {
  fs.writeFileSync(at(name), JSON.stringify(doc));
  return readTrace(at(name));
}

test(
  "typed prompt: the same tokens as glassllm trace, attention within 1e-5",
  { skip },
  async () => {
    const page = await openLive();
    await generateByHand(page, PROMPT, 16);
    const cli = readTrace(at("cli.json"));
    const text = (d) => d.sequence.map((t) => t.text).join("");
    const shown = await page.evaluate(() => window.glassllmInspector.state.trace.doc);
    assert.equal(text(shown), text(cli));
    assert.equal(text(cli), PROMPT + "hello");
    // The views show it as they show a trace from disk.
    assert.match(await page.textContent("#tokens"), /h.*e.*l.*l.*o/s);
    assert.equal(await page.locator("#timeline > *").count(), cli.steps.length);

    const api = asRead(
      await page.evaluate((p) => window.glassllm.generate(p, 16), PROMPT),
      "api.json",
    );
    assert.equal(api.format, "glassllm-trace");
    assert.equal(api.version, cli.version);
    assert.equal(api.steps.length, cli.steps.length);
    let compared = 0;
    for (let s = 0; s < cli.steps.length; s++) {
      assert.deepEqual(api.steps[s].next, cli.steps[s].next);
      for (const want of cli.steps[s].snapshots) {
        if (want.name !== "attn.softmax") continue;
        const got = api.steps[s].snapshots.find(
          (x) => x.name === want.name && x.layer === want.layer,
        );
        assert.deepEqual(got.shape, want.shape);
        for (let i = 0; i < want.data.length; i++)
          assert.ok(
            Math.abs(got.data[i] - want.data[i]) <= 1e-5,
            `step ${s} layer ${want.layer} [${i}]`,
          );
        compared += want.data.length;
      }
    }
    assert.ok(compared > 1000, "compared " + compared + " attention weights");
    assert.deepEqual(page.errors, []);
    assert.deepEqual(requests, []);
    await page.close();
  },
);

test("a hostile prompt is shown as text", { skip }, async () => {
  const page = await openLive();
  const hostile = '<img src=x onerror="window.__pwned=1">';
  await generateByHand(page, hostile, 1);
  assert.equal(await page.evaluate(() => window.__pwned), undefined);
  assert.equal(await page.locator("img").count(), 0);
  const chips = await page.locator("#tokens .t").allTextContents();
  assert.equal(chips.slice(0, 10).join(""), "<img\u2423src=x");
  assert.deepEqual(requests, []);
  await page.close();
});

test(
  "live gradients: the target's loss is the command line's -log p of each token",
  { skip },
  async () => {
    const page = await openLive();
    await generateByHand(page, PROMPT, 2);
    await page.click('[data-tab="grads"]');
    // A live trace has no gradients of its own: no empty chart, and the
    // summary points to the target box.
    assert.ok(await page.isHidden("#grads-chart"));
    assert.ok(await page.isHidden("#grads-controls"));
    assert.match(await page.textContent("#grads-summary"), /type a target continuation below/);
    await page.fill("#live-target", "hello");
    await page.click("#live-grads");
    await page.waitForSelector("#target-summary:not([hidden])");
    const g = await page.evaluate(() => window.glassllm.gradients("C hello=", "hello"));
    // Teacher forcing on the greedy continuation: each target token's loss is
    // -log of the probability the command line's trace gave that token.
    const cli = readTrace(at("cli.json"));
    const want = cli.steps.slice(0, 5).map((s) => -Math.log(s.next.prob));
    g.target.forEach((t, i) => assert.ok(Math.abs(t.loss - want[i]) < 1e-4, t.text));
    const mean = want.reduce((a, b) => a + b, 0) / want.length;
    assert.ok(Math.abs(g.loss - mean) < 1e-4);
    assert.equal(g.tokens.length, PROMPT.length + 4);
    assert.ok(g.tokens.every((t) => t.grad_norm >= 0) && g.tokens.some((t) => t.grad_norm > 0));
    assert.match(await page.textContent("#target-summary"), /loss .* nats, the mean of 5 tokens/);
    assert.ok(await page.evaluate(() => $("target-chart").width > 0));
    // Away and back: the chart is drawn again at its size, with the same bars.
    const drawn = () => page.evaluate(() => $("target-chart").toDataURL());
    const before = await drawn();
    await page.click('[data-tab="attention"]');
    await page.click('[data-tab="grads"]');
    assert.equal(await drawn(), before);
    await page.close();
  },
);

test("a model too big for the page is refused with a message", { skip }, async () => {
  const page = await openLive();
  const message = await page.evaluate(() =>
    window.glassllm
      .loadModel({ config: "{}", tokenizer: "", weights: new Uint8Array(17 * 1024 * 1024) })
      .then(
        () => "loaded",
        (e) => e.message,
      ),
  );
  assert.equal(
    message,
    "the model's weights are 17.0 MiB; a page runs a model of at most 16.0 MiB",
  );
  assert.match(
    await page.textContent("#message"),
    /Could not load the model: the model's weights are 17\.0 MiB/,
  );
  // A broken model is refused by the engine's own checks, by file name.
  const broken = await page.evaluate(() =>
    window.glassllm.loadModel({ config: "{}", tokenizer: "", weights: new Uint8Array(8) }).then(
      () => "loaded",
      (e) => e.message,
    ),
  );
  assert.match(broken, /^model\/config\.json: /);
  const empty = await page.evaluate(() => window.glassllm.generate("", 4).catch((e) => e.message));
  assert.match(empty, /no model|the prompt is empty/);
  await page.close();
});

test(
  "a page written by trace --html opens on its trace, and its toolbar opens the live bar",
  { skip },
  async () => {
    const page = await openLive("trace.html");
    assert.equal(await page.isVisible("#live"), false);
    assert.equal(await page.locator("#timeline > *").count(), 3);
    await page.click("#live-open");
    assert.equal(await page.isVisible("#live"), true);
    assert.equal(await page.inputValue("#live-prompt"), "C abcd=");
    await generateByHand(page, "C wxyz=", 4);
    const shown = await page.evaluate(() => window.glassllmInspector.state.trace.doc.sequence);
    assert.equal(shown.map((t) => t.text).join(""), "C wxyz=wxyz");
    assert.deepEqual(page.errors, []);
    assert.deepEqual(requests, []);
    await page.close();
  },
);

test("a prompt or target holding a NUL is refused, not cut at it", { skip }, async () => {
  // The engine takes C strings: "a\u0000b" would silently become "a".
  const page = await openLive();
  const refused = await page.evaluate(() => {
    const message = (p) =>
      p.then(
        () => "accepted",
        (e) => e.message,
      );
    return Promise.all([
      message(window.glassllm.generate("C a\u0000b=", 4)),
      message(window.glassllm.gradients("C a\u0000b=", "ab")),
      message(window.glassllm.gradients("C ab=", "a\u0000b")),
    ]);
  });
  assert.match(refused[0], /^the prompt holds a NUL character \(U\+0000\)/);
  assert.match(refused[1], /^the prompt holds a NUL character \(U\+0000\)/);
  assert.match(refused[2], /^the target holds a NUL character \(U\+0000\)/);
  assert.deepEqual(page.errors, []);
  await page.close();
});
