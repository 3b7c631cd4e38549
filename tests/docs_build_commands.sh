#!/usr/bin/env bash
# The build folder is made by CMake with Ninja (scripts/build.sh), where
# `make -C build` stops with "No rule to make target". No page, script or
# exercise may tell a reader to run it: `cmake --build build [--target T]`
# works with every generator.
# Usage: docs_build_commands.sh SOURCE_DIR
set -uo pipefail
source "$(dirname "$0")/lib_cli.sh"

# Prints every FILE:LINE under $1 that runs make in the build folder.
make_lines() {
  grep -rnE --include='*.md' --include='*.sh' --include='*.cpp' --include='*.h' \
    --include='*.txt' --include='*.cmake' 'make +-C +build' \
    "$1/README.md" "$1/docs" "$1/scripts" "$1/exercises" "$1/examples" "$1/cli" "$1/cmake" \
    2>/dev/null
}

# The check finds a planted line (so it can fail) ...
mkdir -p "$work/tree/docs" "$work/tree/scripts"
printf 'Then:\n\n    make -C build glassllm_exercises\n' >"$work/tree/docs/page.md"
[ "$(make_lines "$work/tree")" = "$work/tree/docs/page.md:3:    make -C build glassllm_exercises" ] ||
  fail "the planted 'make -C build' was not found: $(make_lines "$work/tree")"
# ... also in the Portuguese pages, in a folder under docs/ ...
mkdir -p "$work/tree/docs/pt/ensino"
printf 'Depois:\n\n    make -C build glassllm_exercises\n' >"$work/tree/docs/pt/ensino/aula.md"
grep -qxF "$work/tree/docs/pt/ensino/aula.md:3:    make -C build glassllm_exercises" \
  <<<"$(make_lines "$work/tree")" ||
  fail "the planted 'make -C build' in docs/pt/ was not found: $(make_lines "$work/tree")"

# ... and the project has none.
found=$(make_lines "$1")
[ -z "$found" ] || fail "'make -C build' fails with Ninja; write 'cmake --build build [--target T]':
$found"
echo "docs_build_commands: OK"
