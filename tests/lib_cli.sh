# lib_cli.sh: what the command-line test scripts (tests/cli_*.sh) share.
# Source it after setting bin=$1:  source "$(dirname "$0")/lib_cli.sh"
# Gives $work, a temporary folder removed on exit, and two checks.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
one_line_error() {  # a command that must fail with one line on stderr containing $1
  local want=$1; shift
  local err status
  err=$("$@" 2>&1 >/dev/null); status=$?
  [ $status -ne 0 ] || fail "exited 0: $*"
  [ "$(printf '%s\n' "$err" | wc -l)" -eq 1 ] || fail "error is not one line: $err"
  printf '%s' "$err" | grep -qF -- "$want" || fail "error '$err' does not contain '$want'"
}
