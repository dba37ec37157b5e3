// The AVX2 + FMA + F16C float ops, the asm tables' float half (tables.h): thin wrappers that give
// every NASM kernel the "any size" contract of kernels.h — the asm does the aligned bulk, the
// reference twins the tails — and the drivers of asm/matmul_avx2.asm: 16-row panels and column
// blocks for prefill, row pairs for a few tokens.
#include <cassert>
#include <cstring>

#include "kernels/asm_kernels.h"
#include "kernels/kernels.h"
#include "kernels/reference.h"
#include "kernels/tables.h"

namespace magnetar::kernels {
namespace {

// Columns per packed panel: 16 rows x 256 columns x 4 bytes = 16 KiB, resident in L1 while
// every token of the batch streams through it.
constexpr int64_t kPanelCols = 256;
constexpr int64_t kPanelRows = 16;
// Prefill token blocks: x for a block stays within this much (served from L3), at most
// kMaxTokenBlock tokens (the on-stack output scratch: 512 x 16 floats = 32 KiB), a multiple of
// the register tile's 6 tokens.
constexpr int64_t kXResidentBytes = int64_t{8} << 20;
constexpr int64_t kMaxTokenBlock = 510;
constexpr int64_t kTileTokens = 6;
// matvec_f16 switches from 4 to 8 weight streams per pass once x (cols * 4 bytes) outgrows this
// share of L1: with 8 streams each x load feeds 8 rows (asm/README.md has the measurements).
constexpr int64_t kMatvecX8MinCols = 3072;
// One token goes through matvec (its weight streams); a few through matmul_rows (each weight row
// read straight from w, once per kRowsTokens tokens: packing a panel costs more than a few tokens
// save); more through the packed panels. "A few": up to kFewTokens, or kFewTokensShortRows when
// rows are at most kShortRowCols long (a head's keys or value block: there the panels' packing
// and output copies weigh most). Measured, asm/README.md "matmul_rows".
constexpr int64_t kFewTokens = 4;
constexpr int64_t kFewTokensShortRows = 8;
constexpr int64_t kShortRowCols = 256;
constexpr int64_t kRowsTokens = 4;  // tokens per call of magnetar_matmul_rows_*

// kStreams: the F16 weight streams per pass, 4 or 8, or 0 for the built-in rule by width
// (decode tuning, magnetar/tuning.h, may fix it for the machine).
template <int kStreams>
void matvec_f16(const uint16_t* w, int64_t ldw, const float* x, float* y, int64_t rows,
                int64_t cols) {
  const int64_t bulk = cols & ~int64_t{15};
  if (bulk == 0) return ref::matvec_f16(w, ldw, x, y, rows, cols);
  if (kStreams == 8 || (kStreams == 0 && bulk > kMatvecX8MinCols))
    magnetar_matvec_f16_x8_avx2(w, ldw, x, y, rows, bulk);
  else
    magnetar_matvec_f16_avx2(w, ldw, x, y, rows, bulk);
  if (bulk != cols)
    for (int64_t r = 0; r < rows; ++r) y[r] += ref::dot_f16_f32(w + r * ldw + bulk, x + bulk, cols - bulk);
}

void matvec_f32(const float* w, int64_t ldw, const float* x, float* y, int64_t rows,
                int64_t cols) {
  const int64_t bulk = cols & ~int64_t{15};
  if (bulk == 0) return ref::matvec_f32(w, ldw, x, y, rows, cols);
  magnetar_matvec_f32_avx2(w, ldw, x, y, rows, bulk);
  if (bulk != cols)
    for (int64_t r = 0; r < rows; ++r) y[r] += ref::dot_f32_f32(w + r * ldw + bulk, x + bulk, cols - bulk);
}

template <class W, int kStreams>
void matvec_of(const W* w, int64_t ldw, const float* x, float* y, int64_t rows, int64_t cols) {
  if constexpr (sizeof(W) == 2)
    matvec_f16<kStreams>(w, ldw, x, y, rows, cols);
  else
    matvec_f32(w, ldw, x, y, rows, cols);
}

// y[r] (+)= row r of w · x. Accumulating goes through a small on-stack block of sums.
template <class W, int kStreams>
void matvec_rows(const W* w, int64_t ldw, const float* x, float* y, int64_t rows, int64_t cols,
                 int64_t accumulate) {
  if (!accumulate) return matvec_of<W, kStreams>(w, ldw, x, y, rows, cols);
  constexpr int64_t kBlockRows = 1024;  // 4 KiB of sums: long weight streams per call
  float sums[kBlockRows];
  for (int64_t r0 = 0; r0 < rows; r0 += kBlockRows) {
    const int64_t n = rows - r0 < kBlockRows ? rows - r0 : kBlockRows;
    matvec_of<W, kStreams>(w + r0 * ldw, ldw, x, sums, n, cols);
    for (int64_t r = 0; r < n; ++r) y[r0 + r] += sums[r];
  }
}

// y[t] (+)= w x_t for a few tokens (matmul_any says how few; asm/matmul_avx2.asm, "Few tokens"):
// passes of kRowsTokens tokens, column tails (< 8) added per output.
template <class W>
void matmul_rows(const W* w, int64_t ldw, const float* x, int64_t ldx, float* y, int64_t ldy,
                 int64_t rows, int64_t cols, int64_t n_tokens, int64_t accumulate) {
  const int64_t bulk = cols & ~int64_t{7};
  if (bulk == 0) {
    if constexpr (sizeof(W) == 2)
      return ref::matmul_f16(w, ldw, x, ldx, y, ldy, rows, cols, n_tokens, accumulate);
    else
      return ref::matmul_f32(w, ldw, x, ldx, y, ldy, rows, cols, n_tokens, accumulate);
  }
  for (int64_t t0 = 0; t0 < n_tokens; t0 += kRowsTokens) {  // a pass over w per kRowsTokens
    const int64_t tokens = n_tokens - t0 < kRowsTokens ? n_tokens - t0 : kRowsTokens;
    if constexpr (sizeof(W) == 2)
      magnetar_matmul_rows_f16_avx2(w, ldw, x + t0 * ldx, ldx, y + t0 * ldy, ldy, rows, bulk, tokens, accumulate);
    else
      magnetar_matmul_rows_f32_avx2(w, ldw, x + t0 * ldx, ldx, y + t0 * ldy, ldy, rows, bulk, tokens, accumulate);
  }
  if (bulk == cols) return;
  for (int64_t t = 0; t < n_tokens; ++t)
    for (int64_t r = 0; r < rows; ++r) {
      if constexpr (sizeof(W) == 2)
        y[t * ldy + r] += ref::dot_f16_f32(w + r * ldw + bulk, x + t * ldx + bulk, cols - bulk);
      else
        y[t * ldy + r] += ref::dot_f32_f32(w + r * ldw + bulk, x + t * ldx + bulk, cols - bulk);
    }
}

// Packs rows [r0, r0 + 16) x columns [k0, k0 + kc) of w into panel[k * 16 + r].
template <class W>
void pack_panel(const W* w, int64_t ldw, int64_t r0, int64_t k0, int64_t kc, float* panel) {
  const W* wr = w + r0 * ldw;
  const int64_t kc8 = kc & ~int64_t{7};
  if (kc8 > 0) {
    if constexpr (sizeof(W) == 2)
      magnetar_pack_f16_panel16_avx2(wr + k0, ldw, panel, kc8);
    else
      magnetar_pack_f32_panel16_avx2(wr + k0, ldw, panel, kc8);
  }
  for (int64_t k = kc8; k < kc; ++k)  // column tail (< 8): scalar, once per panel
    for (int64_t r = 0; r < kPanelRows; ++r) {
      if constexpr (sizeof(W) == 2)
        panel[k * kPanelRows + r] = f16_to_f32_scalar(wr[r * ldw + k0 + k]);
      else
        panel[k * kPanelRows + r] = wr[r * ldw + k0 + k];
    }
}

// The panel driver shared by F16 and F32 weights. W = uint16_t (F16) or float.
// Tokens go in blocks small enough that the block's x stays in L3 (8 MiB; all of a 512-token
// prompt at 2048 columns, 126 tokens at 16384). Within a block: row panel -> column block, so a
// panel's 16 rows are read front to back (the hardware prefetcher follows them) and each packed
// panel serves every token of the block. The panel's outputs accumulate over column blocks in a
// contiguous scratch: y's rows are ldy apart (a power of two for most models), which would map
// every token's piece of y to the same L1/L2 set.
template <class W, int kStreams>
void matmul_panels(const W* w, int64_t ldw, const float* x, int64_t ldx, float* y, int64_t ldy,
                   int64_t rows, int64_t cols, int64_t n_tokens, int64_t accumulate) {
  alignas(64) float panel[kPanelCols * kPanelRows];      // [k][16]
  alignas(64) float scratch[kMaxTokenBlock * kPanelRows];  // [token][16]
  const int64_t panel_rows = rows & ~(kPanelRows - 1);
  int64_t block = kXResidentBytes / (cols * static_cast<int64_t>(sizeof(float)));
  block = block < kTileTokens ? kTileTokens : block > kMaxTokenBlock ? kMaxTokenBlock : block;
  block -= block % kTileTokens;
  for (int64_t t0 = 0; t0 < n_tokens; t0 += block) {
    const int64_t tokens = n_tokens - t0 < block ? n_tokens - t0 : block;
    for (int64_t r0 = 0; r0 < panel_rows; r0 += kPanelRows) {
      for (int64_t k0 = 0; k0 < cols; k0 += kPanelCols) {
        const int64_t kc = cols - k0 < kPanelCols ? cols - k0 : kPanelCols;
        pack_panel(w, ldw, r0, k0, kc, panel);
        magnetar_matmul_panel16_avx2(panel, kc, x + t0 * ldx + k0, ldx, scratch, kPanelRows, tokens,
                                     k0 > 0 ? 1 : 0);
      }
      for (int64_t t = 0; t < tokens; ++t) {
        float* yt = y + (t0 + t) * ldy + r0;
        const float* st = scratch + t * kPanelRows;
        if (accumulate)
          for (int64_t r = 0; r < kPanelRows; ++r) yt[r] += st[r];
        else
          std::memcpy(yt, st, sizeof(float) * kPanelRows);
      }
    }
  }
  if (panel_rows == rows) return;
  for (int64_t t = 0; t < n_tokens; ++t)  // row tail (< 16 rows): matvec per token
    matvec_rows<W, kStreams>(w + panel_rows * ldw, ldw, x + t * ldx, y + t * ldy + panel_rows,
                             rows - panel_rows, cols, accumulate);
}

template <class W, int kStreams>
void matmul_any(const W* w, int64_t ldw, const float* x, int64_t ldx, float* y, int64_t ldy,
                int64_t rows, int64_t cols, int64_t n_tokens, int64_t accumulate) {
  assert(ldw >= cols && ldx >= cols && ldy >= rows && "matmul: strides too small");
  if (n_tokens <= 0 || rows <= 0) return;
  if (cols == 0) {
    if constexpr (sizeof(W) == 2)
      return ref::matmul_f16(w, ldw, x, ldx, y, ldy, rows, cols, n_tokens, accumulate);
    else
      return ref::matmul_f32(w, ldw, x, ldx, y, ldy, rows, cols, n_tokens, accumulate);
  }
  if (n_tokens == 1) return matvec_rows<W, kStreams>(w, ldw, x, y, rows, cols, accumulate);
  if (n_tokens <= (cols <= kShortRowCols ? kFewTokensShortRows : kFewTokens))
    return matmul_rows(w, ldw, x, ldx, y, ldy, rows, cols, n_tokens, accumulate);
  matmul_panels<W, kStreams>(w, ldw, x, ldx, y, ldy, rows, cols, n_tokens, accumulate);
}

template <int kStreams>
void matmul_f16(const uint16_t* w, int64_t ldw, const float* x, int64_t ldx, float* y,
                int64_t ldy, int64_t rows, int64_t cols, int64_t n_tokens, int64_t accumulate) {
  matmul_any<uint16_t, kStreams>(w, ldw, x, ldx, y, ldy, rows, cols, n_tokens, accumulate);
}

void matmul_f32(const float* w, int64_t ldw, const float* x, int64_t ldx, float* y, int64_t ldy,
                int64_t rows, int64_t cols, int64_t n_tokens, int64_t accumulate) {
  matmul_any<float, 0>(w, ldw, x, ldx, y, ldy, rows, cols, n_tokens, accumulate);
}

void rmsnorm(float* out, const float* x, const float* weight, int64_t n, const float* eps) {
  assert(n > 0 && "rmsnorm: n must be positive");
  magnetar_rmsnorm_avx2(out, x, weight, n, eps);
}

void softmax(float* x, int64_t n) {
  if (n > 0) magnetar_softmax_avx2(x, n);
}

void silu_mul(float* gate, const float* up, int64_t n) { magnetar_silu_mul_avx2(gate, up, n); }

void gelu_tanh_mul(float* gate, const float* up, int64_t n) {
  magnetar_gelu_tanh_mul_avx2(gate, up, n);
}

void rope(float* x, int64_t n_heads, int64_t head_dim, const float* cos, const float* sin) {
  assert(head_dim >= 2 && head_dim % 2 == 0 && "rope: head_dim must be even");
  if (n_heads > 0) magnetar_rope_avx2(x, n_heads, head_dim, cos, sin);
}

void f16_to_f32(const uint16_t* src, float* dst, int64_t n) {
  const int64_t bulk = n & ~int64_t{15};
  if (bulk > 0) magnetar_f16_to_f32_avx2(src, dst, bulk);
  for (int64_t i = bulk; i < n; ++i) dst[i] = f16_to_f32_scalar(src[i]);
}

void dot_f32(const float* a, const float* b, int64_t n, float* out) {
  const int64_t bulk = n & ~int64_t{31};
  float sum = 0.f;
  if (bulk > 0) magnetar_dot_f32_avx2(a, b, bulk, &sum);
  for (int64_t i = bulk; i < n; ++i) sum += a[i] * b[i];
  *out = sum;
}

// One table per F16 stream choice; they differ only in the F16 matrix kernels.
template <int kStreams>
constexpr KernelTable avx2_table() {
  KernelTable t{matvec_f16<kStreams>, matvec_f32, matmul_f16<kStreams>, matmul_f32,
                rmsnorm,              softmax,    silu_mul,             gelu_tanh_mul,
                rope,                 f16_to_f32, dot_f32,              {},
                "avx2",               "avx2"};
  t.types[uint32_t(format::DType::F16)] = FloatEntry<uint16_t, matvec_f16<kStreams>, matmul_f16<kStreams>>::kernels();
  t.types[uint32_t(format::DType::F32)] = FloatEntry<float, matvec_f32, matmul_f32>::kernels();
  return t;
}
const KernelTable kAvx2Table = avx2_table<0>();
const KernelTable kAvx2Streams4Table = avx2_table<4>();
const KernelTable kAvx2Streams8Table = avx2_table<8>();

}  // namespace

const KernelTable* asm_float_table(int f16_streams) {
  return f16_streams == 4 ? &kAvx2Streams4Table : f16_streams == 8 ? &kAvx2Streams8Table : &kAvx2Table;
}

}  // namespace magnetar::kernels
