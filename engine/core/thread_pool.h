// A persistent worker pool. run() executes fn(ctx, thread_index, n_threads) on every thread of the
// pool — the calling thread is thread 0 — and returns when all are done; run_dynamic() is the
// variant for self-scheduling jobs that does not wait for late workers. Workers spin briefly
// after a job (fast wake-up while a model generates), then sleep on a futex-like wait, so an idle
// engine uses no CPU. run() itself allocates nothing.
#pragma once
#include <cstdint>
#include <memory>
#include <type_traits>

namespace magnetar {

class ThreadPool {
 public:
  using Job = void (*)(void* ctx, int thread_index, int n_threads);

  explicit ThreadPool(int n_threads);  // n_threads >= 1, including the caller
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const;
  void run(Job job, void* ctx);

  // For jobs that claim work from a shared counter until none is left: fn runs on the caller
  // (thread 0) and on every worker that picks the job up before the caller's own call returns;
  // a worker the OS has not scheduled by then is not waited for (a busy machine, a hybrid CPU's
  // slow cores). So fn must be correct for any subset of threads 1..n-1 taking part, each at
  // most once. Allocates nothing.
  void run_dynamic(Job job, void* ctx);

  // Convenience: fn(thread_index, n_threads) on every thread.
  template <class F>
  void parallel(F&& fn) {
    using Fn = std::remove_reference_t<F>;
    run([](void* c, int t, int n) { (*static_cast<Fn*>(c))(t, n); }, &fn);
  }

  // Splits [0, n) into size() contiguous chunks whose boundaries are multiples of `granule`.
  static void split(int64_t n, int64_t granule, int thread_index, int n_threads, int64_t* begin,
                    int64_t* end);

  static int default_threads();  // physical cores available to this process

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace magnetar
