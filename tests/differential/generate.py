"""Random op graphs for differential.py, drawn from a seed.

An op is proposed with random arguments: nodes already in the graph (so
nodes are reused) or fresh inputs of a fitting shape (0-d, size-0 and
broadcasting shapes among them). The proposal is evaluated in PyTorch float64
and kept only if it is valid there and its values are tame (no NaN, no +inf,
|finite| <= 1e4; -inf from masked_fill is allowed): the graphs test the ops'
arithmetic, while the NaN and inf rules have their own tests
(tests/test_ops_edges.cpp).
"""
import math

import torch

from differential import Graph, apply_torch

DIMS = [1, 1, 2, 2, 3, 3, 4, 5, 0]


def round_to(dtype, values):
    if dtype == "float32":
        return torch.tensor(values, dtype=torch.float32).double().tolist()
    return list(values)


class Builder:
    def __init__(self, rng, dtype):
        self.rng = rng
        self.graph = Graph(dtype)
        self.values = []  # float64 torch value of every item (for choosing args)

    # -- inputs ---------------------------------------------------------------------
    def shape(self, ndim=None, allow_zero=True):
        r = self.rng
        ndim = r.choice([0, 1, 1, 2, 2, 2, 3, 3, 4]) if ndim is None else ndim
        dims = DIMS if allow_zero and r.random() < 0.3 else DIMS[:-1]
        return [r.choice(dims) for _ in range(ndim)]

    def fresh(self, shape, kind="normal", grad=None):
        r = self.rng
        n = math.prod(shape)
        if kind == "positive":
            vals = [0.2 + abs(r.gauss(0, 1)) for _ in range(n)]
        elif kind == "away_from_zero":
            vals = [r.choice([-1, 1]) * (0.5 + abs(r.gauss(0, 1))) for _ in range(n)]
        elif kind == "bits":
            vals = [float(r.random() < 0.5) for _ in range(n)]
        else:
            scale = r.choice([1, 1, 1, 3, 0.01])
            vals = [r.gauss(0, scale) for _ in range(n)]
        vals = round_to(self.graph.dtype, vals)
        grad = (r.random() < 0.85) if grad is None else grad
        i = self.graph.add_input(shape, vals, int(grad))
        self.values.append(torch.tensor(vals, dtype=torch.float64).reshape(shape))
        return i

    def pick(self, ok=lambda v: True, make=None, reuse=0.6):
        """An existing item whose value satisfies ok, or make()."""
        choices = [i for i, v in enumerate(self.values) if ok(v)]
        if choices and self.rng.random() < reuse:
            return self.rng.choice(choices)
        return make() if make else (self.rng.choice(choices) if choices else None)

    def any(self):
        return self.pick(make=lambda: self.fresh(self.shape()))

    def positive(self, min_value=0.1):
        return self.pick(lambda v: v.numel() == 0 or bool((v > min_value).all()),
                         lambda: self.fresh(self.shape(), "positive"))

    def broadcast_partner(self, shape, kind="normal"):
        """A shape that broadcasts with `shape`: a suffix, some lengths set to 1."""
        r = self.rng
        keep = r.randint(0, len(shape))
        tail = [1 if r.random() < 0.3 else d for d in shape[len(shape) - keep:]]
        lead = [r.choice([1, 2]) for _ in range(r.choice([0, 0, 0, 1]))]
        target = lead + tail

        def fits(v):
            try:
                torch.broadcast_shapes(tuple(v.shape), tuple(shape))
                return kind == "normal" or (v.numel() == 0 or bool((v.abs() > 0.3).all()))
            except RuntimeError:
                return False

        return self.pick(fits, lambda: self.fresh(target, kind))

    # -- one op ---------------------------------------------------------------------------
    def propose(self, op):
        """(args, params) for op, or None when it cannot be built here."""
        r = self.rng
        if op in ("add", "sub", "mul"):
            a = self.any()
            return [a, self.broadcast_partner(list(self.values[a].shape))], []
        if op == "div":
            a = self.any()
            return [a, self.broadcast_partner(list(self.values[a].shape), "away_from_zero")], []
        if op == "pow":
            a = self.positive(0.3)
            b = self.broadcast_partner(list(self.values[a].shape))
            return [a, b], []
        if op == "pow_scalar":
            e = r.choice([0.0, 1.0, 2.0, 3.0, 0.5, -1.0, 2.5])
            a = self.any() if e in (0.0, 1.0, 2.0, 3.0) else self.positive(0.3)
            return [a], [e]
        if op in ("log", "sqrt", "rsqrt"):
            return [self.positive()], []
        if op in ("neg", "exp", "tanh", "sigmoid", "silu", "relu", "astype_twice"):
            a = self.pick(lambda v: op != "exp" or v.numel() == 0 or bool(v.max() < 20),
                          lambda: self.fresh(self.shape()))
            return [a], []
        x = self.any()
        shape = list(self.values[x].shape)
        nd = len(shape)
        if op == "sum_to_shape":
            keep = r.randint(0, nd)
            target = [1 if r.random() < 0.4 else d for d in shape[nd - keep:]]
            return [x], [len(target)] + target
        if op in ("sum", "mean"):
            axes = [a for a in range(nd) if r.random() < 0.5]
            axes = [a - nd if r.random() < 0.3 else a for a in axes]
            r.shuffle(axes)
            return [x], [len(axes)] + axes + [int(r.random() < 0.5)]
        if op == "max_axis":
            axes = [a for a in range(nd) if shape[a] > 0]
            if not axes:
                return None
            return [x], [r.choice(axes) - (nd if r.random() < 0.3 else 0), int(r.random() < 0.5)]
        if op == "max_all":
            return ([x], []) if math.prod(shape) > 0 else None
        if op == "reshape":
            return [x], self.new_shape(shape)
        if op == "permute":
            perm = list(range(nd))
            r.shuffle(perm)
            return [x], [nd] + perm
        if op == "transpose":
            if nd == 0:
                return None
            return [x], [r.randrange(-nd, nd), r.randrange(-nd, nd)]
        if op == "squeeze":
            ones = [a for a in range(nd) if shape[a] == 1]
            return ([x], [r.choice(ones)]) if ones else None
        if op == "unsqueeze":
            return [x], [r.randint(-nd - 1, nd)]
        if op == "concat":
            if nd == 0:
                return None
            axis = r.randrange(nd)
            parts = [x]
            for _ in range(r.choice([1, 1, 2])):
                other = list(shape)
                other[axis] = r.choice([0, 1, 2, 3])
                parts.append(self.pick(lambda v: list(v.shape[:axis]) + list(v.shape[axis + 1:]) ==
                                       shape[:axis] + shape[axis + 1:] and v.dim() == nd,
                                       lambda: self.fresh(other), reuse=0.3))
            return parts, [axis - (nd if r.random() < 0.3 else 0)]
        if op == "slice":
            if nd == 0:
                return None
            axis = r.randrange(nd)
            n = shape[axis]
            return [x], [axis, r.randint(-n - 2, n + 2), r.randint(-n - 2, n + 2)]
        return self.propose_nn(op, x, shape)

    def propose_nn(self, op, x, shape):
        r = self.rng
        nd = len(shape)
        if op in ("matmul", "matmul_t", "linear"):
            n, k, m = (r.choice(DIMS) for _ in range(3))
            batch = [r.choice([1, 2, 3]) for _ in range(r.choice([0, 0, 1, 2]))]
            if op == "matmul":
                a_shape = r.choice([[k], [n, k], batch + [n, k]])
                b_shape = r.choice([[k], [k, m], [1] * len(batch) + [k, m], batch + [k, m]])
            elif op == "matmul_t":
                a_shape = batch + [n, k]
                b_shape = r.choice([[m, k], batch + [m, k]])
            else:
                a_shape, b_shape = batch + [n, k], [m, k]
            return [self.fresh(a_shape), self.fresh(b_shape)], []
        if op in ("softmax", "log_softmax"):
            if nd == 0:
                return None
            return [x], [r.randrange(-nd, nd)]
        if op == "cross_entropy":
            if nd == 0 or shape[-1] == 0:
                return None
            C, rows = shape[-1], math.prod(shape) // shape[-1]
            ignore = r.choice([-100, -100, 0])
            targets = [r.randrange(C) if r.random() < 0.8 else ignore for _ in range(rows)]
            return [x], [ignore, rows] + targets
        if op == "embedding":
            V, D = r.choice([1, 2, 3, 5]), r.choice(DIMS)
            ids_shape = self.shape(r.choice([0, 1, 2]))
            ids = [r.randrange(V) for _ in range(math.prod(ids_shape))]
            w = self.pick(lambda v: v.dim() == 2 and v.shape[0] > 0,
                          lambda: self.fresh([V, D]))
            V = self.values[w].shape[0]
            ids = [i % V for i in ids]
            return [w], [len(ids_shape)] + ids_shape + ids
        if op == "where":
            cond = self.fresh(self.broadcast_shape(shape), "bits", grad=r.random() < 0.3)
            return [cond, x, self.broadcast_partner(shape)], []
        if op == "masked_fill":
            mask = self.fresh(self.suffix_shape(shape), "bits", grad=r.random() < 0.3)
            return [x, mask], [r.choice([0.0, 2.5, -1e9, -math.inf])]
        if op == "repeat_kv":
            x = self.pick(lambda v: v.dim() == 4, lambda: self.fresh(self.shape(4)))
            return [x], [r.choice([1, 2, 3])]
        if op == "rmsnorm":
            if nd == 0 or shape[-1] == 0:
                return None
            return [x], [r.choice([1e-5, 1e-6, 0.1])]
        if op in ("rope", "rope_freq"):
            hd = r.choice([0, 2, 4, 6])
            x = self.pick(lambda v: v.dim() >= 2 and v.shape[-1] % 2 == 0,
                          lambda: self.fresh(self.shape(r.choice([2, 3, 4]))[:-1] + [hd]))
            hd = self.values[x].shape[-1]
            start = r.choice([0, 1, 5, 1000])
            if op == "rope":
                return [x], [start, r.choice([10000.0, 100.0, 500000.0])]
            inv = [abs(r.gauss(0, 1)) for _ in range(hd // 2)]
            return [x], [start, len(inv)] + inv
        if op == "causal_softmax":
            x = self.pick(lambda v: v.dim() >= 2, lambda: self.fresh(self.shape(r.choice([2, 3, 4]))))
            R = self.values[x].shape[-2]
            divisors = [0] + [t for t in range(1, R + 1) if R % t == 0]
            query_start = r.choice([0, 0, 1, 3])
            return [x], [query_start, r.randint(0, query_start), r.choice(divisors)]
        raise ValueError(op)

    def new_shape(self, shape):
        r = self.rng
        n = math.prod(shape)
        dims = []
        rest = n
        for f in (2, 3, 5):  # split n into a few factors
            while rest % f == 0 and rest > 1 and r.random() < 0.7:
                dims.append(f)
                rest //= f
        if rest != 1 or not dims:
            dims.append(rest)
        r.shuffle(dims)
        for _ in range(r.choice([0, 0, 1])):
            dims.insert(r.randint(0, len(dims)), 1)
        if n == 0 and r.random() < 0.5:
            dims = [d for d in shape] + [1]
        if n > 0 and r.random() < 0.3:
            dims[r.randrange(len(dims))] = -1
        return [len(dims)] + dims

    def suffix_shape(self, shape):
        keep = self.rng.randint(0, len(shape))
        return [1 if self.rng.random() < 0.3 else d for d in shape[len(shape) - keep:]]

    def broadcast_shape(self, shape):
        lead = [self.rng.choice([1, 2]) for _ in range(self.rng.choice([0, 0, 1]))]
        return lead + self.suffix_shape(shape)

    def try_add(self, op):
        """Adds op as a node if a proposal is valid and tame; True if added."""
        proposal = self.propose(op)
        if proposal is None:
            return False
        args, params = proposal
        try:
            with torch.no_grad():
                value = apply_torch(op, [self.values[a] for a in args], params, self.graph.dtype)
        except (RuntimeError, ValueError, IndexError):
            return False
        finite = value[torch.isfinite(value)]
        if bool(torch.isnan(value).any()) or bool((value == math.inf).any()):
            return False
        if finite.numel() and float(finite.abs().max()) > 1e4:
            return False
        self.graph.items.append({"kind": "node", "op": op, "args": args, "params": params})
        self.values.append(value)
        return True


OPS = ["add", "sub", "mul", "div", "pow", "pow_scalar", "neg", "exp", "log", "sqrt",
       "rsqrt", "tanh", "sigmoid", "silu", "relu", "astype_twice", "sum_to_shape", "sum",
       "mean", "max_axis", "max_all", "reshape", "permute", "transpose", "squeeze",
       "unsqueeze", "concat", "slice", "matmul", "matmul_t", "linear", "softmax",
       "log_softmax", "cross_entropy", "embedding", "where", "masked_fill", "repeat_kv",
       "rmsnorm", "rope", "rope_freq", "causal_softmax"]


def random_graph(rng):
    """One graph: 1-8 ops, with weights on the sinks and on some other nodes."""
    b = Builder(rng, rng.choice(["float32", "float64"]))
    target = rng.randint(1, 8)
    nodes = []
    for _ in range(200):
        if len(nodes) == target:
            break
        if b.try_add(rng.choice(OPS)):
            nodes.append(len(b.graph.items) - 1)
    used = {a for it in b.graph.items if it["kind"] == "node" for a in it["args"]}
    for i in nodes:
        if i not in used or rng.random() < 0.3:
            n = b.values[i].numel()
            b.graph.weights[i] = round_to(b.graph.dtype, [rng.gauss(0, 1) for _ in range(n)])
    return b.graph
