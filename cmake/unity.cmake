# unity.cmake: which targets compile their files in batches, included by
# CMakeLists.txt after every target exists.
#
# Most of a clean build's time went into compiling the same headers (CLI11,
# nlohmann_json, doctest, the standard library) and their inline functions
# again in every file. These targets compile their files in a few large
# batches instead; each file still compiles on its own, as CI checks with
# GLASSLLM_UNITY=OFF (.ci/run's portable build). With the precompiled headers
# and -O0/-O1 for the tests and the tool (optimisation.cmake), a clean build
# takes about half the CPU time (docs/bench-notes.md, "The build"). The
# engine, the fast layer and the reference stay one file per object: their
# code is timed, and a batch would change what the compiler inlines. A name
# private to a file (namespace { }) must be unique within its target.
option(GLASSLLM_UNITY "Compile the command-line tool, the model, io, train and trace layers and the tests in a few large batches (a clean build in about half the time)" ON)
if(GLASSLLM_UNITY)
  # The io layer, which everything above it waits for, in two batches of
  # about equal compile time, so that both cores work on it; the model layer
  # below it in one.
  set_target_properties(glassllm_io PROPERTIES UNITY_BUILD ON UNITY_BUILD_MODE GROUP)
  foreach(file hf_tokenizer hf_tokenizer_load tokenizer npy files budget json_reader)
    set_source_files_properties(${PROJECT_SOURCE_DIR}/glassllm/io/${file}.cpp
      PROPERTIES UNITY_GROUP tokenizers)
  endforeach()
  foreach(file safetensors checkpoint_load config_json checkpoint)
    set_source_files_properties(${PROJECT_SOURCE_DIR}/glassllm/io/${file}.cpp
      PROPERTIES UNITY_GROUP checkpoints)
  endforeach()
  set_target_properties(glassllm_cli_objects glassllm_model glassllm_train glassllm_trace glassllm_grader
    PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE 0)
  if(GLASSLLM_TESTS)
    set_target_properties(glassllm_tests PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE 6)
  endif()
endif()
