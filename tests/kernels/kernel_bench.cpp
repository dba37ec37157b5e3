// magnetar-kernel-bench: kernel micro-benchmarks (a program, never a test).
//   - the streaming-read ceiling (asm read loop over a buffer far beyond the LLC) per thread count
//   - ops::matvec on a 256 MB F16 matrix: GB/s and % of that ceiling, asm vs reference
//   - ops::matmul F16 (prefill shape): GFLOP/s and % of the measured FP32 FMA peak (AVX2)
//   - --quant: quantized prefill instead: ops::matmul GMAC/s of Q8_0 / Q4_0 (x16 tiles, as a
//     loaded model holds them) and the K-quants on the --mm-shape matrix, and the K-quant prefill
//     tile kernel against the matvec kernel run once per token (one thread, kernels alone)
//   - thread-pool wake-up latency (workers spinning / asleep) and idle CPU use
// Medians over --reps runs, measurements interleaved so machine noise hits all of them alike.
//
// Usage: magnetar-kernel-bench [--threads 1,2] [--reps 7] [--mb 256] [--cols 2048]
//                              [--tokens 512] [--mm-shape 2048x2048] [--skip-reference] [--quant]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "core/cpu_features.h"
#include "core/platform.h"
#include "core/thread_pool.h"
#include "kernels/asm_kernels.h"
#include "kernels/kernels.h"
#include "kernels/kquants.h"
#include "kernels/type_traits.h"
#include "ops/ops.h"
#include "ops/quant_ops.h"

namespace {

using namespace magnetar;

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n == 0 ? 0.0 : (n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]));
}

struct Options {
  std::vector<int> threads = {1, 2};
  int reps = 7;
  int64_t mb = 256;
  int64_t cols = 2048;
  int64_t tokens = 512;
  int64_t mm_rows = 2048, mm_cols = 2048;
  bool reference = true;
  bool matmul_only = false;
  bool quant = false;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> const char* {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--threads") {
      o.threads.clear();
      std::string list = next();
      for (size_t p = 0; p < list.size();) {
        const size_t comma = list.find(',', p);
        o.threads.push_back(std::max(1, std::atoi(list.substr(p, comma - p).c_str())));
        p = comma == std::string::npos ? list.size() : comma + 1;
      }
    } else if (a == "--reps") {
      o.reps = std::max(1, std::atoi(next()));
    } else if (a == "--mb") {
      o.mb = std::max<int64_t>(1, std::atoll(next()));
    } else if (a == "--cols") {
      o.cols = std::max<int64_t>(16, std::atoll(next()));
    } else if (a == "--tokens") {
      o.tokens = std::max<int64_t>(1, std::atoll(next()));
    } else if (a == "--mm-shape") {
      const std::string v = next();
      const size_t xpos = v.find('x');
      o.mm_rows = std::max<int64_t>(16, std::atoll(v.substr(0, xpos).c_str()));
      o.mm_cols = xpos == std::string::npos ? o.mm_rows
                                            : std::max<int64_t>(16, std::atoll(v.substr(xpos + 1).c_str()));
    } else if (a == "--matmul-only") {
      o.matmul_only = true;
    } else if (a == "--skip-reference") {
      o.reference = false;
    } else if (a == "--quant") {
      o.quant = true;
    } else {
      std::fprintf(stderr,
                   "usage: magnetar-kernel-bench [--threads 1,2] [--reps N] [--mb MB] [--cols N] "
                   "[--tokens N] [--mm-shape ROWSxCOLS] [--matmul-only] [--skip-reference] [--quant]\n");
      std::exit(a == "--help" || a == "-h" ? 0 : 2);
    }
  }
  return o;
}

struct ReadJob {
  const float* data;
  int64_t n;  // floats, multiple of 64 per thread share
  float sink[64][8];
};

void read_job(void* ctx, int t, int nt) {
  ReadJob& j = *static_cast<ReadJob*>(ctx);
  int64_t b, e;
  ThreadPool::split(j.n, 1024, t, nt, &b, &e);  // 4 KiB granules
  magnetar_read_sum_avx2(j.data + b, e - b, j.sink[t % 64]);
}

struct FmaJob {
  int64_t iterations;
  float sink[64][8];
};

void fma_job(void* ctx, int t, int) {
  FmaJob& j = *static_cast<FmaJob*>(ctx);
  const float coefficients[2] = {0.999f, 0.001f};
  magnetar_fma_loop_avx2(j.iterations, coefficients, j.sink[t % 64]);
}

// Process CPU seconds and wall seconds of fn(); work / (cpu / threads) is the cpu-time rate.
struct Clocks {
  double wall, cpu;
};
template <class Fn>
Clocks clocks(Fn&& fn) {
  const double c0 = platform::process_cpu_seconds(), t0 = now();
  fn();
  return {now() - t0, platform::process_cpu_seconds() - c0};
}

// --quant: quantized prefill on a rows x cols matrix of random blocks (small FP16 scales: speed
// does not depend on the values).
void quant_prefill_bench(const Options& opt) {
  struct QType {
    format::DType dtype;
    std::vector<int> half_offsets;      // FP16 scales inside a block
    quant::MatvecKFn matvec = nullptr;  // K-quants: the kernels alone
    quant::MatmulKFn tile = nullptr;
  };
  const QType types[] = {{format::DType::Q8_0, {0}},
                         {format::DType::Q4_0, {0}},
                         {format::DType::Q4_K, {0, 2}, magnetar_matvec_q4_k_avx2, magnetar_matmul_q4_k_avx2},
                         {format::DType::Q5_K, {0, 2}, magnetar_matvec_q5_k_avx2, magnetar_matmul_q5_k_avx2},
                         {format::DType::Q6_K, {208}, magnetar_matvec_q6_k_avx2, magnetar_matmul_q6_k_avx2},
                         {format::DType::IQ4_XS, {0}, magnetar_matvec_iq4_xs_avx2, magnetar_matmul_iq4_xs_avx2}};
  const int64_t rows = opt.mm_rows, cols = opt.mm_cols / 256 * 256, tokens = opt.tokens;
  if (cols == 0) return;
  std::mt19937 rng(3);
  std::vector<float> x(size_t(tokens * cols)), y(size_t(tokens * rows));
  for (float& v : x) v = std::uniform_real_distribution<float>(-1.f, 1.f)(rng);
  std::vector<quant::ActBlockK> xk(size_t(tokens * cols / 256));
  for (int64_t t = 0; t < tokens; ++t) quant::quantize_act_k_ref(&x[size_t(t * cols)], &xk[size_t(t * cols / 256)], cols);
  const double gmac = double(rows) * double(cols) * double(tokens) / 1e9;
  std::printf("quantized prefill: %lld x %lld weights, %lld tokens, GMAC/s (medians of %d; cpu-time = work /\n"
              "(process CPU seconds / threads))\n", (long long)rows, (long long)cols, (long long)tokens, opt.reps);
  for (const QType& q : types) {
    const format::DTypeLayout& l = format::dtype_layout(q.dtype);
    const uint64_t bytes = format::tensor_bytes(q.dtype, uint64_t(rows), uint64_t(cols));
    std::vector<uint8_t> w(bytes);
    for (uint8_t& b : w) b = uint8_t(rng());
    for (uint64_t b = 0; b < bytes / l.block_bytes; ++b)
      for (int off : q.half_offsets) {
        const uint16_t h = kernels::f32_to_f16_scalar(0.001f * float(1 + rng() % 7));
        std::memcpy(w.data() + b * l.block_bytes + off, &h, 2);
      }
    ops::Matrix m{w.data(), q.dtype, rows, cols};
    std::vector<uint8_t> scratch;
    if (ops::wants_x16_tiles(m)) ops::tile_x16_in_place(&m, w.data(), &scratch);
    for (int nt : opt.threads) {
      ThreadPool pool(nt);
      ops::matmul(pool, m, x.data(), tokens, y.data());
      std::vector<double> wall, cpu;
      for (int r = 0; r < opt.reps; ++r) {
        const Clocks c = clocks([&] { ops::matmul(pool, m, x.data(), tokens, y.data()); });
        wall.push_back(gmac / c.wall);
        if (c.cpu > 0) cpu.push_back(gmac / (c.cpu / nt));
      }
      std::printf("  %-7s%s %d thread(s): ops::matmul %6.1f wall %6.1f cpu-time\n", l.name,
                  m.x16_tiles ? " (x16)" : "      ", nt, median(wall), median(cpu));
    }
    if (q.tile == nullptr) continue;
    std::vector<double> tile_rate, matvec_rate;  // cpu-time rates (one thread)
    for (int r = 0; r < opt.reps; ++r) {
      tile_rate.push_back(gmac / clocks([&] { q.tile(w.data(), xk.data(), y.data(), rows, cols, tokens, rows); }).cpu);
      matvec_rate.push_back(gmac / clocks([&] {
                                     for (int64_t t = 0; t < tokens; ++t)
                                       q.matvec(w.data(), &xk[size_t(t * cols / 256)], &y[size_t(t * rows)], rows, cols);
                                   }).cpu);
    }
    std::printf("  %-7s kernels alone, 1 thread, cpu-time: prefill tile %6.1f, matvec per token %6.1f (tile %.2fx)\n",
                l.name, median(tile_rate), median(matvec_rate), median(tile_rate) / median(matvec_rate));
  }
}

}  // namespace

int main(int argc, char** argv) {
  const Options opt = parse(argc, argv);
  const cpu::Features& f = cpu::features();
  std::printf("CPU: %s\n", cpu::describe(f).c_str());
  if (!f.has_avx2_kernels()) {
    std::printf("this CPU cannot run the AVX2 kernels; nothing to compare\n");
    return 0;
  }
  std::printf("default threads: %d; medians of %d runs\n", ThreadPool::default_threads(), opt.reps);
  if (FILE* load = std::fopen("/proc/loadavg", "r")) {  // absent on Windows: then not shown
    char line[128] = {};
    if (std::fgets(line, sizeof line, load)) std::printf("load average: %s", line);
    std::fclose(load);
  }
  std::printf("\n");
  if (opt.quant) {
    quant_prefill_bench(opt);
    return 0;
  }

  // --- buffers ---------------------------------------------------------------------------
  const int64_t bytes = opt.mb << 20;
  const int64_t cols = opt.cols;
  const int64_t rows = bytes / 2 / cols;
  auto* weights = static_cast<uint16_t*>(platform::alloc_large(static_cast<uint64_t>(rows * cols * 2)));
  auto* read_buf = static_cast<float*>(platform::alloc_large(static_cast<uint64_t>(bytes)));
  {
    std::mt19937 rng(1);
    std::uniform_real_distribution<float> d(-1.f, 1.f);
    uint16_t table[4096];
    for (uint16_t& h : table) h = kernels::f32_to_f16_scalar(d(rng));
    for (int64_t i = 0; i < rows * cols; ++i) weights[i] = table[(i * 2654435761u) >> 20 & 4095];
    for (int64_t i = 0; i < bytes / 4; ++i) read_buf[i] = static_cast<float>(i & 255);
  }
  std::vector<float> x(16384), y(static_cast<size_t>(std::max<int64_t>(rows, 16384)));
  for (size_t c = 0; c < x.size(); ++c) x[c] = std::sin(0.1f * static_cast<float>(c));
  const ops::Matrix m{weights, format::DType::F16, rows, cols};
  const double gb = static_cast<double>(rows * cols * 2) / 1e9;

  if (!opt.matmul_only) {
  // --- read ceiling vs matvec_f16, per thread count -----------------------------------------
  // Shapes of Gemma-2B's matrices (rows x cols; the LM head cut to 64K rows). Each call reads a
  // different window of the 256 MB buffer, so no matrix is served from the last-level cache.
  // "striped": the column-stripe layout Model::load gives wide matrices (ops/ops.h). The bytes
  // are noise either way, so the plain buffer is read as if it were striped.
  struct Shape {
    const char* name;
    int64_t rows, cols, stripe_cols;
  };
  const Shape shapes[] = {{"big (256 MB)", rows, cols, 0},
                          {"ffn gate/up", 16384, 2048, 0},
                          {"ffn down", 2048, 16384, 0},
                          {"down, striped", 2048, 16384, ops::kStripeCols},
                          {"attn q/o", 2048, 2048, 0}};
  std::printf("matvec_f16 GB/s vs a streaming read of %.0f MB (medians of %d)\n",
              static_cast<double>(bytes) / 1e6, opt.reps);
  for (int nt : opt.threads) {
    ThreadPool pool(nt);
    ReadJob rj{read_buf, bytes / 4, {}};
    kernels::select(kernels::KernelChoice::Asm);
    pool.run(read_job, &rj);
    // Two clocks: wall time, and process CPU time / threads, which does not count the time other
    // processes take the CPU from us (this machine is shared) and counts our own spinning, so
    // it is a conservative estimate of what the threads achieve while they run.
    std::vector<double> read_wall, read_cpu;
    std::vector<std::vector<double>> shape_wall(std::size(shapes)), shape_cpu(std::size(shapes));
    int64_t window = 0;
    auto timed = [&](auto&& fn, double gbytes, std::vector<double>& wall, std::vector<double>& cpu) {
      const double c0 = platform::process_cpu_seconds(), t0 = now();
      fn();
      const double t1 = now(), c1 = platform::process_cpu_seconds();
      wall.push_back(gbytes / (t1 - t0));
      if (c1 > c0) cpu.push_back(gbytes / ((c1 - c0) / nt));
    };
    for (int r = 0; r < opt.reps; ++r) {
      timed([&] { pool.run(read_job, &rj); }, static_cast<double>(bytes) / 1e9, read_wall, read_cpu);
      for (size_t s = 0; s < std::size(shapes); ++s) {
        const int64_t n = shapes[s].rows * shapes[s].cols;
        if (window + n > rows * cols) window = 0;
        const ops::Matrix sm{weights + window, format::DType::F16, shapes[s].rows, shapes[s].cols,
                             shapes[s].stripe_cols};
        window += n;
        timed([&] { ops::matvec(pool, sm, x.data(), y.data()); }, static_cast<double>(n * 2) / 1e9,
              shape_wall[s], shape_cpu[s]);
      }
    }
    const double rd = median(read_wall), rd_cpu = median(read_cpu);
    std::printf("  %d thread(s): read %.1f GB/s wall, %.1f GB/s cpu-time\n", nt, rd, rd_cpu);
    for (size_t s = 0; s < std::size(shapes); ++s) {
      const double md = median(shape_wall[s]), mc = median(shape_cpu[s]);
      std::printf("    %-14s %6lld x %-6lld  wall %5.1f GB/s = %5.1f%%   cpu-time %5.1f GB/s = %5.1f%%\n",
                  shapes[s].name, static_cast<long long>(shapes[s].rows),
                  static_cast<long long>(shapes[s].cols), md, 100.0 * md / rd, mc,
                  100.0 * mc / rd_cpu);
    }
    if (opt.reference) {
      kernels::select(kernels::KernelChoice::Reference);
      std::vector<double> ref_gbs;
      for (int r = 0; r < std::min(opt.reps, 3); ++r) {
        const double t0 = now();
        ops::matvec(pool, m, x.data(), y.data());
        ref_gbs.push_back(gb / (now() - t0));
      }
      kernels::select(kernels::KernelChoice::Asm);
      std::printf("    reference twin on the big matrix: %.2f GB/s (asm is %.0fx faster)\n",
                  median(ref_gbs), median(shape_wall[0]) / median(ref_gbs));
    }
  }
  }

  // --- matmul_f16 (prefill) vs the FP32 FMA peak -------------------------------------------
  const int64_t mm_rows = opt.mm_rows, mm_cols = std::min(opt.mm_cols, rows * cols / opt.mm_rows),
                tokens = opt.tokens;
  std::vector<float> xs(static_cast<size_t>(tokens * mm_cols)), ys(static_cast<size_t>(tokens * mm_rows));
  for (size_t i = 0; i < xs.size(); ++i) xs[i] = std::cos(0.01f * static_cast<float>(i % 1000));
  const ops::Matrix mm{weights, format::DType::F16, mm_rows, mm_cols};
  const double flops = 2.0 * static_cast<double>(mm_rows * mm_cols * tokens);
  std::printf("\nmatmul_f16: %lld x %lld weights, %lld tokens (AVX2 FP32 FMA peak measured)\n",
              static_cast<long long>(mm_rows), static_cast<long long>(mm_cols),
              static_cast<long long>(tokens));
  std::printf("  (medians; cpu-time = FLOPs / (process CPU seconds / threads), robust to a shared CPU)\n");
  std::printf("  threads  peak wall  asm wall  asm/peak | peak cpu  asm cpu  asm/peak | ref  asm/ref\n");
  for (int nt : opt.threads) {
    ThreadPool pool(nt);
    FmaJob fj{20'000'000, {}};
    std::vector<double> peak_wall, peak_cpu, asm_wall, asm_cpu, ref_wall;
    auto timed = [&](auto&& fn, double gflop, std::vector<double>& wall, std::vector<double>* cpu) {
      const double c0 = platform::process_cpu_seconds(), t0 = now();
      fn();
      const double t1 = now(), c1 = platform::process_cpu_seconds();
      wall.push_back(gflop / (t1 - t0));
      if (cpu && c1 > c0) cpu->push_back(gflop / ((c1 - c0) / nt));
    };
    kernels::select(kernels::KernelChoice::Asm);
    ops::matmul(pool, mm, xs.data(), tokens, ys.data());
    for (int r = 0; r < opt.reps; ++r) {
      timed([&] { pool.run(fma_job, &fj); }, static_cast<double>(fj.iterations) * 192.0 * nt / 1e9,
            peak_wall, &peak_cpu);
      timed([&] { ops::matmul(pool, mm, xs.data(), tokens, ys.data()); }, flops / 1e9, asm_wall,
            &asm_cpu);
    }
    if (opt.reference) {
      const int64_t ref_tokens = std::min<int64_t>(tokens, 16);
      kernels::select(kernels::KernelChoice::Reference);
      timed([&] { ops::matmul(pool, mm, xs.data(), ref_tokens, ys.data()); },
            2.0 * static_cast<double>(mm_rows * mm_cols * ref_tokens) / 1e9, ref_wall, nullptr);
      kernels::select(kernels::KernelChoice::Asm);
    }
    const double pw = median(peak_wall), aw = median(asm_wall), pc = median(peak_cpu),
                 ac = median(asm_cpu), rw = median(ref_wall);
    std::printf("  %7d  %9.1f  %8.1f  %7.1f%% | %8.1f  %7.1f  %7.1f%% | %4.2f  %6.0fx\n", nt, pw, aw,
                100.0 * aw / pw, pc, ac, 100.0 * ac / pc, rw, rw > 0 ? aw / rw : 0.0);
  }

  // --- thread pool wake-up ----------------------------------------------------------------------
  std::printf("\nthread pool: time of run() with an empty job (median, microseconds)\n");
  for (int nt : opt.threads) {
    if (nt < 2) continue;
    ThreadPool pool(nt);
    std::vector<double> hot, cold;
    for (int r = 0; r < 2000; ++r) {
      const double t0 = now();
      pool.run([](void*, int, int) {}, nullptr);
      hot.push_back((now() - t0) * 1e6);
    }
    for (int r = 0; r < 30; ++r) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));  // workers fall asleep
      const double t0 = now();
      pool.run([](void*, int, int) {}, nullptr);
      cold.push_back((now() - t0) * 1e6);
    }
    std::printf("  %d threads: workers spinning %.2f us, workers asleep %.1f us\n", nt, median(hot),
                median(cold));
    pool.run([](void*, int, int) {}, nullptr);
    const double cpu0 = platform::process_cpu_seconds();
    std::this_thread::sleep_for(std::chrono::seconds(2));
    std::printf("  %d threads: process CPU time over 2 s idle after a job: %.1f ms\n", nt,
                (platform::process_cpu_seconds() - cpu0) * 1e3);
  }

  platform::free_large(weights, static_cast<uint64_t>(rows * cols * 2));
  platform::free_large(read_buf, static_cast<uint64_t>(bytes));
  return 0;
}
