// Dequantizers of GGUF's K-quants, IQ4 and Q4_1 / Q5_0 / Q5_1 (layouts in kquants.h). Each
// mirrors ggml's dequantize_row_* operation for operation, so values agree bit for bit.
#include "kernels/kquants.h"

#include <cassert>
#include <cstring>

#include "kernels/kernels.h"

namespace magnetar::quant {
namespace {

float half(uint16_t h) { return kernels::f16_to_f32_scalar(h); }

// Blocks are read by value: a tensor's rows need not be aligned for the block struct.
template <class Block>
Block load(const void* x, int64_t i) {
  Block b;
  std::memcpy(&b, static_cast<const uint8_t*>(x) + i * int64_t(sizeof(Block)), sizeof(Block));
  return b;
}

}  // namespace

void k_scale_min(int j, const uint8_t* q, uint8_t* d, uint8_t* m) {
  if (j < 4) {
    *d = q[j] & 63;
    *m = q[j + 4] & 63;
  } else {
    *d = uint8_t((q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4));
    *m = uint8_t((q[j + 4] >> 4) | ((q[j] >> 6) << 4));
  }
}

void dequantize_row_q4_1(const void* x, float* y, int64_t n) {
  assert(n % 32 == 0);
  for (int64_t i = 0; i < n / 32; ++i, y += 32) {
    const auto b = load<BlockQ4_1>(x, i);
    const float d = half(b.d), m = half(b.m);
    for (int j = 0; j < 16; ++j) {
      y[j] = float(b.qs[j] & 0x0F) * d + m;
      y[j + 16] = float(b.qs[j] >> 4) * d + m;
    }
  }
}

namespace {
// Q5_0 / Q5_1: the 5-bit values of a block (low nibbles + one high bit each from qh).
void five_bit_values(const uint8_t* qs, const uint8_t* qh_bytes, int* lo, int* hi) {
  uint32_t qh;
  std::memcpy(&qh, qh_bytes, 4);
  for (int j = 0; j < 16; ++j) {
    lo[j] = int((qs[j] & 0x0F) | (((qh >> j) << 4) & 0x10));
    hi[j] = int((qs[j] >> 4) | ((qh >> (j + 12)) & 0x10));
  }
}
}  // namespace

void dequantize_row_q5_0(const void* x, float* y, int64_t n) {
  assert(n % 32 == 0);
  for (int64_t i = 0; i < n / 32; ++i, y += 32) {
    const auto b = load<BlockQ5_0>(x, i);
    const float d = half(b.d);
    int lo[16], hi[16];
    five_bit_values(b.qs, b.qh, lo, hi);
    for (int j = 0; j < 16; ++j) {
      y[j] = float(lo[j] - 16) * d;
      y[j + 16] = float(hi[j] - 16) * d;
    }
  }
}

void dequantize_row_q5_1(const void* x, float* y, int64_t n) {
  assert(n % 32 == 0);
  for (int64_t i = 0; i < n / 32; ++i, y += 32) {
    const auto b = load<BlockQ5_1>(x, i);
    const float d = half(b.d), m = half(b.m);
    int lo[16], hi[16];
    five_bit_values(b.qs, b.qh, lo, hi);
    for (int j = 0; j < 16; ++j) {
      y[j] = float(lo[j]) * d + m;
      y[j + 16] = float(hi[j]) * d + m;
    }
  }
}

void dequantize_row_q2_k(const void* x, float* y, int64_t n) {
  assert(n % kSuperBlock == 0);
  for (int64_t i = 0; i < n / kSuperBlock; ++i) {
    const auto b = load<BlockQ2_K>(x, i);
    const float d = half(b.d), min = half(b.dmin);
    const uint8_t* q = b.qs;
    int is = 0;
    for (int half_block = 0; half_block < 2; ++half_block, q += 32) {
      for (int shift = 0; shift < 8; shift += 2) {
        for (int part = 0; part < 2; ++part) {  // 16 values each, scale byte: low nibble d, high min
          const uint8_t sc = b.scales[is++];
          const float dl = d * float(sc & 0xF), ml = min * float(sc >> 4);
          for (int l = 0; l < 16; ++l) *y++ = dl * float((q[l + 16 * part] >> shift) & 3) - ml;
        }
      }
    }
  }
}

void q3_k_scales(const uint8_t* packed, int8_t* scales) {
  constexpr uint32_t kmask1 = 0x03030303, kmask2 = 0x0f0f0f0f;
  uint32_t aux[4];
  std::memcpy(aux, packed, 12);
  const uint32_t tmp = aux[2];
  aux[2] = ((aux[0] >> 4) & kmask2) | (((tmp >> 4) & kmask1) << 4);
  aux[3] = ((aux[1] >> 4) & kmask2) | (((tmp >> 6) & kmask1) << 4);
  aux[0] = (aux[0] & kmask2) | (((tmp >> 0) & kmask1) << 4);
  aux[1] = (aux[1] & kmask2) | (((tmp >> 2) & kmask1) << 4);
  std::memcpy(scales, aux, 16);
}

void dequantize_row_q3_k(const void* x, float* y, int64_t n) {
  assert(n % kSuperBlock == 0);
  for (int64_t i = 0; i < n / kSuperBlock; ++i) {
    const auto b = load<BlockQ3_K>(x, i);
    const float d_all = half(b.d);
    int8_t scales[16];
    q3_k_scales(b.scales, scales);
    const uint8_t* q = b.qs;
    uint8_t m = 1;
    int is = 0;
    for (int half_block = 0; half_block < 2; ++half_block, q += 32) {
      for (int shift = 0; shift < 8; shift += 2, m = uint8_t(m << 1)) {
        for (int part = 0; part < 2; ++part) {
          const float dl = d_all * float(scales[is++] - 32);
          for (int l = 0; l < 16; ++l) {
            const int k = l + 16 * part;
            const int v = int((q[k] >> shift) & 3) - ((b.hmask[k] & m) ? 0 : 4);
            *y++ = dl * float(v);
          }
        }
      }
    }
  }
}

namespace {
// Q4_K / Q5_K: sub-blocks is and is + 1 (64 values) as (d1, m1, d2, m2), GGML's float order.
struct PairScales {
  float d1, m1, d2, m2;
};
PairScales pair_scales(const uint8_t* scales, int is, float d, float min) {
  uint8_t sc, m;
  PairScales p;
  k_scale_min(is, scales, &sc, &m);
  p.d1 = d * float(sc), p.m1 = min * float(m);
  k_scale_min(is + 1, scales, &sc, &m);
  p.d2 = d * float(sc), p.m2 = min * float(m);
  return p;
}
}  // namespace

void dequantize_row_q4_k(const void* x, float* y, int64_t n) {
  assert(n % kSuperBlock == 0);
  for (int64_t i = 0; i < n / kSuperBlock; ++i) {
    const auto b = load<BlockQ4_K>(x, i);
    const uint8_t* q = b.qs;
    for (int is = 0; is < 8; is += 2, q += 32) {
      const PairScales s = pair_scales(b.scales, is, half(b.d), half(b.dmin));
      for (int l = 0; l < 32; ++l) *y++ = s.d1 * float(q[l] & 0xF) - s.m1;
      for (int l = 0; l < 32; ++l) *y++ = s.d2 * float(q[l] >> 4) - s.m2;
    }
  }
}

void dequantize_row_q5_k(const void* x, float* y, int64_t n) {
  assert(n % kSuperBlock == 0);
  for (int64_t i = 0; i < n / kSuperBlock; ++i) {
    const auto b = load<BlockQ5_K>(x, i);
    const uint8_t* ql = b.qs;
    uint8_t u1 = 1, u2 = 2;
    for (int is = 0; is < 8; is += 2, ql += 32, u1 = uint8_t(u1 << 2), u2 = uint8_t(u2 << 2)) {
      const PairScales s = pair_scales(b.scales, is, half(b.d), half(b.dmin));
      for (int l = 0; l < 32; ++l) *y++ = s.d1 * float((ql[l] & 0xF) + (b.qh[l] & u1 ? 16 : 0)) - s.m1;
      for (int l = 0; l < 32; ++l) *y++ = s.d2 * float((ql[l] >> 4) + (b.qh[l] & u2 ? 16 : 0)) - s.m2;
    }
  }
}

void dequantize_row_q6_k(const void* x, float* y, int64_t n) {
  assert(n % kSuperBlock == 0);
  for (int64_t i = 0; i < n / kSuperBlock; ++i) {
    const auto b = load<BlockQ6_K>(x, i);
    const float d = half(b.d);
    const uint8_t* ql = b.ql;
    const uint8_t* qh = b.qh;
    const int8_t* sc = b.scales;
    for (int half_block = 0; half_block < 2; ++half_block, y += 128, ql += 64, qh += 32, sc += 8) {
      for (int l = 0; l < 32; ++l) {
        const int is = l / 16;
        const int q1 = int((ql[l] & 0xF) | (((qh[l] >> 0) & 3) << 4)) - 32;
        const int q2 = int((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32;
        const int q3 = int((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
        const int q4 = int((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
        y[l] = d * float(sc[is]) * float(q1);
        y[l + 32] = d * float(sc[is + 2]) * float(q2);
        y[l + 64] = d * float(sc[is + 4]) * float(q3);
        y[l + 96] = d * float(sc[is + 6]) * float(q4);
      }
    }
  }
}

void dequantize_row_iq4_nl(const void* x, float* y, int64_t n) {
  assert(n % 32 == 0);
  for (int64_t i = 0; i < n / 32; ++i, y += 32) {
    const auto b = load<BlockIQ4_NL>(x, i);
    const float d = half(b.d);
    for (int j = 0; j < 16; ++j) {
      y[j] = d * float(kIq4Values[b.qs[j] & 0xF]);
      y[j + 16] = d * float(kIq4Values[b.qs[j] >> 4]);
    }
  }
}

void dequantize_row_iq4_xs(const void* x, float* y, int64_t n) {
  assert(n % kSuperBlock == 0);
  for (int64_t i = 0; i < n / kSuperBlock; ++i) {
    const auto b = load<BlockIQ4_XS>(x, i);
    const float d = half(b.d);
    const uint8_t* qs = b.qs;
    for (int ib = 0; ib < 8; ++ib, y += 32, qs += 16) {
      const int ls = ((b.scales_l[ib / 2] >> 4 * (ib % 2)) & 0xF) | (((b.scales_h >> 2 * ib) & 3) << 4);
      const float dl = d * float(ls - 32);
      for (int j = 0; j < 16; ++j) {
        y[j] = dl * float(kIq4Values[qs[j] & 0xF]);
        y[j + 16] = dl * float(kIq4Values[qs[j] >> 4]);
      }
    }
  }
}

}  // namespace magnetar::quant
