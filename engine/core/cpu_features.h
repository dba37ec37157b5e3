// What the CPU and the OS let us run: CPUID feature bits plus XGETBV (the OS must save the YMM /
// ZMM state on context switch, or AVX code corrupts other threads' registers). Detected once.
// This is the only place that executes CPUID; kernels/dispatch.cpp decides from it.
#pragma once
#include <cstdint>
#include <string>

namespace magnetar::cpu {

struct Features {
  bool sse42 = false;
  bool avx = false;
  bool avx2 = false;
  bool fma = false;
  bool f16c = false;
  bool avx512f = false;
  bool avx512bw = false;
  bool avx512vl = false;
  bool avx512vnni = false;
  bool os_ymm = false;  // XCR0 has SSE + AVX state enabled
  bool os_zmm = false;  // XCR0 also has opmask + ZMM state enabled
  std::string vendor;   // "GenuineIntel", "AuthenticAMD", ...
  std::string brand;    // e.g. "AMD EPYC 9R45 ..." (empty when CPUID has no brand leaves)
  // CPUID leaf 1 signature, decoded (display family and model: extended fields folded in).
  int family = 0, model = 0, stepping = 0;

  // The baseline the NASM kernels need: AVX2 + FMA + F16C with YMM state saved by the OS.
  bool has_avx2_kernels() const { return avx2 && fma && f16c && os_ymm; }
  // AVX-512 F/BW/VL usable (state saved by the OS).
  bool has_avx512_kernels() const {
    return has_avx2_kernels() && avx512f && avx512bw && avx512vl && os_zmm;
  }
};

struct Signature {
  int family = 0, model = 0, stepping = 0;
};
// Decodes CPUID leaf 1 EAX as Intel and AMD document it: the extended family is added when the
// base family is 15; the extended model is prepended when the base family is 6 or 15.
Signature decode_signature(uint32_t leaf1_eax);

// Detected on first call, then cached (thread-safe).
const Features& features();
// One line for logs: "AMD EPYC ... [avx2 fma f16c avx512f avx512bw avx512vl avx512vnni]".
std::string describe(const Features& f);

}  // namespace magnetar::cpu
