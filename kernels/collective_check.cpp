#include "kernels/collective_check.hpp"

#include <algorithm>
#include <chrono>
#include <vector>

namespace trainsim::kernels {
namespace {

float reduce_value(int rank, size_t i) { return float((rank + 1) * int(i % 7 + 1)); }
uint8_t byte_value(int rank, int dest, size_t i) { return uint8_t((rank * 7 + dest * 13 + i) & 0xff); }

}  // namespace

CollectiveRun run_collective(Backend& be, Communicator& comm, CollectiveKind kind, size_t bytes,
                             int warmup, int iters, CollectiveTiming timing,
                             const std::function<void()>& before_each) {
  const int n = comm.size(), r = comm.rank();
  CollectiveRun run;
  const bool reduction = kind == CollectiveKind::kAllReduce || kind == CollectiveKind::kReduceScatter;
  const size_t unit = (reduction ? sizeof(float) : 1) *
                      (kind == CollectiveKind::kAllReduce || kind == CollectiveKind::kSendRecv ? 1 : n);
  bytes = std::max(unit, bytes / unit * unit);
  run.bytes = bytes;

  // Host-side inputs and device buffers. in: this rank's send buffer; out: receive buffer.
  size_t in_bytes = bytes, out_bytes = bytes;
  if (kind == CollectiveKind::kReduceScatter) out_bytes = bytes / n;
  if (kind == CollectiveKind::kAllGather) in_bytes = bytes / n;
  std::vector<uint8_t> h_in(in_bytes);
  if (reduction) {
    auto* f = reinterpret_cast<float*>(h_in.data());
    for (size_t i = 0; i < in_bytes / 4; ++i) f[i] = reduce_value(r, i);
  } else if (kind == CollectiveKind::kAllToAll) {
    size_t blk = bytes / n;
    for (int j = 0; j < n; ++j)
      for (size_t i = 0; i < blk; ++i) h_in[j * blk + i] = byte_value(r, j, i);
  } else {
    for (size_t i = 0; i < in_bytes; ++i) h_in[i] = byte_value(r, 0, i);
  }
  DeviceArray<uint8_t> d_in(be, in_bytes), d_out(be, out_bytes);
  d_in.upload(h_in);
  d_out.zero();

  auto once = [&] {
    switch (kind) {
      case CollectiveKind::kAllReduce:
        comm.all_reduce(reinterpret_cast<float*>(d_in.data()), reinterpret_cast<float*>(d_out.data()),
                        bytes / 4, ReduceOp::kSum);
        break;
      case CollectiveKind::kReduceScatter:
        comm.reduce_scatter(reinterpret_cast<float*>(d_in.data()), reinterpret_cast<float*>(d_out.data()),
                            out_bytes / 4);
        break;
      case CollectiveKind::kAllGather: comm.all_gather(d_in.data(), d_out.data(), in_bytes); break;
      case CollectiveKind::kAllToAll: comm.all_to_all(d_in.data(), d_out.data(), bytes / n); break;
      case CollectiveKind::kSendRecv:
        if (n == 1) {
          be.copy_device(d_out.data(), d_in.data(), bytes);
        } else {  // ring shift, as nccl-tests sendrecv_perf: send to r+1, receive from r-1
          comm.send(d_in.data(), bytes, (r + 1) % n, 7);
          comm.recv(d_out.data(), bytes, (r + n - 1) % n, 7);
          comm.wait_sends();
        }
        break;
    }
  };
  for (int i = 0; i < warmup; ++i) once();
  be.synchronize();
  double t = 0.0;
  if (timing == CollectiveTiming::kBackToBack) {
    comm.barrier();
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < iters; ++i) once();
    be.synchronize();
    t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / std::max(1, iters);
  } else {
    std::vector<double> calls;
    for (int i = 0; i < std::max(1, iters); ++i) {
      if (before_each) {
        before_each();
        be.synchronize();
      }
      comm.barrier();
      auto t0 = std::chrono::steady_clock::now();
      once();
      be.synchronize();
      calls.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(calls.begin(), calls.end());
    t = calls[calls.size() / 2];
  }
  double tmax = t;
  comm.all_reduce_f64(&tmax, 1, ReduceOp::kMax);
  run.time_s = tmax;

  // Check against the closed form.
  auto got = d_out.download();
  size_t wrong = 0;
  if (reduction) {
    const auto* f = reinterpret_cast<const float*>(got.data());
    const float sum_ranks = float(n * (n + 1) / 2);
    size_t offset = kind == CollectiveKind::kReduceScatter ? size_t(r) * (out_bytes / 4) : 0;
    for (size_t i = 0; i < out_bytes / 4; ++i)
      if (f[i] != sum_ranks * float((offset + i) % 7 + 1)) ++wrong;
  } else if (kind == CollectiveKind::kAllGather) {
    size_t blk = in_bytes;
    for (int j = 0; j < n; ++j)
      for (size_t i = 0; i < blk; ++i) wrong += got[j * blk + i] != byte_value(j, 0, i);
  } else if (kind == CollectiveKind::kAllToAll) {
    size_t blk = bytes / n;
    for (int j = 0; j < n; ++j)
      for (size_t i = 0; i < blk; ++i) wrong += got[j * blk + i] != byte_value(j, r, i);
  } else {
    int src = (r + n - 1) % n;
    for (size_t i = 0; i < bytes; ++i) wrong += got[i] != byte_value(src, 0, i);
  }
  double w = double(wrong);
  comm.all_reduce_f64(&w, 1, ReduceOp::kSum);
  run.wrong = size_t(w);
  run.algbw_bytes_per_s = run.time_s > 0 ? double(bytes) / run.time_s : 0.0;
  run.busbw_bytes_per_s = run.algbw_bytes_per_s * bus_bandwidth_factor(kind, n);
  return run;
}

}  // namespace trainsim::kernels
