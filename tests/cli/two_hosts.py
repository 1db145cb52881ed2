#!/usr/bin/env python3
"""two_hosts.py PERIODS SECONDS MAXOFF -- CMD [ARGS...]

Two "hosts" (A and B) whose schedules fire once per period, each at its own random
offset in [0, MAXOFF] s after the period's start: the cron of two hosts whose clocks
or schedulers are skewed (issue 33). Periods start at multiples of SECONDS of the
Unix time (UTC), so that `ldl-run --once-per SECONDS` reads the same period. For
every firing CMD runs with PERIOD (the period's number, 1..PERIODS), HOST (A or B)
and UTC_PERIOD (floor(time / SECONDS)) in its environment; the driver waits for every
CMD at the end. It prints one line per firing: "PERIOD HOST EXIT". Sleeps only place
the firings; nothing here checks a duration.
"""
import os
import random
import subprocess
import sys
import time


def main():
    if len(sys.argv) < 6 or sys.argv[4] != "--":
        sys.exit(__doc__)
    periods, secs, maxoff = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])
    cmd = sys.argv[5:]
    first = (int(time.time() // secs) + 1) * secs
    procs = []
    for i in range(periods):
        start = first + i * secs
        offs = sorted((random.uniform(0, maxoff), h) for h in "AB")
        for off, host in offs:
            delay = start + off - time.time()
            if delay > 0:
                time.sleep(delay)
            env = dict(os.environ, PERIOD=str(i + 1), HOST=host,
                       UTC_PERIOD=str(int(time.time() // secs)))
            procs.append((i + 1, host, subprocess.Popen(cmd, env=env)))
    for period, host, p in procs:
        try:
            rc = p.wait(timeout=60)
        except subprocess.TimeoutExpired:
            p.kill()
            rc = "hung"
        print(period, host, rc, flush=True)


if __name__ == "__main__":
    main()
