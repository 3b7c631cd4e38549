# tests.cmake: every test CTest runs, included by CMakeLists.txt at its end
# (the exercises' tests are in exercises.cmake).
# The unit tests need doctest and valijson, the browser tests Node.js and
# Chromium: scripts/test.sh installs them. scripts/run.sh, which only builds
# and runs, configures with -DGLASSLLM_TESTS=OFF and needs none of them.
option(GLASSLLM_TESTS "Build the unit tests (doctest, valijson) and add the browser tests" ON)
enable_testing()
if(GLASSLLM_TESTS)
find_package(doctest REQUIRED)
# The doctest main is compiled once, on its own (it is the slowest TU).
add_library(glassllm_doctest_main OBJECT tests/main.cpp)
target_link_libraries(glassllm_doctest_main PRIVATE doctest::doctest)
file(GLOB GLASSLLM_TEST_SOURCES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/tests/test_*.cpp)
add_executable(glassllm_tests ${GLASSLLM_TEST_SOURCES}
  $<TARGET_OBJECTS:glassllm_doctest_main>)
target_include_directories(glassllm_tests PRIVATE ${PROJECT_SOURCE_DIR})
target_link_libraries(glassllm_tests PRIVATE glassllm doctest::doctest
  nlohmann_json::nlohmann_json)
# The headers every batch of tests parses, parsed once rather than once
# per batch (docs/bench-notes.md, "The build").
target_precompile_headers(glassllm_tests PRIVATE <doctest/doctest.h>
  <nlohmann/json.hpp> <glassllm/glassllm.h>)
# Hand-made input files (tests/data/, e.g. the checkpoint corpus), and the
# cache folder the tests use instead of the user's (tests/test_gemm_choice.cpp).
target_compile_definitions(glassllm_tests PRIVATE
  GLASSLLM_TEST_DATA="${PROJECT_SOURCE_DIR}/tests/data"
  GLASSLLM_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
  GLASSLLM_TEST_CACHE="${PROJECT_BINARY_DIR}/test-cache")
if(GLASSLLM_BLAS_BACKEND STREQUAL "builtin")
  # The CBLAS functions the builtin backend provides (backends/cblas_shim.cpp).
  target_sources(glassllm_tests PRIVATE tests/builtin/test_cblas_shim.cpp)
endif()
include(doctest)
doctest_discover_tests(glassllm_tests)

# A builtin build links no BLAS and opens none (Linux: ldd and the loader's log).
if(GLASSLLM_BLAS_BACKEND STREQUAL "builtin" AND CMAKE_SYSTEM_NAME STREQUAL "Linux")
  add_test(NAME builtin_links_no_blas
    COMMAND bash ${PROJECT_SOURCE_DIR}/tests/builtin/links_no_blas.sh
      $<TARGET_FILE:glassllm_cli> $<TARGET_FILE:glassllm_tests>)
endif()

# The inspector in headless Debian Chromium (tests/viewer/, playwright-core
# from viewer/node_modules). Fails with a message when Chromium or
# node_modules are missing: scripts/install-deps.sh installs both. The live
# inspector's tests (live.test.mjs) run when the page has the engine.
file(GLOB GLASSLLM_VIEWER_TESTS CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/tests/viewer/*.test.mjs)
add_test(NAME viewer_browser_tests
  COMMAND node --test ${GLASSLLM_VIEWER_TESTS}
  WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
set_tests_properties(viewer_browser_tests PROPERTIES
  ENVIRONMENT "GLASSLLM_BIN=$<TARGET_FILE:glassllm_cli>;GLASSLLM_VIEWER_PAGE=${PROJECT_BINARY_DIR}/viewer/inspector.html;GLASSLLM_ARTIFACTS=${PROJECT_BINARY_DIR}/viewer-artifacts;GLASSLLM_HAS_ENGINE=$<IF:$<BOOL:${GLASSLLM_PAGE_ENGINE}>,1,0>"
  TIMEOUT 600)
endif()

# Command-line and documentation checks (scripts under tests/).
file(GLOB GLASSLLM_SHELL_TESTS CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/tests/cli_*.sh)
foreach(script ${GLASSLLM_SHELL_TESTS})
  get_filename_component(name ${script} NAME_WE)
  add_test(NAME ${name}
    COMMAND bash ${script} $<TARGET_FILE:glassllm_cli> ${PROJECT_BINARY_DIR}
    WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
endforeach()

# `glassllm tokenize` against transformers.js's tokenizers on real Llama 3,
# Qwen3 and SentencePiece-style tokenizer.json files (tests/tokenizer/, its
# node_modules installed by scripts/install-deps.sh).
add_test(NAME tokenizer_parity
  COMMAND node ${PROJECT_SOURCE_DIR}/tests/tokenizer/parity.mjs $<TARGET_FILE:glassllm_cli>
  WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
set_tests_properties(tokenizer_parity PROPERTIES TIMEOUT 300)

# cli_real_models runs PyTorch (Debian's python3-torch) on ~1 GB models.
set_tests_properties(cli_real_models PROPERTIES TIMEOUT 1500)

# The docs quote examples/ and show their output; doccheck keeps them in step.
add_executable(doccheck tools/doccheck.cpp tools/doccheck_links.cpp
  tools/doccheck_translations.cpp)
add_test(NAME docs_in_sync
  COMMAND doccheck ${PROJECT_SOURCE_DIR} ${PROJECT_BINARY_DIR})
# doccheck's comparison rule itself, on the small pages in tests/data/doccheck/.
add_test(NAME doccheck_rule
  COMMAND bash ${PROJECT_SOURCE_DIR}/tests/doccheck_rule.sh $<TARGET_FILE:doccheck>)
# ... and its check of relative links and anchors, on tests/data/doccheck/links/.
add_test(NAME doccheck_links
  COMMAND bash ${PROJECT_SOURCE_DIR}/tests/doccheck_links.sh $<TARGET_FILE:doccheck>)
# ... and its check that the pages of docs/pt/ and their English pages link to
# each other.
add_test(NAME doccheck_translations
  COMMAND bash ${PROJECT_SOURCE_DIR}/tests/doccheck_translations.sh $<TARGET_FILE:doccheck>)

# The layer check itself (cmake/check_layers.cmake), on trees that break
# each of its rules and one that keeps them.
add_test(NAME layer_check_fixtures
  COMMAND ${CMAKE_COMMAND} -DCHECKER=${PROJECT_SOURCE_DIR}/cmake/check_layers.cmake
    -DWORK=${PROJECT_BINARY_DIR}/layer_check_fixtures
    -P ${PROJECT_SOURCE_DIR}/tests/check_layers_fixtures.cmake)
# No page or script tells a reader to run make in the build folder (it is Ninja's).
add_test(NAME docs_build_commands
  COMMAND bash ${PROJECT_SOURCE_DIR}/tests/docs_build_commands.sh ${PROJECT_SOURCE_DIR})
# scripts/lesson.sh runs a lesson plan's commands, as the page shows them.
add_test(NAME lesson_runner
  COMMAND bash ${PROJECT_SOURCE_DIR}/tests/lesson_runner.sh ${PROJECT_SOURCE_DIR} ${PROJECT_BINARY_DIR})
# Random op graphs (every op of ops.h, broadcasting, reuse, 0-d and size-0
# shapes, float32 and float64) through the engine (tests/differential/
# opgraph.cpp) and through PyTorch (differential.py, Debian's python3-torch),
# values and gradients compared. 300 graphs here; .ci/run runs 20,000
# (scripts/differential.sh).
add_executable(opgraph tests/differential/opgraph.cpp)
target_link_libraries(opgraph PRIVATE glassllm)
add_test(NAME differential_short
  COMMAND /usr/bin/python3 ${PROJECT_SOURCE_DIR}/tests/differential/differential.py
    --engine $<TARGET_FILE:opgraph> --graphs 300 --seed 1)
set_tests_properties(differential_short PROPERTIES TIMEOUT 120)
