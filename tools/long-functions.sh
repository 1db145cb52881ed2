#!/bin/sh
# tools/long-functions.sh [--max N] FILE.c... -- the length of every function
# defined at file scope in the given C files, longest first: "LINES FILE:LINE NAME".
# A line counts from the first line of the function's signature to its closing
# brace. A brace-depth scanner, not a parser: comments, string and character
# literals are blanked first, preprocessor lines are skipped, and a brace that opens
# at depth 0 after a "(" (and no "=", and not struct/union/enum) starts a function.
# With --max N it prints only the functions longer than N lines, and exits 1 if
# there is one (0 otherwise); 2 on a bad argument or a file it cannot read.
set -u
max=
if [ "${1:-}" = --max ]; then
  max=${2:-}
  case $max in ''|*[!0-9]*) echo "long-functions.sh: --max wants a number" >&2; exit 2 ;; esac
  shift 2
fi
[ $# -ge 1 ] || { echo "usage: long-functions.sh [--max N] FILE.c..." >&2; exit 2; }
for f in "$@"; do [ -r "$f" ] || { echo "long-functions.sh: cannot read $f" >&2; exit 2; }; done
out=$(awk '
function blank(s,    out, i, c, n, q) {
  # comments (a /* */ may span lines: incomment), strings, character literals
  out = ""; n = length(s); i = 1
  while (i <= n) {
    c = substr(s, i, 1)
    if (incomment) {
      if (substr(s, i, 2) == "*/") { incomment = 0; i += 2 } else i++
      continue
    }
    if (substr(s, i, 2) == "/*") { incomment = 1; i += 2; out = out " "; continue }
    if (substr(s, i, 2) == "//") break
    if (c == "\"" || c == "\047") {
      q = c; i++
      while (i <= n && substr(s, i, 1) != q) { if (substr(s, i, 1) == "\\") i++; i++ }
      i++; out = out q q; continue
    }
    out = out c; i++
  }
  return out
}
FNR == 1 { depth = 0; incomment = 0; sig = ""; sigline = 0; infn = 0 }
{
  line = blank($0)
  if (!incomment && line ~ /^[ \t]*#/) next
  n = length(line)
  for (i = 1; i <= n; i++) {
    c = substr(line, i, 1)
    if (depth == 0 && c != "{" && c != "}" && c != ";") {
      if (sig == "" && c !~ /[ \t]/) sigline = FNR
      if (sig != "" || c !~ /[ \t]/) sig = sig c
    }
    if (c == "{") {
      if (depth == 0) {
        infn = (sig ~ /\(/ && sig !~ /=/ && sig !~ /(^|[^A-Za-z0-9_])(struct|union|enum|typedef)[^A-Za-z0-9_]/)
        if (infn) {
          name = sig; sub(/\(.*/, "", name); sub(/[ \t*]+$/, "", name); sub(/.*[ \t*]/, "", name)
          start = sigline ? sigline : FNR
        }
      }
      depth++
    } else if (c == "}") {
      depth--
      if (depth == 0) {
        if (infn) printf "%d %s:%d %s\n", FNR - start + 1, FILENAME, start, name
        infn = 0; sig = ""; sigline = 0
      }
    } else if (c == ";" && depth == 0) { sig = ""; sigline = 0 }
  }
  if (depth == 0 && sig != "") sig = sig " "
}' "$@" | sort -rn -k1,1)
if [ -z "$max" ]; then
  [ -n "$out" ] && printf '%s\n' "$out"
  exit 0
fi
long=$(printf '%s\n' "$out" | awk -v m="$max" '$1 > m')
if [ -n "$long" ]; then
  printf '%s\n' "$long"
  echo "long-functions.sh: $(printf '%s\n' "$long" | wc -l) function(s) longer than $max lines" >&2
  exit 1
fi
exit 0
