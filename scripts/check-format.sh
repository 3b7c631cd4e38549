#!/usr/bin/env bash
# Fails when a C++ file differs from .clang-format or a viewer file from
# .prettierrc.json (prettier, a devDependency in viewer/package.json).
# With --fix: formats them instead.
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t cpp < <(git ls-files --cached --others --exclude-standard '*.cpp' '*.h')
mapfile -t web < <(git ls-files --cached --others --exclude-standard 'viewer/*.js' 'viewer/*.mjs' 'viewer/*.css' 'viewer/*.html' \
  'tests/viewer/*.mjs' 'tests/tokenizer/*.mjs')
prettier=viewer/node_modules/.bin/prettier
if [ ! -x "$prettier" ]; then
  echo "check-format: $prettier is missing; run: npm ci --prefix viewer" >&2
  exit 1
fi
if [ "${1:-}" = "--fix" ]; then
  clang-format -i "${cpp[@]}"
  "$prettier" --log-level warn --write "${web[@]}"
  exit 0
fi
status=0
clang-format --dry-run -Werror "${cpp[@]}" || status=1
"$prettier" --check --log-level warn "${web[@]}" || status=1
if [ $status -ne 0 ]; then
  echo "check-format: files above are not formatted; run: bash scripts/check-format.sh --fix" >&2
fi
exit $status
