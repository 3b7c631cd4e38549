# blas_backend.cmake: which library does GlassLM's matrix products, included
# by CMakeLists.txt once the fast layer's library (glassllm_fast) exists.
# Sets GLASSLLM_BLAS_BACKEND and adds that backend's source to glassllm_fast.
# Every product goes through glassllm/fast/blas.cpp to one backend, chosen here:
#   openblas  OpenBLAS opened at run time with dlopen (Linux; backends/openblas.cpp
#             says why it is not linked)
#   system    the BLAS CMake's FindBLAS finds (Accelerate, MKL, BLIS, FlexiBLAS,
#             OpenBLAS, ...), linked, through its CBLAS functions
#   builtin   GlassLM's own C++ GEMM (glassllm/fast/gemm_builtin.cpp); no library.
#             Also provides cblas_?gemm/?gemv/?dot for code written against CBLAS.
#   auto      openblas on Linux when libopenblas.so.0 is there, else system when
#             FindBLAS finds a BLAS with CBLAS, else builtin.
set(GLASSLLM_BLAS auto CACHE STRING "Matrix-product backend: auto, openblas, system or builtin")
set_property(CACHE GLASSLLM_BLAS PROPERTY STRINGS auto openblas system builtin)
if(NOT GLASSLLM_BLAS MATCHES "^(auto|openblas|system|builtin)$")
  message(FATAL_ERROR "GLASSLLM_BLAS='${GLASSLLM_BLAS}' is not a backend; use auto, openblas, system or builtin")
endif()

function(glassllm_find_openblas out)  # the file backends/openblas.cpp opens
  set(${out} OFF PARENT_SCOPE)
  if(CMAKE_SYSTEM_NAME STREQUAL "Linux")
    find_library(GLASSLLM_OPENBLAS_RUNTIME NAMES libopenblas.so.0)
    if(GLASSLLM_OPENBLAS_RUNTIME)
      set(${out} ON PARENT_SCOPE)
    endif()
  endif()
endfunction()

function(glassllm_find_system_blas out)  # a BLAS that exports the CBLAS functions
  set(${out} OFF PARENT_SCOPE)
  find_package(BLAS QUIET)
  if(BLAS_FOUND)
    include(CheckFunctionExists)
    set(CMAKE_REQUIRED_LIBRARIES ${BLAS_LIBRARIES} ${BLAS_LINKER_FLAGS})
    set(CMAKE_REQUIRED_QUIET ON)
    check_function_exists(cblas_sgemm GLASSLLM_SYSTEM_BLAS_HAS_CBLAS)
    if(GLASSLLM_SYSTEM_BLAS_HAS_CBLAS)
      set(${out} ON PARENT_SCOPE)
    endif()
  endif()
endfunction()

set(GLASSLLM_BLAS_BACKEND ${GLASSLLM_BLAS})
if(GLASSLLM_BLAS STREQUAL "auto")
  glassllm_find_openblas(have_openblas)
  if(have_openblas)
    set(GLASSLLM_BLAS_BACKEND openblas)
  else()
    glassllm_find_system_blas(have_system_blas)
    if(have_system_blas)
      set(GLASSLLM_BLAS_BACKEND system)
    else()
      set(GLASSLLM_BLAS_BACKEND builtin)
    endif()
  endif()
elseif(GLASSLLM_BLAS STREQUAL "openblas")
  if(NOT CMAKE_SYSTEM_NAME STREQUAL "Linux")
    message(FATAL_ERROR "GLASSLLM_BLAS=openblas opens libopenblas.so.0 at run time, which only Linux has; on ${CMAKE_SYSTEM_NAME} use system or builtin")
  endif()
  glassllm_find_openblas(have_openblas)
  if(NOT have_openblas)
    message(WARNING "GLASSLLM_BLAS=openblas: libopenblas.so.0 not found now; the programs will need it at run time (Debian: apt-get install libopenblas0-pthread)")
  endif()
elseif(GLASSLLM_BLAS STREQUAL "system")
  glassllm_find_system_blas(have_system_blas)
  if(NOT have_system_blas)
    message(FATAL_ERROR "GLASSLLM_BLAS=system: CMake's FindBLAS found no BLAS with the CBLAS function cblas_sgemm (set BLA_VENDOR, or use builtin)")
  endif()
endif()
message(STATUS "GlassLM matrix products: ${GLASSLLM_BLAS_BACKEND} (GLASSLLM_BLAS=${GLASSLLM_BLAS})")

target_sources(glassllm_fast PRIVATE
  ${PROJECT_SOURCE_DIR}/glassllm/fast/backends/${GLASSLLM_BLAS_BACKEND}.cpp)
if(GLASSLLM_BLAS_BACKEND STREQUAL "openblas")
  target_link_libraries(glassllm_fast PRIVATE ${CMAKE_DL_LIBS})
elseif(GLASSLLM_BLAS_BACKEND STREQUAL "system")
  find_package(BLAS REQUIRED)
  target_link_libraries(glassllm_fast PUBLIC BLAS::BLAS)
  set_source_files_properties(${PROJECT_SOURCE_DIR}/glassllm/fast/backends/system.cpp
    PROPERTIES COMPILE_DEFINITIONS "GLASSLLM_SYSTEM_BLAS_LIBRARIES=\"${BLAS_LIBRARIES}\"")
else()
  target_sources(glassllm_fast PRIVATE ${PROJECT_SOURCE_DIR}/glassllm/fast/backends/cblas_shim.cpp)
endif()
