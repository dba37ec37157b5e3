// A persistent worker pool. run() executes fn(ctx, thread_index, n_threads) on every thread of the
// pool — the calling thread is thread 0 — and returns when all are done. Workers spin briefly
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
