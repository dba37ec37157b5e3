// The kernel table: filled once (on first use) from the CPU's features and MAGNETAR_KERNELS,
// refillable by select() for tests and `bench --kernels`. The hot path only loads a pointer.
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "core/bandwidth.h"
#include "core/cpu_features.h"
#include "kernels/asm_kernels.h"
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
// Decode tuning's F16 stream count (0: the built-in rule), used by Auto choices only; and
// whether the active table came from one (so a new tuning may replace it).
std::atomic<int> g_tuned_f16_streams{0};
std::atomic<bool> g_active_is_auto{true};

// The best asm table this CPU can run, or nullptr (with a one-time notice on stderr).
const KernelTable* best_asm_table(int f16_streams) {
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
  return asm_table(f16_streams);  // nullptr in builds without the NASM kernels
}

// `choice` as resolved from the environment (Auto only when MAGNETAR_KERNELS is unset/auto).
const KernelTable* choose(KernelChoice choice) {
  if (choice == KernelChoice::Reference) return &kReferenceTable;
  const bool tuned = choice == KernelChoice::Auto;
  const KernelTable* best = best_asm_table(tuned ? g_tuned_f16_streams.load(std::memory_order_acquire) : 0);
  return best ? best : &kReferenceTable;
}

// The probe's buffer as FP32 (ordinary values: see bandwidth::ReadProbe), in blocks of 64 floats;
// the remaining words through the portable loop.
uint64_t read_words_avx2(const uint64_t* data, uint64_t words) {
  const uint64_t floats = words * 2 / 64 * 64;
  float lanes[8];
  magnetar_read_sum_avx2(reinterpret_cast<const float*>(data), static_cast<int64_t>(floats), lanes);
  const float total = ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) +
                      ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]));
  uint32_t bits;
  std::memcpy(&bits, &total, sizeof bits);
  return bits + bandwidth::sum_words(data + floats / 2, words - floats / 2);
}

}  // namespace

KernelChoice choice_from_environment() {
  const char* value = std::getenv("MAGNETAR_KERNELS");
  if (value == nullptr || value[0] == '\0' || std::strcmp(value, "auto") == 0)
    return KernelChoice::Auto;
  if (std::strcmp(value, "reference") == 0) return KernelChoice::Reference;
  if (std::strcmp(value, "asm") == 0 || std::strcmp(value, "avx2") == 0) return KernelChoice::Asm;
  static std::once_flag notice;
  std::call_once(notice, [&] {
    std::fprintf(stderr, "magnetar: MAGNETAR_KERNELS=%s is not one of auto, reference, asm; using auto\n", value);
  });
  return KernelChoice::Auto;
}

const KernelTable& active() {
  const KernelTable* table = g_active.load(std::memory_order_acquire);
  if (table != nullptr) return *table;
  // First use: several threads may race here; they all compute the same answer.
  const KernelChoice choice = choice_from_environment();
  const KernelTable* chosen = choose(choice);
  const KernelTable* expected = nullptr;
  if (g_active.compare_exchange_strong(expected, chosen, std::memory_order_acq_rel))
    g_active_is_auto.store(choice == KernelChoice::Auto, std::memory_order_release);
  return *g_active.load(std::memory_order_acquire);
}

void select(KernelChoice choice) {
  const KernelChoice resolved = choice == KernelChoice::Auto ? choice_from_environment() : choice;
  g_active_is_auto.store(resolved == KernelChoice::Auto, std::memory_order_release);
  g_active.store(choose(resolved), std::memory_order_release);
}

void set_tuned_f16_streams(int streams) {
  g_tuned_f16_streams.store(streams == 4 || streams == 8 ? streams : 0, std::memory_order_release);
  if (g_active.load(std::memory_order_acquire) != nullptr && g_active_is_auto.load(std::memory_order_acquire))
    g_active.store(choose(KernelChoice::Auto), std::memory_order_release);
}

const KernelTable* f16_streams_table(int streams) {
  return cpu::features().has_avx2_kernels() ? asm_table(streams) : nullptr;
}

const KernelTable& reference_table() { return kReferenceTable; }

uint64_t (*streaming_read_loop(const char** name))(const uint64_t* data, uint64_t words) {
  const bool avx2 = cpu::features().has_avx2_kernels();
  if (name) *name = avx2 ? "avx2" : "portable";
  return avx2 ? read_words_avx2 : bandwidth::sum_words;
}

}  // namespace magnetar::kernels
