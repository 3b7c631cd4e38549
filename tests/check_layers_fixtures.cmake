# The layer check (cmake/check_layers.cmake) on small trees written here:
# each must pass or fail as its comment says, failing with the line that
# names the include. Run as:
#   cmake -DCHECKER=<check_layers.cmake> -DWORK=<scratch folder> -P check_layers_fixtures.cmake

# Writes the files of a tree under ${WORK}/<name>: pairs of a path and the
# header it includes ("-" for none).
function(write_tree name)
  file(REMOVE_RECURSE ${WORK}/${name})
  set(args ${ARGN})
  list(LENGTH args n)
  math(EXPR last "${n} - 1")
  foreach(i RANGE 0 ${last} 2)
    math(EXPR j "${i} + 1")
    list(GET args ${i} path)
    list(GET args ${j} inc)
    if(inc STREQUAL "-")
      file(WRITE ${WORK}/${name}/${path} "// ${path}\n")
    else()
      file(WRITE ${WORK}/${name}/${path} "// ${path}\n#include \"${inc}\"\n")
    endif()
  endforeach()
endfunction()

set(failures "")

# Runs the checker on tree `name`; `expect` is "" for a pass, else a
# regular expression its error must match.
function(check name expect)
  execute_process(
    COMMAND ${CMAKE_COMMAND} -DROOT=${WORK}/${name} -DSTAMP=${WORK}/${name}.ok -P ${CHECKER}
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(expect STREQUAL "")
    if(NOT rc EQUAL 0)
      set(failures "${failures}${name}: expected to pass, failed:\n${err}\n" PARENT_SCOPE)
    endif()
  elseif(rc EQUAL 0)
    set(failures "${failures}${name}: expected to fail, passed\n" PARENT_SCOPE)
  elseif(NOT err MATCHES "${expect}")
    set(failures "${failures}${name}: failed without \"${expect}\":\n${err}\n" PARENT_SCOPE)
  endif()
endfunction()

# Allowed: a layer includes its own private header, and another layer's
# public one.
write_tree(allowed
  glassllm/engine/node.h -
  include/glassllm/engine/tensor.h -
  glassllm/engine/ops.cpp glassllm/engine/node.h
  glassllm/io/reader.cpp glassllm/engine/tensor.h)
check(allowed "")

# Another layer's private header, from above: refused by name.
write_tree(private_header
  glassllm/engine/node.h -
  glassllm/io/reader.cpp glassllm/engine/node.h)
check(private_header
  "glassllm/io/reader.cpp \\(layer io\\) includes \"glassllm/engine/node.h\", a private header of layer engine")

# The same from a public header of the layer above.
write_tree(private_from_public
  glassllm/fast/pool.h -
  include/glassllm/engine/ops.h glassllm/fast/pool.h)
check(private_from_public
  "include/glassllm/engine/ops.h \\(layer engine\\) includes \"glassllm/fast/pool.h\", a private header of layer fast")

# A header of a layer above, public or not: refused as before.
write_tree(upward
  include/glassllm/io/reader.h -
  glassllm/engine/ops.cpp glassllm/io/reader.h)
check(upward "glassllm/engine/ops.cpp \\(layer engine\\) includes \"glassllm/io/reader.h\" \\(layer io\\)")

if(failures)
  message(FATAL_ERROR "check_layers.cmake on its fixtures:\n${failures}")
endif()
message(STATUS "check_layers.cmake: 4 fixtures as expected")
