# Guest half of bench/vm-scope.sh: start to exit of `tether run -- true`
# with and without a systemd scope, beside systemd-run --scope, as root in
# a plain service and as the lingering user tu in a user-manager service.
set -u
N=${N:-40}
install -m 755 /mnt/host/tether /usr/local/bin/tether
install -m 644 /mnt/host/alt.py /tmp/alt.py
U=tu; loginctl enable-linger $U; systemctl start user@$(id -u $U).service
mkdir -p /sys/fs/cgroup/tbench
echo "== root in $(cut -d: -f3 /proc/self/cgroup) (not delegated), N=$N"
python3 /tmp/alt.py "$N" "tether|run|-q|--|true" "tether|run|-q|--cgroup-parent|/sys/fs/cgroup/tbench|--|true" \
  "systemd-run|--scope|-q|true" "tether|run|-q|--mechanism|fallback|--|true"
echo "== user $U in a transient service of its user manager (not delegated), N=$N"
systemd-run --machine=$U@ --user --pipe --wait --quiet --expand-environment=no \
  python3 /tmp/alt.py "$N" "tether|run|-q|--|true" "systemd-run|--user|--scope|-q|true" "tether|run|-q|--mechanism|fallback|--|true"
rmdir /sys/fs/cgroup/tbench
