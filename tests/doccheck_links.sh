#!/usr/bin/env bash
# doccheck's link check on the small tree in tests/data/doccheck/links/:
# every relative link of README.md and docs/ must name a file that exists
# and, with #anchor, a heading (GitHub's anchor rule) or <a id> of that page.
# Usage: doccheck_links.sh DOCCHECK
set -uo pipefail
doccheck=$1
data="$(cd "$(dirname "$0")" && pwd)/data/doccheck"
source "$(dirname "$0")/lib_cli.sh"

out=$("$doccheck" "$data/links" "$data/build" 2>&1) && fail "broken links passed: $out"
# Here-strings, not pipes: grep -q stops reading at its first match, and
# with pipefail the writer's SIGPIPE would fail the test at random.
grep -qx "doccheck: 12 relative links, 4 broken" <<<"$out" || fail "summary: $out"
for want in \
  "README.md:4: link 'docs/missing.md': no such file" \
  "README.md:4: link 'docs/a.md#no-such-part': no anchor #no-such-part in" \
  "a.md:12: link '#the-third-part': no anchor #the-third-part in" \
  "b.md:3: link '../A.md': no such file"; do
  grep -qF "$want" <<<"$out" || fail "not reported: $want; got: $out"
done
# Links that are fine are not reported: repeated headings (-1), code spans
# in headings, <a id>, a link up and into a subfolder, and no external link.
[ "$(grep -c "link '" <<<"$out")" -eq 4 ] || fail "reported more than 4: $out"
echo "doccheck_links: OK"
