// Block-quantized matrices' load-time layout (the x16 tiles of Q8_0 / Q4_0, kernels/quant.h) and
// their embedding lookups. The matrix–vector and prefill drivers are ops.h's, one for every type.
#pragma once
#include <cstdint>
#include <vector>

#include "ops/ops.h"

namespace magnetar::ops {

// out[cols] = row `row` of a block-quantized matrix, dequantized (embedding lookups).
void embedding_row_quantized(const Matrix& w, int64_t row, float* out);

// Whether tile_x16_in_place() would tile w: a row-major Q8_0 / Q4_0 matrix of at least 16 rows.
bool wants_x16_tiles(const Matrix& w);
// Rewrites w's whole 16-row groups into x16 tiles in place (`writable` is w->data, memory the
// caller owns) and sets w->x16_tiles; scratch holds one group of rows. A load-time step.
void tile_x16_in_place(Matrix* w, void* writable, std::vector<uint8_t>* scratch);

}  // namespace magnetar::ops
