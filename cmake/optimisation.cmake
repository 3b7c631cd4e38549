# optimisation.cmake: every choice of optimisation level that differs from the
# build type's (Release: -O2), in one place. Included by CMakeLists.txt after
# every target exists.
#
# Why they differ: code whose speed is measured (the engine's loops, the
# matrix-product kernels) is compiled at -O3, where GCC vectorises loops over
# a tensor's elements and keeps a kernel's accumulators in registers; -O3
# keeps IEEE arithmetic, so results do not change. The fast layer's row
# kernels (fast/kernels.cpp: softmax_row, dot, ...) and the fused decode step
# (fast/decode_attention.cpp) get the engine's level: the ops and the fused
# step call the same compiled softmax_row, and the fused step's own
# arithmetic is one multiply per score, so the two give the same bits
# whatever the levels (tests/test_model.cpp, "fused decode step").
# Code that only checks, parses or drives (the
# tests, the tool's own files, the exercises' graders) runs little of its own
# and is compiled at -O0 or -O1, which roughly halves its compile time; the
# work it runs is in the libraries. The one timed loop in the tool, the
# benchmark's memory floor, stays at -O2. docs/bench-notes.md has the
# measurements.
if(NOT CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
  return()
endif()
# The matrix-product kernels in every build type (the sanitizer build's
# products too); the engine and the kernels it calls row by row in Release.
set_source_files_properties(${PROJECT_SOURCE_DIR}/glassllm/fast/gemm_builtin.cpp
  ${PROJECT_SOURCE_DIR}/glassllm/fast/few_rows.cpp ${PROJECT_SOURCE_DIR}/glassllm/fast/blas.cpp
  PROPERTIES COMPILE_OPTIONS -O3)
target_compile_options(glassllm_engine PRIVATE $<$<CONFIG:Release>:-O3>)
set_source_files_properties(${PROJECT_SOURCE_DIR}/glassllm/fast/kernels.cpp
  ${PROJECT_SOURCE_DIR}/glassllm/fast/decode_attention.cpp
  PROPERTIES COMPILE_OPTIONS $<$<CONFIG:Release>:-O3>)

target_compile_options(glassllm_cli_objects PRIVATE $<$<CONFIG:Release>:-O1>)
# After -O1 in the command line, so it wins.
set_source_files_properties(${PROJECT_SOURCE_DIR}/bench/memory_read.cpp
  PROPERTIES COMPILE_OPTIONS $<$<CONFIG:Release>:-O2>)

if(GLASSLLM_TESTS)
  target_compile_options(glassllm_tests PRIVATE $<$<CONFIG:Release>:-O0>)
  target_compile_options(glassllm_doctest_main PRIVATE $<$<CONFIG:Release>:-O0>)
endif()
set(graders glassllm_grade_main glassllm_exercises_stubs glassllm_exercises)
if(GLASSLLM_HAVE_SOLUTIONS)
  list(APPEND graders glassllm_exercises_solutions)
endif()
foreach(ex ${GLASSLLM_EXERCISES})
  list(APPEND graders glassllm_stub_${ex})
endforeach()
foreach(target ${graders})
  target_compile_options(${target} PRIVATE $<$<CONFIG:Release>:-O1>)
endforeach()
