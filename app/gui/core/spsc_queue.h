// SpscQueue: a fixed-capacity, lock-free, single-producer / single-consumer ring buffer.
// The desktop app uses one per direction between the UI thread and the engine thread (its only
// users, so it lives with them in app/gui/core).
//
// Contract: exactly one thread calls try_push(), exactly one (other) thread calls try_pop().
// No locks, no allocation after construction, no system calls: safe on the token hot path.
// T must be default-constructible and copy/move-assignable; slots are reused in place.
//
// Memory ordering: the producer writes the slot, then publishes `tail_` with release; the
// consumer reads `tail_` with acquire before reading the slot (and the mirror image for `head_`
// when a slot is handed back). Each index lives on its own cache line, and each side keeps a
// cached copy of the other side's index so the common case touches no shared line at all.
#pragma once
#include <atomic>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <utility>

namespace magnetar::app {

template <typename T>
class SpscQueue {
 public:
  // Capacity is rounded up to a power of two (index wrap is a mask, not a division).
  explicit SpscQueue(size_t capacity) {
    assert(capacity >= 2 && "SpscQueue: capacity must be at least 2");
    size_t size = 2;
    while (size < capacity) size <<= 1;
    mask_ = size - 1;
    slots_ = std::make_unique<T[]>(size);
  }
  SpscQueue(const SpscQueue&) = delete;
  SpscQueue& operator=(const SpscQueue&) = delete;

  size_t capacity() const { return mask_ + 1; }

  // Producer side. Returns false (and leaves `value` untouched) when the queue is full.
  bool try_push(const T& value) { return emplace_with([&](T& slot) { slot = value; }); }
  bool try_push(T&& value) { return emplace_with([&](T& slot) { slot = std::move(value); }); }

  // Producer side: fill the slot in place (avoids a copy of large events).
  template <typename Fill>
  bool emplace_with(Fill&& fill) {
    const uint64_t tail = tail_.value.load(std::memory_order_relaxed);
    if (tail - producer_cached_head_ > mask_) {
      producer_cached_head_ = head_.value.load(std::memory_order_acquire);
      if (tail - producer_cached_head_ > mask_) return false;  // full
    }
    fill(slots_[tail & mask_]);
    tail_.value.store(tail + 1, std::memory_order_release);
    return true;
  }

  // Consumer side. Returns false when the queue is empty.
  bool try_pop(T* out) {
    const uint64_t head = head_.value.load(std::memory_order_relaxed);
    if (head == consumer_cached_tail_) {
      consumer_cached_tail_ = tail_.value.load(std::memory_order_acquire);
      if (head == consumer_cached_tail_) return false;  // empty
    }
    *out = std::move(slots_[head & mask_]);
    head_.value.store(head + 1, std::memory_order_release);
    return true;
  }

  // Approximate (exact when called from either endpoint while the other is idle).
  size_t size_approx() const {
    const uint64_t tail = tail_.value.load(std::memory_order_acquire);
    const uint64_t head = head_.value.load(std::memory_order_acquire);
    return static_cast<size_t>(tail - head);
  }
  bool empty_approx() const { return size_approx() == 0; }

 private:
  static constexpr size_t kCacheLine = 64;
  struct alignas(kCacheLine) PaddedIndex {
    std::atomic<uint64_t> value{0};
  };

  // Consumer-owned line: its index and its cached view of the producer's index.
  PaddedIndex head_;
  alignas(kCacheLine) uint64_t consumer_cached_tail_ = 0;
  // Producer-owned line.
  PaddedIndex tail_;
  alignas(kCacheLine) uint64_t producer_cached_head_ = 0;
  // Read-mostly after construction.
  alignas(kCacheLine) size_t mask_ = 0;
  std::unique_ptr<T[]> slots_;  // [mask_ + 1]
};

}  // namespace magnetar::app
