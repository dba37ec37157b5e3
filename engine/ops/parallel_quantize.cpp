// Block quantization split across a thread pool (see parallel_quantize.h).
#include "ops/parallel_quantize.h"

#include <cassert>

#include "kernels/type_traits.h"

namespace magnetar::ops {

void quantize_parallel(ThreadPool& pool, format::DType type, const float* x, uint64_t n, void* y) {
  const quant::QuantizeRowFn quantize = quant::type_traits(type).quantize_row;
  const format::DTypeLayout& layout = format::dtype_layout(type);
  assert(quantize != nullptr && "quantize_parallel: the type has no quantizer (type_traits.h)");
  assert(n % layout.block_elements == 0 && "quantize_parallel: n is whole blocks of the type");
  auto* out = static_cast<uint8_t*>(y);
  if (pool.size() == 1 || n < 2 * kQuantizeMinValuesPerThread) {
    quantize(x, out, int64_t(n));
    return;
  }
  pool.parallel([&](int thread, int n_threads) {
    int64_t begin = 0, end = 0;
    ThreadPool::split(int64_t(n), layout.block_elements, thread, n_threads, &begin, &end);
    if (end > begin)
      quantize(x + begin, out + uint64_t(begin) / layout.block_elements * layout.block_bytes, end - begin);
  });
}

}  // namespace magnetar::ops
