#!/usr/bin/env bash
# Loop-mounted filesystems for the test matrix (tests/CMakeLists.txt runs it
# as CTest fixtures around the "ext4:", "xfs:" and "btrfs:" tests).
#
#   test-filesystems.sh setup FS ROOT    makes ROOT/FS/image (sparse), makes FS
#                                        on it and mounts it on ROOT/FS/mnt
#   test-filesystems.sh cleanup FS ROOT  unmounts ROOT/FS/mnt (the loop device
#                                        goes with it) and deletes the image
#
# FS is ext4, xfs (with reflink) or btrfs. When this machine cannot do it (not
# root, no mkfs.FS, no loop device, no kernel support), setup writes the
# reason to ROOT/FS/skipped, prints "skipped: ..." and exits 0: the tests then
# find no FS mounted, print that reason and are reported skipped, not passed.
# A setup that goes wrong otherwise exits 1. Cleanup always exits 0 once the
# mount is gone, also after failed tests; setup first undoes a mount a killed
# earlier run left behind.
set -euo pipefail

usage() { echo "usage: $0 setup|cleanup ext4|xfs|btrfs ROOT" >&2; exit 2; }
(($# == 3)) || usage
action=$1 fs=$2 root=$3
dir=${root}/${fs}
image=${dir}/image
mnt=${dir}/mnt
skipped=${dir}/skipped

# Sizes: room for two tests at a time (ctest -j2) with the largest store
# in the matrix (test_open_recovery.cc: two 64 MiB regions of three slots,
# 390 MiB, all written at create) and then some, since a full btrfs turns a
# mapped write into SIGBUS; above each mkfs's minimum (mkfs.xfs refuses less
# than 300 MiB outside fstests). Sparse: they cost what the tests write.
case ${fs} in
  ext4) size=2G mkfs=(mkfs.ext4 -q -F -b 4096 -m 0) ;;
  xfs) size=2G mkfs=(mkfs.xfs -q -f -m reflink=1) ;;
  btrfs) size=2G mkfs=(mkfs.btrfs -q -f) ;;
  *) usage ;;
esac

unmount() {
  if mountpoint -q "${mnt}" 2>/dev/null; then
    umount "${mnt}" 2>/dev/null || umount -l "${mnt}"
  fi
}

skip() {
  echo "skipped: ${fs}: $*" | tee "${skipped}"
  exit 0
}

case ${action} in
  cleanup)
    unmount
    rm -f "${image}"
    echo "${fs}: unmounted ${mnt}"
    exit 0
    ;;
  setup) ;;
  *) usage ;;
esac

mkdir -p "${mnt}"
rm -f "${skipped}"
unmount
rm -f "${image}"
[[ $(id -u) -eq 0 ]] || skip "loop-mounting an image needs root"
command -v "${mkfs[0]}" >/dev/null || skip "${mkfs[0]} is missing (scripts/deps.sh installs it)"
truncate -s "${size}" "${image}"
if ! output=$("${mkfs[@]}" "${image}" 2>&1); then
  skip "${mkfs[*]} failed: ${output}"
fi
if ! output=$(mount -o loop -t "${fs}" "${image}" "${mnt}" 2>&1); then
  unmount
  skip "cannot loop-mount a ${fs} image here: ${output}"
fi
# World-writable like /tmp: the permission tests run regionctl without
# capabilities.
chmod 1777 "${mnt}"
mountpoint -q "${mnt}" || { echo "${fs}: ${mnt} is not a mount point after mount" >&2; exit 1; }
echo "${fs}: mounted ${image} on ${mnt} ($(stat -f -c %T "${mnt}"))"
