// The kernel table: filled once (on first use) from the CPU's features and MAGNETAR_KERNELS,
// refillable by select() for tests and `bench --kernels`. The hot path only loads a pointer.
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "core/cpu_features.h"
#include "kernels/kernels.h"
#include "kernels/reference.h"
#include "kernels/tables.h"

namespace magnetar::kernels {
namespace {

const KernelTable kReferenceTable = {
    ref::matvec_f16, ref::matvec_f32,    ref::matmul_f16,    ref::matmul_f32,
    ref::rmsnorm,    ref::softmax,       ref::silu_mul,      ref::gelu_tanh_mul,
    ref::rope,       ref::f16_to_f32,    ref::dot_f32,       ref::axpy_f32,
    "reference"};

std::atomic<const KernelTable*> g_active{nullptr};
std::once_flag g_notice_once;

// The best asm table this CPU can run, or nullptr (with a one-time notice on stderr).
const KernelTable* best_asm_table() {
  const cpu::Features& f = cpu::features();
  if (!f.has_avx2_kernels()) {
    std::call_once(g_notice_once, [&] {
      std::fprintf(stderr,
                   "magnetar: this CPU (%s) lacks AVX2/FMA/F16C (or the OS does not save YMM "
                   "state); using the slower reference kernels\n",
                   cpu::describe(f).c_str());
    });
    return nullptr;
  }
  return asm_table();  // nullptr in builds without the NASM kernels
}

const KernelTable* choose(KernelChoice choice) {
  if (choice == KernelChoice::Reference) return &kReferenceTable;
  const KernelTable* best = best_asm_table();
  return best ? best : &kReferenceTable;
}

KernelChoice choice_from_environment() {
  const char* value = std::getenv("MAGNETAR_KERNELS");
  if (value == nullptr || value[0] == '\0' || std::strcmp(value, "auto") == 0)
    return KernelChoice::Auto;
  if (std::strcmp(value, "reference") == 0) return KernelChoice::Reference;
  if (std::strcmp(value, "asm") == 0 || std::strcmp(value, "avx2") == 0) return KernelChoice::Asm;
  std::fprintf(stderr,
               "magnetar: MAGNETAR_KERNELS=%s is not one of auto, reference, asm; using auto\n",
               value);
  return KernelChoice::Auto;
}

}  // namespace

const KernelTable& active() {
  const KernelTable* table = g_active.load(std::memory_order_acquire);
  if (table != nullptr) return *table;
  // First use: several threads may race here; they all compute the same answer.
  const KernelTable* chosen = choose(choice_from_environment());
  const KernelTable* expected = nullptr;
  g_active.compare_exchange_strong(expected, chosen, std::memory_order_acq_rel);
  return *g_active.load(std::memory_order_acquire);
}

void select(KernelChoice choice) {
  const KernelTable* chosen =
      choice == KernelChoice::Auto ? choose(choice_from_environment()) : choose(choice);
  g_active.store(chosen, std::memory_order_release);
}

const KernelTable& reference_table() { return kReferenceTable; }

}  // namespace magnetar::kernels
