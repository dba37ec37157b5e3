// Decode tuning's measuring driver (see ops/calibrate.h).
#include "ops/calibrate.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>

#include "core/platform.h"
#include "core/thread_pool.h"
#include "kernels/kernels.h"
#include "kernels/quant.h"
#include "ops/ops.h"
#include "ops/quant_ops.h"

namespace magnetar::ops::calibrate {
namespace {

using format::DType;

// The narrow matrices' width and the wide ones' height: Gemma-2B's model dimension, and a width
// the built-in rule runs with 4 streams.
constexpr int64_t kShortSide = 2048;
// The long side never drops below this, so that a small test budget still stripes the wide one.
constexpr int64_t kMinLongSide = 4096;
// Rows whose results are checked against the oracle: the first and last ones (the kernels' row
// tails) and some between.
constexpr int64_t kEdgeSampleRows = 24;
constexpr int64_t kMiddleSampleRows = 16;
constexpr uint64_t kNarrowSeed = 1, kWideSeed = 2;

uint64_t mix(uint64_t x) {  // splitmix64: deterministic, fast, well spread
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

double bytes_per_weight(DType t) {
  switch (t) {
    case DType::F16: return 2;
    case DType::Q8_0: return double(sizeof(quant::BlockQ8_0)) / quant::kBlock;
    default: return double(sizeof(quant::BlockQ4_0)) / quant::kBlock;
  }
}

// Anonymous memory with huge pages requested, as a model loaded in read mode has.
class LargeBuffer {
 public:
  explicit LargeBuffer(uint64_t bytes) : bytes_(bytes), data_(platform::alloc_large(bytes)) {}
  ~LargeBuffer() {
    if (data_) platform::free_large(data_, bytes_);
  }
  LargeBuffer(const LargeBuffer&) = delete;
  LargeBuffer& operator=(const LargeBuffer&) = delete;
  void* data() const { return data_; }

 private:
  uint64_t bytes_;
  void* data_;
};

// Noise weights of ordinary magnitude (no denormals, NaNs or infinities), the same for a seed.
void fill(const Matrix& m, void* dst, uint64_t seed) {
  const uint64_t bytes = format::tensor_bytes(m.dtype, uint64_t(m.rows), uint64_t(m.cols));
  auto* out = static_cast<uint8_t*>(dst);
  if (m.dtype == DType::F16) {
    auto* h = static_cast<uint16_t*>(dst);
    for (uint64_t i = 0; i < bytes / 2; i += 4) {
      const uint64_t r = mix(seed + i);
      for (int j = 0; j < 4; ++j) {  // sign, and a magnitude in [0.125, 0.5)
        const uint16_t bits = static_cast<uint16_t>(r >> (16 * j));
        h[i + uint64_t(j)] = static_cast<uint16_t>((bits & 0x8000) | (0x3000 + (bits & 0x7ff)));
      }
    }
    return;
  }
  const uint64_t block_bytes = m.dtype == DType::Q8_0 ? sizeof(quant::BlockQ8_0) : sizeof(quant::BlockQ4_0);
  for (uint64_t b = 0; b < bytes / block_bytes; ++b) {
    uint8_t* block = out + b * block_bytes;
    const uint16_t d = static_cast<uint16_t>(0x2000 + (mix(seed + b) & 0x3ff));  // 2^-7 .. 2^-6
    std::memcpy(block, &d, sizeof d);
    for (uint64_t i = 2; i < block_bytes; i += 8) {
      const uint64_t r = mix(seed ^ (b * 64 + i));
      for (uint64_t j = 0; j < 8 && i + j < block_bytes; ++j) {
        uint8_t q = static_cast<uint8_t>(r >> (8 * j));
        if (m.dtype == DType::Q8_0 && q == 0x80) q = 0x81;  // Q8_0 weights lie in [-127, 127]
        block[i + j] = q;
      }
    }
  }
}

// Row r of a plain matrix, widened to FP32.
void plain_row(const Matrix& m, int64_t r, float* out) {
  const auto* base = static_cast<const uint8_t*>(m.data) +
                     format::tensor_bytes(m.dtype, uint64_t(r), uint64_t(m.cols));
  if (m.dtype == DType::F16)
    for (int64_t c = 0; c < m.cols; ++c)
      out[c] = kernels::f16_to_f32_scalar(reinterpret_cast<const uint16_t*>(base)[c]);
  else if (m.dtype == DType::Q8_0)
    quant::dequantize_row_q8_0(reinterpret_cast<const quant::BlockQ8_0*>(base), out, m.cols);
  else
    quant::dequantize_row_q4_0(reinterpret_cast<const quant::BlockQ4_0*>(base), out, m.cols);
}

// One checked row: the exact product (double) and the tolerance a correct kernel stays within.
struct Sample {
  int64_t row;
  double value, tolerance;
};

std::vector<Sample> oracle(const Matrix& plain, const std::vector<float>& x) {
  std::vector<int64_t> rows;
  for (int64_t r = 0; r < std::min(kEdgeSampleRows, plain.rows); ++r) rows.push_back(r);
  for (int64_t i = 1; i <= kMiddleSampleRows; ++i) rows.push_back(plain.rows * i / (kMiddleSampleRows + 1));
  for (int64_t r = std::max<int64_t>(0, plain.rows - kEdgeSampleRows); r < plain.rows; ++r) rows.push_back(r);
  // F16 accumulates in FP32 (relative error ~ cols x 2^-24); the int8 kernels also quantize x
  // (an error up to half a step of 1/127 of max|x| per element).
  const double relative = plain.dtype == DType::F16 ? 1e-4 : 1.0 / 100;
  std::vector<float> w(static_cast<size_t>(plain.cols));
  std::vector<Sample> samples;
  for (int64_t r : rows) {
    plain_row(plain, r, w.data());
    double sum = 0, magnitude = 0;
    for (int64_t c = 0; c < plain.cols; ++c) {
      sum += double(w[size_t(c)]) * x[size_t(c)];
      magnitude += std::abs(double(w[size_t(c)]));
    }
    samples.push_back({r, sum, relative * magnitude + 1e-6});
  }
  return samples;
}

bool matches(const std::vector<Sample>& samples, const std::vector<float>& y) {
  for (const Sample& s : samples) {
    const double v = y[size_t(s.row)];
    if (!std::isfinite(v) || std::abs(v - s.value) > s.tolerance) return false;
  }
  return true;
}

// One test matrix in its current layout, its input, output and oracle.
struct TestMatrix {
  Matrix shape;  // plain: data points at `layout`'s buffer
  std::unique_ptr<LargeBuffer> memory;
  std::vector<float> x, y;
  std::vector<Sample> samples;
};

Status make_matrix(DType t, int64_t rows, int64_t cols, uint64_t seed, TestMatrix* m) {
  m->shape = Matrix{};
  m->shape.dtype = t;
  m->shape.rows = rows;
  m->shape.cols = cols;
  m->memory = std::make_unique<LargeBuffer>(format::tensor_bytes(t, uint64_t(rows), uint64_t(cols)));
  if (!m->memory->data()) return Status::error("not enough memory for the calibration's test matrices");
  m->shape.data = m->memory->data();
  fill(m->shape, m->memory->data(), seed);
  m->x.resize(size_t(cols));
  for (int64_t c = 0; c < cols; ++c)
    m->x[size_t(c)] = static_cast<float>(static_cast<int64_t>(mix(seed * 31 + uint64_t(c)) % 2001) - 1000) / 1000.0f;
  m->y.assign(size_t(rows), 0.0f);
  m->samples = oracle(m->shape, m->x);
  return Status::ok();
}

struct Shapes {
  int64_t long_side;
};
Shapes shapes_for(DType t, uint64_t matrix_bytes) {
  const auto weights = static_cast<int64_t>(double(matrix_bytes) / bytes_per_weight(t));
  return {std::max(kMinLongSide, weights / kShortSide / 256 * 256)};
}

class Driver {
 public:
  Driver(const Options& o, int total) : options_(o), pool_(std::max(1, o.threads)), total_(total) {}

  bool cancelled() const { return options_.cancel && options_.cancel->load(std::memory_order_relaxed); }
  bool past_deadline() const { return options_.deadline > 0 && platform::now_seconds() > options_.deadline; }
  ThreadPool& pool() { return pool_; }

  // Candidates `members` share one layout of the matrices. Each runs a checked warm-up pass, then
  // kTimedPasses timed passes round-robin (a drifting machine spreads over all of them alike).
  // pass(i) runs candidate i once and returns whether its results matched the oracle.
  template <class Pass>
  Status measure_group(const std::vector<int>& members, const std::vector<std::string>& names,
                       std::vector<tuning::Measured>* out, Pass&& pass) {
    std::vector<int> running;
    for (int i : members) {
      (*out)[size_t(i)].name = names[size_t(i)];
      progress(names[size_t(i)]);
      if (cancelled()) return Status::error("cancelled");
      if (past_deadline()) continue;  // unmeasured: the decision skips it
      if (!pass(i)) {
        (*out)[size_t(i)].failed = true;
        continue;
      }
      running.push_back(i);
    }
    for (int p = 0; p < kTimedPasses; ++p)
      for (int i : running) {
        if (cancelled()) return Status::error("cancelled");
        const double t0 = platform::now_seconds();
        pass(i);
        (*out)[size_t(i)].seconds.push_back(platform::now_seconds() - t0);
      }
    return Status::ok();
  }

 private:
  void progress(const std::string& step) {
    if (options_.on_progress) options_.on_progress(done_, total_, step);
    ++done_;
  }
  const Options& options_;
  ThreadPool pool_;
  int total_, done_ = 0;
};

Status measure_f16(Driver& driver, const std::vector<F16Variant>& variants, uint64_t matrix_bytes,
                   std::vector<tuning::Measured>* out) {
  out->assign(variants.size(), {});
  const int64_t n = shapes_for(DType::F16, matrix_bytes).long_side;
  TestMatrix narrow, wide;
  MAGNETAR_TRY(make_matrix(DType::F16, n, kShortSide, kNarrowSeed, &narrow));
  MAGNETAR_TRY(make_matrix(DType::F16, kShortSide, n, kWideSeed, &wide));
  LargeBuffer laid_out(format::tensor_bytes(DType::F16, uint64_t(kShortSide), uint64_t(n)));
  if (!laid_out.data()) return Status::error("not enough memory for the calibration's test matrices");
  std::vector<std::string> names;
  for (const F16Variant& v : variants) names.push_back(name_of(v));
  std::vector<int> stripe_widths;
  for (const F16Variant& v : variants)
    if (std::find(stripe_widths.begin(), stripe_widths.end(), v.stripe_cols) == stripe_widths.end())
      stripe_widths.push_back(v.stripe_cols);
  for (int width : stripe_widths) {
    Matrix w = wide.shape;
    if (wants_stripes(w, width)) {
      stripe_into(wide.shape, laid_out.data(), width);
      w.data = laid_out.data();
      w.stripe_cols = width;
    }
    std::vector<int> members;
    for (size_t i = 0; i < variants.size(); ++i)
      if (variants[i].stripe_cols == width) members.push_back(static_cast<int>(i));
    MAGNETAR_TRY(driver.measure_group(members, names, out, [&](int i) {
      const kernels::KernelTable* k = kernels::asm_table_named("", variants[size_t(i)].streams);
      if (!k) return false;
      matvec(driver.pool(), narrow.shape, narrow.x.data(), narrow.y.data(), *k);
      matvec(driver.pool(), w, wide.x.data(), wide.y.data(), *k);
      return matches(narrow.samples, narrow.y) && matches(wide.samples, wide.y);
    }));
  }
  return Status::ok();
}

Status measure_quant(Driver& driver, DType t, const std::vector<QuantVariant>& variants, uint64_t matrix_bytes,
                     std::vector<tuning::Measured>* out) {
  out->assign(variants.size(), {});
  const int64_t n = shapes_for(t, matrix_bytes).long_side;
  TestMatrix narrow, wide;
  MAGNETAR_TRY(make_matrix(t, n, kShortSide, kNarrowSeed, &narrow));
  MAGNETAR_TRY(make_matrix(t, kShortSide, n, kWideSeed, &wide));
  std::vector<std::string> names;
  for (const QuantVariant& v : variants) names.push_back(name_of(v));
  std::vector<uint8_t> scratch;
  for (const bool tiles : {true, false}) {  // the built-in layout first
    std::vector<int> members;
    for (size_t i = 0; i < variants.size(); ++i)
      if (variants[i].x16_tiles == tiles) members.push_back(static_cast<int>(i));
    if (members.empty()) continue;
    Matrix a = narrow.shape, b = wide.shape;
    if (tiles) {
      tile_x16_in_place(&a, narrow.memory->data(), &scratch);
      tile_x16_in_place(&b, wide.memory->data(), &scratch);
    } else {  // back to rows: the same noise again (fill is deterministic)
      fill(a, narrow.memory->data(), kNarrowSeed);
      fill(b, wide.memory->data(), kWideSeed);
    }
    MAGNETAR_TRY(driver.measure_group(members, names, out, [&](int i) {
      const kernels::KernelTable* k = variants[size_t(i)].table;
      if (!k) return false;
      matvec(driver.pool(), a, narrow.x.data(), narrow.y.data(), *k);
      matvec(driver.pool(), b, wide.x.data(), wide.y.data(), *k);
      return matches(narrow.samples, narrow.y) && matches(wide.samples, wide.y);
    }));
  }
  return Status::ok();
}

}  // namespace

std::vector<F16Variant> f16_candidates() {
  std::vector<F16Variant> list = {{int(kStripeCols), 4}};  // the built-in choice first
  for (int width : {0, 1024, 2048, 4096})
    for (int streams : {4, 8})
      if (!(width == kStripeCols && streams == 4)) list.push_back({width, streams});
  return list;
}

std::vector<QuantVariant> quant_candidates() {
  std::vector<const kernels::KernelTable*> tables = kernels::asm_tables();
  std::reverse(tables.begin(), tables.end());  // the best (the built-in choice) first
  if (tables.empty()) tables.push_back(&kernels::reference_table());
  std::vector<QuantVariant> list;
  for (const bool tiles : {true, false})
    for (const kernels::KernelTable* table : tables) list.push_back({tiles, table});
  return list;
}

std::string name_of(const F16Variant& v) {
  return (v.stripe_cols > 0 ? "stripes " + std::to_string(v.stripe_cols) : std::string("plain")) + ", " +
         std::to_string(v.streams) + " streams";
}

std::string name_of(const QuantVariant& v) {
  return std::string(v.x16_tiles ? "x16 tiles" : "rows") + ", " + (v.table ? v.table->isa : "none");
}

Status measure(const std::vector<F16Variant>& f16, const std::vector<QuantVariant>& quant,
               const Options& options, Measurements* out) {
  const uint64_t bytes = options.matrix_bytes > 0 ? options.matrix_bytes : kDefaultMatrixBytes;
  Driver driver(options, static_cast<int>(f16.size() + 2 * quant.size()));
  MAGNETAR_TRY(measure_f16(driver, f16, bytes, &out->f16));
  MAGNETAR_TRY(measure_quant(driver, DType::Q8_0, quant, bytes, &out->q8_0));
  MAGNETAR_TRY(measure_quant(driver, DType::Q4_0, quant, bytes, &out->q4_0));
  return Status::ok();
}

}  // namespace magnetar::ops::calibrate
