#!/usr/bin/env bash
# The real-kernel crash run: each workload (tests/crashvm/plan.cc) runs in a
# QEMU guest (Debian's kernel, software emulation) on ext4, XFS or btrfs, with the
# data disk behind QEMU's blklogwrites driver, which records every write
# and flush the guest's kernel sends. Then, on the host, disk images of the
# crash states that log allows (tests/crashvm/crash_states.h) are mounted
# (journal replayed, as a reboot would) and checked with the library
# (tests/crashvm/check_main.cc). docs/CRASH-VM.md explains it all.
#
#   scripts/crash-vm.sh [--long] [--build DIR] [--keep]
#     --long      about ten times the crash states (CI runs without it)
#     --build DIR the build tree with crashvm_guest, crashvm_check,
#                 crashvm_replay and regionctl (default build/release; built
#                 if missing)
#     --keep      keep the work directory (DIR/crashvm/runs) even on success
#     --only LABEL  run one workload only, e.g. commits-xfs (for debugging:
#                 a run without the negative controls cannot pass)
#     --jobs N    workloads run N at a time (default: 2 on two or more
#                 cores; each guest is one emulated CPU); their reports are
#                 printed lane by lane when all are done
#   scripts/crash-vm.sh --state RUN_DIR ID
#     rebuilds crash state ID of a kept run and mounts it at RUN_DIR/mnt,
#     for a look by hand (the run's seed and budget are in RUN_DIR/run.env).
#
# Seeds: CRASHVM_SEED=N fixes the seed of every workload (default: random,
# printed). Needs root (loop devices, mounts). The last line is
#   crash-vm: W workloads, S crash states, V violations, negative control caught: yes|no
# and the exit status is non-zero on a violation, a missed negative control
# or an error.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$(pwd)

long=0
keep=0
build=build/release
state_run=""
state_id=""
only=""
jobs=$(( $(nproc) >= 2 ? 2 : 1 ))
while (($#)); do
  case $1 in
    --long) long=1 ;;
    --keep) keep=1 ;;
    --only) only=$2; shift ;;
    --jobs) jobs=$2; shift ;;
    --build) build=$2; shift ;;
    --state) state_run=$2; state_id=$3; shift 2 ;;
    *) echo "crash-vm: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
build=$(cd "${build}" 2>/dev/null && pwd || echo "${root}/${build}")
[[ ${jobs} =~ ^[1-9][0-9]*$ ]] || { echo "crash-vm: --jobs wants a positive number, not '${jobs}'" >&2; exit 2; }

fail() {
  echo "crash-vm: error: $*" >&2
  echo "crash-vm: 0 workloads, 0 crash states, 0 violations, negative control caught: no"
  exit 1
}
[[ $(id -u) -eq 0 ]] || fail "needs root (loop devices and mounts)"

replay=${build}/tests/crashvm/crashvm_replay
check=${build}/tests/crashvm/crashvm_check
guest=${build}/tests/crashvm/crashvm_guest
regionctl=${build}/tools/regionctl/regionctl

mounted=()
attached=()
cleanup() {
  local m d
  for m in "${mounted[@]}"; do umount "${m}" 2>/dev/null || true; done
  for d in "${attached[@]}"; do losetup -d "${d}" 2>/dev/null || true; done
}
trap cleanup EXIT

# Removes ITEM from the array named NAME (exact matches only: /dev/loop1
# is not a part of /dev/loop10).
forget() {
  local -n list=$1
  local item=$2 kept=() entry
  for entry in "${list[@]}"; do [[ ${entry} == "${item}" ]] || kept+=("${entry}"); done
  list=("${kept[@]}")
}

# Attaches IMAGE to a loop device read-write (ext4 replays its journal only
# on a writable device) and mounts it at DIR; prints nothing, fails loudly:
# 2 when no loop device could be attached (DIR.mount-err says why), 1 when
# the filesystem does not mount.
mount_image() {
  local image=$1 dir=$2 dev=""
  # Lanes attach devices at the same time: losetup -f can lose the race for
  # the free device it found (EBUSY); another try takes the next one.
  for _ in 1 2 3 4 5; do
    dev=$(losetup -f --show "${image}" 2>"${dir}.losetup-err") && break
    dev=""
  done
  [[ -n ${dev} ]] || { cat "${dir}.losetup-err" >"${dir}.mount-err"; return 2; }
  attached+=("${dev}")
  mkdir -p "${dir}"
  if ! mount "${dev}" "${dir}" 2>"${dir}.mount-err"; then
    # Detached now: the other lane may attach this device next, so this
    # lane's cleanup must not detach it again.
    losetup -d "${dev}"
    forget attached "${dev}"
    return 1
  fi
  mounted+=("${dir}")
  echo "${dev}" >"${dir}.dev"
}
unmount_image() {
  local dir=$1 dev
  dev=$(cat "${dir}.dev")
  umount "${dir}"
  losetup -d "${dev}"
  forget mounted "${dir}"
  forget attached "${dev}"
}

if [[ -n ${state_run} ]]; then
  # shellcheck source=/dev/null
  source "${state_run}/run.env"
  "${replay}" build "${state_run}/base.img" "${state_run}/log.img" --seed "${SEED}" \
    --max-random "${MAX_RANDOM}" --marker-sector "${MARKER_SECTOR}" --state "${state_id}" \
    --out "${state_run}/state-${state_id}.img"
  dev=$(losetup -f --show "${state_run}/state-${state_id}.img")
  mkdir -p "${state_run}/mnt"
  mount "${dev}" "${state_run}/mnt"
  trap - EXIT
  echo "crash-vm: state ${state_id} mounted at ${state_run}/mnt (${dev});" \
    "umount ${state_run}/mnt && losetup -d ${dev} when done"
  exit 0
fi

run_start=${SECONDS}
scripts/deps.sh --crash-vm
if [[ ! -x ${replay} || ! -x ${check} || ! -x ${guest} || ! -x ${regionctl} ]]; then
  if [[ ! -f ${build}/CMakeCache.txt ]]; then cmake --preset release >/dev/null; fi
  cmake --build "${build}" -j "$(nproc)" --target crashvm_replay crashvm_check crashvm_guest \
    regionctl >/dev/null || fail "building the crash-VM programs in ${build} failed"
fi

work=${build}/crashvm
runs=${work}/runs
rm -rf "${runs}"
mkdir -p "${work}/kernel" "${runs}"

# --- The guest kernel: Debian's, only the files we boot and load. ---
kernel_dir=${work}/kernel
modules=(
  drivers/virtio/virtio_ring drivers/virtio/virtio drivers/virtio/virtio_pci_legacy_dev
  drivers/virtio/virtio_pci_modern_dev drivers/virtio/virtio_pci drivers/block/virtio_blk
  lib/crc16 fs/mbcache fs/jbd2/jbd2 crypto/crc32c_generic lib/libcrc32c fs/ext4/ext4 fs/xfs/xfs
  crypto/xor lib/raid6/raid6_pq lib/zstd/zstd_compress fs/btrfs/btrfs
)
# A kernel extracted earlier is reused only if it has every module above.
if [[ ! -f ${kernel_dir}/vmlinux || ! -f ${kernel_dir}/modules.order ||
      $(sed 's|^lib/modules/[^/]*/kernel/||' "${kernel_dir}/modules.order") != "$(printf '%s\n' "${modules[@]}")" ]]; then
  kernel_package() {
    apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/ {print $2; exit}'
  }
  package=$(kernel_package)
  if [[ -z ${package} ]]; then
    apt-get update -qq || true  # package lists removed (container images do)
    package=$(kernel_package)
  fi
  [[ -n ${package} ]] || fail "apt-cache knows no linux-image-amd64, even after apt-get update"
  version=${package#linux-image-}
  version=${version%-unsigned}
  (cd "${kernel_dir}" && rm -f ./*.deb &&
   { apt-get download -qq "${package}" 2>/dev/null || { apt-get update -qq && apt-get download -qq "${package}"; }; }) ||
    fail "apt-get download ${package} failed"
  paths=("./boot/vmlinuz-${version}")
  for m in "${modules[@]}"; do paths+=("./lib/modules/${version}/kernel/${m}.ko"); done
  rm -rf "${kernel_dir}/root" && mkdir -p "${kernel_dir}/root"
  dpkg-deb --fsys-tarfile "${kernel_dir}"/*.deb | tar -x -C "${kernel_dir}/root" "${paths[@]}" ||
    fail "extracting the kernel and modules from ${package} failed"
  # PVH boot (qboot) wants the uncompressed ELF: the bzImage's xz payload.
  vmlinuz=${kernel_dir}/root/boot/vmlinuz-${version}
  offset=$(LC_ALL=C grep -obUaP '\xfd7zXZ\x00' "${vmlinuz}" | head -1 | cut -d: -f1)
  [[ -n ${offset} ]] || fail "no xz payload in ${vmlinuz}"
  tail -c +$((offset + 1)) "${vmlinuz}" | xz -dc --single-stream >"${kernel_dir}/vmlinux" 2>/dev/null || true
  [[ $(head -c 4 "${kernel_dir}/vmlinux" | od -An -c | tr -d ' ') == '177ELF' ]] ||
    fail "the kernel's xz payload is not an ELF image"
  printf '%s\n' "${modules[@]}" | sed "s|^|lib/modules/${version}/kernel/|" >"${kernel_dir}/modules.order"
  rm -f "${kernel_dir}"/*.deb
fi

# --- The initramfs: busybox, the modules, the workload program, /init. ---
initrd=${work}/initramfs.cpio.gz
staging=${work}/initramfs
rm -rf "${staging}" && mkdir -p "${staging}"/{bin,dev,proc,sys,mnt}
cp /bin/busybox "${staging}/bin/busybox"
cp "${guest}" "${staging}/bin/crashvm_guest"
(cd "${kernel_dir}/root" && cp --parents $(sed 's/$/.ko/' "${kernel_dir}/modules.order") "${staging}/")
cp "${kernel_dir}/modules.order" "${staging}/modules.order"
cat >"${staging}/init" <<'EOF'
#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t devtmpfs dev /dev
mount -t proc proc /proc
mount -t sysfs sys /sys
for m in $(cat /modules.order); do
  insmod "/${m}.ko" || echo "crashvm-init: insmod ${m} failed"
done
for word in $(cat /proc/cmdline); do
  case ${word} in crashvm.*=*) key=${word%%=*}; eval "${key#crashvm.}=${word#*=}" ;; esac
done
if mount -t "${fs}" /dev/vda /mnt; then
  /bin/crashvm_guest --workload "${workload}" --seed "${seed}" --dir /mnt \
    --marker-device /dev/vda --marker-sector "${sector}"
  echo "crashvm-guest-exit=$?"
else
  echo "crashvm-guest-exit=mount"
fi
# A power cut: no sync, no unmount.
poweroff -n -f
EOF
chmod +x "${staging}/init"
(cd "${staging}" && find . | cpio -o -H newc --quiet | gzip -1 >"${initrd}")

# --- One workload: make the disk, boot, check its crash states. ---
total_states=0
total_violations=0
workloads_run=0
controls_missed=()
controls_run=0
failed_runs=()
run_workload() {
  local workload=$1 fs=$2 max_random=$3
  local label=${workload}-${fs}
  # Filesystem bytes; the marker area (one sector per operation) follows.
  # btrfs needs about 114 MiB for separate data and metadata block groups
  # (a --mixed one is refused by Store::Create).
  local fs_bytes=$((96 * 1024 * 1024))
  [[ ${fs} == btrfs ]] && fs_bytes=$((128 * 1024 * 1024))
  local marker_sector=$((fs_bytes / 512))
  local disk_bytes=$((fs_bytes + 1024 * 1024))
  local dir=${runs}/${label}
  local seed=${CRASHVM_SEED:-$(( (RANDOM << 15 | RANDOM) ))}
  local start=${SECONDS}
  mkdir -p "${dir}"
  cat >"${dir}/run.env" <<EOF
WORKLOAD=${workload}
FS=${fs}
SEED=${seed}
MAX_RANDOM=${max_random}
MARKER_SECTOR=${marker_sector}
EOF
  truncate -s "${fs_bytes}" "${dir}/base.img"
  case ${fs} in
    ext4) mkfs.ext4 -q -F -b 4096 -E lazy_itable_init=0,lazy_journal_init=0 "${dir}/base.img" ;;
    xfs) TEST_DIR=1 TEST_DEV=1 QA_CHECK_FS=1 mkfs.xfs -q -f "${dir}/base.img" ;;
    btrfs) mkfs.btrfs -q -f "${dir}/base.img" >/dev/null ;;
  esac || { echo "crash-vm: ${label}: mkfs failed"; return 1; }
  truncate -s "${disk_bytes}" "${dir}/base.img"
  local blkdebug=()
  if [[ ${workload} == eio ]]; then
    mount_image "${dir}/base.img" "${dir}/mnt" || { echo "crash-vm: ${label}: mount of the base failed"; return 1; }
    local sector
    sector=$("${check}" prepare --workload eio --seed "${seed}" --dir "${dir}/mnt") ||
      { unmount_image "${dir}/mnt"; echo "crash-vm: ${label}: prepare failed"; return 1; }
    unmount_image "${dir}/mnt"
    # Device -> blkdebug -> blklogwrites -> file: the failed write is
    # refused above the log, so it never reaches the replayed states.
    printf '[inject-error]\nevent = "pwritev"\niotype = "write"\nerrno = "5"\nsector = "%s"\nonce = "on"\n' \
      "${sector}" >"${dir}/blkdebug.conf"
    blkdebug=(-blockdev "driver=blkdebug,image=logged,config=${dir}/blkdebug.conf,node-name=top")
    echo "crash-vm: ${label}: blkdebug fails the first write to sector ${sector} (the next commit's slot)"
  fi
  cp --sparse=always "${dir}/base.img" "${dir}/data.img"
  : >"${dir}/log.img"
  local top=logged
  ((${#blkdebug[@]})) && top=top
  if ! timeout 900 qemu-system-x86_64 -accel tcg -machine pc -m 512 -smp 1 -nodefaults -nographic \
      -serial "file:${dir}/console.txt" -monitor none -no-reboot -bios /usr/share/qemu/qboot.rom \
      -kernel "${kernel_dir}/vmlinux" -initrd "${initrd}" \
      -append "console=ttyS0 panic=-1 quiet crashvm.fs=${fs} crashvm.workload=${workload} crashvm.seed=${seed} crashvm.sector=${marker_sector}" \
      -blockdev "driver=file,filename=${dir}/data.img,node-name=data,cache.direct=off" \
      -blockdev "driver=file,filename=${dir}/log.img,node-name=log" \
      -blockdev driver=blklogwrites,file=data,log=log,node-name=logged,log-sector-size=512 \
      "${blkdebug[@]}" -device "virtio-blk-pci,drive=${top}" >"${dir}/qemu.txt" 2>&1; then
    echo "crash-vm: ${label}: qemu failed:"; tail -5 "${dir}/qemu.txt" "${dir}/console.txt"; return 1
  fi
  if ! grep -q 'crashvm-guest-exit=0' "${dir}/console.txt"; then
    echo "crash-vm: ${label}: the guest workload did not finish:"; tail -15 "${dir}/console.txt"; return 1
  fi
  local boot=$((SECONDS - start))
  "${replay}" info "${dir}/log.img" >"${dir}/log-info.txt" 2>&1 || true
  "${replay}" list "${dir}/log.img" --seed "${seed}" --max-random "${max_random}" \
    --marker-sector "${marker_sector}" >"${dir}/states.txt" 2>"${dir}/list-err.txt" ||
    { echo "crash-vm: ${label}: listing states failed: $(cat "${dir}/list-err.txt")"; return 1; }
  local states=0 violations=0 id desc out
  : >"${dir}/violations.txt"
  while IFS=$'\t' read -r id desc; do
    out=${dir}/state.img
    "${replay}" build "${dir}/base.img" "${dir}/log.img" --seed "${seed}" --max-random "${max_random}" \
      --marker-sector "${marker_sector}" --state "${id}" --out "${out}" >/dev/null 2>"${dir}/build-err.txt" ||
      { echo "crash-vm: ${label}: building state ${id} failed: $(cat "${dir}/build-err.txt")"; return 1; }
    states=$((states + 1))
    local mounted_rc=0
    mount_image "${out}" "${dir}/mnt" || mounted_rc=$?
    if ((mounted_rc == 2)); then
      echo "crash-vm: ${label} state ${id}: no loop device: $(cat "${dir}/mnt.mount-err")"
      return 1
    elif ((mounted_rc != 0)); then
      # A filesystem the host cannot mount after a power cut breaks every
      # promise at once.
      echo "violation: ${label} state ${id}: the filesystem does not mount: $(cat "${dir}/mnt.mount-err")" |
        tee -a "${dir}/violations.txt"
      violations=$((violations + 1))
      continue
    fi
    local rc=0
    "${check}" check --workload "${workload}" --seed "${seed}" --dir "${dir}/mnt" --image "${out}" \
      --marker-sector "${marker_sector}" --regionctl "${regionctl}" --label "${label} state ${id}" \
      >"${dir}/check.txt" 2>&1 || rc=$?
    unmount_image "${dir}/mnt"
    grep '^finding:' "${dir}/check.txt" >>"${dir}/findings.txt" || true
    if ((rc == 1)); then
      violations=$((violations + 1))
      { grep '^violation:' "${dir}/check.txt"; echo "  state ${id}: ${desc}"; } >>"${dir}/violations.txt"
    elif ((rc != 0)); then
      echo "crash-vm: ${label} state ${id}: the check failed:"; cat "${dir}/check.txt"; return 1
    fi
  done <"${dir}/states.txt"
  rm -f "${dir}/state.img"
  ((keep)) || rm -f "${dir}/data.img"
  total_states=$((total_states + states))
  workloads_run=$((workloads_run + 1))
  local findings=0
  [[ -f ${dir}/findings.txt ]] && findings=$(wc -l <"${dir}/findings.txt")
  local entries
  entries=$(awk '/^entries/ {print $2; exit}' "${dir}/log-info.txt" 2>/dev/null || true)
  if is_control "${workload}"; then
    controls_run=$((controls_run + 1))
    if ((violations == 0)); then
      controls_missed+=("${label}")
      echo "crash-vm: ${label} (negative control): seed ${seed}, ${states} states, NOT caught ($((SECONDS - start)) s, boot and workload ${boot} s)"
    else
      echo "crash-vm: ${label} (negative control): seed ${seed}, ${states} states, caught in ${violations} ($((SECONDS - start)) s, boot and workload ${boot} s)"
      head -3 "${dir}/violations.txt" | sed 's/^/  /'
    fi
  else
    total_violations=$((total_violations + violations))
    echo "crash-vm: ${label}: seed ${seed}, log ${entries:-?} entries, ${states} states, ${violations} violations, ${findings} findings ($((SECONDS - start)) s, boot and workload ${boot} s)"
    if ((violations)); then
      head -20 "${dir}/violations.txt" | sed 's/^/  /'
      keep=1
    fi
    if ((findings)); then sort "${dir}/findings.txt" | sed -E 's/state [0-9]+: //' | sort | uniq -c | head -5 | sed 's/^/  /'; fi
  fi
  if [[ ${workload} == eio ]]; then
    grep -E 'crashvm_guest: op [0-9]+' "${dir}/console.txt" | head -4 | sed 's/^/  guest: /'
    grep -E '^\[ *[0-9.]+\] .*(I/O error|EXT4-fs (error|warning)|XFS .*(rror|hut)|emount)' "${dir}/console.txt" | head -4 | sed 's/^/  guest kernel: /' || true
  fi
}

is_control() {
  case $1 in commits-barrier-header-only | batches-record-late | export-no-dirsync | seen-recovery-undoes) return 0 ;; esac
  case $1 in commits-p2-barrier-header-only | batches-p2-record-late | sync-no-barrier) return 0 ;; esac
  case $1 in threads-follower-early | threads-covers-late) return 0 ;; esac
  return 1
}

scale=1
((long)) && scale=10
# workload fs random-states: the budget of random crash states of each run
# (fewer when its windows allow fewer); every flush boundary comes on top.
plan=(
  "commits ext4 $((60 * scale))"
  "commits xfs $((50 * scale))"
  "batches ext4 $((50 * scale))"
  "batches xfs $((40 * scale))"
  "commits btrfs $((40 * scale))"
  "batches btrfs $((30 * scale))"
  "raw ext4 $((40 * scale))"
  "export ext4 $((30 * scale))"
  "export xfs $((20 * scale))"
  "create ext4 $((30 * scale))"
  "eio ext4 $((30 * scale))"
  "eio xfs $((20 * scale))"
  "seen ext4 $((30 * scale))"
  "seen xfs $((20 * scale))"
  "commits-p2 ext4 $((40 * scale))"
  "batches-p2 xfs $((30 * scale))"
  "seen-p2 ext4 $((20 * scale))"
  "sync ext4 $((30 * scale))"
  "sync xfs $((20 * scale))"
  "threads ext4 $((30 * scale))"
  "threads xfs $((20 * scale))"
  "commits-barrier-header-only ext4 $((20 * scale))"
  "batches-record-late ext4 $((20 * scale))"
  "export-no-dirsync ext4 $((20 * scale))"
  "seen-recovery-undoes ext4 $((20 * scale))"
  "commits-p2-barrier-header-only ext4 $((20 * scale))"
  "batches-p2-record-late ext4 $((20 * scale))"
  "sync-no-barrier ext4 $((20 * scale))"
  "threads-follower-early ext4 $((20 * scale))"
  "threads-covers-late ext4 $((20 * scale))"
)
selected=()
for entry in "${plan[@]}"; do
  read -r workload fs budget <<<"${entry}"
  [[ -z ${only} || ${only} == "${workload}-${fs}" ]] || continue
  selected+=("${entry}")
done
# Lane L runs entries L, L + jobs, ... in a subshell of its own (its mounts
# and its cleanup too), and leaves its report and its counts in files.
mkdir -p "${runs}"
run_lane() {
  local lane=$1 index entry workload fs budget
  mounted=()
  attached=()
  # A SIGTERM waits for the command in hand (bash runs the trap once it is
  # done), so the cleanup never meets a mount still in use.
  trap 'exit 143' TERM
  trap cleanup EXIT
  for ((index = lane; index < ${#selected[@]}; index += jobs)); do
    entry=${selected[index]}
    read -r workload fs budget <<<"${entry}"
    if ! run_workload "${workload}" "${fs}" "${budget}"; then
      failed_runs+=("${workload}-${fs}")
      keep=1
    fi
  done
  {
    echo "states ${total_states}"
    echo "violations ${total_violations}"
    echo "workloads ${workloads_run}"
    echo "controls ${controls_run}"
    echo "keep ${keep}"
    for label in "${controls_missed[@]}"; do echo "missed ${label}"; done
    for label in "${failed_runs[@]}"; do echo "failed ${label}"; done
  } >"${runs}/lane-${lane}.counts.tmp"
  mv "${runs}/lane-${lane}.counts.tmp" "${runs}/lane-${lane}.counts"
}
# The parent's exit (an error, Ctrl-C) stops the lanes and the commands they
# run (timeout passes the signal on to QEMU); each lane's own cleanup then
# unmounts and detaches what it holds.
stop_lanes() {
  local pid
  for pid in "${lane_pids[@]}"; do
    kill "${pid}" 2>/dev/null || true
    pkill -TERM -P "${pid}" 2>/dev/null || true
  done
  wait 2>/dev/null || true
}
lanes=$(( jobs < ${#selected[@]} ? jobs : ${#selected[@]} ))
lane_pids=()
for ((lane = 0; lane < lanes; ++lane)); do
  rm -f "${runs}/lane-${lane}.counts"
  run_lane "${lane}" >"${runs}/lane-${lane}.log" 2>&1 &
  lane_pids+=($!)
done
trap 'stop_lanes; cleanup' EXIT
for ((lane = 0; lane < lanes; ++lane)); do
  lane_rc=0
  wait "${lane_pids[lane]}" || lane_rc=$?
  cat "${runs}/lane-${lane}.log"
  if ((lane_rc != 0)) || [[ ! -f ${runs}/lane-${lane}.counts ]]; then
    failed_runs+=("lane-${lane} (exit ${lane_rc})")
    keep=1
  fi
  [[ -f ${runs}/lane-${lane}.counts ]] || continue
  while read -r key value; do
    case ${key} in
      states) total_states=$((total_states + value)) ;;
      violations) total_violations=$((total_violations + value)) ;;
      workloads) workloads_run=$((workloads_run + value)) ;;
      controls) controls_run=$((controls_run + value)) ;;
      keep) ((value)) && keep=1 ;;
      missed) controls_missed+=("${value}") ;;
      failed) failed_runs+=("${value}") ;;
    esac
  done <"${runs}/lane-${lane}.counts"
done
lane_pids=()
trap cleanup EXIT

((keep)) || rm -rf "${runs}"
((keep)) && echo "crash-vm: runs kept in ${runs} (rebuild a state: scripts/crash-vm.sh --state ${runs}/LABEL ID)"
# "yes" only when the controls ran and each was caught.
caught=yes
((${#controls_missed[@]} == 0 && controls_run > 0)) || caught=no
((${#failed_runs[@]} == 0)) || echo "crash-vm: runs that could not finish: ${failed_runs[*]}"
echo "crash-vm: finished in $((SECONDS - run_start)) s"
echo "crash-vm: ${workloads_run} workloads, ${total_states} crash states, ${total_violations} violations, negative control caught: ${caught}"
[[ ${caught} == yes ]] && ((total_violations == 0 && ${#failed_runs[@]} == 0))
