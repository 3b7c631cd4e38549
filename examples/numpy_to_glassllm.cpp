// numpy_to_glassllm.cpp: the NumPy and PyTorch spelling of GlassLM's calls.
//
// Each line in a doc region is one GlassLM call; its comment gives the NumPy
// spelling, then the PyTorch one (np = numpy, F = torch.nn.functional). The
// regions are the "NumPy / PyTorch to GlassLM" table of
// docs/01-tensors-and-broadcasting.md; below each region the program prints
// what the calls returned, so the table can be checked line by line.
#include <cmath>
#include <iostream>
#include <string>

#include "glassllm/glassllm.h"

using namespace glassllm;

// Prints "name (shape): values" with NumPy's str() on one line.
void show(const std::string& name, const Tensor& t) {
  std::string s = t.str(), line;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '\n') {
      line += s[i];
      continue;
    }
    line += ' ';
    while (i + 1 < s.size() && (s[i + 1] == ' ' || s[i + 1] == '\n')) ++i;
  }
  std::cout << name << " " << shape_str(t.shape()) << ": " << line << "\n";
}

int main() {
  std::cout << "-- creation\n";
  // doc:begin creation
  Tensor a = tensor(
      {{1, 2, 3},
       {4, 5, 6}});  // np.float32([[1,2,3],[4,5,6]])  | torch.tensor([[1.,2,3],[4,5,6]])
  Tensor z = zeros({2, 3});  // np.zeros((2,3), np.float32)    | torch.zeros(2, 3)
  Tensor o = ones({3}, DType::float64);  // np.ones(3)                     | torch.ones(3,
                                         // dtype=torch.float64)
  Tensor f =
      full({2, 2}, 7.0);  // np.full((2,2), 7, np.float32)  | torch.full((2, 2), 7.)
  Tensor r = arange(0.0, 1.0,
                    0.25);  // np.arange(0, 1, .25, np.float32) | torch.arange(0, 1, .25)
  Tensor s = scalar(3.0);   // np.float32(3)                  | torch.tensor(3.)
  Tensor v = from_vector(
      {1, 2, 3, 4},
      {2, 2});  // np.float32([1,2,3,4]).reshape(2,2) | torch.tensor([1.,2,3,4]).view(2,2)
  Tensor n =
      randn({2, 2}, 0);  // rng.standard_normal((2,2)), other numbers | torch.randn(2, 2)
  Tensor zl = zeros_like(a);     // np.zeros_like(a)               | torch.zeros_like(a)
  std::size_t nd = a.ndim();     // a.ndim                         | a.dim()
  std::size_t cols = a.dim(-1);  // a.shape[-1]                    | a.shape[-1]
  double x01 = a.at({0, 1});     // a[0, 1]                        | a[0, 1].item()
  double s0 = s.item();          // s.item()                       | s.item()
  // doc:end creation
  show("a", a);
  show("z", z);
  show("o", o);
  show("f", f);
  show("r", r);
  show("s", s);
  show("v", v);
  show("n", n);
  show("zl", zl);
  std::cout << "nd " << nd << ", cols " << cols << ", x01 " << x01 << ", s0 " << s0
            << "\n";

  std::cout << "-- elementwise\n";
  Tensor b = tensor({10, 20, 30});
  // doc:begin elementwise
  Tensor e1 = a + b;          // a + b  (broadcast (2,3) with (3,))  | a + b
  Tensor e2 = a * 0.5;        // a * 0.5                             | a * 0.5
  Tensor e3 = 1.0 / a;        // 1 / a                               | 1 / a
  Tensor e4 = pow(a, 2.0);    // a ** 2                              | a ** 2
  Tensor e5 = exp(-a);        // np.exp(-a)                          | torch.exp(-a)
  Tensor e6 = sqrt(a);        // np.sqrt(a)                          | torch.sqrt(a)
  Tensor e7 = log(a);         // np.log(a)                           | torch.log(a)
  Tensor e8 = tanh(a - 3.0);  // np.tanh(a - 3)                      | torch.tanh(a - 3)
  Tensor e9 =
      sigmoid(a - 3.0);  // 1 / (1 + np.exp(3 - a))             | torch.sigmoid(a - 3)
  Tensor e10 = relu(a - 3.0);  // np.maximum(a - 3, 0)                | torch.relu(a - 3)
  Tensor e11 = silu(a - 3.0);  // (a-3) / (1 + np.exp(3 - a))         | F.silu(a - 3)
  // doc:end elementwise
  show("e1", e1);
  show("e2", e2);
  show("e3", e3);
  show("e4", e4);
  show("e5", e5);
  show("e6", e6);
  show("e7", e7);
  show("e8", e8);
  show("e9", e9);
  show("e10", e10);
  show("e11", e11);

  std::cout << "-- reductions\n";
  // doc:begin reductions
  Tensor r1 = sum(a);       // np.sum(a)                           | a.sum()
  Tensor r2 = sum(a, {0});  // np.sum(a, axis=0)                   | a.sum(0)
  Tensor r3 =
      sum(a, {1}, true);  // np.sum(a, axis=1, keepdims=True)    | a.sum(1, keepdim=True)
  Tensor r4 = mean(a, {-1});  // np.mean(a, axis=-1)                 | a.mean(-1)
  Tensor r5 = max(a, 1);      // np.max(a, axis=1)                   | a.amax(1)
  Tensor r6 = max(a);         // np.max(a)                           | a.max()
  // doc:end reductions
  show("r1", r1);
  show("r2", r2);
  show("r3", r3);
  show("r4", r4);
  show("r5", r5);
  show("r6", r6);

  std::cout << "-- shapes\n";
  Tensor x = arange(24);
  // doc:begin shapes
  Tensor x4 = reshape(x, {2, 3, 4});  // x.reshape(2, 3, 4)           | x.reshape(2, 3, 4)
  Tensor s1 = reshape(a, {-1});       // a.reshape(-1)                | a.reshape(-1)
  Tensor s2 = transpose(a, 0, 1);     // a.T  (np.swapaxes(a, 0, 1))  | a.transpose(0, 1)
  Tensor s3 =
      permute(x4, {2, 0, 1});      // np.transpose(x4, (2, 0, 1))  | x4.permute(2, 0, 1)
  Tensor s4 = unsqueeze(a, 0);     // np.expand_dims(a, 0)         | a.unsqueeze(0)
  Tensor s5 = squeeze(s4, 0);      // np.squeeze(s4, 0)            | s4.squeeze(0)
  Tensor s6 = concat({a, a}, 0);   // np.concatenate([a, a], 0)    | torch.cat([a, a], 0)
  Tensor s7 = slice(a, 1, 1, 3);   // a[:, 1:3]                    | a[:, 1:3]
  Tensor s8 = slice(a, 0, -1, 2);  // a[-1:]                       | a[-1:]
  // doc:end shapes
  show("x4", x4);
  show("s1", s1);
  show("s2", s2);
  show("s3", s3);
  show("s4", s4);
  show("s5", s5);
  show("s6", s6);
  show("s7", s7);
  show("s8", s8);

  std::cout << "-- matmul\n";
  Tensor w = tensor({{1, 0}, {0, 1}, {1, 1}});  // (3,2)
  Tensor W = tensor({{1, 0, 1}, {0, 1, 1}});    // (2,3), PyTorch's [out, in]
  Tensor batch = ones({4, 2, 3});
  // doc:begin matmul
  Tensor m1 = matmul(a, w);      // a @ w       (2,3) @ (3,2) -> (2,2)   | a @ w
  Tensor m2 = matmul(batch, w);  // batch @ w   (4,2,3) @ (3,2) -> (4,2,2) | batch @ w
  Tensor m3 = matmul(a, b);      // a @ b       (2,3) @ (3,) -> (2,)     | a @ b
  Tensor m4 = linear(a, W);      // a @ W.T     (2,3), W (2,3) -> (2,2)  | F.linear(a, W)
  // doc:end matmul
  show("m1", m1);
  show("m2", m2);
  show("m3", m3);
  show("m4", m4);

  std::cout << "-- nn\n";
  Tensor logits = tensor({{2.0, 1.0, 0.1}, {0.5, 2.5, 0.0}});
  Tensor table = arange(0.0, 8.0, 1.0);
  Tensor emb = reshape(table, {4, 2});  // 4 tokens, 2 features
  Tensor causal = tensor({{0, 1}, {0, 0}});
  Tensor kv = tensor({{{{1, 2}}, {{3, 4}}}});  // [B=1, Hkv=2, T=1, D=2]
  // doc:begin nn
  Tensor p = softmax(logits, -1);  // scipy.special.softmax(l, -1)  | torch.softmax(l, -1)
  Tensor lp =
      log_softmax(logits, -1);  // scipy.special.log_softmax(l, -1) | F.log_softmax(l, -1)
  Tensor ce = cross_entropy(
      logits,
      {0, 1});  // -np.mean(lp[[0,1], [0,1]])  | F.cross_entropy(l, torch.tensor([0,1]))
  Tensor ev = embedding(
      emb, {3, 0, 3},
      {3});  // emb[[3, 0, 3]]            | F.embedding(torch.tensor([3,0,3]), emb)
  Tensor mf = masked_fill(
      f, causal,
      -INFINITY);  // np.where(causal, -np.inf, f) | f.masked_fill(causal.bool(), -inf)
  Tensor wh =
      where(causal, f,
            -f);  // np.where(causal, f, -f)       | torch.where(causal.bool(), f, -f)
  Tensor rn = rmsnorm(a);  // a / np.sqrt((a**2).mean(-1, keepdims=True) + 1e-5) |
                           // F.rms_norm(a, (3,), eps=1e-5)
  Tensor rk =
      repeat_kv(kv, 2);  // np.repeat(kv, 2, axis=1)      | kv.repeat_interleave(2, dim=1)
  // doc:end nn
  show("p", p);
  show("lp", lp);
  show("ce", ce);
  show("ev", ev);
  show("mf", mf);
  show("wh", wh);
  show("rn", rn);
  show("rk", rk);
  return 0;
}
