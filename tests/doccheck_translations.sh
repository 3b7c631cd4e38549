#!/usr/bin/env bash
# doccheck's check of the Portuguese edition (tools/doccheck_translations.cpp):
# every page of docs/pt/ starts with an "In English: " link to its English
# page, and that page starts with an "Em português: " link back; a page
# missing either link, on either side, is named and doccheck fails.
# Usage: doccheck_translations.sh DOCCHECK
set -uo pipefail
doccheck=$1
data="$(cd "$(dirname "$0")" && pwd)/data/doccheck"
source "$(dirname "$0")/lib_cli.sh"

# A tree where both pages link to each other (and the contents page links to
# two Portuguese pages, each of which links back to it).
page() { mkdir -p "$(dirname "$1")"; printf '%s\n' "${@:2}" >"$1"; }
tree=$work/good
page "$tree/docs/a.md" "# A" "" "Em português: [A em português](pt/a.md)" "" "Text."
page "$tree/docs/pt/a.md" "# A" "" "In English: [A](../a.md)" "" "Texto."
page "$tree/docs/README.md" "# Contents" "" \
  "Em português: [o GlassLM](pt/README.md), [glossário](pt/glossario.md)"
page "$tree/docs/pt/README.md" "# GlassLM" "" "In English: [contents](../README.md)"
page "$tree/docs/pt/glossario.md" "# Glossário" "" "In English: [contents](../README.md)"
page "$tree/docs/other.md" "# Not translated" "" "No link either way."
out=$("$doccheck" "$tree" "$data/build" 2>&1) || fail "linked pages failed: $out"
grep -qx "doccheck: 6 translated pages and links, 0 without their partner's link" <<<"$out" ||
  fail "summary: $out"

# Each broken pair fails and is named, one line each.
cp -r "$tree" "$work/bad"
bad=$work/bad
sed -i '/^Em português/d' "$bad/docs/a.md"                  # no link back to pt/a.md
sed -i 's/^In English: .*/In English: see above/' "$bad/docs/pt/glossario.md"  # no link
page "$bad/docs/pt/b.md" "# B" "" "Texto sem ligação."      # no line at all
page "$bad/docs/c.md" "# C" "Em português: [C](pt/c.md)"    # pt/c.md links elsewhere
page "$bad/docs/pt/c.md" "# C" "In English: [A](../a.md)"
out=$("$doccheck" "$bad" "$data/build" 2>&1) && fail "broken pairs passed: $out"
for want in \
  "docs/a.md: links from page $bad/docs/pt/a.md with 'In English: ' but its first 5 lines have no 'Em português: [...](...)' link back to it" \
  "docs/pt/glossario.md: no 'In English: [...](...)' line in its first 5 lines linking to its English page" \
  "docs/pt/b.md: no 'In English: [...](...)' line in its first 5 lines linking to its English page" \
  "docs/pt/c.md: 'In English: ' does not link back to $bad/docs/c.md, which links to it with 'Em português: '" \
  "docs/a.md: links from page $bad/docs/pt/c.md with 'In English: ' but" \
  "docs/pt/glossario.md: 'In English: ' does not link back to $bad/docs/README.md"; do
  grep -qF "$want" <<<"$out" || fail "not reported: $want; got: $out"
done
grep -qx "doccheck: 8 translated pages and links, 6 without their partner's link" <<<"$out" ||
  fail "summary of the broken tree: $out"

# A tree without docs/pt/ has nothing to pair and says nothing about it.
out=$("$doccheck" "$data/pass" "$data/build" 2>&1) || fail "pass page: $out"
grep -q "translated" <<<"$out" && fail "a tree without docs/pt/ reported translations: $out"
echo "doccheck_translations: OK"
