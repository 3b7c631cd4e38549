// ops_matmul.cpp: matmul (np.matmul), matmul_t (a @ b^T) and linear
// (x @ weight^T).
//
// Both are loops of GEMMs (glassllm/fast/blas.cpp) straight over the operands'
// memory: a broadcast batch operand is read again at the same offset, never
// copied, and a transpose is a flag passed to the GEMM, never a transposed
// copy. Their gradients are GEMMs too:
//   C = A @ B   =>   dA = dC @ B^T,   dB = A^T @ dC
// (for one matrix: C_ij = sum_k A_ik B_kj, so dL/dA_ik = sum_j dC_ij B_kj).
// These are the training's hot path: q/k/v/o projections, the MLP, scores.
#include "glassllm/engine/node.h"
#include "glassllm/fast/kernels.h"

namespace glassllm {

namespace {

bool needs(const Tensor& t) {
  return t.node()->requires_grad;
}

// A tensor [..., r, c] seen as a stack of r x c matrices.
Shape batch_of(const Shape& s) {
  return Shape(s.begin(), s.end() - 2);
}

// Offsets (in matrices) with which an operand of batch shape `batch` is read
// for each position of the broadcast batch `out_batch`, in row-major order:
// 0 along the axes the operand is repeated on (length 1 or missing).
std::vector<std::size_t> batch_offsets(const Shape& batch, const Shape& out_batch) {
  std::size_t nd = out_batch.size(), lead = nd - batch.size();
  std::vector<std::size_t> own = contiguous_strides(batch), stride(nd, 0);
  for (std::size_t i = 0; i < batch.size(); ++i)
    stride[lead + i] = batch[i] == 1 ? 0 : own[i];
  std::vector<std::size_t> offsets(shape_numel(out_batch));
  std::vector<std::size_t> index(nd, 0);
  std::size_t off = 0;
  for (std::size_t& o : offsets) {
    o = off;
    for (std::size_t ax = nd; ax-- > 0;) {  // odometer over the batch axes
      off += stride[ax];
      if (++index[ax] < out_batch[ax]) break;
      off -= stride[ax] * out_batch[ax];
      index[ax] = 0;
    }
  }
  return offsets;
}

// C[i] = op(A[ia]) @ op(B[ib]) for every index i of the broadcast batch.
// a is stored [*a_batch, ra, ca] and op(A) is A, or A^T when ta; likewise b.
// Returns [*batch, M, N]. The operands' batch shapes must broadcast.
Tensor batched_gemm(const Tensor& a, bool ta, const Tensor& b, bool tb) {
  const Shape& as = a.shape();
  const Shape& bs = b.shape();
  std::size_t ra = as[as.size() - 2], ca = as.back();
  std::size_t rb = bs[bs.size() - 2], cb = bs.back();
  std::size_t M = ta ? ca : ra, K = ta ? ra : ca, N = tb ? rb : cb;
  Shape a_batch = batch_of(as), b_batch = batch_of(bs);
  Shape batch = broadcast_shapes(a_batch, b_batch, "matmul");
  Shape out_shape = batch;
  out_shape.push_back(M);
  out_shape.push_back(N);
  Tensor out = empty(std::move(out_shape), a.dtype());
  std::size_t count = shape_numel(batch);
  dispatch(a.dtype(), [&](auto zero) {
    using T = decltype(zero);
    const T* A = ptr<T>(a);
    const T* B = ptr<T>(b);
    T* C = ptr<T>(out);
    if (shape_numel(b_batch) == 1 && !ta && a_batch == batch) {
      // One B for the whole batch and A's rows back to back: the batch is
      // just more rows, [count*M, K] @ op(B), one GEMM.
      gemm<T>(false, tb, count * M, N, K, T(1), A, ca, B, cb, T(0), C, N);
      return;
    }
    // Offsets in elements of each product's A and B; C's are back to back.
    std::vector<std::size_t> oa = batch_offsets(a_batch, batch);
    std::vector<std::size_t> ob = batch_offsets(b_batch, batch);
    for (std::size_t& o : oa) o *= ra * ca;
    for (std::size_t& o : ob) o *= rb * cb;
    gemm_batch<T>(count, ta, tb, M, N, K, T(1), A, oa.data(), ca, B, ob.data(), cb, T(0),
                  C, M * N, N);
  });
  return out;
}

}  // namespace

// ---- matmul -----------------------------------------------------------------------

// long-function: one op in one place: its checks, forward and backward
// side by side (docs/design.md), which splitting would pull apart.
Tensor matmul(const Tensor& a, const Tensor& b) {
  check_same_dtype("matmul", a, b);
  const Shape& as = a.shape();
  const Shape& bs = b.shape();
  auto fail = [&](const std::string& why) {
    throw std::invalid_argument("matmul: shapes " + shape_str(as) + " and " +
                                shape_str(bs) + why);
  };
  if (as.empty() || bs.empty())
    fail(": a 0-d operand has no matrix axes; use mul to scale by a scalar");
  // np.matmul's promotion: a 1-D a is one row [1, k], a 1-D b one column
  // [k, 1]; the added axis is removed from the result again.
  Shape ap = as.size() == 1 ? Shape{1, as[0]} : as;
  Shape bp = bs.size() == 1 ? Shape{bs[0], 1} : bs;
  std::size_t k = ap.back(), kb = bp[bp.size() - 2];
  if (k != kb)
    fail(" are not aligned: " + std::to_string(k) + " (dim " +
         std::to_string(as.size() - 1) + ") != " + std::to_string(kb) + " (dim " +
         std::to_string(bs.size() == 1 ? 0 : bs.size() - 2) + ")");
  Shape a_batch = batch_of(ap), b_batch = batch_of(bp);
  for (std::size_t i = 1; i <= std::min(a_batch.size(), b_batch.size()); ++i) {
    std::size_t da = a_batch[a_batch.size() - i], db = b_batch[b_batch.size() - i];
    if (da != db && da != 1 && db != 1)
      fail(" cannot be broadcast in their batch axes: " + std::to_string(da) + " (dim " +
           std::to_string(a_batch.size() - i) + ") != " + std::to_string(db) + " (dim " +
           std::to_string(b_batch.size() - i) + ")");
  }

  Tensor a2 = view_as_shape(a, ap), b2 = view_as_shape(b, bp);  // views, no copies
  Tensor full = batched_gemm(a2, false, b2, false);             // [*batch, n, m]
  Shape out_shape = full.shape();
  if (bs.size() == 1) out_shape.erase(out_shape.end() - 1);
  if (as.size() == 1) out_shape.erase(out_shape.end() - (bs.size() == 1 ? 1 : 2));
  Tensor out = view_as_shape(full, out_shape);

  // da = dout @ b^T, db = a^T @ dout, each summed over the batch axes its
  // operand was broadcast along (sum_to_shape), as for any broadcast op.
  return finish_op(out, "matmul", {a, b}, [&] {
    return [a, b, ap, bp, full_shape = full.shape()](const Tensor& dout) {
      Tensor g = view_as_shape(dout, full_shape);  // [*batch, n, m]
      Tensor a2 = view_as_shape(a, ap), b2 = view_as_shape(b, bp);
      Tensor da, db;
      if (needs(a))
        da = sum_to_shape(batched_gemm(g, false, b2, true), ap);  // [.., n, k]
      if (needs(b)) {
        if (bp.size() == 2 && ap.size() > 2) {
          // One b for the whole batch: db = sum_i a_i^T g_i is a single GEMM
          // over all rows, [n*batch, k]^T @ [n*batch, m], so the per-batch
          // products are never materialised.
          std::size_t rows = shape_numel(Shape(ap.begin(), ap.end() - 1));
          db = batched_gemm(view_as_shape(a2, {rows, ap.back()}), true,
                            view_as_shape(g, {rows, bp.back()}), false);
        } else {
          db = sum_to_shape(batched_gemm(a2, true, g, false), bp);  // [.., k, m]
        }
      }
      return std::vector<Tensor>{da.defined() ? view_as_shape(da, a.shape()) : da,
                                 db.defined() ? view_as_shape(db, b.shape()) : db};
    };
  });
}

// ---- matmul_t ---------------------------------------------------------------------

// C = A @ B^T with A [..., n, k] and B [..., m, k]: attention's q @ k^T, read
// straight from k's memory (the GEMM's transpose flag) instead of a
// transposed copy, which for a K/V cache of m positions is m * hd elements
// moved on every decode step. For one matrix C_ij = sum_l A_il B_jl, so
//   dA = dC @ B      (dA_il = sum_j dC_ij B_jl)
//   dB = dC^T @ A    (dB_jl = sum_i dC_ij A_il)
// each summed back over the batch axes its operand was broadcast along.
Tensor matmul_t(const Tensor& a, const Tensor& b) {
  check_same_dtype("matmul_t", a, b);
  const Shape& as = a.shape();
  const Shape& bs = b.shape();
  auto fail = [&](const std::string& why) {
    throw std::invalid_argument("matmul_t: shapes " + shape_str(as) + " and " +
                                shape_str(bs) + why);
  };
  if (as.size() < 2 || bs.size() < 2)
    fail(": both operands need at least 2 axes, [..., n, k] and [..., m, k]");
  if (as.back() != bs.back())
    fail(" are not aligned: " + std::to_string(as.back()) + " (dim " +
         std::to_string(as.size() - 1) + ") != " + std::to_string(bs.back()) + " (dim " +
         std::to_string(bs.size() - 1) + "); b is [..., m, k] and gets transposed");
  broadcast_shapes(batch_of(as), batch_of(bs), "matmul_t");  // throws if they cannot
  Tensor out = batched_gemm(a, false, b, true);              // [*batch, n, m]
  return finish_op(out, "matmul_t", {a, b}, [&] {
    return [a, b](const Tensor& dout) {
      Tensor da, db;
      if (needs(a)) da = sum_to_shape(batched_gemm(dout, false, b, false), a.shape());
      if (needs(b)) db = sum_to_shape(batched_gemm(dout, true, a, false), b.shape());
      return std::vector<Tensor>{da, db};
    };
  });
}

// ---- linear -----------------------------------------------------------------------

// y = x @ W^T with x [..., in] flattened to rows [R, in], W [out, in]:
//   y  [R, out] = x @ W^T   (one GEMM, W read transposed in place)
//   dx [R, in]  = dy @ W    (one GEMM)
//   dW [out, in] = dy^T @ x (one GEMM with trans_a, summing over all R rows)
Tensor linear(const Tensor& x, const Tensor& weight) {
  check_same_dtype("linear", x, weight);
  if (weight.ndim() != 2)
    throw std::invalid_argument("linear: weight must be 2-D [out, in], got shape " +
                                shape_str(weight.shape()));
  if (x.ndim() == 0)
    throw std::invalid_argument("linear: x of shape () has no features axis");
  std::size_t in = x.shape().back(), out_f = weight.shape()[0];
  if (in != weight.shape()[1])
    throw std::invalid_argument(
        "linear: shapes " + shape_str(x.shape()) + " and " + shape_str(weight.shape()) +
        " are not aligned: " + std::to_string(in) + " (dim " +
        std::to_string(x.ndim() - 1) + ") != " + std::to_string(weight.shape()[1]) +
        " (dim 1); weight is [out, in]");
  std::size_t rows = shape_numel(Shape(x.shape().begin(), x.shape().end() - 1));
  Shape out_shape = x.shape();
  out_shape.back() = out_f;
  Tensor out = empty(std::move(out_shape), x.dtype());
  dispatch(x.dtype(), [&](auto zero) {
    using T = decltype(zero);
    gemm<T>(false, true, rows, out_f, in, T(1), ptr<T>(x), in, ptr<T>(weight), in, T(0),
            ptr<T>(out), out_f);
  });
  return finish_op(out, "linear", {x, weight}, [&] {
    return [x, weight, rows, in, out_f](const Tensor& dout) {
      Tensor dx, dweight;
      dispatch(x.dtype(), [&](auto zero) {
        using T = decltype(zero);
        if (needs(x)) {
          dx = empty(x.shape(), x.dtype());
          gemm<T>(false, false, rows, in, out_f, T(1), ptr<T>(dout), out_f,
                  ptr<T>(weight), in, T(0), ptr<T>(dx), in);
        }
        if (needs(weight)) {
          dweight = empty(weight.shape(), weight.dtype());
          gemm<T>(true, false, out_f, in, rows, T(1), ptr<T>(dout), out_f, ptr<T>(x), in,
                  T(0), ptr<T>(dweight), in);
        }
      });
      return std::vector<Tensor>{dx, dweight};
    };
  });
}

}  // namespace glassllm
