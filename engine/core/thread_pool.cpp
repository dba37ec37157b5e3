// The persistent worker pool (see thread_pool.h). One job at a time: run() / run_dynamic()
// publish (job, ctx) by bumping a generation counter; workers spin on it for a short while after each job (wake-up
// in well under a microsecond while a model generates), then sleep in platform::wait_while_equal
// (a futex on Linux, WaitOnAddress on Windows) so an idle engine uses no CPU. run() allocates
// nothing.
#include "core/thread_pool.h"

#include "core/platform.h"

#include <atomic>
#include <cassert>
#include <chrono>
#include <thread>
#include <vector>

#if defined(__x86_64__) || defined(_M_X64) || defined(__i386__) || defined(_M_IX86)
#include <immintrin.h>
#define MAGNETAR_CPU_RELAX() _mm_pause()
#else
#define MAGNETAR_CPU_RELAX() std::this_thread::yield()
#endif

namespace magnetar {
namespace {

// How long a worker keeps spinning after its last job before it sleeps. Long enough to bridge
// the single-threaded gaps of a forward pass (norms, attention, sampling), short enough that an
// idle engine goes quiet at once.
constexpr auto kWorkerSpin = std::chrono::microseconds(1000);
// How long the caller spins for stragglers before it sleeps too.
constexpr auto kCallerSpin = std::chrono::microseconds(200);

using Clock = std::chrono::steady_clock;

// Spins until `value` differs from `old` or `budget` runs out; returns the last value seen.
template <class T>
T spin_while_equal(const std::atomic<T>& value, T old, Clock::duration budget) {
  T now = value.load(std::memory_order_acquire);
  if (now != old || budget == Clock::duration::zero()) return now;
  const Clock::time_point deadline = Clock::now() + budget;
  for (uint32_t i = 1;; ++i) {
    MAGNETAR_CPU_RELAX();
    now = value.load(std::memory_order_acquire);
    if (now != old) return now;
    if ((i & 63u) == 0 && Clock::now() >= deadline) return now;
  }
}

}  // namespace

struct ThreadPool::Impl {
  int n_threads = 1;
  // Spinning only pays when every thread has a CPU of its own; oversubscribed pools (more threads
  // than CPUs) would spin away the time slices the working threads need, so they sleep at once.
  Clock::duration worker_spin = kWorkerSpin;
  Clock::duration caller_spin = kCallerSpin;
  std::vector<std::thread> workers;
  // Published before the generation bump. A worker reads them only where the caller cannot be
  // publishing the next job: in a static job (run() waits for every worker) or after joining a
  // dynamic one (run_dynamic() waits for every worker that joined).
  Job job = nullptr;
  void* ctx = nullptr;
  std::atomic<bool> stop{false};

  // Job generation: steps by 2; the low bit says the job is dynamic (run_dynamic).
  alignas(64) std::atomic<uint32_t> generation{0};
  // Dynamic jobs: [generation : 32][closed : 1][workers inside : 31], and a counter the last
  // worker to leave a closed job bumps (the caller sleeps on it: platform waits are 32-bit).
  alignas(64) std::atomic<uint64_t> dynamic_state{0};
  std::atomic<uint32_t> dynamic_done{0};
  alignas(64) std::atomic<int> sleeping_workers{0};
  alignas(64) std::atomic<uint32_t> pending{0};  // workers still running the current job
  std::atomic<bool> caller_sleeping{false};

  void worker_loop(int index) {
    uint32_t seen = 0;
    for (;;) {
      uint32_t g = spin_while_equal(generation, seen, worker_spin);
      while (g == seen) {
        sleeping_workers.fetch_add(1, std::memory_order_seq_cst);
        platform::wait_while_equal(generation, seen);
        sleeping_workers.fetch_sub(1, std::memory_order_relaxed);
        g = generation.load(std::memory_order_acquire);
      }
      seen = g;
      if (stop.load(std::memory_order_acquire)) return;
      if (g & 1u) {
        run_if_still_open(g, index);
        continue;
      }
      job(ctx, index, n_threads);
      if (pending.fetch_sub(1, std::memory_order_acq_rel) == 1 &&
          caller_sleeping.load(std::memory_order_seq_cst))
        platform::wake_one(pending);
    }
  }

  static constexpr uint64_t kClosed = uint64_t{1} << 31;
  static constexpr uint64_t kInsideMask = kClosed - 1;

  // Joins dynamic job g unless the caller has closed it (or moved on), runs it, leaves.
  void run_if_still_open(uint32_t g, int index) {
    uint64_t v = dynamic_state.load(std::memory_order_acquire);
    for (;;) {
      if ((v >> 32) != g || (v & kClosed)) return;
      if (dynamic_state.compare_exchange_weak(v, v + 1, std::memory_order_acq_rel,
                                              std::memory_order_acquire))
        break;
    }
    job(ctx, index, n_threads);
    const uint64_t after = dynamic_state.fetch_sub(1, std::memory_order_acq_rel) - 1;
    if ((after & kInsideMask) == 0 && (after & kClosed)) {
      dynamic_done.fetch_add(1, std::memory_order_seq_cst);
      if (caller_sleeping.load(std::memory_order_seq_cst)) platform::wake_one(dynamic_done);
    }
  }

  uint32_t next_generation(bool dynamic) const {
    const uint32_t g = generation.load(std::memory_order_relaxed);
    return ((g | 1u) + 1u) | (dynamic ? 1u : 0u);
  }

  void publish_and_wake(uint32_t g) {
    generation.store(g, std::memory_order_seq_cst);
    if (sleeping_workers.load(std::memory_order_seq_cst) > 0) platform::wake_all(generation);
  }

  // Closes the dynamic job to late workers and waits for those inside it.
  void close_and_wait() {
    const uint32_t done_before = dynamic_done.load(std::memory_order_seq_cst);
    uint64_t v = dynamic_state.fetch_or(kClosed, std::memory_order_seq_cst) | kClosed;
    const Clock::time_point deadline = Clock::now() + caller_spin;
    for (uint32_t i = 1; (v & kInsideMask) != 0; ++i) {
      MAGNETAR_CPU_RELAX();
      v = dynamic_state.load(std::memory_order_acquire);
      if ((i & 63u) == 0 && Clock::now() >= deadline) break;
    }
    while ((v & kInsideMask) != 0) {  // a long straggler: sleep until the last one leaves
      caller_sleeping.store(true, std::memory_order_seq_cst);
      v = dynamic_state.load(std::memory_order_seq_cst);
      if ((v & kInsideMask) != 0) platform::wait_while_equal(dynamic_done, done_before);
      v = dynamic_state.load(std::memory_order_acquire);
    }
    caller_sleeping.store(false, std::memory_order_relaxed);
  }

  void wait_for_workers() {
    uint32_t left = pending.load(std::memory_order_acquire);
    const Clock::time_point deadline = Clock::now() + caller_spin;
    for (uint32_t i = 1; left != 0; ++i) {
      MAGNETAR_CPU_RELAX();
      left = pending.load(std::memory_order_acquire);
      if ((i & 63u) == 0 && Clock::now() >= deadline) break;
    }
    while (left != 0) {  // a long straggler: sleep until the last worker notifies
      caller_sleeping.store(true, std::memory_order_seq_cst);
      left = pending.load(std::memory_order_seq_cst);
      if (left != 0) platform::wait_while_equal(pending, left);
      left = pending.load(std::memory_order_acquire);
    }
    caller_sleeping.store(false, std::memory_order_relaxed);
  }
};

ThreadPool::ThreadPool(int n_threads) : impl_(std::make_unique<Impl>()) {
  assert(n_threads >= 1 && "ThreadPool: n_threads counts the caller, so it must be >= 1");
  impl_->n_threads = n_threads < 1 ? 1 : n_threads;
  const unsigned cpus = std::thread::hardware_concurrency();
  if (cpus != 0 && static_cast<unsigned>(impl_->n_threads) > cpus) {
    impl_->worker_spin = Clock::duration::zero();
    impl_->caller_spin = Clock::duration::zero();
  }
  impl_->workers.reserve(static_cast<size_t>(impl_->n_threads - 1));
  for (int i = 1; i < impl_->n_threads; ++i)
    impl_->workers.emplace_back([impl = impl_.get(), i] { impl->worker_loop(i); });
}

ThreadPool::~ThreadPool() {
  impl_->stop.store(true, std::memory_order_release);
  impl_->publish_and_wake(impl_->next_generation(false));
  for (std::thread& t : impl_->workers) t.join();
}

int ThreadPool::size() const { return impl_->n_threads; }

void ThreadPool::run(Job job, void* ctx) {
  Impl& p = *impl_;
  if (p.n_threads == 1) {
    job(ctx, 0, 1);
    return;
  }
  p.job = job;
  p.ctx = ctx;
  p.pending.store(static_cast<uint32_t>(p.n_threads - 1), std::memory_order_relaxed);
  p.publish_and_wake(p.next_generation(false));
  job(ctx, 0, p.n_threads);
  p.wait_for_workers();
}

void ThreadPool::run_dynamic(Job job, void* ctx) {
  Impl& p = *impl_;
  if (p.n_threads == 1) {
    job(ctx, 0, 1);
    return;
  }
  p.job = job;
  p.ctx = ctx;
  const uint32_t g = p.next_generation(true);
  p.dynamic_state.store(static_cast<uint64_t>(g) << 32, std::memory_order_relaxed);
  p.publish_and_wake(g);
  job(ctx, 0, p.n_threads);
  p.close_and_wait();
}

void ThreadPool::split(int64_t n, int64_t granule, int thread_index, int n_threads,
                       int64_t* begin, int64_t* end) {
  assert(granule >= 1 && n_threads >= 1 && thread_index >= 0 && thread_index < n_threads);
  const int64_t units = (n + granule - 1) / granule;
  const int64_t first = units * thread_index / n_threads;
  const int64_t last = units * (thread_index + 1) / n_threads;
  *begin = first * granule < n ? first * granule : n;
  *end = last * granule < n ? last * granule : n;
}

// SMT siblings share one core's load ports: a bandwidth-bound decode gains nothing from them.
int ThreadPool::default_threads() { return platform::physical_cores(); }

}  // namespace magnetar
