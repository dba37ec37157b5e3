// Internal to engine/kernels: the tables that dispatch.cpp chooses between.
#pragma once
#include "kernels/kernels.h"

namespace magnetar::kernels {

// The AVX2 + FMA + F16C table (NASM kernels for the bulk, reference twins for tails), or nullptr
// when this build has no asm kernels. Call only when cpu::features().has_avx2_kernels().
const KernelTable* asm_table();

}  // namespace magnetar::kernels
