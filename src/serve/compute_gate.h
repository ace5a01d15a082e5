// ComputeGate: at most N requests compute at once, the rest wait in arrival order.
//
// The server holds one thread per kept-alive connection (http_server.h). Left alone, 64 busy
// connections on 2 cores are 64 runnable threads, and the scheduler's time slices decide who
// finishes: a request of ~0.1 ms of CPU could wait several slices, which is the tail at high
// concurrency (docs/SERVE.md, Load). Behind the gate only N threads compute; the others sleep on
// their own condition variable (no thundering herd) and are woken one by one, first come first
// served, so a request waits for the work queued ahead of it and no longer.
#pragma once

#include <condition_variable>
#include <deque>
#include <mutex>

namespace trainsim::serve {

class ComputeGate {
 public:
  explicit ComputeGate(int slots) : slots_(slots < 1 ? 1 : slots) {}
  ComputeGate(const ComputeGate&) = delete;
  ComputeGate& operator=(const ComputeGate&) = delete;

  // Holds a slot from construction to destruction.
  class Pass {
   public:
    explicit Pass(ComputeGate& g) : g_(g) { g_.Enter(); }
    ~Pass() { g_.Exit(); }
    Pass(const Pass&) = delete;
    Pass& operator=(const Pass&) = delete;

   private:
    ComputeGate& g_;
  };

  // Requests computing now and waiting now (for tests and diagnostics).
  int active() const {
    std::lock_guard<std::mutex> lock(m_);
    return active_;
  }
  int waiting() const {
    std::lock_guard<std::mutex> lock(m_);
    return static_cast<int>(queue_.size());
  }

 private:
  struct Waiter {
    std::condition_variable cv;
    bool admitted = false;
  };

  void Enter() {
    std::unique_lock<std::mutex> lock(m_);
    if (active_ < slots_ && queue_.empty()) {
      ++active_;
      return;
    }
    Waiter w;
    queue_.push_back(&w);
    w.cv.wait(lock, [&w] { return w.admitted; });  // Exit() handed its slot over
  }

  void Exit() {
    std::lock_guard<std::mutex> lock(m_);
    if (queue_.empty()) {
      --active_;
      return;
    }
    Waiter* next = queue_.front();  // the slot passes to the oldest waiter; active_ unchanged
    queue_.pop_front();
    next->admitted = true;
    next->cv.notify_one();
  }

  const int slots_;
  mutable std::mutex m_;
  int active_ = 0;
  std::deque<Waiter*> queue_;
};

}  // namespace trainsim::serve
