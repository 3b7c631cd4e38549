#!/usr/bin/env bash
# A grader copied along with its tree (build folder and all) refuses to grade
# and prints the commands that configure the copy: its build folder would
# otherwise compile the original tree's exercises/student/.
# $1: a grader binary (BUILD/exercises/glassllm_exercises_stubs).
set -u
source "$(dirname "$0")/lib_cli.sh"
mkdir -p "$work/copy/build/exercises"
cp "$1" "$work/copy/build/exercises/"
out=$("$work/copy/build/exercises/$(basename "$1")" 6 2>&1)
status=$?
[ $status -eq 2 ] || fail "exit status $status, expected 2: $out"
echo "$out" | grep -qF "but it runs from $work/copy/build." || fail "where it runs: $out"
echo "$out" | grep -qF "cmake -S $work/copy -B $work/copy/build -DCMAKE_BUILD_TYPE=Release" \
  || fail "no reconfigure command: $out"
echo "$out" | grep -qF "cmake --build $work/copy/build --target glassllm_exercises" \
  || fail "no build command: $out"
# In its own build folder the same program grades (the stub: not implemented).
out=$("$1" 6 2>&1)
echo "$out" | grep -q "Exercise 6: not implemented" || fail "in place: $out"
echo "grader_copied_tree: all passed"
