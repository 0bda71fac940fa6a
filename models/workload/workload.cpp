// build_workload() lives in estimate.cpp beside the closed form it feeds; see workload.hpp.
