#!/bin/sh
# A stand-in e2e suite: it leaves a daemon behind (setsid, its own session
# and process group, as dev servers and browsers do) and passes.
setsid sleep 3141.26 >/dev/null 2>&1 </dev/null &
echo "e2e: 3 passed"
