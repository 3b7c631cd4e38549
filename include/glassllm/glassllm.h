// glassllm.h: the whole public API in one include.
//
// Reading order for a newcomer: tensor.h (the Tensor handle and autograd),
// ops.h (every op, with its shapes), gradcheck.h (checking a backward),
// model.h (the transformer and its K/V cache), then the examples in
// examples/ and the walkthrough in docs/.
#pragma once

#include "glassllm/blas.h"
#include "glassllm/checkpoint.h"
#include "glassllm/checks.h"
#include "glassllm/custom_op.h"
#include "glassllm/dtype.h"
#include "glassllm/gradcheck.h"
#include "glassllm/model.h"
#include "glassllm/npy.h"
#include "glassllm/ops.h"
#include "glassllm/tensor.h"
#include "glassllm/tokenizer.h"
