// opgraph: runs op graphs through the engine for the differential test
// (differential.py, which runs the same graphs through PyTorch).
//
// It reads graphs from stdin, one after another, in a line-based text form
// (numbers as printed by Python's repr, so "nan" and "inf" survive):
//   graph float64
//   input <dtype> <requires_grad 0|1> <ndim> <dims...> <count> <values...>
//   node <op> <nargs> <arg node ids...> <nparams> <params...>
//   weight <node id> <count> <values...>     (upstream gradient of a sink)
//   end
// Inputs and nodes share one numbering, in order of appearance. The loss is
// the sum over the weighted nodes of sum(node * weight); its backward gives
// every input that requires grad a gradient. For each graph it prints
//   value <id> <ndim> <dims...> <count> <values...>     for every node
//   grad <input id> <defined 0|1> <count> <values...>   for every input
//   requires_grad <id> <0|1>                            for every node
//   done
// or "error <message>" then "done" when the engine throws.
#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "glassllm/glassllm.h"

using namespace glassllm;

namespace {

struct OpNode {
  std::string op;
  std::vector<std::size_t> args;
  std::vector<double> params;
};

std::vector<int> ints(const std::vector<double>& p, std::size_t first, std::size_t n) {
  std::vector<int> out;
  for (std::size_t i = 0; i < n; ++i) out.push_back(int(p.at(first + i)));
  return out;
}

std::vector<std::int64_t> int64s(const std::vector<double>& p, std::size_t first,
                                 std::size_t n) {
  std::vector<std::int64_t> out;
  for (std::size_t i = 0; i < n; ++i) out.push_back(std::int64_t(p.at(first + i)));
  return out;
}

DType other(DType d) {
  return d == DType::float32 ? DType::float64 : DType::float32;
}

// Params of ops that take a list put the list's length first.
Tensor run_op(const OpNode& n, const std::vector<Tensor>& a) {
  const std::string& op = n.op;
  const std::vector<double>& p = n.params;
  if (op == "add") return add(a[0], a[1]);
  if (op == "sub") return sub(a[0], a[1]);
  if (op == "mul") return mul(a[0], a[1]);
  if (op == "div") return div(a[0], a[1]);
  if (op == "pow") return pow(a[0], a[1]);
  if (op == "pow_scalar") return pow(a[0], p.at(0));
  if (op == "neg") return neg(a[0]);
  if (op == "exp") return exp(a[0]);
  if (op == "log") return log(a[0]);
  if (op == "sqrt") return sqrt(a[0]);
  if (op == "rsqrt") return rsqrt(a[0]);
  if (op == "tanh") return tanh(a[0]);
  if (op == "sigmoid") return sigmoid(a[0]);
  if (op == "silu") return silu(a[0]);
  if (op == "relu") return relu(a[0]);
  if (op == "astype_twice")
    return astype(astype(a[0], other(a[0].dtype())), a[0].dtype());
  if (op == "sum_to_shape") {
    Shape s;
    for (std::size_t i = 0; i < std::size_t(p.at(0)); ++i)
      s.push_back(std::size_t(p[1 + i]));
    return sum_to_shape(a[0], s);
  }
  if (op == "sum" || op == "mean") {
    std::vector<int> axes = ints(p, 1, std::size_t(p.at(0)));
    bool keep = p.at(1 + axes.size()) != 0;
    return op == "sum" ? sum(a[0], axes, keep) : mean(a[0], axes, keep);
  }
  if (op == "max_axis") return max(a[0], int(p.at(0)), p.at(1) != 0);
  if (op == "max_all") return max(a[0]);
  if (op == "reshape") return reshape(a[0], int64s(p, 1, std::size_t(p.at(0))));
  if (op == "permute") return permute(a[0], ints(p, 1, std::size_t(p.at(0))));
  if (op == "transpose") return transpose(a[0], int(p.at(0)), int(p.at(1)));
  if (op == "squeeze") return squeeze(a[0], int(p.at(0)));
  if (op == "unsqueeze") return unsqueeze(a[0], int(p.at(0)));
  if (op == "concat") return concat(a, int(p.at(0)));
  if (op == "slice")
    return slice(a[0], int(p.at(0)), std::int64_t(p.at(1)), std::int64_t(p.at(2)));
  if (op == "matmul") return matmul(a[0], a[1]);
  if (op == "matmul_t") return matmul_t(a[0], a[1]);
  if (op == "linear") return linear(a[0], a[1]);
  if (op == "softmax") return softmax(a[0], int(p.at(0)));
  if (op == "log_softmax") return log_softmax(a[0], int(p.at(0)));
  if (op == "cross_entropy")
    return cross_entropy(a[0], int64s(p, 2, std::size_t(p.at(1))), std::int64_t(p.at(0)));
  if (op == "embedding") {
    std::size_t nd = std::size_t(p.at(0));
    Shape ids_shape;
    for (std::size_t i = 0; i < nd; ++i) ids_shape.push_back(std::size_t(p.at(1 + i)));
    return embedding(a[0], int64s(p, 1 + nd, shape_numel(ids_shape)), ids_shape);
  }
  if (op == "where") return where(a[0], a[1], a[2]);
  if (op == "masked_fill") return masked_fill(a[0], a[1], p.at(0));
  if (op == "repeat_kv") return repeat_kv(a[0], std::size_t(p.at(0)));
  if (op == "rmsnorm") return rmsnorm(a[0], p.at(0));
  if (op == "rope") return rope(a[0], std::size_t(p.at(0)), p.at(1));
  if (op == "rope_freq") {
    std::vector<double> inv_freq(p.begin() + 2, p.begin() + 2 + std::ptrdiff_t(p.at(1)));
    return rope(a[0], std::size_t(p.at(0)), inv_freq);
  }
  if (op == "causal_softmax")
    return causal_softmax(a[0], std::size_t(p.at(0)), std::size_t(p.at(1)),
                          std::size_t(p.at(2)));
  throw std::invalid_argument("opgraph: unknown op '" + op + "'");
}

void print_values(std::ostream& out, const std::vector<double>& v) {
  out << v.size();
  char buf[40];
  for (double x : v) {
    std::snprintf(buf, sizeof buf, " %.17g", x);
    out << buf;
  }
}

struct Graph {
  DType dtype = DType::float64;
  std::vector<Tensor> tensors;  // inputs and nodes, in one numbering
  std::vector<bool> is_input;
  std::vector<OpNode> nodes;  // parallel to tensors (empty op for an input)
  std::vector<std::pair<std::size_t, std::vector<double>>> weights;
};

std::vector<double> read_values(std::istringstream& in) {
  std::size_t n = 0;
  in >> n;
  std::vector<double> v(n);
  std::string word;
  for (double& x : v) {
    in >> word;
    x = std::strtod(word.c_str(), nullptr);
  }
  return v;
}

void run(Graph& g, std::ostream& out) {
  for (std::size_t i = 0; i < g.tensors.size(); ++i) {
    if (g.is_input[i]) continue;
    std::vector<Tensor> args;
    for (std::size_t a : g.nodes[i].args) args.push_back(g.tensors.at(a));
    g.tensors[i] = run_op(g.nodes[i], args);
  }
  Tensor loss;
  for (auto& [id, w] : g.weights) {
    const Tensor& t = g.tensors.at(id);
    Tensor term = sum(mul(t, from_vector(w, t.shape(), t.dtype())));
    if (term.dtype() != g.dtype) term = astype(term, g.dtype);
    loss = loss.defined() ? add(loss, term) : term;
  }
  if (loss.defined() && loss.requires_grad()) loss.backward();
  for (std::size_t i = 0; i < g.tensors.size(); ++i) {
    const Tensor& t = g.tensors[i];
    if (!g.is_input[i]) {
      out << "value " << i << " " << t.ndim();
      for (std::size_t d : t.shape()) out << " " << d;
      out << " ";
      print_values(out, t.to_vector());
      out << "\nrequires_grad " << i << " " << t.requires_grad() << "\n";
    } else {
      Tensor gr = t.grad();
      out << "grad " << i << " " << gr.defined() << " ";
      print_values(out, gr.defined() ? gr.to_vector() : std::vector<double>{});
      out << "\n";
    }
  }
}

}  // namespace

int main() {
  std::ios::sync_with_stdio(false);
  std::string line;
  Graph g;
  while (std::getline(std::cin, line)) {
    std::istringstream in(line);
    std::string kind;
    in >> kind;
    if (kind == "graph") {
      g = Graph();
      std::string dtype;
      in >> dtype;
      g.dtype = parse_dtype(dtype);
    } else if (kind == "input") {
      int grad = 0;
      std::size_t nd = 0;
      std::string dtype;
      in >> dtype >> grad >> nd;
      Shape shape(nd);
      for (std::size_t& d : shape) in >> d;
      Tensor t = from_vector(read_values(in), shape, parse_dtype(dtype));
      if (grad) t.requires_grad_();
      g.tensors.push_back(t);
      g.is_input.push_back(true);
      g.nodes.emplace_back();
    } else if (kind == "node") {
      OpNode n;
      std::size_t nargs = 0;
      in >> n.op >> nargs;
      n.args.resize(nargs);
      for (std::size_t& a : n.args) in >> a;
      n.params = read_values(in);
      g.tensors.emplace_back();
      g.is_input.push_back(false);
      g.nodes.push_back(n);
    } else if (kind == "weight") {
      std::size_t id = 0;
      in >> id;
      g.weights.emplace_back(id, read_values(in));
    } else if (kind == "end") {
      std::ostringstream out;
      try {
        run(g, out);
        std::cout << out.str();
      } catch (const std::exception& e) {
        std::string what = e.what();
        for (char& c : what)
          if (c == '\n') c = ' ';
        std::cout << "error " << what << "\n";
      }
      std::cout << "done" << std::endl;
    }
  }
  return 0;
}
