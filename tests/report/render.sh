#!/usr/bin/env bash
# render.sh REPORT.md OUT -- draws the Mermaid block of a site report (playbooks/verify.yml) the way
# a browser does: mermaid-cli (this directory's package-lock.json, `npm ci`) driving Debian's
# headless Chromium (/usr/bin/chromium, puppeteer-config.json; puppeteer downloads no browser).
# Writes OUT.mmd, OUT.svg and OUT.png; fails when mermaid-cli reports an error or writes nothing.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
MD=${1:?usage: render.sh REPORT.md OUT}; OUT=${2:?usage: render.sh REPORT.md OUT}
MMDC=$HERE/node_modules/.bin/mmdc
[ -x "$MMDC" ] || { echo "render: $MMDC missing: run scripts/install-deps.sh (npm ci in tests/report)" >&2; exit 1; }
[ -x /usr/bin/chromium ] || { echo "render: /usr/bin/chromium missing: run scripts/install-deps.sh" >&2; exit 1; }
export PUPPETEER_SKIP_DOWNLOAD=1
# Chromium keeps its profile and crash dumps in HOME: a private one per run.
home=$(mktemp -d "${TMPDIR:-/tmp}/dvt-render.XXXXXX"); trap 'rm -rf "$home"' EXIT
export HOME=$home XDG_CONFIG_HOME=$home XDG_CACHE_HOME=$home
mkdir -p "$(dirname "$OUT")"
# The report holds exactly one ```mermaid block.
awk '/^```mermaid$/{on=1; next} on && /^```$/{exit} on' "$MD" > "$OUT.mmd"
[ -s "$OUT.mmd" ] || { echo "render: no mermaid block in $MD" >&2; exit 1; }
for fmt in svg png; do
  rm -f "$OUT.$fmt"
  extra=(); [ "$fmt" = png ] && extra=(--scale 2 --width 1400)
  if ! "$MMDC" --quiet -p "$HERE/puppeteer-config.json" -i "$OUT.mmd" -o "$OUT.$fmt" -b white "${extra[@]}" > "$OUT.$fmt.log" 2>&1; then
    cat "$OUT.$fmt.log" >&2; echo "render: mermaid-cli failed on $OUT.mmd ($fmt)" >&2; exit 1
  fi
  if grep -qi 'error' "$OUT.$fmt.log"; then cat "$OUT.$fmt.log" >&2; echo "render: mermaid-cli reported an error ($fmt)" >&2; exit 1; fi
  [ -s "$OUT.$fmt" ] || { echo "render: $OUT.$fmt is empty" >&2; exit 1; }
done
# Mermaid draws a syntax error as an SVG with "Syntax error in text" instead of failing.
if grep -q 'Syntax error in text\|aria-roledescription="error"' "$OUT.svg"; then
  echo "render: mermaid drew a syntax error for $OUT.mmd" >&2; exit 1
fi
echo "render: $OUT.svg $OUT.png"
