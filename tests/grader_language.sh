#!/usr/bin/env bash
# The graders' language comes from the environment: Brazilian Portuguese when
# GLASSLLM_LANG starts with "pt", or, with it unset, when the locale does
# (LC_ALL, else LC_MESSAGES, else LANG); English otherwise. Each case runs
# with every other variable unset, on exercise 1 with its planted mistake
# (verdict, a check line, the hint) and on the untouched stub of exercise 6.
# Usage: grader_language.sh PLANTED_GRADER STUBS_GRADER
set -u
source "$(dirname "$0")/lib_cli.sh"
planted=$1 stubs=$2
check() {  # check WANT VAR=VALUE...: the graders speak WANT (en or pt)
  local want=$1; shift
  local clean=(env -u GLASSLLM_LANG -u LC_ALL -u LC_MESSAGES -u LANG "$@")
  local out stub
  out=$("${clean[@]}" "$planted" 1 2>&1)
  stub=$("${clean[@]}" "$stubs" 6 2>&1)
  if [ "$want" = pt ]; then
    grep -qx "Exercício 1: backward elemento a elemento (mul, exp, silu)" <<<"$out" ||
      fail "$*: no Portuguese title: $out"
    grep -qx "Exercício 1 (ex01_elementwise): FALHOU" <<<"$out" ||
      fail "$*: no Portuguese verdict: $out"
    grep -q "^  forward: my_mul == mul  *dif. máx. 0.0e+00 (tol 1e-12)  OK$" <<<"$out" ||
      fail "$*: no Portuguese check line: $out"
    grep -q "  ERRO$" <<<"$out" || fail "$*: no failed check in Portuguese: $out"
    grep -qF "  dica: mul: da é dout * b e db é dout * a" <<<"$out" ||
      fail "$*: no Portuguese hint: $out"
    grep -qx "  Exercício 6: não implementado (complete os TODOs de ex06_repeat_kv.cpp)" \
      <<<"$stub" || fail "$*: stub not in Portuguese: $stub"
    ! grep -qE "PASS|FAIL|hint:|Exercise" <<<"$out$stub" || fail "$*: English left: $out$stub"
  else
    grep -qx "Exercise 1: elementwise backward (mul, exp, silu)" <<<"$out" ||
      fail "$*: no English title: $out"
    grep -qx "Exercise 1 (ex01_elementwise): FAIL" <<<"$out" ||
      fail "$*: no English verdict: $out"
    grep -q "^  forward: my_mul == mul  *max diff 0.0e+00 (tol 1e-12)  PASS$" <<<"$out" ||
      fail "$*: no English check line: $out"
    grep -qF "  hint: mul: da is dout * b and db is dout * a" <<<"$out" ||
      fail "$*: no English hint: $out"
    grep -qx "  Exercise 6: not implemented (fill in the TODOs of ex06_repeat_kv.cpp)" \
      <<<"$stub" || fail "$*: stub not in English: $stub"
    ! grep -qE "ERRO|dica|Exercício" <<<"$out$stub" || fail "$*: Portuguese in: $out$stub"
  fi
}
check pt GLASSLLM_LANG=pt
check pt GLASSLLM_LANG=pt_BR LANG=C
check pt LANG=pt_BR.UTF-8
check pt LANG=pt_PT.UTF-8
check pt LC_ALL=pt_BR.UTF-8 LANG=C
check pt LC_MESSAGES=pt_BR.UTF-8 LANG=en_US.UTF-8
check en
check en LANG=C
check en LANG=en_US.UTF-8
check en GLASSLLM_LANG=en LANG=pt_BR.UTF-8
check en GLASSLLM_LANG=en LC_ALL=pt_BR.UTF-8
check en LC_ALL=C LANG=pt_BR.UTF-8
# Bad usage is said in the grader's language too.
out=$(env -u LC_ALL -u LC_MESSAGES GLASSLLM_LANG=pt "$stubs" 11 2>&1) && fail "11 accepted: $out"
grep -q "^uso: .* N | all | list   (N de 1 a 10)$" <<<"$out" || fail "usage in Portuguese: $out"
echo "grader_language: all passed"
