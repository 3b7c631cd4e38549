# exercises.cmake: the exercises' graders and their tests, included by
# CMakeLists.txt.
# One grader program, exercises/grade.cpp, linked with one copy of the
# exercises at a time: the untouched stubs (CI: each must fail with "Exercise
# N: not implemented"), the reference solutions (CI: each must pass; skipped
# when exercises/solutions/ is not there), and the student's copy in
# exercises/student/ (made by exercises/reset.sh; a missing file falls back
# to its stub). The student's tests are ex01..ex10 (labels exNN and
# exercises); they exist once exercises/student/ holds a file.
set(GLASSLLM_EXERCISES ex01_elementwise ex02_broadcasting ex03_reductions ex04_softmax
  ex05_matmul ex06_repeat_kv ex07_rmsnorm ex08_rope ex09_kv_cache ex10_grouped_attention)
add_library(glassllm_grader STATIC exercises/grader.cpp exercises/grader_model.cpp
  exercises/hints.cpp exercises/messages.cpp)
target_include_directories(glassllm_grader PUBLIC ${PROJECT_SOURCE_DIR})
target_link_libraries(glassllm_grader PUBLIC glassllm)
if(GLASSLLM_TESTS)
  target_link_libraries(glassllm_tests PRIVATE glassllm_grader)
endif()
# Each stub is compiled once, for every grader that uses it (in a fresh
# clone the student's grader is all stubs, like the stubs' own), not once
# per grader.
foreach(ex ${GLASSLLM_EXERCISES})
  add_library(glassllm_stub_${ex} OBJECT exercises/stubs/${ex}.cpp)
  target_link_libraries(glassllm_stub_${ex} PRIVATE glassllm_grader)
  glassllm_public_pch(glassllm_stub_${ex} GLASSLLM_EXERCISE_PCH)
endforeach()
# The grader's main, likewise compiled once for the three graders.
add_library(glassllm_grade_main OBJECT exercises/grade.cpp)
target_link_libraries(glassllm_grade_main PRIVATE glassllm_grader)
# Where it was built, so that a grader copied along with its tree can tell.
target_compile_definitions(glassllm_grade_main PRIVATE
  GLASSLLM_GRADER_BUILD_DIR="${PROJECT_BINARY_DIR}"
  GLASSLLM_GRADER_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
glassllm_public_pch(glassllm_grade_main GLASSLLM_EXERCISE_PCH)
function(glassllm_exercise_grader target dir)
  set(sources $<TARGET_OBJECTS:glassllm_grade_main>)
  foreach(ex ${GLASSLLM_EXERCISES})
    if(NOT dir STREQUAL "stubs" AND EXISTS ${PROJECT_SOURCE_DIR}/exercises/${dir}/${ex}.cpp)
      list(APPEND sources exercises/${dir}/${ex}.cpp)
    else()
      list(APPEND sources $<TARGET_OBJECTS:glassllm_stub_${ex}>)
    endif()
  endforeach()
  add_executable(${target} ${sources})
  target_link_libraries(${target} PRIVATE glassllm_grader)
  glassllm_public_pch(${target} GLASSLLM_EXERCISE_PCH)
  set_target_properties(${target} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/exercises)
endfunction()
glassllm_exercise_grader(glassllm_exercises_stubs stubs)
glassllm_exercise_grader(glassllm_exercises student)
# A students' copy of the repository may leave the solutions out.
set(GLASSLLM_HAVE_SOLUTIONS OFF)
if(EXISTS ${PROJECT_SOURCE_DIR}/exercises/solutions)
  set(GLASSLLM_HAVE_SOLUTIONS ON)
  glassllm_exercise_grader(glassllm_exercises_solutions solutions)
endif()
add_test(NAME grader_copied_tree
  COMMAND bash ${PROJECT_SOURCE_DIR}/tests/grader_copied_tree.sh
    $<TARGET_FILE:glassllm_exercises_stubs>)
# The tests that read the graders' English say so (messages.h: the language
# comes from the environment).
set_tests_properties(grader_copied_tree PROPERTIES LABELS stubs
  ENVIRONMENT "GLASSLLM_LANG=en")
file(GLOB GLASSLLM_STUDENT_FILES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/exercises/student/ex*.cpp)
foreach(ex ${GLASSLLM_EXERCISES})
  string(SUBSTRING ${ex} 0 4 tag)  # ex05
  string(SUBSTRING ${ex} 2 2 n)
  string(REGEX REPLACE "^0" "" n ${n})  # 5
  add_test(NAME stub_${tag}_fails
    COMMAND bash ${PROJECT_SOURCE_DIR}/exercises/check_stub.sh
      $<TARGET_FILE:glassllm_exercises_stubs> ${n})
  set_tests_properties(stub_${tag}_fails PROPERTIES LABELS stubs
    ENVIRONMENT "GLASSLLM_LANG=en")
  if(GLASSLLM_HAVE_SOLUTIONS)
    add_test(NAME solution_${tag} COMMAND glassllm_exercises_solutions ${n})
    set_tests_properties(solution_${tag} PROPERTIES LABELS solutions)
  endif()
  if(GLASSLLM_STUDENT_FILES)
    add_test(NAME ${tag} COMMAND glassllm_exercises ${n})
    set_tests_properties(${tag} PROPERTIES LABELS "${tag};exercises")
  endif()
endforeach()
# The solutions with one typical mistake each planted (tests/planted_mistakes.txt):
# every grader must fail them and print the hint that names the mistake.
if(GLASSLLM_HAVE_SOLUTIONS AND GLASSLLM_TESTS)
  set(planted_sources)
  foreach(ex ${GLASSLLM_EXERCISES})
    list(APPEND planted_sources ${PROJECT_BINARY_DIR}/planted/${ex}.cpp)
  endforeach()
  list(TRANSFORM GLASSLLM_EXERCISES PREPEND ${PROJECT_SOURCE_DIR}/exercises/solutions/
    OUTPUT_VARIABLE solution_files)
  list(TRANSFORM solution_files APPEND .cpp)
  add_custom_command(OUTPUT ${planted_sources}
    COMMAND bash ${PROJECT_SOURCE_DIR}/tests/plant_mistakes.sh ${PROJECT_SOURCE_DIR}
      ${PROJECT_BINARY_DIR}/planted
    DEPENDS ${solution_files} ${PROJECT_SOURCE_DIR}/tests/planted_mistakes.txt
      ${PROJECT_SOURCE_DIR}/tests/plant_mistakes.sh
    COMMENT "Planting one mistake in each exercise's solution")
  add_executable(glassllm_exercises_planted $<TARGET_OBJECTS:glassllm_grade_main>
    ${planted_sources})
  target_link_libraries(glassllm_exercises_planted PRIVATE glassllm_grader)
  set_target_properties(glassllm_exercises_planted PROPERTIES
    RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/exercises)
  add_test(NAME planted_mistakes
    COMMAND bash ${PROJECT_SOURCE_DIR}/tests/planted_mistakes.sh ${PROJECT_SOURCE_DIR}
      $<TARGET_FILE:glassllm_exercises_planted>)
  set_tests_properties(planted_mistakes PROPERTIES LABELS solutions)
  # ... and in Brazilian Portuguese (tests/planted_mistakes_pt.txt).
  add_test(NAME planted_mistakes_pt
    COMMAND bash ${PROJECT_SOURCE_DIR}/tests/planted_mistakes.sh ${PROJECT_SOURCE_DIR}
      $<TARGET_FILE:glassllm_exercises_planted> pt)
  set_tests_properties(planted_mistakes_pt PROPERTIES LABELS solutions)
  # Which language the environment chooses (messages.h).
  add_test(NAME grader_language
    COMMAND bash ${PROJECT_SOURCE_DIR}/tests/grader_language.sh
      $<TARGET_FILE:glassllm_exercises_planted> $<TARGET_FILE:glassllm_exercises_stubs>)
  set_tests_properties(grader_language PROPERTIES LABELS solutions)
endif()
