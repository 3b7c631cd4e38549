# fuzz.cmake: the libFuzzer targets (GLASSLLM_FUZZ=ON with clang++; fuzz/run.sh
# does it all), included by CMakeLists.txt.
if(GLASSLLM_FUZZ)
  add_executable(fuzz_checkpoint fuzz/fuzz_checkpoint.cpp)
  target_include_directories(fuzz_checkpoint PRIVATE ${PROJECT_SOURCE_DIR})
  target_link_libraries(fuzz_checkpoint PRIVATE glassllm nlohmann_json::nlohmann_json)
  target_link_options(fuzz_checkpoint PRIVATE -fsanitize=fuzzer)
  set_target_properties(fuzz_checkpoint PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/fuzz)
  # config.json, the tokenizer files, and the command line's number parsing
  # (cli/numbers.cpp, which needs nothing but the standard library).
  foreach(target fuzz_config fuzz_tokenizer fuzz_hf_tokenizer fuzz_numbers)
    set(extra "")
    if(target STREQUAL "fuzz_numbers")
      set(extra ${PROJECT_SOURCE_DIR}/cli/numbers.cpp)
    endif()
    add_executable(${target} fuzz/${target}.cpp ${extra})
    target_include_directories(${target} PRIVATE ${PROJECT_SOURCE_DIR})
    target_link_libraries(${target} PRIVATE glassllm)
    target_link_options(${target} PRIVATE -fsanitize=fuzzer)
    set_target_properties(${target} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/fuzz)
  endforeach()
endif()
