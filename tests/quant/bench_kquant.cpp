// Benchmark program (not a test): decode (matrix–vector) GB/s of every block type through
// ops::matvec on a matrix far larger than the caches, at 1 and 2 threads, against a plain
// streaming read of the same bytes (the read ceiling), and prefill (64 tokens) multiply-adds per
// second. Random blocks with small FP16 scales: speed does not depend on the values. Two clocks:
// wall time, and process CPU time / threads ("cpu"), which leaves out the time other processes
// hold the CPU (a shared machine) and counts our own spinning: conservative.
// --kernels: instead, the K-quant decode kernels alone on one thread, the row-at-a-time ones
// (kquant_avx2.asm) against the four-row ones (kquant_decode_avx2.asm, and the AVX-512 VNNI ones
// where the CPU runs them): in cache (a ~192 KB matrix called over and over) and from memory (a
// 96 MB matrix, with the streaming read of it); --types limits it too.
// --tile: the K-quant prefill kernels alone on one thread, multiply-adds per CPU second at several
// token counts: the transposed 8-row tiles (kquant_tile_avx2.asm) against the 1 x 8 tiles
// (kquant_matmul_avx2.asm) and, where the CPU has them, the VNNI transposed tiles
// (kquant_tile_avx512vnni.asm), the four-row matvec once per token, and the Q4_0 x16 prefill (the
// layout a loaded Q4_0 model runs; AVX2 and VNNI) on the same shape.
//   magnetar_bench_kquant [rows cols] [--reps N] [--types q2_k,q3_k,...] [--kernels | --tile]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "core/platform.h"
#include "core/thread_pool.h"
#include "kernels/kernels.h"
#include "kernels/kquant_decode.h"
#include "kernels/kquant_low.h"
#include "kernels/kquant_tile.h"
#include "kernels/kquants.h"
#include "kernels/quant.h"
#include "kernels/type_traits.h"
#include "ops/ops.h"
#include "ops/quant_ops.h"
#include "stream_read.h"

namespace {

using magnetar::format::DType;

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

struct Type {
  DType dtype;
  std::vector<int> half_offsets;  // FP16 scales inside a block
};

double cpu_now() { return magnetar::platform::process_cpu_seconds(); }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Random blocks of a type, its FP16 scales set to small normal values.
std::vector<uint8_t> random_blocks(const Type& t, uint64_t bytes, std::mt19937& rng) {
  const magnetar::format::DTypeLayout& l = magnetar::format::dtype_layout(t.dtype);
  std::vector<uint8_t> w(bytes);
  for (uint8_t& b : w) b = uint8_t(rng());
  for (uint64_t b = 0; b < bytes / l.block_bytes; ++b)
    for (int off : t.half_offsets) {
      const uint16_t h = magnetar::kernels::f32_to_f16_scalar(0.001f * float(1 + rng() % 7));
      std::memcpy(w.data() + b * l.block_bytes + off, &h, 2);
    }
  return w;
}

// --kernels: GB/s of each decode kernel in cache and from memory, one thread; the kernels of a
// type (row-at-a-time AVX2, four-row AVX2, four-row AVX-512 VNNI where the CPU runs it), the read
// of the same bytes and the engine's read probe (what `magnetar-cli bench` divides by:
// kernels::streaming_read_loop over 96 MB of ordinary floats) take turns within each repetition. A
// kernel whose in-cache speed is not well above the probe is compute-bound.
void kernel_table(int reps, const std::string& only) {
  using magnetar::quant::ActBlockK;
  using magnetar::quant::MatvecKFn;
  struct Kernels {
    const char* name;
    Type type;
    MatvecKFn fn[3];  // row, r4, r4 VNNI
  };
  const Kernels types[] = {
      {"q4_k", {DType::Q4_K, {0, 2}}, {magnetar_matvec_q4_k_avx2, magnetar_matvec_q4_k_r4_avx2, magnetar_matvec_q4_k_r4_avx512vnni}},
      {"q5_k", {DType::Q5_K, {0, 2}}, {magnetar_matvec_q5_k_avx2, magnetar_matvec_q5_k_r4_avx2, magnetar_matvec_q5_k_r4_avx512vnni}},
      {"q6_k", {DType::Q6_K, {208}}, {magnetar_matvec_q6_k_avx2, magnetar_matvec_q6_k_r4_avx2, magnetar_matvec_q6_k_r4_avx512vnni}},
      {"iq4_xs", {DType::IQ4_XS, {0}}, {magnetar_matvec_iq4_xs_avx2, magnetar_matvec_iq4_xs_r4_avx2, magnetar_matvec_iq4_xs_r4_avx512vnni}},
      {"q3_k", {DType::Q3_K, {108}}, {magnetar_matvec_q3_k_avx2, magnetar_matvec_q3_k_r4_avx2, magnetar_matvec_q3_k_r4_avx512vnni}},
      {"q2_k", {DType::Q2_K, {80, 82}}, {magnetar_matvec_q2_k_avx2, magnetar_matvec_q2_k_r4_avx2, magnetar_matvec_q2_k_r4_avx512vnni}}};
  const bool vnni = magnetar::kernels::asm_table_named("avx512vnni", 0) != nullptr;
  const int variants = vnni ? 3 : 2;
  std::printf("K-quant decode kernels, 1 thread, medians of %d: GB/s of weights per CPU second\n", reps);
  std::printf("(row = kquant_avx2.asm, r4 = kquant_decode_avx2.asm, vnni = kquant_decode_avx512vnni.asm%s;\n"
              " 'read' = stream_read of the same bytes, 'probe' = the engine's read probe; %% = of the probe)\n",
              vnni ? "" : ": not on this CPU");
  std::printf("%-6s %6s %9s %9s %9s %9s %9s %9s %8s %8s %7s %7s %7s\n", "type", "cols", "row cache", "r4 cache",
              "vnni cach", "row mem", "r4 mem", "vnni mem", "read", "probe", "row %", "r4 %", "vnni %");
  const char* probe_name = nullptr;
  const auto probe_loop = magnetar::kernels::streaming_read_loop(&probe_name);
  const std::vector<float> probe_buffer(size_t(96) << 18, 1.0f);  // 96 MB
  const auto* probe_words = reinterpret_cast<const uint64_t*>(probe_buffer.data());
  const uint64_t probe_count = probe_buffer.size() / 2;
  std::mt19937 rng(2);
  // Process CPU time, not wall time: the machine is shared, and one thread's CPU time leaves out
  // the time other processes hold the CPU.
  const auto cpu_gbs = [](double bytes, double t0) { return bytes / (cpu_now() - t0) * 1e-9; };
  for (int64_t cols : {2048, 8192}) {
    std::vector<float> x(static_cast<size_t>(cols));
    for (float& v : x) v = std::uniform_real_distribution<float>(-1, 1)(rng);
    std::vector<ActBlockK> xq(static_cast<size_t>(cols / 256));
    magnetar::quant::quantize_act_k_ref(x.data(), xq.data(), cols);
    for (const Kernels& k : types) {
      if (!only.empty() && only.find(std::string(",") + k.name + ",") == std::string::npos) continue;
      const int64_t row_bytes = int64_t(magnetar::format::tensor_bytes(k.type.dtype, 1, uint64_t(cols)));
      const int64_t rows = (96 << 20) / row_bytes, small_rows = std::max<int64_t>(4, (192 << 10) / row_bytes);
      const std::vector<uint8_t> w = random_blocks(k.type, uint64_t(rows * row_bytes), rng);
      std::vector<float> y(static_cast<size_t>(rows));
      std::vector<double> cached[3], memory[3], read, probe;
      volatile uint64_t sink = 0;
      const int calls = int(std::max<int64_t>(1, (256 << 20) / (small_rows * row_bytes)));
      for (int r = 0; r < reps; ++r) {
        for (int v = 0; v < variants; ++v) {
          double t0 = cpu_now();
          for (int c = 0; c < calls; ++c) k.fn[v](w.data(), xq.data(), y.data(), small_rows, cols);
          cached[v].push_back(cpu_gbs(double(small_rows * row_bytes) * calls, t0));
          t0 = cpu_now();
          k.fn[v](w.data(), xq.data(), y.data(), rows, cols);
          memory[v].push_back(cpu_gbs(double(rows * row_bytes), t0));
        }
        const double t0 = cpu_now();
        sink = sink + stream_read(w.data(), w.data() + rows * row_bytes);
        read.push_back(cpu_gbs(double(rows * row_bytes), t0));
        const double t1 = cpu_now();
        sink = sink + probe_loop(probe_words, probe_count);
        probe.push_back(cpu_gbs(double(probe_count * 8), t1));
      }
      const double ceiling = median(probe);
      const auto at = [&](std::vector<double>* v, int i) { return i < variants ? median(v[i]) : 0.0; };
      std::printf("%-6s %6lld %9.2f %9.2f %9.2f %9.2f %9.2f %9.2f %8.2f %8.2f %6.1f%% %6.1f%% %6.1f%%\n", k.name,
                  (long long)cols, at(cached, 0), at(cached, 1), at(cached, 2), at(memory, 0), at(memory, 1),
                  at(memory, 2), median(read), ceiling, 100 * at(memory, 0) / ceiling, 100 * at(memory, 1) / ceiling,
                  100 * at(memory, 2) / ceiling);
    }
  }
}

// --tile: GMAC/s (rows x cols x tokens per second of wall time, the best of reps: the least
// disturbed call on a shared machine, whose steal time the medians carried) of each prefill kernel
// on one thread, called directly on a rows x cols matrix (weights from memory or L3 on the
// llama-3.2-1b shapes) for every token count; the kernels take turns within each repetition.
void tile_table(int64_t rows, int64_t cols, int reps, const std::string& only) {
  using magnetar::quant::ActBlock;
  using magnetar::quant::ActBlockK;
  using magnetar::quant::MatmulKFn;
  using magnetar::quant::MatvecKFn;
  struct Kernels {
    const char* name;
    Type type;
    MatvecKFn matvec;
    MatmulKFn row_tile, transposed, transposed_vnni;
  };
  const Kernels kinds[] = {
      {"q4_k", {DType::Q4_K, {0, 2}}, magnetar_matvec_q4_k_r4_avx2, magnetar_matmul_q4_k_avx2,
       magnetar_matmul_q4_k_tile_avx2, magnetar_matmul_q4_k_tile_avx512vnni},
      {"q5_k", {DType::Q5_K, {0, 2}}, magnetar_matvec_q5_k_r4_avx2, magnetar_matmul_q5_k_avx2,
       magnetar_matmul_q5_k_tile_avx2, magnetar_matmul_q5_k_tile_avx512vnni},
      {"q6_k", {DType::Q6_K, {208}}, magnetar_matvec_q6_k_r4_avx2, magnetar_matmul_q6_k_avx2,
       magnetar_matmul_q6_k_tile_avx2, magnetar_matmul_q6_k_tile_avx512vnni},
      {"iq4_xs", {DType::IQ4_XS, {0}}, magnetar_matvec_iq4_xs_r4_avx2, magnetar_matmul_iq4_xs_avx2, nullptr,
       magnetar_matmul_iq4_xs_tile_avx512vnni},
      {"q3_k", {DType::Q3_K, {108}}, magnetar_matvec_q3_k_r4_avx2, nullptr, magnetar_matmul_q3_k_tile_avx2,
       magnetar_matmul_q3_k_tile_avx512vnni},
      {"q2_k", {DType::Q2_K, {80, 82}}, magnetar_matvec_q2_k_r4_avx2, nullptr, magnetar_matmul_q2_k_tile_avx2,
       magnetar_matmul_q2_k_tile_avx512vnni}};
  const int64_t token_counts[] = {4, 8, 16, 32, 64};
  constexpr int64_t kMaxTokens = 64;
  std::printf("K-quant prefill kernels, %lld x %lld, 1 thread, best of %d: GMAC/s\n",
              (long long)rows, (long long)cols, reps);
  const bool vnni = magnetar::kernels::asm_table_named("avx512vnni", 0) != nullptr;
  std::printf("(matvec = the four-row AVX2 decode kernel per token, 1x8 = kquant_matmul_avx2.asm (not for q3_k, q2_k),\n 8xT = "
              "kquant_tile_avx2.asm,\n 8xT vnni = kquant_tile_avx512vnni.asm, q4_0 x16 = quant_x16_avx2.asm, "
              "q4_0 vnni = quant_x16_avx512vnni.asm%s)\n",
              vnni ? "" : "; no VNNI on this CPU: 0");
  std::printf("%-6s %6s %9s %9s %9s %9s %10s %10s\n", "type", "tokens", "matvec", "1x8", "8xT", "8xT vnni", "q4_0 x16",
              "q4_0 vnni");
  std::mt19937 rng(3);
  std::vector<float> x(size_t(cols * kMaxTokens));
  for (float& v : x) v = std::uniform_real_distribution<float>(-1, 1)(rng);
  std::vector<ActBlockK> xk(size_t(cols / 256 * kMaxTokens));
  magnetar::quant::quantize_act_k_ref(x.data(), xk.data(), cols * kMaxTokens);
  std::vector<ActBlock> x0(size_t(cols / 32 * kMaxTokens));
  magnetar::quant::quantize_act_ref(x.data(), x0.data(), cols * kMaxTokens);
  const std::vector<uint8_t> w0 = random_blocks({DType::Q4_0, {0}}, magnetar::format::tensor_bytes(
                                                                         DType::Q4_0, uint64_t(rows), uint64_t(cols)),
                                                rng);
  std::vector<float> y(size_t(rows * kMaxTokens));
  const auto gmacs = [&](int64_t tokens, double t0) {
    return double(rows) * double(cols) * double(tokens) / (now() - t0) * 1e-9;
  };
  for (const Kernels& k : kinds) {
    if (!only.empty() && only.find(std::string(",") + k.name + ",") == std::string::npos) continue;
    const std::vector<uint8_t> w =
        random_blocks(k.type, magnetar::format::tensor_bytes(k.type.dtype, uint64_t(rows), uint64_t(cols)), rng);
    for (int64_t tokens : token_counts) {
      std::vector<double> per_token, row_tile{0.0}, transposed{0.0}, transposed_vnni{0.0}, q4_0, q4_0_vnni{0.0};
      for (int r = 0; r < reps; ++r) {
        double t0 = now();
        for (int64_t t = 0; t < tokens; ++t) k.matvec(w.data(), xk.data() + t * (cols / 256), y.data() + t * rows, rows, cols);
        per_token.push_back(gmacs(tokens, t0));
        if (k.row_tile != nullptr) {  // Q2_K / Q3_K have no 1 x 8 tile
          t0 = now();
          k.row_tile(w.data(), xk.data(), y.data(), rows, cols, tokens, rows);
          row_tile.push_back(gmacs(tokens, t0));
        }
        if (k.transposed != nullptr) {  // IQ4_XS has no AVX2 transposed tile
          t0 = now();
          k.transposed(w.data(), xk.data(), y.data(), rows, cols, tokens, rows);
          transposed.push_back(gmacs(tokens, t0));
        }
        t0 = now();
        magnetar_matmul_q4_0_x16_avx2(w0.data(), x0.data(), y.data(), rows, cols, tokens, rows);
        q4_0.push_back(gmacs(tokens, t0));
        if (vnni) {
          t0 = now();
          k.transposed_vnni(w.data(), xk.data(), y.data(), rows, cols, tokens, rows);
          transposed_vnni.push_back(gmacs(tokens, t0));
          t0 = now();
          magnetar_matmul_q4_0_x16_avx512vnni(w0.data(), x0.data(), y.data(), rows, cols, tokens, rows);
          q4_0_vnni.push_back(gmacs(tokens, t0));
        }
      }
      const auto best = [](const std::vector<double>& v) { return *std::max_element(v.begin(), v.end()); };
      std::printf("%-6s %6lld %9.2f %9.2f %9.2f %9.2f %10.2f %10.2f\n", k.name, (long long)tokens, best(per_token),
                  best(row_tile), best(transposed), best(transposed_vnni), best(q4_0), best(q4_0_vnni));
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  int64_t rows = 8192, cols = 4096;
  int reps = 15;
  bool kernels_only = false, tiles_only = false;
  std::vector<std::string> positional;
  std::string only;  // comma-separated type names; empty: all
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--reps" && i + 1 < argc) reps = std::atoi(argv[++i]);
    else if (arg == "--types" && i + 1 < argc) only.append(",").append(argv[++i]).append(",");
    else if (arg == "--kernels") kernels_only = true;
    else if (arg == "--tile") tiles_only = true;
    else positional.push_back(arg);
  }
  if (kernels_only) {
    kernel_table(reps, only);
    return 0;
  }
  if (positional.size() == 2) rows = std::atoll(positional[0].c_str()), cols = std::atoll(positional[1].c_str());
  if (tiles_only) {
    tile_table(rows, cols, reps, only);
    return 0;
  }
  const Type types[] = {{DType::Q8_0, {0}},       {DType::Q4_0, {0}},       {DType::Q4_K, {0, 2}},
                        {DType::Q6_K, {208}},     {DType::Q5_K, {0, 2}},    {DType::IQ4_XS, {0}},
                        {DType::Q3_K, {108}},     {DType::Q2_K, {80, 82}},  {DType::IQ4_NL, {0}},
                        {DType::Q4_1, {0, 2}},    {DType::Q5_0, {0}},       {DType::Q5_1, {0, 2}}};
  std::printf("matrix %lld x %lld, %d reps, quant kernels %s\n", (long long)rows, (long long)cols, reps,
              magnetar::kernels::active().isa);
  std::printf("%-8s %7s %10s %10s %8s %9s %9s %8s %14s\n", "type", "threads", "GB/s", "ceiling", "% ceil", "cpu GB/s",
              "cpu ceil", "% ceil", "prefill GMAC/s");
  std::mt19937 rng(1);
  std::vector<float> x(size_t(cols * 64));
  for (float& v : x) v = std::uniform_real_distribution<float>(-1, 1)(rng);
  std::vector<float> y(size_t(rows * 64));
  for (const Type& t : types) {
    const magnetar::format::DTypeLayout& l = magnetar::format::dtype_layout(t.dtype);
    std::string key(",");
    if (!only.empty() && only.find(key.append(l.name).append(",")) == std::string::npos) continue;
    const uint64_t bytes = magnetar::format::tensor_bytes(t.dtype, uint64_t(rows), uint64_t(cols));
    std::vector<uint8_t> w = random_blocks(t, bytes, rng);
    magnetar::ops::Matrix m;
    m.data = w.data();
    m.dtype = t.dtype;
    m.rows = rows;
    m.cols = cols;
    for (int threads : {1, 2}) {
      magnetar::ThreadPool pool(threads);
      std::vector<double> kernel_s, read_s, kernel_cpu, read_cpu;
      volatile uint64_t sink = 0;
      for (int r = 0; r < reps; ++r) {  // alternating rounds: kernel, then the read of the same bytes
        double t0 = now(), c0 = magnetar::platform::process_cpu_seconds();
        magnetar::ops::matvec(pool, m, x.data(), y.data());
        kernel_s.push_back(now() - t0);
        kernel_cpu.push_back((magnetar::platform::process_cpu_seconds() - c0) / threads);
        t0 = now();
        c0 = magnetar::platform::process_cpu_seconds();
        if (threads == 1) {
          sink = sink + stream_read(w.data(), w.data() + bytes);
        } else {
          struct Ctx { const uint8_t* p; uint64_t n; uint64_t sums[2]; } ctx{w.data(), bytes, {0, 0}};
          pool.run([](void* c, int i, int n) {
            auto* k = static_cast<Ctx*>(c);
            const uint64_t part = k->n / uint64_t(n) / 128 * 128;
            k->sums[i] = stream_read(k->p + part * uint64_t(i), k->p + (i + 1 == n ? k->n : part * uint64_t(i + 1)));
          }, &ctx);
          sink = sink + ctx.sums[0] + ctx.sums[1];
        }
        read_s.push_back(now() - t0);
        read_cpu.push_back((magnetar::platform::process_cpu_seconds() - c0) / threads);
      }
      const double gbs = double(bytes) / median(kernel_s) * 1e-9, ceiling = double(bytes) / median(read_s) * 1e-9;
      const double cpu_gbs = double(bytes) / median(kernel_cpu) * 1e-9,
                   cpu_ceiling = double(bytes) / median(read_cpu) * 1e-9;
      double prefill = 0;
      if (threads == 1) {
        std::vector<double> s;
        for (int r = 0; r < 3; ++r) {
          const double t0 = now();
          magnetar::ops::matmul(pool, m, x.data(), 64, y.data());
          s.push_back(now() - t0);
        }
        prefill = double(rows) * double(cols) * 64 / median(s) * 1e-9;
      }
      std::printf("%-8s %7d %10.2f %10.2f %7.1f%% %9.2f %9.2f %7.1f%% %14.2f\n", l.name, threads, gbs, ceiling,
                  100 * gbs / ceiling, cpu_gbs, cpu_ceiling, 100 * cpu_gbs / cpu_ceiling, prefill);
    }
  }
  return 0;
}
