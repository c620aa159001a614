#!/usr/bin/env bash
# boot.sh SUITE DIR — boots the guest image.sh built, with host directory DIR
# shared read-write at /mnt/host; the guest runs DIR/job.sh as root (in
# vm-job.service), its output streams here, and boot.sh exits with its exit
# code. Each boot starts from the pristine image (snapshot=on).
#
# Exit 124: TIMEOUT seconds passed (qemu killed); 125: no result (the
# serial console's tail goes to stderr).
# Environment: VM_DIR, TIMEOUT=3600 (the whole boot), BOOT_TIMEOUT=240 (until
# the job's first output), CPUS=2, MEM=4096.
set -uo pipefail
SUITE=${1:?usage: boot.sh SUITE DIR} DIR=${2:?usage: boot.sh SUITE DIR}
VM_DIR=${VM_DIR:-/var/tmp/tether-vm-ci}
TIMEOUT=${TIMEOUT:-3600} BOOT_TIMEOUT=${BOOT_TIMEOUT:-240} CPUS=${CPUS:-2} MEM=${MEM:-4096}
I=$VM_DIR/$SUITE
die() { echo "boot.sh: $*" >&2; exit 125; }
[ -r "$I/root.img" ] || die "no $I/root.img: run image.sh $SUITE"
[ -r "$DIR/job.sh" ] || die "no $DIR/job.sh"

# KVM only with hardware virtualization: on this project's CI machines
# /dev/kvm is PVM, which cannot run a stock kernel, so TCG it is.
if [ -w /dev/kvm ] && grep -qwE 'vmx|svm' /proc/cpuinfo; then
  ACCEL=(-accel kvm -cpu host)
else
  # TCG_THREAD=single (matrix.sh's retry): every vCPU on one host thread,
  # never truly at once. Multi-threaded TCG sometimes panics the guest
  # kernel with an int3 in update_curr, probably a text-patching race
  # (a static key there flips when cpu.max bandwidth is set or cleared).
  ACCEL=(-accel "tcg,thread=${TCG_THREAD:-multi},tb-size=1024" -cpu max)
fi

rm -f "$DIR/rc" "$DIR/console.log"
: >"$DIR/out.log"
qemu-system-x86_64 -machine q35 "${ACCEL[@]}" -smp "$CPUS" -m "$MEM" \
  -display none -monitor none -serial "file:$DIR/console.log" -no-reboot -nic none \
  -kernel "$I/vmlinuz" -initrd "$I/initrd.img" \
  -append "console=ttyS0 root=/dev/vda rw quiet panic=-1 mitigations=off systemd.unified_cgroup_hierarchy=1" \
  -drive "file=$I/root.img,format=raw,if=virtio,snapshot=on" \
  -virtfs "local,path=$DIR,mount_tag=hostshare,security_model=none,id=hostshare" \
  </dev/null >"$DIR/qemu.log" 2>&1 &
QPID=$!
tail -n +1 -F --pid=$QPID "$DIR/out.log" 2>/dev/null &
TPID=$!
stop() { kill -TERM $QPID 2>/dev/null; sleep 2; kill -KILL $QPID 2>/dev/null; wait $QPID 2>/dev/null; }
trap 'stop; exit 130' INT
trap 'stop; exit 143' TERM

# A guest that has not started its job (no output) within BOOT_TIMEOUT did
# not boot: fail then, not after TIMEOUT.
why=
while kill -0 $QPID 2>/dev/null; do
  [ $SECONDS -lt "$TIMEOUT" ] || { why="TIMEOUT after ${TIMEOUT}s"; break; }
  [ -s "$DIR/out.log" ] || [ $SECONDS -lt "$BOOT_TIMEOUT" ] || { why="no job output after ${BOOT_TIMEOUT}s: no boot"; break; }
  sleep 1
done
if [ -n "$why" ]; then
  stop; wait $TPID 2>/dev/null
  echo "boot.sh: $SUITE: $why; console tail:" >&2
  tail -n 30 "$DIR/console.log" >&2
  exit 124
fi
wait $QPID; wait $TPID 2>/dev/null
[ -s "$DIR/rc" ] || { echo "boot.sh: $SUITE: no result; qemu: $(tail -3 "$DIR/qemu.log")" >&2; tail -n 40 "$DIR/console.log" >&2; exit 125; }
exit "$(cat "$DIR/rc")"
