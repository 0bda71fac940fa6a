#include "kernels/backend.hpp"

#include <stdexcept>

#include "kernels/cpu_backend.hpp"
#if defined(TRAINSIM_HAVE_CUDA)
#include "kernels/cuda_backend.hpp"
#endif

namespace trainsim::kernels {

void* Backend::alloc_bytes(size_t bytes) {
  void* p = raw_alloc(bytes);
  current_bytes_ += bytes;
  if (current_bytes_ > peak_bytes_) peak_bytes_ = current_bytes_;
  return p;
}

void Backend::free_bytes(void* p, size_t bytes) {
  if (!p) return;
  raw_free(p);
  current_bytes_ -= bytes;
}

bool cuda_compiled() {
#if defined(TRAINSIM_HAVE_CUDA)
  return true;
#else
  return false;
#endif
}

int cuda_device_count(std::string* why) {
#if defined(TRAINSIM_HAVE_CUDA)
  return cuda_device_count_impl(why);
#else
  if (why) *why = "trainsim was built without CUDA";
  return 0;
#endif
}

std::vector<std::string> backend_names() {
  std::vector<std::string> names{"cpu"};
  if (cuda_compiled()) names.push_back("cuda");
  return names;
}

std::unique_ptr<Backend> make_backend(const std::string& name, const BackendOptions& opts) {
  if (name == "cpu") return std::make_unique<CpuBackend>(opts);
  if (name == "cuda") {
#if defined(TRAINSIM_HAVE_CUDA)
    return make_cuda_backend(opts);
#else
    throw std::runtime_error("backend \"cuda\" is not available: trainsim was built without CUDA");
#endif
  }
  std::string valid;
  for (const auto& n : backend_names()) valid += " " + n;
  throw std::invalid_argument("unknown backend \"" + name + "\"; expected one of:" + valid);
}

}  // namespace trainsim::kernels
