// ex08_rope.cpp (reference solution): the backward of the rotary position
// embedding. Exercise page: docs/exercises/ex08-rope.md.
#include <cmath>

#include "exercises/exercises.h"

namespace glassllm::exercises {

// doc:begin solution
Tensor my_rope(const Tensor& x, std::size_t start, double theta) {
  return custom_op(
      "my_rope", {x},
      [=](const std::vector<Tensor>& in) { return rope(in[0], start, theta); },
      [=](const std::vector<Tensor>& in, const Tensor& out, const Tensor& dout) {
        const std::size_t T = in[0].dim(-2), hd = in[0].dim(-1), half = hd / 2;
        // The tables, [T, hd]: angle(p, i) = p * theta^(-2i/hd), i < hd/2,
        // the same angle for column i and column i + hd/2.
        std::vector<double> c(T * hd), s(T * hd);
        for (std::size_t t = 0; t < T; ++t)
          for (std::size_t i = 0; i < half; ++i) {
            double a = double(start + t) * std::pow(theta, -2.0 * double(i) / double(hd));
            c[t * hd + i] = c[t * hd + i + half] = std::cos(a);
            s[t * hd + i] = s[t * hd + i + half] = std::sin(a);
          }
        Tensor cos = from_vector(c, {T, hd}, in[0].dtype());
        Tensor sin = from_vector(s, {T, hd}, in[0].dtype());
        // y1 = x1 c - x2 s, y2 = x2 c + x1 s (halves), so
        // dx1 = d1 c + d2 s, dx2 = d2 c - d1 s: dout * cos + rotate_half^T(dout * sin)
        // with rotate_half^T(g) = concat(g2, -g1).
        Tensor g = dout * sin;
        auto h = std::int64_t(half), n = std::int64_t(hd);
        Tensor rotated = concat({slice(g, -1, h, n), -slice(g, -1, 0, h)}, -1);
        return std::vector<Tensor>{dout * cos + rotated};
      });
}
// doc:end solution

}  // namespace glassllm::exercises
