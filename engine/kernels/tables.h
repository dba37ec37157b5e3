// Internal to engine/kernels: the tables that dispatch.cpp chooses between.
#pragma once
#include "kernels/kernels.h"

namespace magnetar::kernels {

// The AVX2 + FMA + F16C table (NASM kernels for the bulk, reference twins for tails), or nullptr
// when this build has no asm kernels. Call only when cpu::features().has_avx2_kernels().
// f16_streams: the F16 matrix–vector kernel's weight streams, 4 or 8; 0 (or anything else):
// the built-in rule, 8 streams beyond kMatvecX8MinCols columns, else 4.
const KernelTable* asm_table(int f16_streams = 0);

}  // namespace magnetar::kernels
