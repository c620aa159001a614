#!/usr/bin/env python3
"""phases.py: where a tether process's wall time goes, from marks.

A binary built with bench/testdata/issue30-marks.patch applied appends
"NAME NANOSECONDS" (CLOCK_MONOTONIC, one clock for every process) to the
file $TETHER_MARKS at each step. This script spawns the commands, reads
the marks of every process involved and prints the median time between
consecutive marks, from the spawn to the parent's wait returning.

  phases.py cmds N CMD...   each CMD N times, order rotated every round;
                            a CMD is one argument, words split on '|',
                            leading KEY=VALUE words its environment
  phases.py start N BIN...  BIN start --name qR --owner none -- sleep 1000
                            (then BIN stop, timed, outside the start),
                            beside timeout 10 true; a fresh state dir each
  phases.py stop N BIN...   the stop of such a session, with the marks of
                            the stop process and of the supervisor

The order is rotated every round (as bench/alt.py's), so no command runs
twice back to back and each takes every place in turn."""
import collections
import os
import statistics
import subprocess
import sys
import tempfile
import time

MARKS = os.path.join(tempfile.gettempdir(), "tether-phases-%d" % os.getpid())


def marks(files, t0, t1):
    out = []
    for f in files:
        if os.path.exists(f):
            for line in open(f):
                k, v = line.split()
                if t0 <= int(v) <= t1:
                    out.append((k, int(v)))
    return sorted(out, key=lambda kv: kv[1])


def add(res, t0, t1, ms, total):
    seq = [("spawn", t0)] + ms + [("reaped", t1)]
    seen = collections.Counter()
    prev = seq[0]
    for k, v in seq[1:]:
        seen[k] += 1
        key = k if seen[k] == 1 else "%s#%d" % (k, seen[k])
        res[prev[0] + "->" + key].append((v - prev[1]) / 1000)
        prev = (key, v)
    res[total].append((t1 - t0) / 1000)


def clear(*files):
    for f in files:
        if os.path.exists(f):
            os.unlink(f)


def timed(argv, env):
    t0 = time.monotonic_ns()
    subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return t0, time.monotonic_ns()


def show(names, results, n):
    for name, res in zip(names, results):
        print("==", name)
        for k, v in res.items():
            if len(v) >= n // 2:
                print("  %-28s median %8.0f µs  (n=%d)" % (k, statistics.median(v), len(v)))


def cmds(n, args):
    argvs, envs = [], []
    for c in args:
        words, e = c.split("|"), {}
        while "=" in words[0]:
            k, v = words.pop(0).split("=", 1)
            e[k] = v
        argvs.append(words)
        envs.append(e)
    results = [collections.defaultdict(list) for _ in argvs]
    for r in range(n):
        order = [(i + r) % len(argvs) for i in range(len(argvs))]
        for i in order:
            clear(MARKS)
            env = dict(os.environ, TETHER_NO_REAP="1", TETHER_MARKS=MARKS, **envs[i])
            t0, t1 = timed(argvs[i], env)
            add(results[i], t0, t1, marks([MARKS], t0, t1), "TOTAL")
    show([" ".join(a) for a in argvs], results, n)


def sessions(n, bins, which):
    sm, xm = MARKS + "-start", MARKS + "-stop"
    dirs = [tempfile.mkdtemp(prefix="tether-phases-") for _ in bins]
    results = [collections.defaultdict(list) for _ in bins]
    peer = []
    for r in range(n):
        slots = list(range(len(bins))) + ["timeout"]
        order = [slots[(i + r) % len(slots)] for i in range(len(slots))]
        for i in order:
            if i == "timeout":
                t0, t1 = timed(["timeout", "10", "true"], os.environ)
                peer.append((t1 - t0) / 1000)
                continue
            clear(sm, xm)
            env = dict(os.environ, TETHER_NO_REAP="1", XDG_RUNTIME_DIR=dirs[i])
            name = "q%d" % r
            s0, s1 = timed([bins[i], "start", "-q", "--name", name, "--owner", "none", "--", "sleep", "1000"], dict(env, TETHER_MARKS=sm))
            time.sleep(0.05)
            x0, x1 = timed([bins[i], "stop", name], dict(env, TETHER_MARKS=xm))
            time.sleep(0.05)
            if which == "start":
                add(results[i], s0, s1, marks([sm], s0, s1), "TOTAL start")
                results[i]["TOTAL stop"].append((x1 - x0) / 1000)
            else:
                add(results[i], x0, x1, marks([sm, xm], x0, x1), "TOTAL stop")
    show(bins, results, n)
    print("== timeout 10 true median %.0f µs" % statistics.median(peer))


def main():
    mode, n, rest = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
    if mode == "cmds":
        cmds(n, rest)
    elif mode in ("start", "stop"):
        sessions(n, rest, mode)
    else:
        sys.exit(__doc__)
    clear(MARKS, MARKS + "-start", MARKS + "-stop")


if __name__ == "__main__":
    main()
