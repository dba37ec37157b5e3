// CPUID + XGETBV feature detection. gcc/clang/mingw use <cpuid.h> and inline asm for XGETBV
// (no -mxsave needed); MSVC uses its intrinsics. Non-x86 builds report no features.
#include "core/cpu_features.h"

#include <cstdint>
#include <cstring>
#include <utility>

#if defined(_MSC_VER)
#include <intrin.h>
#elif defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace magnetar::cpu {
namespace {

struct Regs {
  uint32_t eax = 0, ebx = 0, ecx = 0, edx = 0;
};

Regs cpuid(uint32_t leaf, uint32_t subleaf) {
  Regs r;
#if defined(_MSC_VER)
  int v[4];
  __cpuidex(v, static_cast<int>(leaf), static_cast<int>(subleaf));
  r.eax = static_cast<uint32_t>(v[0]);
  r.ebx = static_cast<uint32_t>(v[1]);
  r.ecx = static_cast<uint32_t>(v[2]);
  r.edx = static_cast<uint32_t>(v[3]);
#elif defined(__x86_64__) || defined(__i386__)
  __cpuid_count(leaf, subleaf, r.eax, r.ebx, r.ecx, r.edx);
#else
  (void)leaf;
  (void)subleaf;
#endif
  return r;
}

// XCR0: which register states the OS saves. Only valid when CPUID says OSXSAVE.
uint64_t xgetbv0() {
#if defined(_MSC_VER)
  return _xgetbv(0);
#elif defined(__x86_64__) || defined(__i386__)
  uint32_t lo = 0, hi = 0;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (static_cast<uint64_t>(hi) << 32) | lo;
#else
  return 0;
#endif
}

bool bit(uint32_t reg, int n) { return (reg >> n) & 1u; }

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\0')) s.pop_back();
  size_t first = s.find_first_not_of(' ');
  return first == std::string::npos ? std::string() : s.substr(first);
}

Features detect() {
  Features f;
  Regs leaf0 = cpuid(0, 0);
  uint32_t max_leaf = leaf0.eax;
  char vendor[13] = {};
  std::memcpy(vendor + 0, &leaf0.ebx, 4);
  std::memcpy(vendor + 4, &leaf0.edx, 4);
  std::memcpy(vendor + 8, &leaf0.ecx, 4);
  f.vendor = vendor;
  if (max_leaf >= 1) {
    Regs l1 = cpuid(1, 0);
    const Signature sig = decode_signature(l1.eax);
    f.family = sig.family;
    f.model = sig.model;
    f.stepping = sig.stepping;
    f.sse42 = bit(l1.ecx, 20);
    f.fma = bit(l1.ecx, 12);
    f.f16c = bit(l1.ecx, 29);
    f.avx = bit(l1.ecx, 28);
    const bool osxsave = bit(l1.ecx, 27);
    if (osxsave) {
      const uint64_t xcr0 = xgetbv0();
      f.os_ymm = (xcr0 & 0x6) == 0x6;     // SSE (bit 1) + AVX (bit 2)
      f.os_zmm = (xcr0 & 0xe6) == 0xe6;   // + opmask (5), ZMM_Hi256 (6), Hi16_ZMM (7)
    }
  }
  if (max_leaf >= 7) {
    Regs l7 = cpuid(7, 0);
    f.avx2 = bit(l7.ebx, 5);
    f.avx512f = bit(l7.ebx, 16);
    f.avx512bw = bit(l7.ebx, 30);
    f.avx512vl = bit(l7.ebx, 31);
    f.avx512vnni = bit(l7.ecx, 11);
  }
  Regs ext = cpuid(0x80000000u, 0);
  if (ext.eax >= 0x80000004u) {
    char brand[49] = {};
    for (uint32_t i = 0; i < 3; ++i) {
      Regs b = cpuid(0x80000002u + i, 0);
      std::memcpy(brand + 16 * i + 0, &b.eax, 4);
      std::memcpy(brand + 16 * i + 4, &b.ebx, 4);
      std::memcpy(brand + 16 * i + 8, &b.ecx, 4);
      std::memcpy(brand + 16 * i + 12, &b.edx, 4);
    }
    f.brand = trim(brand);
  }
  return f;
}

}  // namespace

Signature decode_signature(uint32_t eax) {
  Signature s;
  const int base_family = static_cast<int>((eax >> 8) & 0xf);
  const int base_model = static_cast<int>((eax >> 4) & 0xf);
  s.stepping = static_cast<int>(eax & 0xf);
  s.family = base_family == 15 ? base_family + static_cast<int>((eax >> 20) & 0xff) : base_family;
  s.model = base_family == 6 || base_family == 15 ? (static_cast<int>((eax >> 16) & 0xf) << 4) | base_model
                                                   : base_model;
  return s;
}

const Features& features() {
  static const Features detected = detect();
  return detected;
}

std::string describe(const Features& f) {
  std::string s = f.brand.empty() ? f.vendor : f.brand;
  s += " [";
  const std::pair<bool, const char*> flags[] = {
      {f.avx2, "avx2"},         {f.fma, "fma"},           {f.f16c, "f16c"},
      {f.avx512f, "avx512f"},   {f.avx512bw, "avx512bw"}, {f.avx512vl, "avx512vl"},
      {f.avx512vnni, "avx512vnni"}, {f.os_ymm, "os-ymm"}, {f.os_zmm, "os-zmm"}};
  bool first = true;
  for (const auto& [on, name] : flags) {
    if (!on) continue;
    if (!first) s += ' ';
    s += name;
    first = false;
  }
  s += ']';
  return s;
}

}  // namespace magnetar::cpu
