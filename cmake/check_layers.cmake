# Fails the build when a file includes a header of a layer above its own, or
# another layer's private header. Layers run one way:
#
#      cli, web -> train, trace, reference -> io -> model -> engine -> fast
#
#    A file's layer is its folder: glassllm/<layer>/, include/glassllm/<layer>/,
#    cli/ or web/ (the inspector page's WebAssembly engine). A file may include
#    its own layer and any layer below; train, trace and reference sit side by
#    side and include none of each other, nor do cli and web. The umbrella
#    header glassllm/glassllm.h (every layer) is for programs built on the
#    library.
#
# A layer's public headers are in include/glassllm/<layer>/; a header in
# glassllm/<layer>/ is private to that layer: only the layer's own files may
# include it (another layer uses the public API).
#
# Run as: cmake -DROOT=<source dir> -DSTAMP=<file to touch> -P check_layers.cmake
set(layers fast engine model io train trace reference)
set(rank_fast 0)
set(rank_engine 1)
set(rank_model 2)
set(rank_io 3)
set(rank_train 4)
set(rank_trace 4)
set(rank_reference 4)
set(rank_cli 5)
set(rank_web 5)
list(JOIN layers "|" layer_regex)

file(GLOB_RECURSE files
  ${ROOT}/glassllm/*.cpp ${ROOT}/glassllm/*.h ${ROOT}/include/glassllm/*.h
  ${ROOT}/cli/*.cpp ${ROOT}/cli/*.h ${ROOT}/web/*.cpp ${ROOT}/web/*.h)
set(errors "")
foreach(f ${files})
  file(RELATIVE_PATH rel ${ROOT} ${f})
  if(rel MATCHES "^(include/)?glassllm/(${layer_regex})/")
    set(own ${CMAKE_MATCH_2})
  elseif(rel MATCHES "^(cli|web)/")
    set(own ${CMAKE_MATCH_1})
  else()
    continue()  # the umbrella header
  endif()
  file(STRINGS ${f} includes REGEX "^[ \t]*#[ \t]*include[ \t]+\"")
  foreach(line ${includes})
    string(REGEX REPLACE "^[^\"]*\"([^\"]+)\".*$" "\\1" inc "${line}")
    if(inc MATCHES "^glassllm/(${layer_regex})/")
      set(target ${CMAKE_MATCH_1})
    elseif(inc MATCHES "^(cli|web)/")
      set(target ${CMAKE_MATCH_1})
    elseif(inc STREQUAL "glassllm/glassllm.h")
      set(target cli)  # every layer: only the command line may
    else()
      continue()
    endif()
    if(${rank_${target}} GREATER ${rank_${own}}
       OR (${rank_${target}} EQUAL ${rank_${own}} AND NOT target STREQUAL own))
      string(APPEND errors "  ${rel} (layer ${own}) includes \"${inc}\" (layer ${target})\n")
    elseif(NOT target STREQUAL own AND inc MATCHES "^glassllm/"
           AND EXISTS ${ROOT}/${inc} AND NOT EXISTS ${ROOT}/include/${inc})
      string(APPEND errors "  ${rel} (layer ${own}) includes \"${inc}\", a private header of layer ${target}\n")
    endif()
  endforeach()
endforeach()
if(errors)
  message(FATAL_ERROR "Includes must run one way, cli, web -> train, trace, reference -> io -> model -> engine -> fast, and reach another layer through its public headers (include/glassllm/<layer>/) only:\n${errors}")
endif()
file(TOUCH ${STAMP})
