// A Communicator decorator that adds up the wall time spent inside its calls, so the trainer
// can log communication time per group (on the pipeline group that time includes waiting
// for the neighbouring stage: transfer plus bubble). On cuda the backend is synchronised
// around each call so the figure is the collective's, not its enqueue's.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "kernels/backend.hpp"
#include "kernels/communicator.hpp"

namespace trainsim::kernels {

class TimedCommunicator final : public Communicator {
 public:
  TimedCommunicator(std::unique_ptr<Communicator> inner, Backend& be)
      : inner_(std::move(inner)), be_(be), sync_(be.name() != "cpu") {}
  double seconds() const { return seconds_; }
  void reset_seconds() { seconds_ = 0; }
  uint64_t inner_bytes_sent() const { return inner_->bytes_sent(); }

  int rank() const override { return inner_->rank(); }
  int size() const override { return inner_->size(); }
  std::string name() const override { return inner_->name(); }
  void all_reduce(const float* s, float* r, size_t n, ReduceOp op) override { timed([&] { inner_->all_reduce(s, r, n, op); }); }
  void all_reduce_f64(double* d, size_t n, ReduceOp op) override { timed([&] { inner_->all_reduce_f64(d, n, op); }); }
  void reduce_scatter(const float* s, float* r, size_t n) override { timed([&] { inner_->reduce_scatter(s, r, n); }); }
  void all_gather(const void* s, void* r, size_t b) override { timed([&] { inner_->all_gather(s, r, b); }); }
  void all_to_all(const void* s, void* r, size_t b) override { timed([&] { inner_->all_to_all(s, r, b); }); }
  void send(const void* b, size_t n, int peer, int tag) override { timed([&] { inner_->send(b, n, peer, tag); }); }
  void recv(void* b, size_t n, int peer, int tag) override { timed([&] { inner_->recv(b, n, peer, tag); }); }
  void wait_sends() override { timed([&] { inner_->wait_sends(); }); }
  void barrier() override { timed([&] { inner_->barrier(); }); }
  void idle_barrier() override { timed([&] { inner_->idle_barrier(); }); }
  std::unique_ptr<Communicator> split(int color, int key) override {
    return std::make_unique<TimedCommunicator>(inner_->split(color, key), be_);
  }

 private:
  template <typename F>
  void timed(F&& f) {
    if (sync_) be_.synchronize();
    auto t0 = std::chrono::steady_clock::now();
    uint64_t b0 = inner_->bytes_sent();
    f();
    if (sync_) be_.synchronize();
    seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    count_bytes(double(inner_->bytes_sent() - b0));
  }
  std::unique_ptr<Communicator> inner_;
  Backend& be_;
  bool sync_;
  double seconds_ = 0;
};

}  // namespace trainsim::kernels
