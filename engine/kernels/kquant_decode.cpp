// The C++ half of K-quant decode: the Q8_K activation quantizer in AVX2, bit for bit
// quantize_act_k_ref (kquant_dot.cpp), which every K-quant asm matmul call runs on its input
// before the kernels (kquant_decode.h). The reference rounds through libm's nearbyint per value
// (no SSE4.1 in the engine's baseline ISA). Compilers without GNU target attributes get the
// reference under this name.
#include "kernels/kquant_decode.h"

#include <cstring>

#if defined(__GNUC__) && (defined(__x86_64__) || defined(_M_X64))
#include <immintrin.h>
#define MAGNETAR_ACT_K_AVX2 1
#endif

namespace magnetar::quant {
namespace {

#if MAGNETAR_ACT_K_AVX2
__attribute__((target("avx2"))) int32_t hsum_epi32(__m256i v) {
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4e));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xb1));
  return _mm_cvtsi128_si32(s);
}

// One block, as the reference: max = the first value of largest magnitude (NaN never wins),
// q = min(127, max(-127, round-half-even(x * (-127 / max)))), NaN -> 0, d = 1 / (-127 / max).
__attribute__((target("avx2"))) void quantize_block_avx2(const float* x, ActBlockK* out) {
  std::memset(out, 0, sizeof *out);
  const __m256 abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
  __m256 amax8 = _mm256_setzero_ps();
  for (int j = 0; j < kSuperBlock; j += 8)  // maxps keeps its second operand when either is NaN
    amax8 = _mm256_max_ps(_mm256_and_ps(_mm256_loadu_ps(x + j), abs_mask), amax8);
  __m128 m4 = _mm_max_ps(_mm256_castps256_ps128(amax8), _mm256_extractf128_ps(amax8, 1));
  m4 = _mm_max_ps(m4, _mm_movehl_ps(m4, m4));
  m4 = _mm_max_ss(m4, _mm_shuffle_ps(m4, m4, 1));
  const float amax = _mm_cvtss_f32(m4);
  if (amax == 0.0f) return;  // all zero (or NaN): d = 0, q = 0
  const __m256 amax_all = _mm256_set1_ps(amax);
  float max = 0.0f;
  for (int j = 0; j < kSuperBlock; j += 8) {
    const int hits =
        _mm256_movemask_ps(_mm256_cmp_ps(_mm256_and_ps(_mm256_loadu_ps(x + j), abs_mask), amax_all, _CMP_EQ_OQ));
    if (hits != 0) {
      max = x[j + __builtin_ctz(unsigned(hits))];
      break;
    }
  }
  const float iscale = -127.0f / max;
  const __m256 scale = _mm256_set1_ps(iscale), hi = _mm256_set1_ps(127.0f), lo = _mm256_set1_ps(-127.0f);
  for (int g = 0; g < 16; ++g) {  // 16 values: one bsum
    __m256i q[2];
    for (int h = 0; h < 2; ++h) {
      __m256 v = _mm256_round_ps(_mm256_mul_ps(scale, _mm256_loadu_ps(x + 16 * g + 8 * h)),
                                 _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
      v = _mm256_and_ps(v, _mm256_cmp_ps(v, v, _CMP_ORD_Q));  // NaN -> 0
      q[h] = _mm256_cvtps_epi32(_mm256_max_ps(_mm256_min_ps(v, hi), lo));
    }
    out->bsums[g] = int16_t(hsum_epi32(_mm256_add_epi32(q[0], q[1])));
    const __m256i words = _mm256_permute4x64_epi64(_mm256_packs_epi32(q[0], q[1]), 0xd8);
    const __m128i bytes = _mm_packs_epi16(_mm256_castsi256_si128(words), _mm256_extracti128_si256(words, 1));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out->qs + 16 * g), bytes);
  }
  out->d = 1.0f / iscale;
}
#endif

}  // namespace

void quantize_act_k_avx2(const float* x, ActBlockK* out, int64_t n) {
#if MAGNETAR_ACT_K_AVX2
  for (int64_t b = 0; b < n / kSuperBlock; ++b) quantize_block_avx2(x + b * kSuperBlock, out + b);
#else
  quantize_act_k_ref(x, out, n);
#endif
}

}  // namespace magnetar::quant
