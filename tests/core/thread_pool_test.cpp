// The worker pool: every thread index runs exactly once per job, jobs see each other's writes,
// sleeping workers wake up, split() covers ranges exactly.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "core/thread_pool.h"

namespace magnetar {
namespace {

TEST(ThreadPool, EveryIndexRunsOncePerJob) {
  for (int n : {1, 2, 3, 5, 8}) {
    ThreadPool pool(n);
    ASSERT_EQ(pool.size(), n);
    std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
    for (int job = 0; job < 2000; ++job) {
      pool.parallel([&](int t, int count) {
        EXPECT_EQ(count, n);
        hits[static_cast<size_t>(t)].fetch_add(1, std::memory_order_relaxed);
      });
    }
    for (int t = 0; t < n; ++t) EXPECT_EQ(hits[static_cast<size_t>(t)].load(), 2000) << "thread " << t;
  }
}

TEST(ThreadPool, JobsAreOrderedAndResultsVisible) {
  // Each job reads what the previous job wrote on other threads: run() must be a full barrier.
  ThreadPool pool(4);
  std::vector<int64_t> cells(4, 0);
  for (int step = 1; step <= 3000; ++step) {
    pool.parallel([&](int t, int) {
      const int64_t neighbour = cells[static_cast<size_t>((t + 1) % 4)];
      ASSERT_EQ(neighbour, step - 1);
      (void)neighbour;
    });
    pool.parallel([&](int t, int) { cells[static_cast<size_t>(t)] = step; });
  }
}

TEST(ThreadPool, WakesWorkersThatFellAsleep) {
  ThreadPool pool(3);
  std::atomic<int> total{0};
  for (int round = 0; round < 3; ++round) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // well past the spin window
    pool.parallel([&](int, int) { total.fetch_add(1); });
  }
  EXPECT_EQ(total.load(), 9);
}

TEST(ThreadPool, UnevenJobsWaitForTheSlowest) {
  ThreadPool pool(3);
  std::atomic<int> done{0};
  pool.parallel([&](int t, int) {
    if (t == 2) std::this_thread::sleep_for(std::chrono::milliseconds(30));  // caller must sleep-wait
    done.fetch_add(1);
  });
  EXPECT_EQ(done.load(), 3);
}

TEST(ThreadPool, DestroysCleanlyWhileWorkersSleepOrSpin) {
  { ThreadPool spinning(4); spinning.parallel([](int, int) {}); }
  {
    ThreadPool sleeping(4);
    sleeping.parallel([](int, int) {});
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  { ThreadPool never_used(2); }
  SUCCEED();
}

// A self-scheduling job: threads claim items from a counter until none is left.
struct ClaimJob {
  std::atomic<int64_t> next{0};
  int64_t items = 0;
  std::vector<std::atomic<int>>* seen_items;
  std::vector<std::atomic<int>>* calls_per_thread;
};

void claim_items(void* ctx, int thread, int) {
  ClaimJob& job = *static_cast<ClaimJob*>(ctx);
  (*job.calls_per_thread)[static_cast<size_t>(thread)].fetch_add(1);
  for (;;) {
    const int64_t i = job.next.fetch_add(1);
    if (i >= job.items) return;
    (*job.seen_items)[static_cast<size_t>(i)].fetch_add(1);
  }
}

TEST(ThreadPool, RunDynamicDoesEveryItemOnceWhoeverShowsUp) {
  for (int n : {1, 2, 3, 5}) {
    ThreadPool pool(n);
    for (int rep = 0; rep < 3000; ++rep) {
      const int64_t items = 1 + rep % 97;
      std::vector<std::atomic<int>> seen(static_cast<size_t>(items));
      std::vector<std::atomic<int>> calls(static_cast<size_t>(n));
      ClaimJob job;
      job.items = items;
      job.seen_items = &seen;
      job.calls_per_thread = &calls;
      pool.run_dynamic(claim_items, &job);
      for (int64_t i = 0; i < items; ++i) ASSERT_EQ(seen[static_cast<size_t>(i)].load(), 1) << "item " << i;
      ASSERT_EQ(calls[0].load(), 1) << "the caller always takes part";
      for (int t = 1; t < n; ++t) ASSERT_LE(calls[static_cast<size_t>(t)].load(), 1) << "thread " << t;
      if (rep % 500 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(3));  // workers doze off
    }
  }
}

TEST(ThreadPool, StaticAndDynamicJobsInterleave) {
  // Late workers of a dynamic job must neither run it after the caller moved on nor miss the
  // static job that follows.
  ThreadPool pool(4);
  std::vector<std::atomic<int>> hits(4);
  for (int rep = 0; rep < 2000; ++rep) {
    std::vector<std::atomic<int>> seen(8);
    std::vector<std::atomic<int>> calls(4);
    ClaimJob job;
    job.items = 8;
    job.seen_items = &seen;
    job.calls_per_thread = &calls;
    pool.run_dynamic(claim_items, &job);
    for (auto& s : seen) ASSERT_EQ(s.load(), 1);
    pool.parallel([&](int t, int) { hits[static_cast<size_t>(t)].fetch_add(1); });
  }
  for (auto& h : hits) EXPECT_EQ(h.load(), 2000);
}

TEST(ThreadPool, SplitCoversRangeWithGranuleBoundaries) {
  for (int64_t n : {0, 1, 15, 16, 17, 100, 1000, 4099})
    for (int64_t granule : {1, 4, 16, 64})
      for (int threads : {1, 2, 3, 7}) {
        int64_t expected_begin = 0;
        for (int t = 0; t < threads; ++t) {
          int64_t b, e;
          ThreadPool::split(n, granule, t, threads, &b, &e);
          ASSERT_EQ(b, expected_begin) << n << " " << granule << " " << t;
          ASSERT_LE(b, e);
          if (e != n) {
            ASSERT_EQ(e % granule, 0);
          }
          expected_begin = e;
        }
        ASSERT_EQ(expected_begin, n);
      }
  // Balanced: no thread gets more than one granule above another.
  int64_t b0, e0, b1, e1;
  ThreadPool::split(1024, 16, 0, 2, &b0, &e0);
  ThreadPool::split(1024, 16, 1, 2, &b1, &e1);
  EXPECT_EQ(e0 - b0, 512);
  EXPECT_EQ(e1 - b1, 512);
}

TEST(ThreadPool, DefaultThreadsIsPositive) {
  const int n = ThreadPool::default_threads();
  EXPECT_GE(n, 1);
  EXPECT_LE(n, static_cast<int>(std::thread::hardware_concurrency() ? std::thread::hardware_concurrency() : 1024));
}

}  // namespace
}  // namespace magnetar
