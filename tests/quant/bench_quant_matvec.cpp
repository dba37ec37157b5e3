// Benchmark program (not a test): GB/s of the Q8_0 / Q4_0 matrix–vector kernels on a matrix far
// larger than the caches — row-major rows and x16 tiles (kernels/quant.h) — at 1 and 2 threads,
// against a plain streaming read of the same bytes (the read ceiling). Reports medians and the ratio to the ceiling.
// Then prefill: ops::matmul on F16 weights against ops::matmul on Q8_0 / Q4_0, row-major
// and in x16 tiles (same matrix, 64 tokens), in tokens × rows × cols multiply-adds per second.
//   magnetar_bench_quant [rows cols] [--reps N] [--kernels reference|avx2|avx512vnni]
#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "core/thread_pool.h"
#include "kernels/kernels.h"
#include "kernels/quant.h"
#include "ops/ops.h"
#include "ops/quant_ops.h"
#include "stream_read.h"

namespace {

using magnetar::quant::ActBlock;

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

struct Timing {
  double median, best;  // seconds per repetition
};

// Runs work(thread_index) on n_threads threads (the caller is thread 0), reps times; returns
// the median and the best wall time of one repetition (the best is what an unloaded machine
// shows when other processes compete for the cores).
Timing time_repetitions(int n_threads, int reps, const std::function<void(int)>& work) {
  std::barrier sync(n_threads);
  std::atomic<bool> stop{false};
  std::vector<std::thread> helpers;
  for (int t = 1; t < n_threads; ++t)
    helpers.emplace_back([&, t] {
      for (;;) {
        sync.arrive_and_wait();
        if (stop.load()) return;
        work(t);
        sync.arrive_and_wait();
      }
    });
  std::vector<double> times;
  for (int rep = 0; rep < reps + 1; ++rep) {  // the first repetition warms up
    const double start = now();
    sync.arrive_and_wait();
    work(0);
    sync.arrive_and_wait();
    if (rep > 0) times.push_back(now() - start);
  }
  stop = true;
  sync.arrive_and_wait();
  for (auto& h : helpers) h.join();
  std::sort(times.begin(), times.end());
  return {times[times.size() / 2], times.front()};
}

}  // namespace

int main(int argc, char** argv) {
  int64_t rows = 16384, cols = 8192;
  int reps = 15;
  std::string kernels_name;  // empty: the best this CPU runs
  std::vector<std::string> positional;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--reps" && i + 1 < argc) reps = std::atoi(argv[++i]);
    else if (arg == "--kernels" && i + 1 < argc) kernels_name = argv[++i];
    else positional.push_back(arg);
  }
  if (positional.size() == 2) {
    rows = std::atoll(positional[0].c_str());
    cols = std::atoll(positional[1].c_str());
  }
  if (cols <= 0 || cols % 32 != 0 || rows <= 0 || reps <= 0) {
    std::fprintf(stderr, "usage: magnetar_bench_quant [rows cols] [--reps N] [--kernels reference|avx2|avx512vnni]\n"
                         "cols must be a positive multiple of 32\n");
    return 2;
  }
  namespace q = magnetar::quant;
  namespace k = magnetar::kernels;
  const k::KernelTable* chosen = k::asm_available() ? k::asm_tables().back() : &k::reference_table();
  if (!kernels_name.empty()) {
    chosen = kernels_name == "reference" ? &k::reference_table() : k::asm_table_named(kernels_name);
    if (chosen == nullptr) {
      std::fprintf(stderr, "--kernels %s: not available on this CPU\n", kernels_name.c_str());
      return 2;
    }
  }
  const k::KernelTable& table = *chosen;
  const k::TypeKernels& q8 = table.of(magnetar::format::DType::Q8_0);
  const k::TypeKernels& q4 = table.of(magnetar::format::DType::Q4_0);
  std::printf("kernels %s, matrix %lld x %lld, median of %d\n", table.isa, (long long)rows,
              (long long)cols, reps);

  std::mt19937 rng(5);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> row(cols), x(cols);
  for (float& v : x) v = normal(rng);
  std::vector<ActBlock> xq(cols / 32);
  q8.quantize_act(x.data(), xq.data(), cols);
  std::vector<float> y(rows);

  const int64_t q8_bytes = rows * q::row_bytes_q8_0(cols), q4_bytes = rows * q::row_bytes_q4_0(cols);
  std::vector<uint8_t> w8(q8_bytes), w4(q4_bytes);
  for (int64_t r = 0; r < rows; ++r) {
    for (float& v : row) v = normal(rng);
    q::quantize_row_q8_0(row.data(), reinterpret_cast<q::BlockQ8_0*>(w8.data() + r * q::row_bytes_q8_0(cols)), cols);
    q::quantize_row_q4_0(row.data(), reinterpret_cast<q::BlockQ4_0*>(w4.data() + r * q::row_bytes_q4_0(cols)), cols);
  }

  // The same rows in x16 tiles (whole tiles only: the tile kernels' part of a decode step).
  const int64_t tiled_rows = rows / q::kTileRows * q::kTileRows;
  std::vector<uint8_t> t8(w8), t4(w4);
  for (int64_t r = 0; r < tiled_rows; r += q::kTileRows) {
    q::tile_rows_q8_0(w8.data() + r * q::row_bytes_q8_0(cols), t8.data() + r * q::row_bytes_q8_0(cols), cols);
    q::tile_rows_q4_0(w4.data() + r * q::row_bytes_q4_0(cols), t4.data() + r * q::row_bytes_q4_0(cols), cols);
  }

  std::atomic<uint64_t> sink{0};
  std::printf("%-8s %-6s %7s %10s %10s %8s   %10s %10s %8s\n", "type", "layout", "threads", "GB/s",
              "read GB/s", "ratio", "best GB/s", "best read", "ratio");
  for (int n_threads : {1, 2}) {
    for (int kind = 0; kind < 4; ++kind) {
      const int type = kind % 2;
      const bool tiles = kind >= 2;
      if (tiles && tiled_rows == 0) continue;
      const std::vector<uint8_t>& w = tiles ? (type == 0 ? t8 : t4) : (type == 0 ? w8 : w4);
      const int64_t row_bytes = type == 0 ? q::row_bytes_q8_0(cols) : q::row_bytes_q4_0(cols);
      const k::MatrixDecodeFn fn = (type == 0 ? q8 : q4).decode;
      const k::MatrixPrefillFn fn16 = (type == 0 ? q8 : q4).prefill_x16;
      const int64_t used_rows = tiles ? tiled_rows : rows;
      const auto slice = [&](int t, int64_t* begin, int64_t* end) {
        const int64_t per = (used_rows / n_threads + 15) / 16 * 16;  // whole tiles and row groups
        *begin = std::min(used_rows, per * t);
        *end = t == n_threads - 1 ? used_rows : std::min(used_rows, per * (t + 1));
      };
      const Timing kernel_s = time_repetitions(n_threads, reps, [&](int t) {
        int64_t b, e;
        slice(t, &b, &e);
        if (tiles) fn16(w.data() + b * row_bytes, xq.data(), y.data() + b, e - b, cols, 1, used_rows);
        else fn(w.data() + b * row_bytes, xq.data(), y.data() + b, e - b, cols);
      });
      const Timing read_s = time_repetitions(n_threads, reps, [&](int t) {
        int64_t b, e;
        slice(t, &b, &e);
        sink += stream_read(w.data() + b * row_bytes, w.data() + e * row_bytes);
      });
      const double bytes = double(used_rows * row_bytes);
      std::printf("%-8s %-6s %7d %10.2f %10.2f %7.1f%%   %10.2f %10.2f %7.1f%%\n",
                  type == 0 ? "q8_0" : "q4_0", tiles ? "x16" : "rows", n_threads, bytes / kernel_s.median * 1e-9,
                  bytes / read_s.median * 1e-9, 100.0 * read_s.median / kernel_s.median,
                  bytes / kernel_s.best * 1e-9, bytes / read_s.best * 1e-9,
                  100.0 * read_s.best / kernel_s.best);
    }
  }
  // Prefill on a cache-exceeding slice of the same weights (weights stream once per call).
  {
    const int64_t n_tokens = 64, prows = std::min<int64_t>(rows, 4096);
    std::vector<float> xs(n_tokens * cols), ys(n_tokens * prows);
    for (float& v : xs) v = normal(rng);
    std::vector<uint16_t> w16(prows * cols);
    for (auto& h : w16) h = magnetar::kernels::f32_to_f16_scalar(normal(rng) * 0.1f);
    std::printf("\nprefill, %lld tokens x %lld rows x %lld cols, median of %d\n", (long long)n_tokens,
                (long long)prows, (long long)cols, reps);
    std::printf("%-8s %-6s %7s %12s %10s\n", "type", "layout", "threads", "GMAC/s", "vs f16");
    for (int n_threads : {1, 2}) {
      magnetar::ThreadPool pool(n_threads);
      double f16_rate = 0;
      for (int kind = 0; kind < 5; ++kind) {
        // 0: f16; 1, 2: q8_0, q4_0 row-major; 3, 4: q8_0, q4_0 in x16 tiles (what a loaded model uses)
        const int type = kind == 0 ? 0 : (kind - 1) % 2 + 1;
        const bool tiles = kind >= 3;
        magnetar::ops::Matrix m;
        m.rows = prows;
        m.cols = cols;
        m.dtype = type == 0 ? magnetar::format::DType::F16 : type == 1 ? magnetar::format::DType::Q8_0
                                                                        : magnetar::format::DType::Q4_0;
        m.data = type == 0 ? static_cast<const void*>(w16.data())
                 : type == 1 ? static_cast<const void*>(tiles ? t8.data() : w8.data())
                             : static_cast<const void*>(tiles ? t4.data() : w4.data());
        m.x16_tiles = tiles;
        const Timing t = time_repetitions(1, reps, [&](int) {
          magnetar::ops::matmul(pool, m, xs.data(), n_tokens, ys.data());
        });
        const double rate = double(n_tokens) * double(prows) * double(cols) / t.median * 1e-9;
        if (type == 0) f16_rate = rate;
        std::printf("%-8s %-6s %7d %12.2f %9.2fx\n", type == 0 ? "f16" : type == 1 ? "q8_0" : "q4_0",
                    type == 0 ? "" : tiles ? "x16" : "rows", n_threads, rate, rate / f16_rate);
        if (type == 0 || n_threads != 1) continue;
        // The chosen table's prefill kernel alone (ops use the active table): one thread, the
        // activations quantized beforehand.
        const int64_t blocks = cols / 32;
        std::vector<ActBlock> xq(blocks * n_tokens);
        for (int64_t tok = 0; tok < n_tokens; ++tok)
          q8.quantize_act(xs.data() + tok * cols, xq.data() + tok * blocks, cols);
        const k::TypeKernels& e = type == 1 ? q8 : q4;
        const k::MatrixPrefillFn mm = tiles ? e.prefill_x16 : e.prefill;
        const Timing tk = time_repetitions(1, reps, [&](int) {
          mm(m.data, xq.data(), ys.data(), prows, cols, n_tokens, prows);
        });
        const double krate = double(n_tokens) * double(prows) * double(cols) / tk.median * 1e-9;
        std::printf("%-8s %-6s %7d %12.2f %9.2fx   (%s kernel alone)\n", type == 1 ? "q8_0" : "q4_0",
                    tiles ? "x16" : "rows", 1, krate, krate / f16_rate, table.isa);
      }
    }
  }
  std::printf("(checksum %llu, y[0] %g)\n", (unsigned long long)sink.load(), double(y[0]));
  return 0;
}
