# pg3_loop.py none|default -- 12 fenced transactions on ONE psycopg 3 connection (a
# long-running job), with prepare_threshold=None (the recipe's setting) or psycopg's
# default (prepare after 5 runs). Prints one line per failed run and "ok N".
# recipes_test.sh runs it behind pgbouncer in transaction pooling.
import sys
import psycopg

FENCE = """INSERT INTO public.ldl_lease_fence AS f (resource, fence) VALUES (%s, %s)
ON CONFLICT (resource) DO UPDATE SET fence = EXCLUDED.fence
WHERE f.fence OPERATOR(pg_catalog.<=) EXCLUDED.fence
RETURNING f.fence"""

if sys.argv[1] == "none":
    conn = psycopg.connect("", prepare_threshold=None)
else:
    conn = psycopg.connect("")
ok = 0
for i in range(1, 13):
    try:
        with conn.transaction():
            if conn.execute(FENCE, ("loop", i)).fetchone() is not None:
                ok += 1
    except psycopg.Error as e:
        print("run %d: %s" % (i, type(e).__name__))
print("ok %d" % ok)
