#!/usr/bin/env python3
"""Differential test: random op graphs through GlassLM and through PyTorch.

Each graph is drawn from a seed: a few inputs (0-d, size-0 and ordinary
shapes, float32 or float64) and one to eight ops of include/glassllm/engine/
ops.h applied to them, with broadcasting and with nodes reused by several
ops. The loss is the sum over some nodes of sum(node * weight). The engine
runs the graph in tests/differential/opgraph.cpp; this script runs it again
through PyTorch (an independent mapping of every op, written here) and
compares every node's value and requires_grad and every input's gradient.

Tolerances: float64 within 1e-10 of PyTorch relative to the tensor's largest
magnitude (at least 1); float32 within 10x PyTorch's own float32 error
against float64 on the same inputs, or 10 ulp of the tensor's largest
magnitude (at least 1) where PyTorch happened to be exact: inputs and
weights are O(1), so intermediate roundings are about 1 ulp of 1.
Non-finite entries must sit where PyTorch's are, with the same sign.

A failing graph is shrunk (to the ancestors of one node, then by cutting
edges into fresh inputs) and printed as a short program.

  differential.py --engine build/opgraph --graphs 300 --seed 1
"""
import argparse
import math
import random
import subprocess
import sys
import threading
import time

import torch
import torch.nn.functional as F

torch.set_num_threads(1)
TORCH_DTYPE = {"float32": torch.float32, "float64": torch.float64}


# ---- PyTorch's side: one function per op ---------------------------------------


def rope_torch(x, start, inv_freq):
    T, hd = x.shape[-2], x.shape[-1]
    half = hd // 2
    pos = torch.arange(start, start + T, dtype=torch.float64)
    angle = pos[:, None] * torch.tensor(inv_freq, dtype=torch.float64)[None, :]
    c, s = torch.cos(angle).to(x.dtype), torch.sin(angle).to(x.dtype)
    x1, x2 = x[..., :half], x[..., half:]
    return torch.cat([x1 * c - x2 * s, x2 * c + x1 * s], dim=-1)


def plain_inv_freq(hd, theta):
    return [theta ** (-2.0 * i / hd) for i in range(hd // 2)]


def causal_softmax_torch(x, query_start, key_start, queries):
    R, m = x.shape[-2], x.shape[-1]
    T = queries or R
    r = torch.arange(R)[:, None]
    j = torch.arange(m)[None, :]
    hidden = key_start + j > query_start + r % max(T, 1)
    return torch.softmax(x.masked_fill(hidden, -math.inf), -1)


def cross_entropy_torch(logits, ignore, targets):
    C = logits.shape[-1]
    t = torch.tensor(targets, dtype=torch.long)
    if all(v == ignore for v in targets):
        return (logits * 0).sum()  # GlassLM: 0 when every row is ignored (pitfalls.md)
    return F.cross_entropy(logits.reshape(-1, C), t, ignore_index=ignore)


def reduce_dims(x, axes):
    return axes if axes else list(range(x.dim()))


def apply_torch(op, a, p, graph_dtype):
    if op == "add":
        return a[0] + a[1]
    if op == "sub":
        return a[0] - a[1]
    if op == "mul":
        return a[0] * a[1]
    if op == "div":
        return a[0] / a[1]
    if op == "pow":
        return torch.pow(a[0], a[1])
    if op == "pow_scalar":
        return torch.pow(a[0], p[0])
    unary = {"neg": torch.neg, "exp": torch.exp, "log": torch.log, "sqrt": torch.sqrt,
             "rsqrt": torch.rsqrt, "tanh": torch.tanh, "sigmoid": torch.sigmoid,
             "silu": F.silu, "relu": torch.relu}
    if op in unary:
        return unary[op](a[0])
    if op == "astype_twice":  # float64 -> float32 -> float64 rounds; float32's is exact
        other = torch.float32 if graph_dtype == "float64" else torch.float64
        return a[0].to(other).to(a[0].dtype)
    if op == "sum_to_shape":
        return a[0].sum_to_size([int(d) for d in p[1:1 + int(p[0])]])
    if op in ("sum", "mean"):
        axes = [int(v) for v in p[1:1 + int(p[0])]]
        keep = bool(p[1 + len(axes)])
        if a[0].dim() == 0:
            return a[0].sum() if op == "sum" else a[0].mean()
        f = torch.sum if op == "sum" else torch.mean
        return f(a[0], dim=reduce_dims(a[0], axes), keepdim=keep)
    if op == "max_axis":
        return torch.amax(a[0], dim=int(p[0]), keepdim=bool(p[1]))
    if op == "max_all":
        return torch.amax(a[0].reshape(-1), dim=0)
    if op == "reshape":
        return a[0].reshape([int(v) for v in p[1:1 + int(p[0])]])
    if op == "permute":
        return a[0].permute([int(v) for v in p[1:1 + int(p[0])]])
    if op == "transpose":
        return a[0].transpose(int(p[0]), int(p[1]))
    if op == "squeeze":
        return a[0].squeeze(int(p[0]))
    if op == "unsqueeze":
        return a[0].unsqueeze(int(p[0]))
    if op == "concat":
        return torch.cat(a, dim=int(p[0]))
    if op == "slice":
        index = [slice(None)] * a[0].dim()
        index[int(p[0])] = slice(int(p[1]), int(p[2]))
        return a[0][tuple(index)]
    if op == "matmul":
        return torch.matmul(a[0], a[1])
    if op == "matmul_t":
        return torch.matmul(a[0], a[1].transpose(-2, -1))
    if op == "linear":
        return F.linear(a[0], a[1])
    if op == "softmax":
        return torch.softmax(a[0], int(p[0]))
    if op == "log_softmax":
        return torch.log_softmax(a[0], int(p[0]))
    if op == "cross_entropy":
        return cross_entropy_torch(a[0], int(p[0]), [int(v) for v in p[2:2 + int(p[1])]])
    if op == "embedding":
        nd = int(p[0])
        shape = [int(v) for v in p[1:1 + nd]]
        ids = torch.tensor([int(v) for v in p[1 + nd:]], dtype=torch.long).reshape(shape)
        return F.embedding(ids, a[0])
    if op == "where":
        return torch.where(a[0] != 0, a[1], a[2])
    if op == "masked_fill":
        return a[0].masked_fill(a[1] != 0, p[0])
    if op == "repeat_kv":
        return torch.repeat_interleave(a[0], int(p[0]), dim=1)
    if op == "rmsnorm":
        x = a[0]
        return x * torch.rsqrt((x * x).mean(-1, keepdim=True) + p[0])
    if op == "rope":
        return rope_torch(a[0], int(p[0]), plain_inv_freq(a[0].shape[-1], p[1]))
    if op == "rope_freq":
        return rope_torch(a[0], int(p[0]), list(p[2:2 + int(p[1])]))
    if op == "causal_softmax":
        return causal_softmax_torch(a[0], int(p[0]), int(p[1]), int(p[2]))
    raise ValueError("unknown op " + op)


# ---- graphs ----------------------------------------------------------------------


class Graph:
    """Inputs and nodes in one numbering; weights[id] = upstream values."""

    def __init__(self, dtype):
        self.dtype = dtype
        self.items = []  # dicts: kind input (shape, values, grad) or node (op, args, params)
        self.weights = {}

    def add_input(self, shape, values, grad):
        self.items.append({"kind": "input", "shape": list(shape), "values": values,
                           "grad": grad})
        return len(self.items) - 1

    def copy(self):
        g = Graph(self.dtype)
        g.items = [dict(it) for it in self.items]
        g.weights = dict(self.weights)
        return g

    def text(self):
        lines = ["graph " + self.dtype]
        for it in self.items:
            if it["kind"] == "input":
                lines.append("input %s %d %d %s %d %s" % (
                    self.dtype, it["grad"], len(it["shape"]),
                    " ".join(map(str, it["shape"])), len(it["values"]),
                    " ".join(map(repr, it["values"]))))
            else:
                lines.append("node %s %d %s %d %s" % (
                    it["op"], len(it["args"]), " ".join(map(str, it["args"])),
                    len(it["params"]), " ".join(map(repr, it["params"]))))
        for i, w in sorted(self.weights.items()):
            lines.append("weight %d %d %s" % (i, len(w), " ".join(map(repr, w))))
        lines.append("end")
        return "\n".join(lines) + "\n"

    def program(self):
        """The graph spelled as GlassLM calls, for a failure message."""
        out = []
        for i, it in enumerate(self.items):
            if it["kind"] == "input":
                vals = ", ".join("%.17g" % v for v in it["values"])
                out.append("x%d = from_vector({%s}, %s, %s)%s" % (
                    i, vals, shape_str(it["shape"]), self.dtype,
                    ".requires_grad_()" if it["grad"] else ""))
            else:
                args = ", ".join("x%d" % a for a in it["args"])
                params = ", ".join("%g" % v for v in it["params"])
                out.append("x%d = %s(%s%s)" % (i, it["op"], args,
                                                "; params " + params if params else ""))
        for i, w in sorted(self.weights.items()):
            out.append("loss += sum(x%d * {%s})" % (i, ", ".join("%.17g" % v for v in w)))
        return "\n".join("  " + line for line in out)


def shape_str(shape):
    return "(" + ",".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")"


def torch_run(graph, dtype):
    """Values, requires_grad flags and input gradients of the graph in `dtype`."""
    td = TORCH_DTYPE[dtype]
    tensors, leaves = [], {}
    for i, it in enumerate(graph.items):
        if it["kind"] == "input":
            t = torch.tensor(it["values"], dtype=td).reshape(it["shape"])
            if it["grad"]:
                t.requires_grad_()
                leaves[i] = t
            tensors.append(t)
        else:
            args = [tensors[a] for a in it["args"]]
            tensors.append(apply_torch(it["op"], args, it["params"], graph.dtype))
    loss = None
    for i, w in graph.weights.items():
        t = tensors[i]
        term = (t * torch.tensor(w, dtype=td).reshape(t.shape)).sum()
        loss = term if loss is None else loss + term
    if loss is not None and loss.requires_grad:
        loss.backward()
    grads = {i: (t.grad.detach() if t.grad is not None else None) for i, t in leaves.items()}
    return tensors, grads


# ---- the engine's side --------------------------------------------------------------


class Engine:
    """opgraph, kept running; restarted after a crash."""

    def __init__(self, path):
        self.path = path
        self.proc = None

    def start(self):
        self.proc = subprocess.Popen([self.path], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True, bufsize=1)

    def run(self, graph, timeout=20.0):
        if self.proc is None or self.proc.poll() is not None:
            self.start()
        try:
            self.proc.stdin.write(graph.text())
            self.proc.stdin.flush()
        except BrokenPipeError:
            return self.crashed("crashed")
        result = {"values": {}, "grads": {}, "requires_grad": {}, "error": None}
        watchdog = threading.Timer(timeout, self.proc.kill)  # a hang ends as a crash
        watchdog.start()
        try:
            return self.read(result, timeout)
        finally:
            watchdog.cancel()

    def read(self, result, timeout):
        while True:
            line = self.proc.stdout.readline()
            if not line:
                status = self.proc.wait()
                if status == -9:
                    return self.crashed("hung (no answer in %g s)" % timeout)
                return self.crashed("crashed (exit status %s)" % status)
            words = line.split()
            if words[0] == "done":
                return result
            if words[0] == "error":
                result["error"] = line[len("error "):].strip()
            elif words[0] == "value":
                nd = int(words[2])
                shape = [int(w) for w in words[3:3 + nd]]
                result["values"][int(words[1])] = (shape, [float(w) for w in words[4 + nd:]])
            elif words[0] == "grad":
                defined = words[2] == "1"
                result["grads"][int(words[1])] = [float(w) for w in words[4:]] if defined else None
            elif words[0] == "requires_grad":
                result["requires_grad"][int(words[1])] = words[2] == "1"

    def crashed(self, what):
        self.proc = None
        return {"crash": what}


# ---- comparing ------------------------------------------------------------------------


def compare_tensor(what, got, t64, tdt, dtype):
    """None if `got` (a list) agrees with PyTorch; else a one-line reason."""
    ref = t64.detach().reshape(-1).tolist()
    same = tdt.detach().reshape(-1).tolist()
    if len(got) != len(ref):
        return "%s: %d elements, PyTorch has %d" % (what, len(got), len(ref))
    finite = [abs(v) for v in ref if math.isfinite(v)]
    scale = max(finite) if finite else 0.0
    err_ours = err_torch = 0.0
    for k, (g, r, s) in enumerate(zip(got, ref, same)):
        if not math.isfinite(s) or not math.isfinite(g):
            if not (math.isnan(s) and math.isnan(g)) and g != s:
                return "%s[%d]: %r where PyTorch (%s) has %r" % (what, k, g, dtype, s)
            continue
        if not math.isfinite(r):
            continue  # finite in both dtypes' answers, overflowed only in float64: none
        err_ours = max(err_ours, abs(g - r))
        err_torch = max(err_torch, abs(s - r))
    if dtype == "float64":
        allowed = 1e-10 * max(scale, 1.0)
    else:
        allowed = 10 * max(err_torch, 1.2e-7 * max(scale, 1.0))
    if err_ours > allowed:
        return "%s: off by %.3g (allowed %.3g; PyTorch %s's own error %.3g, scale %.3g)" % (
            what, err_ours, allowed, dtype, err_torch, scale)
    return None


def check(engine, graph):
    """None if the engine agrees with PyTorch on this graph, else the reason."""
    ours = engine.run(graph)
    if "crash" in ours:
        return "the engine " + ours["crash"]
    try:
        t_same, g_same = torch_run(graph, graph.dtype)
        t64, g64 = torch_run(graph, "float64") if graph.dtype != "float64" else (t_same, g_same)
    except Exception as e:  # PyTorch refused: the engine must refuse too
        return None if ours["error"] else "PyTorch refused (%s), the engine did not" % e
    if ours["error"]:
        return "the engine threw: " + ours["error"]
    for i, it in enumerate(graph.items):
        if it["kind"] == "input":
            continue
        shape, values = ours["values"][i]
        if shape != list(t_same[i].shape):
            return "x%d (%s): shape %s, PyTorch %s" % (i, it["op"], shape_str(shape),
                                                       shape_str(list(t_same[i].shape)))
        why = compare_tensor("x%d (%s) value" % (i, it["op"]), values, t64[i], t_same[i],
                             graph.dtype)
        if why:
            return why
        if ours["requires_grad"][i] != t_same[i].requires_grad:
            return "x%d (%s): requires_grad %s, PyTorch %s" % (
                i, it["op"], ours["requires_grad"][i], t_same[i].requires_grad)
    for i, g in g_same.items():
        mine = ours["grads"][i]
        if g is None or mine is None:
            if (g is None) != (mine is None):
                return "gradient of x%d: %s, PyTorch's %s" % (
                    i, "undefined" if mine is None else "defined",
                    "undefined" if g is None else "defined")
            continue
        why = compare_tensor("gradient of x%d" % i, mine, g64[i], g, graph.dtype)
        if why:
            return why
    return None


# ---- shrinking a failing graph ----------------------------------------------------------


def ancestors(graph, node):
    keep, stack = set(), [node]
    while stack:
        i = stack.pop()
        if i in keep:
            continue
        keep.add(i)
        if graph.items[i]["kind"] == "node":
            stack.extend(graph.items[i]["args"])
    return keep


def subgraph(graph, keep, weights):
    """The items in `keep`, renumbered, with the given weights (old ids)."""
    new_id = {old: k for k, old in enumerate(sorted(keep))}
    g = Graph(graph.dtype)
    for old in sorted(keep):
        it = dict(graph.items[old])
        if it["kind"] == "node":
            it["args"] = [new_id[a] for a in it["args"]]
        g.items.append(it)
    g.weights = {new_id[i]: w for i, w in weights.items() if i in new_id}
    return g


def ones_weight(graph, values, node):
    return [1.0] * len(values[node].reshape(-1))


def shrink(engine, graph):
    """A smaller graph that still fails: the ancestors of one node, then with
    edges cut (an argument replaced by a fresh input holding its value)."""
    values, _ = torch_run(graph, "float64") if not graph_crashes(engine, graph) else (None, None)
    best = graph
    if values is not None:
        for node in range(len(graph.items)):
            if graph.items[node]["kind"] != "node":
                continue
            w = graph.weights.get(node) or ones_weight(graph, values, node)
            for weights in ({node: w}, {}):
                g = subgraph(graph, ancestors(graph, node), weights)
                if len(g.items) < len(best.items) and check(engine, g):
                    best = g
    changed = True
    while changed:
        changed = False
        for i, it in enumerate(best.items):
            if it["kind"] != "node":
                continue
            for k, a in enumerate(it["args"]):
                if best.items[a]["kind"] != "node":
                    continue
                try:
                    vals, _ = torch_run(best, best.dtype)
                except Exception:
                    break
                g = best.copy()
                leaf = {"kind": "input", "shape": list(vals[a].shape),
                        "values": vals[a].detach().reshape(-1).tolist(), "grad": 1}
                g.items.append(leaf)
                node = dict(it)
                node["args"] = list(it["args"])
                node["args"][k] = len(g.items) - 1
                g.items[i] = node
                # Move the new input before its user: renumber by sorting on position.
                g = reorder(g)
                live = set()
                for wid in g.weights:
                    live |= ancestors(g, wid)
                g = subgraph(g, live, g.weights)
                if len(g.items) <= len(best.items) and check(engine, g):
                    best, changed = g, True
                    break
            if changed:
                break
    return best


def graph_crashes(engine, graph):
    return "crash" in engine.run(graph)


def reorder(graph):
    """Inputs first, then nodes in their order: every argument before its user."""
    order = [i for i, it in enumerate(graph.items) if it["kind"] == "input"]
    order += [i for i, it in enumerate(graph.items) if it["kind"] == "node"]
    new_id = {old: k for k, old in enumerate(order)}
    g = Graph(graph.dtype)
    for old in order:
        it = dict(graph.items[old])
        if it["kind"] == "node":
            it["args"] = [new_id[a] for a in it["args"]]
        g.items.append(it)
    g.weights = {new_id[i]: w for i, w in graph.weights.items()}
    return g


# ---- main ------------------------------------------------------------------------------


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--engine", required=True, help="the opgraph program")
    parser.add_argument("--graphs", type=int, default=300)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    import generate

    engine = Engine(args.engine)
    start = time.time()
    nodes = 0
    for n in range(args.graphs):
        rng = random.Random(args.seed * 1000003 + n)
        graph = reorder(generate.random_graph(rng))
        nodes += sum(1 for it in graph.items if it["kind"] == "node")
        why = check(engine, graph)
        if why:
            small = shrink(engine, graph)
            print("differential: graph %d of seed %d disagrees with PyTorch: %s" %
                  (n, args.seed, check(engine, small) or why))
            print("shrunk from %d to %d items:\n%s" % (len(graph.items), len(small.items),
                                                      small.program()))
            return 1
    print("differential: %d graphs (%d ops) agree with PyTorch, seed %d, %.1f s" %
          (args.graphs, nodes, args.seed, time.time() - start))
    return 0


if __name__ == "__main__":
    sys.exit(main())
