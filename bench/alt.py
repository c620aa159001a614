#!/usr/bin/env python3
"""alt.py N CMD... : run each command N times, rotating their order
every round (0 1 2, 1 2 0, 2 0 1), and print the median and minimum wall
time of each. No command runs twice back to back and each takes every
place in turn: reversing the order, as this did before issue 30, ran the
first and last twice in a row and the middle never, and the middle one
measured 0.3-0.7 ms slower. A command is one argument with its words separated by '|'; leading
KEY=VALUE words set its environment (XDG_RUNTIME_DIR=/tmp/a|tether|...)."""
import os
import statistics
import subprocess
import sys
import time

n = int(sys.argv[1])
cmds = [c.split("|") for c in sys.argv[2:]]
envs = []
for c in cmds:
    e = {}
    while "=" in c[0]:
        k, v = c.pop(0).split("=", 1)
        e[k] = v
    envs.append(e)
times = [[] for _ in cmds]
env = dict(os.environ, TETHER_NO_REAP="1")
for r in range(n):
    order = [(i + r) % len(cmds) for i in range(len(cmds))]
    for i in order:
        t = time.perf_counter()
        subprocess.run(cmds[i], env=dict(env, **envs[i]), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times[i].append(time.perf_counter() - t)
for c, e, ts in zip(cmds, envs, times):
    c = ["%s=%s" % kv for kv in e.items() if kv[0] != "XDG_RUNTIME_DIR"] + c
    print("%-64s median %8.2f ms  min %8.2f ms" % (" ".join(c)[:64], statistics.median(ts) * 1000, min(ts) * 1000))
