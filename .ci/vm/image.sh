#!/usr/bin/env bash
# image.sh SUITE — builds a Debian guest (trixie or bookworm) for boot.sh:
# systemd as PID 1, pure cgroup v2, a lingering user tu (uid 1000), and a
# service that runs /mnt/host/job.sh once at boot and powers off.
#
# Output, under $VM_DIR/SUITE: rootfs/ (kept, so re-runs are cheap),
# root.img (ext4, booted read-only with snapshot=on), vmlinuz, initrd.img,
# image.env (suite, kernel, systemd). Idempotent: debootstrap runs once; the
# image is rebuilt only when this script or the guest files change.
# Needs root, a Debian mirror (MIRROR, default deb.debian.org) and
# debootstrap, e2fsprogs (mke2fs -d).
set -euo pipefail
SUITE=${1:?usage: image.sh trixie|bookworm}
VM_DIR=${VM_DIR:-/var/tmp/tether-vm-ci}
MIRROR=${MIRROR:-http://deb.debian.org/debian}
HERE=$(cd "$(dirname "$0")" && pwd)
D=$VM_DIR/$SUITE ROOT=$VM_DIR/$SUITE/rootfs

# tmux and python3 are test workloads; strace is for reading failures;
# man-db reads the man pages the release .deb installs (deb.sh).
# No Chromium/node: see the allowlist in skips.txt.
PKGS=systemd,systemd-sysv,systemd-container,udev,dbus,dbus-user-session,libpam-systemd
PKGS+=,linux-image-amd64,initramfs-tools,zstd,kmod,procps,psmisc,iproute2,tmux,python3,strace,man-db

[ "$(id -u)" = 0 ] || { echo "image.sh: must run as root" >&2; exit 1; }
mkdir -p "$D"
if [ ! -e "$ROOT/.debootstrap-done" ]; then
  rm -rf "$ROOT"; mkdir -p "$ROOT"
  echo "image.sh: debootstrap $SUITE from $MIRROR" >&2
  debootstrap --variant=minbase --include="$PKGS" "$SUITE" "$ROOT" "$MIRROR" >"$D/debootstrap.log" 2>&1 ||
    { tail -20 "$D/debootstrap.log" >&2; exit 1; }
  chroot "$ROOT" apt-get clean
  echo "$SUITE" >"$ROOT/.debootstrap-done"
fi

# Packages added to PKGS since a cached rootfs was made, from its mirror.
for p in man-db; do
  chroot "$ROOT" dpkg-query -W -f '${Status}' "$p" 2>/dev/null | grep -q 'ok installed' && continue
  echo "image.sh: $SUITE: installing $p into the cached rootfs" >&2
  cp -L /etc/resolv.conf "$ROOT/etc/resolv.conf"
  { chroot "$ROOT" apt-get update -qq && chroot "$ROOT" apt-get install -y -qq --no-install-recommends "$p"; } >"$D/apt.log" 2>&1 ||
    { tail -20 "$D/apt.log" >&2; exit 1; }
  chroot "$ROOT" apt-get clean
done

# Guest configuration: cheap, re-applied every time.
echo "tether-$SUITE" >"$ROOT/etc/hostname"
printf '127.0.0.1 localhost\n127.0.1.1 tether-%s\n' "$SUITE" >"$ROOT/etc/hosts"
cat >"$ROOT/etc/fstab" <<'EOF'
/dev/vda  /          ext4  rw,noatime  0 1
hostshare /mnt/host  9p    trans=virtio,version=9p2000.L,msize=262144,cache=none,nofail  0 0
EOF
mkdir -p "$ROOT/mnt/host"
printf '9p\n9pnet\n9pnet_virtio\n' >"$ROOT/etc/modules-load.d/9p.conf"
chroot "$ROOT" passwd -d root >/dev/null   # serial console login, for debugging only
chroot "$ROOT" id -u tu >/dev/null 2>&1 || chroot "$ROOT" useradd -m -u 1000 -s /bin/bash tu
mkdir -p "$ROOT/var/lib/systemd/linger" && touch "$ROOT/var/lib/systemd/linger/tu"
install -m 0755 "$HERE/guest/vm-job" "$ROOT/usr/local/sbin/vm-job"
install -m 0644 "$HERE/guest/vm-job.service" "$ROOT/etc/systemd/system/vm-job.service"
ln -sf /etc/systemd/system/vm-job.service "$ROOT/etc/systemd/system/multi-user.target.wants/vm-job.service"
# Fewer units, faster boot under emulation; none of them matters to tether.
for u in apt-daily.timer apt-daily-upgrade.timer e2scrub_all.timer e2scrub_reap.service fstrim.timer \
  dpkg-db-backup.timer systemd-timesyncd.service man-db.timer getty@tty1.service; do
  ln -sf /dev/null "$ROOT/etc/systemd/system/$u"
done

K=$(ls "$ROOT"/boot/vmlinuz-* | sort -V | tail -1) KVER=${K##*/vmlinuz-}
cp -f "$K" "$D/vmlinuz" && cp -f "$ROOT/boot/initrd.img-$KVER" "$D/initrd.img"

STAMP=$(cat "$0" "$HERE/guest/vm-job" "$HERE/guest/vm-job.service" | sha256sum | cut -c1-16)
if [ ! -e "$D/root.img" ] || [ "$(cat "$D/root.img.stamp" 2>/dev/null)" != "$STAMP" ]; then
  rm -f "$D/root.img" "$D/root.img.tmp"
  mke2fs -q -F -t ext4 -L root -d "$ROOT" "$D/root.img.tmp" 4G >"$D/mke2fs.log" 2>&1 ||
    { cat "$D/mke2fs.log" >&2; exit 1; }
  mv "$D/root.img.tmp" "$D/root.img" && echo "$STAMP" >"$D/root.img.stamp"
fi
cat >"$D/image.env" <<EOF
SUITE=$SUITE
KERNEL=$KVER
SYSTEMD=$(chroot "$ROOT" dpkg-query -W -f '${Version}' systemd)
EOF
