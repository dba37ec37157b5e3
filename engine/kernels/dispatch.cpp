// The kernel tables: built once (on first use) from the float ops and the type records, one
// chosen from the CPU's features, MAGNETAR_KERNELS and the decode tuning; select() chooses again
// for tests and `bench --kernels`. The hot path only loads a pointer.
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

#include "core/bandwidth.h"
#include "core/cpu_features.h"
#include "kernels/asm_kernels.h"
#include "kernels/kernels.h"
#include "kernels/reference.h"
#include "kernels/tables.h"
#include "kernels/type_traits.h"

namespace magnetar::kernels {
namespace {

const KernelTable kReferenceFloat = {
    ref::matvec_f16, ref::matvec_f32,    ref::matmul_f16,    ref::matmul_f32,
    ref::rmsnorm,    ref::softmax,       ref::silu_mul,      ref::gelu_tanh_mul,
    ref::rope,       ref::f16_to_f32,    ref::dot_f32,       {},
    "reference",     "reference"};

constexpr int kStreamChoices[] = {0, 4, 8};  // the F16 kernel's: built-in rule, 4, 8
constexpr Isa kAsmIsas[] = {Isa::Avx2, Isa::Avx512Vnni};

// `floats` (float ops and, in asm tables, their F16/F32 entries) completed with the block types'
// entries of `isa` from their records; the reference table takes every entry from the records.
KernelTable complete(const KernelTable& floats, Isa isa) {
  KernelTable t = floats;
  for (uint32_t d = 0; d < format::kDTypeCount; ++d) {
    const auto dtype = static_cast<format::DType>(d);
    if (isa == Isa::Reference || format::dtype_is_quantized(dtype))
      t.types[d] = quant::type_kernels(quant::type_traits(dtype), isa);
  }
  t.isa = isa_name(isa);
  return t;
}

struct Tables {
  KernelTable reference;
  KernelTable by_isa[2][3];  // [kAsmIsas index][kStreamChoices index]; valid where runs[i]
  bool runs[2] = {false, false};
};

// Built on first use (a function-local static: thread-safe, and after the type records' static
// initialization); a CPU without the asm kernels gets a one-time notice on stderr.
const Tables& tables() {
  static const Tables built = [] {
    Tables t{};
    t.reference = complete(kReferenceFloat, Isa::Reference);
    const cpu::Features& f = cpu::features();
    t.runs[0] = f.has_avx2_kernels() && asm_float_table() != nullptr;
    t.runs[1] = t.runs[0] && f.has_avx512_kernels() && f.avx512vnni;
    for (int i = 0; i < 2; ++i)
      for (int s = 0; s < 3; ++s)
        if (t.runs[i]) t.by_isa[i][s] = complete(*asm_float_table(kStreamChoices[s]), kAsmIsas[i]);
    if (!t.runs[0])
      std::fprintf(stderr,
                   "magnetar: this CPU (%s) lacks AVX2/FMA/F16C (or the OS does not save YMM "
                   "state); using the slower reference kernels\n",
                   cpu::describe(f).c_str());
    return t;
  }();
  return built;
}

int stream_index(int f16_streams) { return f16_streams == 4 ? 1 : f16_streams == 8 ? 2 : 0; }

std::atomic<const KernelTable*> g_active{nullptr};
// Decode tuning's choice (isa name, empty: the best; F16 streams, 0: the built-in rule), used by
// Auto choices only; and whether the active table came from one (so a new tuning may replace it).
std::mutex g_tuned_mutex;
std::string g_tuned_isa;  // guarded by g_tuned_mutex
std::atomic<int> g_tuned_f16_streams{0};
std::atomic<bool> g_active_is_auto{true};

// The asm table MAGNETAR_KERNELS names (an isa_name of kAsmIsas; empty for "asm" or anything else).
std::string environment_isa() {
  const char* value = std::getenv("MAGNETAR_KERNELS");
  for (const Isa isa : kAsmIsas)
    if (value != nullptr && std::strcmp(value, isa_name(isa)) == 0) return value;
  return {};
}

// `choice` as resolved from the environment (Auto only when MAGNETAR_KERNELS is unset/auto).
const KernelTable* choose(KernelChoice choice) {
  if (choice == KernelChoice::Reference || !asm_available()) return &tables().reference;
  if (choice == KernelChoice::Asm) {
    // the named table where this CPU runs it, else the best
    const KernelTable* named = asm_table_named(environment_isa(), 0);
    return named != nullptr ? named : asm_table_named("", 0);
  }
  std::string isa;
  {
    std::lock_guard<std::mutex> lock(g_tuned_mutex);
    isa = g_tuned_isa;
  }
  const int streams = g_tuned_f16_streams.load(std::memory_order_acquire);
  const KernelTable* tuned = asm_table_named(isa, streams);
  return tuned ? tuned : asm_table_named("", streams);
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
  if (std::strcmp(value, "asm") == 0 || !environment_isa().empty()) return KernelChoice::Asm;
  static std::once_flag notice;
  std::call_once(notice, [&] {
    std::fprintf(stderr,
                 "magnetar: MAGNETAR_KERNELS=%s is not one of auto, reference, asm, avx2, avx512vnni; using auto\n",
                 value);
  });
  return KernelChoice::Auto;
}

const char* isa_name(Isa isa) {
  return isa == Isa::Avx512Vnni ? "avx512vnni" : isa == Isa::Avx2 ? "avx2" : "reference";
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

const KernelTable& reference_table() { return tables().reference; }

std::vector<const KernelTable*> asm_tables() {
  std::vector<const KernelTable*> list;
  for (int i = 0; i < 2; ++i)
    if (tables().runs[i]) list.push_back(&tables().by_isa[i][0]);
  return list;
}

bool asm_available() { return tables().runs[0]; }

const KernelTable* asm_table_named(std::string_view isa, int f16_streams) {
  const Tables& t = tables();
  for (int i = 1; i >= 0; --i)  // best first: an empty name takes it
    if (t.runs[i] && (isa.empty() || isa == isa_name(kAsmIsas[i]))) return &t.by_isa[i][stream_index(f16_streams)];
  return nullptr;
}

void set_tuned_kernels(std::string_view isa, int f16_streams) {
  {
    std::lock_guard<std::mutex> lock(g_tuned_mutex);
    g_tuned_isa.assign(isa);
  }
  g_tuned_f16_streams.store(f16_streams == 4 || f16_streams == 8 ? f16_streams : 0, std::memory_order_release);
  if (g_active.load(std::memory_order_acquire) != nullptr && g_active_is_auto.load(std::memory_order_acquire))
    g_active.store(choose(KernelChoice::Auto), std::memory_order_release);
}

uint64_t (*streaming_read_loop(const char** name))(const uint64_t* data, uint64_t words) {
  const bool avx2 = cpu::features().has_avx2_kernels();
  if (name) *name = avx2 ? "avx2" : "portable";
  return avx2 ? read_words_avx2 : bandwidth::sum_words;
}

}  // namespace magnetar::kernels
