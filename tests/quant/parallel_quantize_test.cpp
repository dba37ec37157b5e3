// ops::quantize_parallel (the converter's and `synth`'s quantizing): for every type with a
// quantizer, the bytes are those of one quantize_row call over the whole buffer, for any thread
// count and for buffers of any number of blocks (fewer blocks than threads, uneven splits).
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include "core/thread_pool.h"
#include "format/model_format.h"
#include "kernels/type_traits.h"
#include "ops/parallel_quantize.h"

namespace magnetar {
namespace {

TEST(ParallelQuantize, SameBytesForAnyThreadCount) {
  std::mt19937 rng(21);
  std::normal_distribution<float> normal(0.0f, 0.05f);
  std::vector<std::unique_ptr<ThreadPool>> pools;
  for (int threads : {1, 2, 3, 5}) pools.push_back(std::make_unique<ThreadPool>(threads));
  for (uint32_t t = 0; t < format::kDTypeCount; ++t) {
    const format::DType type = format::DType(t);
    if (!format::dtype_is_quantized(type)) continue;
    SCOPED_TRACE(format::dtype_name(type));
    const uint32_t block = format::dtype_layout(type).block_elements;
    // 1 block (less than a thread each), and an odd count over the parallel threshold (split
    // unevenly).
    for (uint64_t blocks : {uint64_t(1), 2 * ops::kQuantizeMinValuesPerThread / block + 3}) {
      const uint64_t n = blocks * block;
      std::vector<float> x(n);
      for (float& v : x) v = normal(rng);
      const size_t bytes = format::tensor_bytes(type, 1, n);
      std::vector<uint8_t> want(bytes);
      quant::type_traits(type).quantize_row(x.data(), want.data(), int64_t(n));
      for (const auto& pool_ptr : pools) {
        ThreadPool& pool = *pool_ptr;
        // One byte in front: the output need not be aligned.
        std::vector<uint8_t> got(bytes + 1, 0xA5);
        ops::quantize_parallel(pool, type, x.data(), n, got.data() + 1);
        EXPECT_EQ(got[0], 0xA5);
        EXPECT_EQ(0, std::memcmp(got.data() + 1, want.data(), bytes)) << pool.size() << " threads, " << blocks;
      }
    }
  }
}

}  // namespace
}  // namespace magnetar
