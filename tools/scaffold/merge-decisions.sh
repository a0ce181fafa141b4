#!/usr/bin/env bash
# Appends docs/decisions/<file>.md to docs/decisions.md as a section (headings demoted), then removes it.
set -euo pipefail
for f in "$@"; do
  { echo; sed -e '1s/^# /## /' -e '2,$s/^## /### /' "$f"; } >> docs/decisions.md
  rm "$f"
done
