#!/usr/bin/python3
"""torch_compare.py: GlassLM's training step and decoding against eager PyTorch,
on the same machine in the same run, as ratios.

  bench/torch_compare.py [--glassllm build/glassllm] [--runs 11] [--rounds 7]
                         [--threads N]

Builds the model of `glassllm bench` in plain PyTorch ops (default config:
vocabulary 99, d_model 128, 4 layers, 4 query heads sharing 2 K/V heads,
head_dim 32, SwiGLU MLP of 384, RMSNorm, RoPE, no tied embeddings), float32,
and times what the bench times:
  - one training step: cross-entropy over 16 x 128 tokens, backward to every
    weight, gradients zeroed (no optimizer step);
  - decoding: an 8-token prompt, then 120 one-token steps through a cache
    that grows by concatenation, repeat_kv attention.
The two programs take turns: PyTorch, `glassllm bench --json --only model`
(the model's figures alone, a few seconds), PyTorch, ..., --rounds runs of
the bench in all, each between two timings of PyTorch. A round's ratio is
GlassLM's figure over the median of the PyTorch timings on either side of
it, so that a change in the machine's load shows in the ratios rather than
in one of them; the summary is the median round and the worst round (the
goal holds only if it holds in every round). Rounds are kept short
because a shared virtual machine runs in phases of several seconds in
which everything is slower (PyTorch's training step has varied from 226 to
465 ms within one run): a whole bench between two PyTorch timings, a
minute, put them in different phases and the ratios of one run varied from
0.37 to 0.66. PyTorch uses the bench's thread count, with OpenMP's
passive waiting (OMP_WAIT_POLICY=PASSIVE, set before torch loads).
Needs /usr/bin/python3 with python3-torch (Debian 12: 1.13). Not part of CI.
"""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
import torch  # noqa: E402  (after the environment variable above)
import torch.nn.functional as F  # noqa: E402

VOCAB, D, LAYERS, H, HKV, FF, MAX_LEN = 99, 128, 4, 4, 2, 384, 128
HD = D // H


def rms_norm(x, w, eps=1e-5):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w


def rope(x, start, inv_freq):  # x [B, h, T, hd], rotate-half convention
    T = x.shape[2]
    pos = torch.arange(start, start + T, dtype=torch.float64)
    ang = torch.outer(pos, inv_freq)  # [T, hd/2]
    cos = torch.cat([ang.cos(), ang.cos()], -1).to(x.dtype)
    sin = torch.cat([ang.sin(), ang.sin()], -1).to(x.dtype)
    x1, x2 = x[..., : HD // 2], x[..., HD // 2:]
    return x * cos + torch.cat([-x2, x1], -1) * sin


class Model:
    def __init__(self, seed=0):
        g = torch.Generator().manual_seed(seed)

        def w(*shape):
            return (0.02 * torch.randn(*shape, generator=g)).requires_grad_()

        self.embed = w(VOCAB, D)
        self.layers = [dict(ln1=torch.ones(D, requires_grad=True), q=w(H * HD, D),
                            k=w(HKV * HD, D), v=w(HKV * HD, D), o=w(D, H * HD),
                            ln2=torch.ones(D, requires_grad=True), gate=w(FF, D),
                            up=w(FF, D), down=w(D, FF)) for _ in range(LAYERS)]
        self.norm = torch.ones(D, requires_grad=True)
        self.lm_head = w(VOCAB, D)
        self.inv_freq = 1.0 / (10000.0 ** (torch.arange(0, HD, 2, dtype=torch.float64) / HD))

    def parameters(self):
        yield from (self.embed, self.norm, self.lm_head)
        for layer in self.layers:
            yield from layer.values()

    def forward(self, ids, cache=None, start=0):  # ids [B, T] -> logits [B, T, V]
        B, T = ids.shape
        x = F.embedding(ids, self.embed)
        for l, w in enumerate(self.layers):
            h = rms_norm(x, w["ln1"])
            q = F.linear(h, w["q"]).view(B, T, H, HD).transpose(1, 2)
            k = F.linear(h, w["k"]).view(B, T, HKV, HD).transpose(1, 2)
            v = F.linear(h, w["v"]).view(B, T, HKV, HD).transpose(1, 2)
            q, k = rope(q, start, self.inv_freq), rope(k, start, self.inv_freq)
            if cache is not None:
                if l in cache:
                    k = torch.cat([cache[l][0], k], 2)
                    v = torch.cat([cache[l][1], v], 2)
                cache[l] = (k, v)
            m = k.shape[2]
            k = k.repeat_interleave(H // HKV, 1)
            v = v.repeat_interleave(H // HKV, 1)
            scores = q @ k.transpose(-1, -2) / math.sqrt(HD)  # [B, H, T, m]
            # Query t (position start + t) sees keys at positions <= its own.
            qpos = torch.arange(start, start + T).view(T, 1)
            # Keys: the cache's positions 0..m-1, else the same tokens' own.
            kpos = torch.arange(m) if cache is not None else torch.arange(start, start + m)
            kpos = kpos.view(1, m)
            scores = scores.masked_fill(kpos > qpos, float("-inf"))
            out = torch.softmax(scores, -1) @ v
            x = x + F.linear(out.transpose(1, 2).reshape(B, T, H * HD), w["o"])
            h = rms_norm(x, w["ln2"])
            x = x + F.linear(F.silu(F.linear(h, w["gate"])) * F.linear(h, w["up"]),
                             w["down"])
        return F.linear(rms_norm(x, self.norm), self.lm_head)


def median_time(f, runs):
    f()  # warm up
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        f()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def torch_figures(runs):
    model = Model()
    g = torch.Generator().manual_seed(7)
    tokens = torch.randint(VOCAB, (16, MAX_LEN), generator=g)
    targets = torch.randint(VOCAB, (16, MAX_LEN), generator=g)
    stream = torch.randint(VOCAB, (1, MAX_LEN), generator=g)

    def step():
        loss = F.cross_entropy(model.forward(tokens).view(-1, VOCAB), targets.view(-1))
        loss.backward()
        for p in model.parameters():
            p.grad = None

    def decode():
        with torch.no_grad():
            cache = {}
            model.forward(stream[:, :8], cache, 0)
            for s in range(120):
                model.forward(stream[:, 8 + s: 9 + s], cache, 8 + s)

    return {"train_step_ms": 1e3 * median_time(step, max(3, runs // 4)),
            "decode_tokens_per_s": 120.0 / median_time(decode, max(3, runs // 4))}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--glassllm", default="build/glassllm", help="the glassllm tool")
    p.add_argument("--runs", type=int, default=11, help="repetitions per figure")
    p.add_argument("--rounds", type=int, default=7,
                   help="runs of glassllm bench, each between two timings of PyTorch")
    p.add_argument("--threads", type=int, default=0,
                   help="PyTorch's threads (default: the bench's blas_threads)")
    a = p.parse_args()
    if a.runs < 1:
        sys.exit(f"torch_compare: --runs {a.runs}: need at least 1")
    if a.rounds < 1:
        sys.exit(f"torch_compare: --rounds {a.rounds}: need at least 1")
    if not os.access(a.glassllm, os.X_OK):
        sys.exit(f"torch_compare: --glassllm {a.glassllm}: not an executable; build first")

    threads = a.threads or os.cpu_count()
    torch.set_num_threads(threads)
    theirs = [torch_figures(a.runs)]
    ours = []
    for _ in range(a.rounds):
        out = subprocess.run([a.glassllm, "bench", "--json", "--only", "model",
                              "--runs", str(a.runs)],
                             check=True, capture_output=True, text=True).stdout
        ours.append(json.loads(out))
        if not a.threads and ours[-1]["blas_threads"] != threads:
            threads = ours[-1]["blas_threads"]
            torch.set_num_threads(threads)
        theirs.append(torch_figures(a.runs))

    # (name, GlassLM's key, PyTorch's key, format, goal, worst): ratios are
    # GlassLM over PyTorch for times (lower is better, so the worst round is
    # the largest ratio) and for rates (higher is better: the smallest).
    rows = [("training step, 16 x 128 (ms)", "train_step_ms_float32", "train_step_ms",
             ".1f", "goal <= 0.5", max),
            ("decode, 120 steps (tokens/s)", "decode_tokens_per_s_float32",
             "decode_tokens_per_s", ".0f", "goal >= 10", min)]
    print(f"threads: PyTorch {threads} (torch {torch.__version__}), "
          f"GlassLM {ours[0]['blas_threads']} ({ours[0]['blas_backend']}, "
          f"{ours[0]['blas_core']}); {a.rounds} round(s)")
    print(f"{'':32} {'round':>5} {'GlassLM':>9} {'PyTorch':>9} {'ratio':>7}"
          "  (PyTorch before / after)")
    for name, our_key, their_key, fmt, goal, worst in rows:
        ratios = []
        for r, figures in enumerate(ours):
            before, after = theirs[r][their_key], theirs[r + 1][their_key]
            theirs_median = statistics.median([before, after])
            ratios.append(figures[our_key] / theirs_median)
            print(f"{name if r == 0 else '':32} {r + 1:5} {figures[our_key]:9{fmt}} "
                  f"{theirs_median:9{fmt}} {ratios[-1]:7.2f}  "
                  f"({before:{fmt}} / {after:{fmt}})")
        print(f"{'':32} {'median':>5} {'':9} {'':9} {statistics.median(ratios):7.2f}  "
              f"({goal})")
        print(f"{'':32} {'worst':>5} {'':9} {'':9} {worst(ratios):7.2f}  "
              f"({goal} in every round)")


if __name__ == "__main__":
    main()
