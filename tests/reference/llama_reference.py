#!/usr/bin/python3
"""llama_reference.py: random-weight checkpoints in the exact format of published
Llama-family models, and their logits computed by an independent forward pass
written in plain PyTorch ops (no transformers), for tests/cli_real_models.sh.

  llama_reference.py make CONFIG.json DIR [--layers N] [--vocab V] [--seed S]
                     [--dtype bfloat16|float16|float32|float64] [--shards K]
      Writes DIR/config.json (CONFIG with num_hidden_layers = N and
      vocab_size = V when given) and random weights: DIR/model.safetensors, or K
      shards model-0000i-of-0000K.safetensors with model.safetensors.index.json,
      as transformers saves them. lm_head.weight is left out when
      tie_word_embeddings is true; Qwen2 has q/k/v biases.

  llama_reference.py logits DIR --tokens 1,2,3 --out FILE.npy
      The float64 logits [1, T, vocab] of the tokens at positions 0..T-1.

The forward follows transformers' LlamaForCausalLM / Qwen2ForCausalLM, with
RoPE's inverse frequencies as modeling_rope_utils.py computes them (default,
linear, llama3), all in float64.
"""
import argparse
import json
import math
import os
import struct

import numpy as np
import torch

DTYPES = {"bfloat16": (torch.bfloat16, "BF16"), "float16": (torch.float16, "F16"),
          "float32": (torch.float32, "F32"), "float64": (torch.float64, "F64")}


def head_dim(cfg):
    return cfg.get("head_dim") or cfg["hidden_size"] // cfg["num_attention_heads"]


def has_qkv_bias(cfg):
    return cfg["model_type"] == "qwen2" or cfg.get("attention_bias", False)


def weight_shapes(cfg):
    """Every weight's name and shape, as transformers names them."""
    D, F, V = cfg["hidden_size"], cfg["intermediate_size"], cfg["vocab_size"]
    H, hd = cfg["num_attention_heads"], head_dim(cfg)
    Hkv = cfg.get("num_key_value_heads") or H
    shapes = {"model.embed_tokens.weight": (V, D)}
    for l in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{l}."
        shapes[p + "input_layernorm.weight"] = (D,)
        shapes[p + "self_attn.q_proj.weight"] = (H * hd, D)
        shapes[p + "self_attn.k_proj.weight"] = (Hkv * hd, D)
        shapes[p + "self_attn.v_proj.weight"] = (Hkv * hd, D)
        if has_qkv_bias(cfg):
            shapes[p + "self_attn.q_proj.bias"] = (H * hd,)
            shapes[p + "self_attn.k_proj.bias"] = (Hkv * hd,)
            shapes[p + "self_attn.v_proj.bias"] = (Hkv * hd,)
        shapes[p + "self_attn.o_proj.weight"] = (D, H * hd)
        shapes[p + "post_attention_layernorm.weight"] = (D,)
        shapes[p + "mlp.gate_proj.weight"] = (F, D)
        shapes[p + "mlp.up_proj.weight"] = (F, D)
        shapes[p + "mlp.down_proj.weight"] = (D, F)
    shapes["model.norm.weight"] = (D,)
    if not cfg.get("tie_word_embeddings", False):
        shapes["lm_head.weight"] = (V, D)
    return shapes


def write_safetensors(path, tensors, code):
    header, offset = {"__metadata__": {"format": "pt"}}, 0
    blobs = []
    for name, t in tensors.items():
        blob = t.contiguous().view(torch.uint8).numpy().tobytes() if t.dtype in (
            torch.bfloat16, torch.float16) else t.contiguous().numpy().tobytes()
        header[name] = {"dtype": code, "shape": list(t.shape),
                        "data_offsets": [offset, offset + len(blob)]}
        offset += len(blob)
        blobs.append(blob)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for blob in blobs:
            f.write(blob)


def make(args):
    cfg = json.load(open(args.config))
    if args.layers:
        cfg["num_hidden_layers"] = args.layers
    if args.vocab:  # a smaller vocabulary: BOS and EOS must stay inside it
        cfg["vocab_size"] = args.vocab
        cfg["bos_token_id"], cfg["eos_token_id"] = 1, 2
    torch.manual_seed(args.seed)
    dtype, code = DTYPES[args.dtype]
    tensors = {}
    for name, shape in weight_shapes(cfg).items():
        if name.endswith("norm.weight"):  # around 1, so that the scale matters
            t = 1.0 + 0.1 * torch.randn(shape, dtype=torch.float64)
        elif name.endswith(".bias"):
            t = 0.1 * torch.randn(shape, dtype=torch.float64)
        else:
            t = 0.02 * torch.randn(shape, dtype=torch.float64)
        tensors[name] = t.to(dtype)
    os.makedirs(args.dir, exist_ok=True)
    cfg["torch_dtype"] = args.dtype
    with open(os.path.join(args.dir, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)
    if args.shards <= 1:
        write_safetensors(os.path.join(args.dir, "model.safetensors"), tensors, code)
        return
    names = list(tensors)
    per = math.ceil(len(names) / args.shards)
    weight_map, total = {}, 0
    for s in range(args.shards):
        file = f"model-{s + 1:05d}-of-{args.shards:05d}.safetensors"
        part = {n: tensors[n] for n in names[s * per:(s + 1) * per]}
        write_safetensors(os.path.join(args.dir, file), part, code)
        for n, t in part.items():
            weight_map[n] = file
            total += t.numel() * t.element_size()
    with open(os.path.join(args.dir, "model.safetensors.index.json"), "w") as f:
        json.dump({"metadata": {"total_size": total}, "weight_map": weight_map}, f, indent=2)


def read_safetensors(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        b, e = info["data_offsets"]
        raw = torch.frombuffer(bytearray(data[b:e]), dtype=torch.uint8)
        dtype = {v[1]: v[0] for v in DTYPES.values()}[info["dtype"]]
        out[name] = raw.view(dtype).reshape(info["shape"]).to(torch.float64)
    return out


def load(dir):
    index = os.path.join(dir, "model.safetensors.index.json")
    if os.path.exists(index):
        weights = {}
        for file in sorted(set(json.load(open(index))["weight_map"].values())):
            weights.update(read_safetensors(os.path.join(dir, file)))
        return weights
    return read_safetensors(os.path.join(dir, "model.safetensors"))


def inv_freq(cfg):
    """RoPE's inverse frequencies, as transformers' modeling_rope_utils.py."""
    hd = head_dim(cfg)
    freq = 1.0 / (cfg["rope_theta"] ** (torch.arange(0, hd, 2, dtype=torch.float64) / hd))
    scaling = cfg.get("rope_scaling")
    if not scaling:
        return freq
    kind = scaling.get("rope_type", scaling.get("type"))
    if kind == "linear":
        return freq / scaling["factor"]
    assert kind == "llama3", kind
    factor, low, high = scaling["factor"], scaling["low_freq_factor"], scaling["high_freq_factor"]
    old = scaling["original_max_position_embeddings"]
    wavelen = 2 * math.pi / freq
    scaled = torch.where(wavelen > old / low, freq / factor, freq)
    smooth = (old / wavelen - low) / (high - low)
    smoothed = (1 - smooth) * scaled / factor + smooth * scaled
    medium = ~(wavelen < old / high) * ~(wavelen > old / low)
    return torch.where(medium, smoothed, scaled)


def forward(cfg, W, ids):
    D, H, hd = cfg["hidden_size"], cfg["num_attention_heads"], head_dim(cfg)
    Hkv = cfg.get("num_key_value_heads") or H
    eps, T = cfg["rms_norm_eps"], len(ids)

    def rms(x, w):
        return x / torch.sqrt((x * x).mean(-1, keepdim=True) + eps) * w

    def rotate_half(x):
        return torch.cat([-x[..., hd // 2:], x[..., :hd // 2]], -1)

    angle = torch.arange(T, dtype=torch.float64)[:, None] * inv_freq(cfg)[None, :]  # [T, hd/2]
    cos, sin = torch.cat([angle.cos()] * 2, -1), torch.cat([angle.sin()] * 2, -1)
    mask = torch.triu(torch.full((T, T), float("-inf"), dtype=torch.float64), 1)
    x = W["model.embed_tokens.weight"][torch.tensor(ids)]  # [T, D]
    for l in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{l}."

        def proj(name, h):
            y = h @ W[p + name + ".weight"].T
            return y + W[p + name + ".bias"] if p + name + ".bias" in W else y

        h = rms(x, W[p + "input_layernorm.weight"])
        q = proj("self_attn.q_proj", h).view(T, H, hd).transpose(0, 1)  # [H, T, hd]
        k = proj("self_attn.k_proj", h).view(T, Hkv, hd).transpose(0, 1)  # [Hkv, T, hd]
        v = proj("self_attn.v_proj", h).view(T, Hkv, hd).transpose(0, 1)
        q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
        k, v = k.repeat_interleave(H // Hkv, 0), v.repeat_interleave(H // Hkv, 0)
        probs = torch.softmax(q @ k.transpose(1, 2) / math.sqrt(hd) + mask, -1)
        out = (probs @ v).transpose(0, 1).reshape(T, H * hd)
        x = x + out @ W[p + "self_attn.o_proj.weight"].T
        h = rms(x, W[p + "post_attention_layernorm.weight"])
        gate = h @ W[p + "mlp.gate_proj.weight"].T
        x = x + (torch.nn.functional.silu(gate) * (h @ W[p + "mlp.up_proj.weight"].T)) @ \
            W[p + "mlp.down_proj.weight"].T
    x = rms(x, W["model.norm.weight"])
    head = W.get("lm_head.weight", W["model.embed_tokens.weight"])
    return (x @ head.T)[None]  # [1, T, V]


def logits(args):
    cfg = json.load(open(os.path.join(args.dir, "config.json")))
    ids = [int(t) for t in args.tokens.split(",")]
    np.save(args.out, forward(cfg, load(args.dir), ids).numpy())


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    m = sub.add_parser("make")
    m.add_argument("config")
    m.add_argument("dir")
    m.add_argument("--layers", type=int, default=0)
    m.add_argument("--vocab", type=int, default=0)
    m.add_argument("--seed", type=int, default=0)
    m.add_argument("--dtype", default="bfloat16", choices=list(DTYPES))
    m.add_argument("--shards", type=int, default=1)
    g = sub.add_parser("logits")
    g.add_argument("dir")
    g.add_argument("--tokens", required=True)
    g.add_argument("--out", required=True)
    args = parser.parse_args()
    make(args) if args.command == "make" else logits(args)


if __name__ == "__main__":
    main()
