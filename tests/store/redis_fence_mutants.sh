#!/bin/sh
# tests/store/redis_fence_mutants.sh -- mutation controls of the fenced writes (issue 19):
# each mutant breaks one rule of adapters/lite_di_lock_redis.h or _cluster.h in a temp copy
# of the tree, builds the suite that should notice (tests/store/redis_fence.c or
# redis_fence_cluster.c) and runs it against real servers. A mutant must turn its suite
# red; one that passes is a hole in the tests. A mutated script gets its SHA recomputed
# in the copy, so only a behaviour check can kill it (never the SHA check alone).
# Run: make mutants-fence-redis (a few minutes; not part of make test).
set -u
root=$(pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/ldl-fence-mut.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT TERM
killed=0; survived=0

# mutant NAME FILE SUITE OLD NEW
mutant() {
  name=$1; file=$2; suite=$3; old=$4; new=$5
  d="$work/$name"
  mkdir -p "$d/adapters" "$d/tests"
  cp "$root/lite_di_lock.h" "$d/"; cp "$root"/adapters/*.h "$d/adapters/"; cp -r "$root/tests/store" "$d/tests/"
  if ! python3 - "$d/adapters/$file" "$old" "$new" <<'PY'
import hashlib, re, sys
p, old, new = sys.argv[1:4]
s = open(p).read()
if s.count(old) != 1:
    sys.exit("mutation site not found exactly once: " + old)
s = s.replace(old, new)
m = re.search(r'static const char ldl__redis_fence_lua\[\] =(.*?);\n', s, re.S)
if m:
    text = ''.join(re.findall(r'"((?:[^"\\]|\\.)*)"', m.group(1))).encode().decode('unicode_escape')
    sha = hashlib.sha1(text.encode()).hexdigest()
    s = re.sub(r'(static const char ldl__redis_fence_sha\[\] = ")[0-9a-f]{40}(";)', r'\g<1>' + sha + r'\g<2>', s)
open(p, 'w').write(s)
PY
  then echo "$name: ERROR (mutation not applied)"; survived=$((survived + 1)); return; fi
  wrap=tests/store/with_redis.sh
  [ "$suite" = redis_fence_cluster ] && wrap=tests/store/with_redis_cluster.sh
  if ! ${CC:-cc} -std=c99 -O1 -w -I"$d" "$d/tests/store/$suite.c" -lhiredis -o "$d/t" 2>"$d/build.log"; then
    echo "$name: killed (does not build)"; killed=$((killed + 1)); return
  fi
  if "$root/$wrap" "$d/t" >"$d/out" 2>&1; then
    echo "$name: SURVIVED ($(tail -1 "$d/out"))"; survived=$((survived + 1))
  else
    echo "$name: killed ($(grep -c '^FAIL' "$d/out") checks failed; $(grep -m1 '^FAIL' "$d/out" | cut -c1-150))"
    killed=$((killed + 1))
  fi
}

R=lite_di_lock_redis.h
C=lite_di_lock_redis_cluster.h
mutant mark-first $R redis_fence \
  '"local r = redis.pcall(unpack(ARGV, 3))\n"' \
  '"if m ~= f then redis.call('"'"'SET'"'"', KEYS[1], f) end\n" "local r = redis.pcall(unpack(ARGV, 3))\n"'
mutant call-not-pcall $R redis_fence 'redis.pcall(unpack(ARGV, 3))' 'redis.call(unpack(ARGV, 3))'
mutant equal-refused $R redis_fence '(#m == #f and m > f)' '(#m == #f and m >= f)'
mutant double-compare $R redis_fence 'if #m > #f or (#m == #f and m > f) then' 'if tonumber(m) > tonumber(f) then'
mutant no-mark-check $R redis_fence \
  "if #m > 19 or not string.match(m, '^[1-9][0-9]*\$') or (#m == 19 and m > '9223372036854775807') then" \
  'if false then'
mutant no-acl-check $R redis_fence \
  "if m ~= f and redis.acl_check_cmd and not redis.acl_check_cmd('SET', KEYS[1], f) then" 'if false then'
mutant no-nonce $R redis_fence \
  'memcmp(rep->element[0]->str, want, 16) != 0) return LDL__REDIS_OOS;
    v = rep->element[1];
    if (v->type != REDIS_REPLY_INTEGER) return LDL_ESTORE;' \
  '0) return LDL__REDIS_OOS;
    v = rep->element[1];
    if (v->type != REDIS_REPLY_INTEGER) return LDL_ESTORE;'
mutant stale-is-error $R redis_fence 'return v->integer == 0 ? 0 : LDL_ESTORE;' 'return v->integer == 0 ? LDL_ESTORE : 0;'
mutant mark-may-be-key $R redis_fence 'if (lens[i] == mlen && memcmp(argv[i], mark, mlen) == 0) {' 'if (0) {'
mutant no-eval-first $R redis_fence 'q->_eval = ra->_fx_gen != ra->_stats.link_failures + 1;' 'q->_eval = 0;'
mutant noscript-resent $R redis_fence 'ra->_fx_gen = 0;
            ra->_stats.noscript++;' 'ra->_fx_gen = 0;
            ra->_stats.noscript++;
            ldl__redis_fifo_pop(ra); q->_eval = 1;
            if (ldl__redis_fx_queue(ra, i) == 0) return 0;'
mutant fail-forgets-fence $R redis_fence \
  'if (q->_kind == LDL__REDIS_FENCE) { ldl__redis_fence_end(ra, i, LDL_ESTORE, NULL); n++; continue; }' \
  'if (q->_kind == LDL__REDIS_FENCE) { ldl__redis_req_free(ra, i); continue; }'
mutant no-slot-check $C redis_fence_cluster '        if (ks != slot) {' '        if (0 && ks != slot) {'
mutant asking-once $R redis_fence_cluster \
  '        if (r->_asking && ldl__redis_asking(r) != 0) break;       /* Cluster view under ASK */' \
  '        if (!eval && r->_asking && ldl__redis_asking(r) != 0) break;'
# issue 37 item 3: the documented 16-element bound on reply arrays, raised to 1,024: the
# fenced LRANGE of 17 (real server) and the hostile *17 must notice, in both headers' views
mutant array-1024 $R redis_reply_bounds '#define LDL__REDIS_ARRAY_MAX  16' '#define LDL__REDIS_ARRAY_MAX  1024'
mutant array-1024-cluster $R redis_fence_cluster '#define LDL__REDIS_ARRAY_MAX  16' '#define LDL__REDIS_ARRAY_MAX  1024'
# issue 31: the default object budget of one reply (the reply tree)
mutant no-reply-budget $R redis_reply_bounds 'r->_left = own ? r->_lim->objects : LDL_REDIS_REPLY_OBJECTS;' \
  'r->_left = own ? r->_lim->objects : 2147483647L; r->_bleft = (size_t)-1; if (0)'
# issue 31: the non-blocking Cluster view's fenced write reads the map again after a MOVED,
# and a write still queued at free gets its completion
mutant async-no-remap $C redis_fence_cluster '        fx.ra->_m._stale = 1;
        fx.ra->_want = fx.ra->_gen + 1;' '        (void)0;'
mutant async-free-silent $C redis_fence_cluster '        if (ra->_m._n[i]._c && ra->_m._n[i]._reqs) ldl_redis_async_drop(&ra->_m._n[i]._ra);' '        ;'
# the Cluster's durability report asks every master, not only the first
mutant durability-first-only $C redis_fence_cluster '        if (!m->_n[i]._master) continue;
        masters++;' '        if (!m->_n[i]._master || masters) continue;
        masters++;'
echo "fence mutants: $killed killed, $survived survived"
[ "$survived" = 0 ]
