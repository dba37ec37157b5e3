// Quantizing many blocks on a thread pool (the converter's and `synth`'s matrices): the values
// are split at block boundaries into one contiguous slice per thread. Every block is quantized on
// its own (kernels/kquants.h, kernels/quant.h), so the bytes are the same for any number of
// threads. Allocates nothing; not for the hot path (it is the converter's).
#pragma once
#include <cstdint>

#include "core/thread_pool.h"
#include "format/model_format.h"

namespace magnetar::ops {

// Below this many values per thread the pool's wake-up costs more than it saves: smaller
// buffers are quantized on the calling thread.
inline constexpr uint64_t kQuantizeMinValuesPerThread = 8192;

// n values x (a multiple of `type`'s block: rows of whole blocks laid end to end) into
// format::tensor_bytes(type, 1, n) bytes at y (any alignment). `type` must have a quantizer
// (quant::type_traits(type).quantize_row).
void quantize_parallel(ThreadPool& pool, format::DType type, const float* x, uint64_t n, void* y);

}  // namespace magnetar::ops
