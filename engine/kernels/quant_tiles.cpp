// The x16 tile layout of Q8_0 / Q4_0 matrices (quant.h): the load-time rearrangement, the row
// lookup in a tile, and the reference twins of the tile kernels.
#include <cassert>
#include <cstring>

#include "kernels/quant.h"

namespace magnetar::quant {
namespace {

constexpr int64_t kScaleBytes = kTileRows * 2;                         // 16 halves
constexpr int64_t kQ8TileBlock = kTileRows * int64_t(sizeof(BlockQ8_0));  // 544
constexpr int64_t kQ4TileBlock = kTileRows * int64_t(sizeof(BlockQ4_0));  // 288
constexpr uint8_t kQ8Offset = 0x80;  // stored q8 bytes are q + 128: vpdpbusd's unsigned operand

}  // namespace

void tile_rows_q8_0(const void* src, void* dst, int64_t cols) {
  assert(cols % kBlock == 0 && cols > 0 && "tile_rows_q8_0: cols must be a positive multiple of 32");
  const int64_t n_blocks = cols / kBlock;
  const auto* rows = static_cast<const BlockQ8_0*>(src);  // [16, n_blocks]
  auto* out = static_cast<uint8_t*>(dst);
  for (int64_t b = 0; b < n_blocks; ++b, out += kQ8TileBlock) {
    for (int64_t r = 0; r < kTileRows; ++r) {
      const BlockQ8_0& blk = rows[r * n_blocks + b];
      std::memcpy(out + 2 * r, &blk.d, 2);
      for (int64_t g = 0; g < kBlock / 4; ++g)
        for (int64_t j = 0; j < 4; ++j)
          out[kScaleBytes + 64 * g + 4 * r + j] = uint8_t(uint8_t(blk.qs[4 * g + j]) ^ kQ8Offset);
    }
  }
}

void tile_rows_q4_0(const void* src, void* dst, int64_t cols) {
  assert(cols % kBlock == 0 && cols > 0 && "tile_rows_q4_0: cols must be a positive multiple of 32");
  const int64_t n_blocks = cols / kBlock;
  const auto* rows = static_cast<const BlockQ4_0*>(src);  // [16, n_blocks]
  auto* out = static_cast<uint8_t*>(dst);
  for (int64_t b = 0; b < n_blocks; ++b, out += kQ4TileBlock) {
    for (int64_t r = 0; r < kTileRows; ++r) {
      const BlockQ4_0& blk = rows[r * n_blocks + b];
      std::memcpy(out + 2 * r, &blk.d, 2);
      for (int64_t m = 0; m < kBlock / 8; ++m)
        std::memcpy(out + kScaleBytes + 64 * m + 4 * r, blk.qs + 4 * m, 4);
    }
  }
}

void dequantize_tile_row_q8_0(const void* tile, int64_t r, float* y, int64_t cols) {
  assert(r >= 0 && r < kTileRows && cols % kBlock == 0);
  const auto* blk = static_cast<const uint8_t*>(tile);
  for (int64_t b = 0; b < cols / kBlock; ++b, blk += kQ8TileBlock) {
    uint16_t d16;
    std::memcpy(&d16, blk + 2 * r, 2);
    const float d = kernels::f16_to_f32_scalar(d16);
    for (int64_t i = 0; i < kBlock; ++i) {
      const int q = int(blk[kScaleBytes + 64 * (i / 4) + 4 * r + i % 4]) - kQ8Offset;
      y[b * kBlock + i] = float(q) * d;
    }
  }
}

void dequantize_tile_row_q4_0(const void* tile, int64_t r, float* y, int64_t cols) {
  assert(r >= 0 && r < kTileRows && cols % kBlock == 0);
  const auto* blk = static_cast<const uint8_t*>(tile);
  for (int64_t b = 0; b < cols / kBlock; ++b, blk += kQ4TileBlock) {
    uint16_t d16;
    std::memcpy(&d16, blk + 2 * r, 2);
    const float d = kernels::f16_to_f32_scalar(d16);
    for (int64_t j = 0; j < kBlock / 2; ++j) {
      const uint8_t byte = blk[kScaleBytes + 64 * (j / 4) + 4 * r + j % 4];
      y[b * kBlock + j] = float((byte & 0x0f) - 8) * d;
      y[b * kBlock + j + kBlock / 2] = float((byte >> 4) - 8) * d;
    }
  }
}

// The twins compute what matvec_q*_ref computes on the untiled rows: an exact int32 dot per
// block, then acc += float(dot) * (d_w * d_x), each operation rounded on its own, in block order.
// block_dot(blk, r, xb) is the exact dot of row r of the tile's block column at blk with xb.
namespace {
template <class BlockDot>
void matmul_x16_ref(const void* w, const ActBlock* x, float* y, int64_t rows, int64_t cols, int64_t n_tokens,
                    int64_t y_stride, int64_t tile_block_bytes, BlockDot block_dot) {
  assert(rows % kTileRows == 0 && cols % kBlock == 0 && cols > 0 &&
         "matmul_q*_0_x16: rows must be whole tiles of 16, cols a positive multiple of 32");
  const int64_t n_blocks = cols / kBlock;
  for (int64_t tile = 0; tile < rows / kTileRows; ++tile) {
    const uint8_t* base = static_cast<const uint8_t*>(w) + tile * n_blocks * tile_block_bytes;
    for (int64_t t = 0; t < n_tokens; ++t) {
      const ActBlock* xt = x + t * n_blocks;
      for (int64_t r = 0; r < kTileRows; ++r) {
        float acc = 0.0f;
        const uint8_t* blk = base;
        for (int64_t b = 0; b < n_blocks; ++b, blk += tile_block_bytes) {
          const int32_t dot = block_dot(blk, r, xt[b]);
          uint16_t d16;
          std::memcpy(&d16, blk + 2 * r, 2);
          acc += float(dot) * (kernels::f16_to_f32_scalar(d16) * xt[b].d);
        }
        y[t * y_stride + tile * kTileRows + r] = acc;
      }
    }
  }
}
}  // namespace

void matmul_q8_0_x16_ref(const void* w, const ActBlock* x, float* y, int64_t rows, int64_t cols,
                         int64_t n_tokens, int64_t y_stride) {
  matmul_x16_ref(w, x, y, rows, cols, n_tokens, y_stride, kQ8TileBlock,
                 [](const uint8_t* blk, int64_t r, const ActBlock& xb) {
                   int32_t dot = 0;
                   for (int64_t i = 0; i < kBlock; ++i)
                     dot += (int32_t(blk[kScaleBytes + 64 * (i / 4) + 4 * r + i % 4]) - kQ8Offset) * xb.qs[i];
                   return dot;
                 });
}

void matmul_q4_0_x16_ref(const void* w, const ActBlock* x, float* y, int64_t rows, int64_t cols,
                         int64_t n_tokens, int64_t y_stride) {
  matmul_x16_ref(w, x, y, rows, cols, n_tokens, y_stride, kQ4TileBlock,
                 [](const uint8_t* blk, int64_t r, const ActBlock& xb) {
                   int32_t dot = 0;  // sum q * x - 8 * sum x
                   for (int64_t j = 0; j < kBlock / 2; ++j) {
                     const uint8_t byte = blk[kScaleBytes + 64 * (j / 4) + 4 * r + j % 4];
                     dot += int32_t(byte & 0x0f) * xb.qs[j] + int32_t(byte >> 4) * xb.qs[j + kBlock / 2];
                   }
                   return dot - 8 * xb.sum;
                 });
}

}  // namespace magnetar::quant
