// The asm kernel table. Until the NASM kernels land this build has none.
#include "kernels/tables.h"

namespace magnetar::kernels {

const KernelTable* asm_table() { return nullptr; }

}  // namespace magnetar::kernels
