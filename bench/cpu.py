#!/usr/bin/env python3
"""cpu.py N CMD... : run each command N times alternating, each with its
own XDG_RUNTIME_DIR; report mean CPU (user+sys, wait4) per run, the CPU
of that dir's tether watcher per run, and mean wall time. Leading
KEY=VALUE words set a command's environment. Each dir is
/tmp/xdgb/<index> (mode 0700); its watcher lingers 600 s and is
terminated at the end."""
import os, sys, time, subprocess
n = int(sys.argv[1]); cmds = [c.split("|") for c in sys.argv[2:]]
dirs = []
for i in range(len(cmds)):
    d = "/tmp/xdgb/%d" % i; os.makedirs(d, mode=0o700, exist_ok=True); dirs.append(d)
def watcher(d):
    want = ("TETHER_WATCH_SERVE=%s/tether" % d).encode()
    t = 0; pids = []
    for p in os.listdir("/proc"):
        if not p.isdigit(): continue
        try:
            if not open("/proc/%s/cmdline"%p,"rb").read().startswith(b"tether-watch"): continue
            if want not in open("/proc/%s/environ"%p,"rb").read().split(b"\0"): continue
            f = open("/proc/%s/stat"%p).read().rsplit(")",1)[1].split()
            t += int(f[11]) + int(f[12]); pids.append(int(p))
        except OSError: pass
    return t / os.sysconf("SC_CLK_TCK"), pids
cpu=[0.0]*len(cmds); wall=[0.0]*len(cmds); w0=[None]*len(cmds)
for r in range(n):
    order = range(len(cmds)) if r % 2 == 0 else reversed(range(len(cmds)))
    for i in order:
        env = dict(os.environ, TETHER_NO_REAP="1", XDG_RUNTIME_DIR=dirs[i], TETHER_WATCH_LINGER="600s")
        argv = list(cmds[i])
        while "=" in argv[0]:
            k, v = argv.pop(0).split("=", 1); env[k] = v
        t = time.perf_counter()
        pid = os.posix_spawnp(argv[0], argv, env)
        _, st, ru = os.wait4(pid, 0)
        wall[i] += time.perf_counter() - t
        cpu[i] += ru.ru_utime + ru.ru_stime
        if r == 0: w0[i] = watcher(dirs[i])[0]
for i, c in enumerate(cmds):
    wc, pids = watcher(dirs[i])
    print("%-44s cpu %6.3f ms  watcher %6.3f ms  wall %6.3f ms" % (" ".join(c)[:44], cpu[i]/n*1000, (wc-w0[i])/(n-1)*1000, wall[i]/n*1000))
    for p in pids: os.kill(p, 15)
