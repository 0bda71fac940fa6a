# Included from bench/CMakeLists.txt when trainsim_sim exists: the step-simulation benchmark.
#   if(TARGET trainsim_sim AND EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/step.cmake)
#     include(${CMAKE_CURRENT_SOURCE_DIR}/step.cmake)
#   endif()
add_executable(bench_step ${CMAKE_CURRENT_LIST_DIR}/bench_step.cpp)
target_link_libraries(bench_step PRIVATE trainsim_sim trainsim_allocator)
