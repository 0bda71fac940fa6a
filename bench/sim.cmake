# Included from bench/CMakeLists.txt when trainsim_sim exists: the SimGrid collective benchmark.
add_executable(bench_collective ${CMAKE_CURRENT_LIST_DIR}/bench_collective.cpp)
target_link_libraries(bench_collective PRIVATE trainsim_sim)
