#!/usr/bin/python3
"""exaone4_reference.py: random-weight checkpoints in the exact format of EXAONE
4.0 (Exaone4ForCausalLM), and their logits computed by an independent forward
pass in plain PyTorch float64 ops (no transformers), for tests/cli_real_models.sh.

  exaone4_reference.py make CONFIG.json DIR [--layers N] [--vocab V]
                       [--hidden D] [--intermediate F] [--heads H HKV HD]
                       [--max-len N] [--sliding-window W]
                       [--layer-types LLLG] [--seed S] [--dtype bfloat16|...]
      Writes DIR/config.json (CONFIG with the sizes given replaced) and random
      weights DIR/model.safetensors with EXAONE 4.0's names: no
      input_layernorm, self_attn.q_norm / k_norm [head_dim],
      post_attention_layernorm and post_feedforward_layernorm, no biases, and
      no lm_head.weight when tie_word_embeddings is true. --layer-types gives
      one letter per layer, L (sliding_attention) or G (full_attention),
      written as layer_types and sliding_window_pattern, with sliding_window W.

  exaone4_reference.py logits DIR --tokens 1,2,3 --out FILE.npy
      The float64 logits [1, T, vocab] of the tokens at positions 0..T-1.

  exaone4_reference.py greedy DIR --tokens 1,2,3 --steps N
      Greedy decoding from the float64 logits: N times, the whole sequence
      again and the argmax of its last position appended, stopping after
      config.json's eos_token_id. Prints the new ids (1,2,3); on stderr, per
      step, the gap between the two largest logits, relative to the largest
      |logit| (a token compared across implementations must not be a near
      tie).

The forward follows transformers' modeling_exaone4.py: each layer does
  x = x + post_attention_layernorm(attention(x))
  x = x + post_feedforward_layernorm(mlp(x))
with QK-norm (an RMSNorm over head_dim on every head of q and k, after the
projection and before RoPE), RoPE on a layer iff sliding_window is null or the
layer is a sliding one, and a sliding layer's query at position i seeing keys
i - sliding_window < j <= i. RoPE's inverse frequencies come from
llama_reference.py (modeling_rope_utils.py's default, linear and llama3).
"""
import argparse
import json
import math
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from llama_reference import DTYPES, inv_freq, load, write_safetensors  # noqa: E402


def head_dim(cfg):
    return cfg.get("head_dim") or cfg["hidden_size"] // cfg["num_attention_heads"]


def weight_shapes(cfg):
    """Every weight's name and shape, as Exaone4ForCausalLM names them."""
    D, F, V = cfg["hidden_size"], cfg["intermediate_size"], cfg["vocab_size"]
    H, hd = cfg["num_attention_heads"], head_dim(cfg)
    Hkv = cfg.get("num_key_value_heads") or H
    shapes = {"model.embed_tokens.weight": (V, D)}
    for l in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{l}."
        shapes[p + "self_attn.q_proj.weight"] = (H * hd, D)
        shapes[p + "self_attn.k_proj.weight"] = (Hkv * hd, D)
        shapes[p + "self_attn.v_proj.weight"] = (Hkv * hd, D)
        shapes[p + "self_attn.o_proj.weight"] = (D, H * hd)
        shapes[p + "self_attn.q_norm.weight"] = (hd,)
        shapes[p + "self_attn.k_norm.weight"] = (hd,)
        shapes[p + "mlp.gate_proj.weight"] = (F, D)
        shapes[p + "mlp.up_proj.weight"] = (F, D)
        shapes[p + "mlp.down_proj.weight"] = (D, F)
        shapes[p + "post_attention_layernorm.weight"] = (D,)
        shapes[p + "post_feedforward_layernorm.weight"] = (D,)
    shapes["model.norm.weight"] = (D,)
    if not cfg.get("tie_word_embeddings", False):
        shapes["lm_head.weight"] = (V, D)
    return shapes


def make(args):
    cfg = json.load(open(args.config))
    if args.layers:
        cfg["num_hidden_layers"] = args.layers
        cfg["layer_types"] = cfg["layer_types"][:args.layers]
    if args.vocab:  # a smaller vocabulary: BOS and EOS must stay inside it
        cfg["vocab_size"] = args.vocab
        cfg["bos_token_id"], cfg["eos_token_id"] = 1, 2
    if args.hidden:
        cfg["hidden_size"] = args.hidden
    if args.intermediate:
        cfg["intermediate_size"] = args.intermediate
    if args.heads:  # query heads, K/V heads and head_dim
        cfg["num_attention_heads"], cfg["num_key_value_heads"], cfg["head_dim"] = args.heads
    if args.max_len:
        cfg["max_position_embeddings"] = args.max_len
    if args.layer_types:
        assert len(args.layer_types) == cfg["num_hidden_layers"], args.layer_types
        cfg["layer_types"] = [{"L": "sliding_attention", "G": "full_attention"}[c]
                              for c in args.layer_types]
        cfg["sliding_window_pattern"] = args.layer_types
        cfg["sliding_window"] = args.sliding_window
    torch.manual_seed(args.seed)
    dtype, code = DTYPES[args.dtype]
    tensors = {}
    for name, shape in weight_shapes(cfg).items():
        if name.endswith("norm.weight"):  # around 1, so that the scale matters
            t = 1.0 + 0.1 * torch.randn(shape, dtype=torch.float64)
        else:
            t = 0.02 * torch.randn(shape, dtype=torch.float64)
        tensors[name] = t.to(dtype)
    os.makedirs(args.dir, exist_ok=True)
    cfg["torch_dtype"] = args.dtype
    with open(os.path.join(args.dir, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)
    write_safetensors(os.path.join(args.dir, "model.safetensors"), tensors, code)


def layer_kinds(cfg):
    """Per layer: (sliding window or None, RoPE or not), as Exaone4Attention."""
    window = cfg.get("sliding_window", 4096)
    types = cfg.get("layer_types")
    if types is None:
        every = cfg.get("sliding_window_pattern", 4) if window is not None else 0
        types = ["sliding_attention" if every and (i + 1) % every != 0 else "full_attention"
                 for i in range(cfg["num_hidden_layers"])]
    kinds = []
    for t in types:
        sliding = t == "sliding_attention"
        kinds.append((window if sliding else None, window is None or sliding))
    return kinds


def forward(cfg, W, ids):
    H, hd = cfg["num_attention_heads"], head_dim(cfg)
    Hkv = cfg.get("num_key_value_heads") or H
    eps, T = cfg["rms_norm_eps"], len(ids)

    def rms(x, w):  # Exaone4RMSNorm, over the last axis
        return w * (x * torch.rsqrt((x * x).mean(-1, keepdim=True) + eps))

    def rotate_half(x):
        return torch.cat([-x[..., hd // 2:], x[..., :hd // 2]], -1)

    angle = torch.arange(T, dtype=torch.float64)[:, None] * inv_freq(cfg)[None, :]  # [T, hd/2]
    cos, sin = torch.cat([angle.cos()] * 2, -1), torch.cat([angle.sin()] * 2, -1)
    i = torch.arange(T)[:, None]  # query positions
    j = torch.arange(T)[None, :]  # key positions
    x = W["model.embed_tokens.weight"][torch.tensor(ids)]  # [T, D], not scaled
    for l, (window, use_rope) in enumerate(layer_kinds(cfg)):
        p = f"model.layers.{l}."
        q = (x @ W[p + "self_attn.q_proj.weight"].T).view(T, H, hd).transpose(0, 1)
        k = (x @ W[p + "self_attn.k_proj.weight"].T).view(T, Hkv, hd).transpose(0, 1)
        v = (x @ W[p + "self_attn.v_proj.weight"].T).view(T, Hkv, hd).transpose(0, 1)
        q, k = rms(q, W[p + "self_attn.q_norm.weight"]), rms(k, W[p + "self_attn.k_norm.weight"])
        if use_rope:
            q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
        k, v = k.repeat_interleave(H // Hkv, 0), v.repeat_interleave(H // Hkv, 0)
        visible = j <= i
        if window is not None:
            visible = visible & (j > i - window)
        scores = (q @ k.transpose(1, 2)) * hd ** -0.5
        probs = torch.softmax(scores.masked_fill(~visible, float("-inf")), -1)
        out = (probs @ v).transpose(0, 1).reshape(T, H * hd)
        x = x + rms(out @ W[p + "self_attn.o_proj.weight"].T,
                    W[p + "post_attention_layernorm.weight"])
        gate = x @ W[p + "mlp.gate_proj.weight"].T
        mlp = (torch.nn.functional.silu(gate) * (x @ W[p + "mlp.up_proj.weight"].T)) @ \
            W[p + "mlp.down_proj.weight"].T
        x = x + rms(mlp, W[p + "post_feedforward_layernorm.weight"])
    x = rms(x, W["model.norm.weight"])
    head = W.get("lm_head.weight", W["model.embed_tokens.weight"])
    return (x @ head.T)[None]  # [1, T, V]


def logits(args):
    cfg = json.load(open(os.path.join(args.dir, "config.json")))
    ids = [int(t) for t in args.tokens.split(",")]
    np.save(args.out, forward(cfg, load(args.dir), ids).numpy())


def greedy(args):
    cfg = json.load(open(os.path.join(args.dir, "config.json")))
    W = load(args.dir)
    eos = cfg.get("eos_token_id")
    eos = set(eos if isinstance(eos, list) else [] if eos is None else [eos])
    ids, new = [int(t) for t in args.tokens.split(",")], []
    for _ in range(args.steps):
        last = forward(cfg, W, ids + new)[0, -1]
        top2 = torch.topk(last, 2).values
        new.append(int(last.argmax()))
        print(f"step {len(new)}: id {new[-1]}, top-2 gap "
              f"{float(top2[0] - top2[1]) / float(last.abs().max()):.2e} of max |logit|",
              file=sys.stderr)
        if new[-1] in eos:
            break
    print(",".join(str(i) for i in new))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    m = sub.add_parser("make")
    m.add_argument("config")
    m.add_argument("dir")
    m.add_argument("--layers", type=int, default=0)
    m.add_argument("--vocab", type=int, default=0)
    m.add_argument("--hidden", type=int, default=0)
    m.add_argument("--intermediate", type=int, default=0)
    m.add_argument("--heads", type=int, nargs=3, metavar=("H", "HKV", "HD"))
    m.add_argument("--max-len", type=int, default=0)
    m.add_argument("--sliding-window", type=int, default=4)
    m.add_argument("--layer-types", default="")
    m.add_argument("--seed", type=int, default=0)
    m.add_argument("--dtype", default="bfloat16", choices=list(DTYPES))
    g = sub.add_parser("logits")
    g.add_argument("dir")
    g.add_argument("--tokens", required=True)
    g.add_argument("--out", required=True)
    g = sub.add_parser("greedy")
    g.add_argument("dir")
    g.add_argument("--tokens", required=True)
    g.add_argument("--steps", type=int, required=True)
    args = parser.parse_args()
    {"make": make, "logits": logits, "greedy": greedy}[args.command](args)


if __name__ == "__main__":
    main()
