#include "kernels/ring_collectives.hpp"

#include <algorithm>

namespace trainsim::kernels {

void ring_all_reduce(Backend& be, Communicator& comm, float* data, size_t count) {
  const int p = comm.size(), r = comm.rank();
  if (p == 1) return;
  auto lo = [&](int c) { return count * size_t(c) / p; };
  auto len = [&](int c) { return lo(c + 1) - lo(c); };
  const int right = (r + 1) % p, left = (r + p - 1) % p;
  DeviceArray<float> tmp(be, std::max<size_t>(1, count / p + 1));
  // Reduce-scatter: after step s, chunk (r - s - 1) mod p holds s + 2 ranks' contributions;
  // after n-1 steps rank r owns the full sum of chunk (r + 1) mod p.
  for (int s = 0; s < p - 1; ++s) {
    int send_c = ((r - s) % p + p) % p, recv_c = ((r - s - 1) % p + p) % p;
    be.synchronize();
    comm.send(data + lo(send_c), len(send_c) * sizeof(float), right, 1000 + s);
    comm.recv(tmp.data(), len(recv_c) * sizeof(float), left, 1000 + s);
    comm.wait_sends();
    be.axpy(len(recv_c), 1.0f, tmp.data(), data + lo(recv_c));
  }
  // All-gather: pass the reduced chunks around the ring.
  for (int s = 0; s < p - 1; ++s) {
    int send_c = ((r + 1 - s) % p + p) % p, recv_c = ((r - s) % p + p) % p;
    be.synchronize();
    comm.send(data + lo(send_c), len(send_c) * sizeof(float), right, 2000 + s);
    comm.recv(data + lo(recv_c), len(recv_c) * sizeof(float), left, 2000 + s);
    comm.wait_sends();
  }
}

}  // namespace trainsim::kernels
