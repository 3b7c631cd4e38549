// glassllm.h: the whole public API in one include.
//
// Reading order for a newcomer: tensor.h (the Tensor handle and autograd),
// ops.h (every op, with its shapes), gradcheck.h (checking a backward),
// model.h (the transformer and its K/V cache), then the examples in
// examples/ and the walkthrough in docs/.
#pragma once

#include "glassllm/engine/custom_op.h"
#include "glassllm/engine/dtype.h"
#include "glassllm/engine/gradcheck.h"
#include "glassllm/engine/naive_matmul.h"
#include "glassllm/engine/ops.h"
#include "glassllm/engine/tensor.h"
#include "glassllm/fast/blas.h"
#include "glassllm/io/budget.h"
#include "glassllm/io/checkpoint.h"
#include "glassllm/io/files.h"
#include "glassllm/io/npy.h"
#include "glassllm/io/tokenizer.h"
#include "glassllm/model/checks.h"
#include "glassllm/model/model.h"
#include "glassllm/model/weights16.h"
#include "glassllm/reference/reference.h"
