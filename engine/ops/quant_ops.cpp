// Block-quantized matrices: the x16 tile layout step and embedding lookups (see quant_ops.h).
#include "ops/quant_ops.h"

#include <cassert>
#include <cstring>
#include <vector>

#include "kernels/quant.h"
#include "kernels/type_traits.h"

namespace magnetar::ops {

void embedding_row_quantized(const Matrix& w, int64_t row, float* out) {
  assert(row >= 0 && row < w.rows && "embedding_row_quantized: row out of range (validate token ids)");
  if (row < tiled_rows(w)) {
    const int64_t first = row / quant::kTileRows * quant::kTileRows;
    const uint8_t* tile = static_cast<const uint8_t*>(w.data) + first * row_bytes(w);
    if (w.dtype == format::DType::Q8_0)
      quant::dequantize_tile_row_q8_0(tile, row - first, out, w.cols);
    else
      quant::dequantize_tile_row_q4_0(tile, row - first, out, w.cols);
    return;
  }
  const uint8_t* base = static_cast<const uint8_t*>(w.data) + row * row_bytes(w);
  quant::type_traits(w.dtype).dequantize_row(base, out, w.cols);
}

bool wants_x16_tiles(const Matrix& w) {
  return !w.x16_tiles && w.stripe_cols == 0 && w.rows >= quant::kTileRows && w.cols > 0 &&
         w.cols % quant::kBlock == 0 && (w.dtype == format::DType::Q8_0 || w.dtype == format::DType::Q4_0);
}

void tile_x16_in_place(Matrix* w, void* writable, std::vector<uint8_t>* scratch) {
  assert(wants_x16_tiles(*w) && writable == w->data && "tile_x16_in_place: check wants_x16_tiles()");
  const int64_t tile_bytes = quant::kTileRows * row_bytes(*w);
  if (int64_t(scratch->size()) < tile_bytes) scratch->resize(size_t(tile_bytes));
  auto* out = static_cast<uint8_t*>(writable);
  for (int64_t r = 0; r + quant::kTileRows <= w->rows; r += quant::kTileRows, out += tile_bytes) {
    std::memcpy(scratch->data(), out, size_t(tile_bytes));
    if (w->dtype == format::DType::Q8_0) quant::tile_rows_q8_0(scratch->data(), out, w->cols);
    else quant::tile_rows_q4_0(scratch->data(), out, w->cols);
  }
  w->x16_tiles = true;
}

}  // namespace magnetar::ops
