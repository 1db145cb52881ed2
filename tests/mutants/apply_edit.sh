# tests/mutants/apply_edit.sh -- sourced by run.sh (the core header's mutants) and
# adapters.sh (the adapters'): one edit of a mutant list, applied to a copy.
# apply one edit: $1 = file (rewritten in place); MUT_SEARCH / MUT_REPLACE in env
apply_edit() {
    awk 'BEGIN { s = ENVIRON["MUT_SEARCH"]; r = ENVIRON["MUT_REPLACE"];
                 gsub(/\\n/, "\n", s); gsub(/\\n/, "\n", r) }
         { buf = (NR == 1) ? $0 : buf "\n" $0 }
         END { if (s == "") { print "empty search string" > "/dev/stderr"; exit 3 }
               n = 0; rest = buf; out = "";
               while ((p = index(rest, s)) > 0) {
                   n++; out = out substr(rest, 1, p - 1) r; rest = substr(rest, p + length(s)) }
               if (n != 1) { print "search string matched " n " times (must be exactly 1)" > "/dev/stderr"; exit 3 }
               print out rest }' "$1" > "$1.new" && mv "$1.new" "$1"
}
