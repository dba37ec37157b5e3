// Tests for SpscQueue (app/gui/core/spsc_queue.h): single-thread semantics, wrap-around, and a
// two-thread stress run that checks order and payload integrity. Run the stress test under
// ThreadSanitizer with -DMAGNETAR_SANITIZE=thread to check the acquire/release pairing.
#include "core/spsc_queue.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <thread>

namespace magnetar::app {
namespace {

TEST(SpscQueue, CapacityRoundsUpToPowerOfTwo) {
  EXPECT_EQ(SpscQueue<int>(2).capacity(), 2u);
  EXPECT_EQ(SpscQueue<int>(3).capacity(), 4u);
  EXPECT_EQ(SpscQueue<int>(1000).capacity(), 1024u);
}

TEST(SpscQueue, EmptyPopFailsAndFullPushFails) {
  SpscQueue<int> queue(4);
  int value = -1;
  EXPECT_FALSE(queue.try_pop(&value));
  for (int i = 0; i < 4; ++i) EXPECT_TRUE(queue.try_push(i));
  EXPECT_FALSE(queue.try_push(99));
  EXPECT_EQ(queue.size_approx(), 4u);
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE(queue.try_pop(&value));
    EXPECT_EQ(value, i);
  }
  EXPECT_FALSE(queue.try_pop(&value));
  EXPECT_TRUE(queue.empty_approx());
}

TEST(SpscQueue, WrapsAroundManyTimesInOrder) {
  SpscQueue<uint64_t> queue(8);
  uint64_t next_in = 0, next_out = 0;
  // Uneven push/pop batches so the indices cross the wrap point at every offset.
  for (int round = 0; round < 1000; ++round) {
    const int pushes = 1 + round % 7;
    for (int i = 0; i < pushes && queue.try_push(next_in); ++i) ++next_in;
    const int pops = 1 + (round * 5) % 6;
    uint64_t value = 0;
    for (int i = 0; i < pops && queue.try_pop(&value); ++i) {
      ASSERT_EQ(value, next_out);
      ++next_out;
    }
  }
  EXPECT_GT(next_out, 1000u);
}

TEST(SpscQueue, EmplaceWithFillsInPlace) {
  struct Big {
    char text[48] = {};
    int length = 0;
  };
  SpscQueue<Big> queue(2);
  EXPECT_TRUE(queue.emplace_with([](Big& slot) {
    std::memcpy(slot.text, "hello", 5);
    slot.length = 5;
  }));
  Big out;
  ASSERT_TRUE(queue.try_pop(&out));
  EXPECT_EQ(std::string(out.text, out.length), "hello");
}

// One producer, one consumer, a small queue (constant contention on full/empty), a payload
// whose bytes are derived from the sequence number so torn or reordered slots are caught.
TEST(SpscQueue, TwoThreadStressKeepsOrderAndPayload) {
  struct Event {
    uint64_t sequence = 0;
    uint32_t length = 0;
    char text[52] = {};
  };
  constexpr uint64_t kEvents = 2'000'000;
  SpscQueue<Event> queue(64);

  std::thread producer([&] {
    for (uint64_t i = 0; i < kEvents; ++i) {
      while (!queue.emplace_with([&](Event& e) {
        e.sequence = i;
        e.length = static_cast<uint32_t>(i % sizeof(e.text));
        for (uint32_t k = 0; k < e.length; ++k) e.text[k] = static_cast<char>('a' + (i + k) % 26);
      })) {
        std::this_thread::yield();
      }
    }
  });

  uint64_t expected = 0, bad_payloads = 0;
  Event e;
  while (expected < kEvents) {
    if (!queue.try_pop(&e)) {
      std::this_thread::yield();
      continue;
    }
    ASSERT_EQ(e.sequence, expected);
    if (e.length != expected % sizeof(e.text)) ++bad_payloads;
    for (uint32_t k = 0; k < e.length; ++k)
      if (e.text[k] != static_cast<char>('a' + (expected + k) % 26)) ++bad_payloads;
    ++expected;
  }
  producer.join();
  EXPECT_EQ(bad_payloads, 0u);
  EXPECT_TRUE(queue.empty_approx());
}

}  // namespace
}  // namespace magnetar::app
