#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# pkg_boot.sh - one vcluster node booting as a Debian system with the sdsm
# packages installed, for the test "boot" of pkg_tests.sh (issue 15).  Run
# on a node (through on_node) from the repository, as root:
#
#   pkg_boot.sh up SEC      build the node's root and boot systemd in it;
#                           return once the boot has finished (SEC bound)
#   pkg_boot.sh check       what the boot did: sdsm.service active, the
#                           packaged module loaded by modprobe, the group
#                           made by systemd-sysusers, /dev/sdsm made by
#                           udev (0660 root:sdsm, opens for the group only),
#                           kernel.pid_max set by systemd-sysctl
#   pkg_boot.sh run CMD...  run CMD in the booted system (nsenter)
#   pkg_boot.sh poweroff SEC  `systemctl poweroff`, wait for the end
#   pkg_boot.sh after       after the poweroff: module unloaded, the
#                           journal shows the unit stopped cleanly
#   pkg_boot.sh cleanup     end whatever is left; the guest as before
#
# The guest boots the host's root read-only over 9p under a custom PID 1
# (tools/vcluster/guest-init), and nothing may be written into that root.
# So the node's root is an overlay: lower the guest's / , upper a tmpfs
# (in /tmp/sdsm-boot), holding what installing the packages puts there:
#
#   - libsdsm1 and sdsm-tools, unpacked over / as dpkg unpacks them
#     (through the merged-/usr symlinks): the unit in /lib/systemd/system,
#     the udev rule, sysusers.d and sysctl.d files, modprobe.d;
#   - sdsm.service enabled by `systemctl --root=ROOT enable`, what
#     sdsm-tools' postinst (deb-systemd-helper) does;
#   - sdsm.ko of sdsm-dkms, built by DKMS on the host (test_deb.sh), in
#     /lib/modules/KVER/updates/dkms with the tables of a depmod run over
#     that kernel's tree, which is where `dkms install` puts them;
#   - /etc/sdsm/cluster.conf and its secret, as the admin guide says.
#
# The maintainer scripts are not run: the postinst's addgroup would make
# the group that systemd-sysusers must make at boot here (the root has no
# /etc/.updated, so systemd-sysusers.service runs, as on a first boot);
# nor is libc-bin's ldconfig trigger: ld.so finds libsdsm.so.1 in the
# multiarch directory without its cache.
#
# What is left out of this root, and why: this host's /etc/systemd/system
# enables the services of a development machine (a database, apt timers,
# getty) that are no part of a cluster node, so the node starts from none
# enabled but sdsm.service; systemd's own 50-pid-max.conf sets the same
# kernel.pid_max as 60-sdsm.conf, so it is masked (/etc/sysctl.d) for the
# value to show that systemd-sysctl applied sdsm's file; and
# systemd-udev-trigger.service (coldplug) is masked: it would replay the
# add events of the guest's devices, renaming eth0 and the rxe0 the
# harness set up under them.  /dev/sdsm does not come from coldplug: the
# module is loaded after udevd runs, and udevd handles its add event live.
# So is console-getty.service, which systemd adds in a container for its
# console: here a file.  udevd logs at debug level (udev.conf), so that
# its journal shows which rule set the owner and mode of /dev/sdsm.
# Masked too, to shorten a boot that all nodes make at once on 2 host
# cores ($UNNEEDED, $UNNEEDED_GENERATORS below): what a Debian boot starts
# that neither sdsm.service (After= network-online.target only) nor what
# "check" looks at needs: the modprobe@ units of other modules
# (dm_mod, drm, fuse, loop, configfs), static device nodes, the hugepage,
# mqueue, fuse, configfs, debugfs and tracefs mounts, binfmt_misc, logind
# and D-Bus (systemctl poweroff needs neither as root), utmp and user
# sessions; and the generators of devices and services this root has no
# use for (encrypted, integrity and verity volumes, GPT partitions,
# hibernation, system updates, the host's database clusters and SysV
# scripts).  On 2026-12-07 (3 nodes booting at once) systemd's own count
# of its start went from 37-49 s to 25-35 s, the poweroff from 9-10 s to
# 5-7 s.
#
# systemd runs as PID 1 of new PID, mount, UTS, IPC and cgroup namespaces
# (unshare), with container=sdsm-boot in its environment so that it knows
# it is a container and leaves the guest's kernel and console alone.  It
# shares the guest's network namespace (its eth0 and rxe0), its user
# namespace (root's user keyring, CAP_SYS_MODULE) and its devtmpfs /dev;
# /dev/console is a file (console.log), /run, /tmp and /var/tmp tmpfs.
# The journal is persistent (/var/log/journal), so the overlay, still
# mounted in the guest, holds it after the poweroff.  A
# poweroff ends the namespace's PID 1 (reboot(2) in a PID namespace), and
# unshare ends with SIGINT's status, 130.

# shellcheck disable=SC2317 # the functions run through the case at the end
# shellcheck disable=SC2015 # "A && B || fail" fails when A or B does

# The body is one { } block: bash parses it whole before running it, so
# editing this file cannot break an instance that is already running.
{
set -u
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
SELF=$HERE/pkg_boot.sh
B=/tmp/sdsm-boot
R=$B/root
CG=/sys/fs/cgroup/sdsm-boot
STAGE=${SDSM_ROOT:-$HERE/../..}/out/deb/stage
KVER=$(uname -r)
VERSION=$(cat "$HERE/../../VERSION")
ARCH=$(dpkg --print-architecture)
PID_MAX=4194304
PID_MAX_LOW=32768
# Units and generators a node's boot leaves out (see the top).
UNNEEDED="modprobe@dm_mod.service modprobe@drm.service modprobe@fuse.service
modprobe@loop.service modprobe@configfs.service kmod-static-nodes.service
dev-hugepages.mount dev-mqueue.mount sys-fs-fuse-connections.mount
sys-kernel-config.mount sys-kernel-debug.mount sys-kernel-tracing.mount
proc-sys-fs-binfmt_misc.automount systemd-binfmt.service
systemd-logind.service dbus.service dbus.socket systemd-user-sessions.service
systemd-update-utmp.service systemd-update-utmp-runlevel.service"
UNNEEDED_GENERATORS="postgresql-generator systemd-sysv-generator
systemd-cryptsetup-generator systemd-gpt-auto-generator
systemd-hibernate-resume-generator systemd-integritysetup-generator
systemd-veritysetup-generator systemd-system-update-generator"

msg() {
	echo "node ${SDSM_NODE_ID:-?}: $*"
}

die() {
	msg "$*"
	exit 1
}

# The guest pids of unshare and of the namespace's PID 1 (systemd).
upid() {
	cat "$B/unshare.pid" 2>/dev/null
}

pid1() {
	cat "$B/pid1" 2>/dev/null
}

alive() {
	local p
	p=$(upid) && [ -n "$p" ] && kill -0 "$p" 2>/dev/null
}

# insys CMD...: CMD in the booted system.
insys() {
	local p
	p=$(pid1) || return 125
	nsenter -t "$p" -m -u -i -p -C -r -w "$@"
}

# ---- the root ----

setup() {
	local k=0 a conf m=$STAGE/modules/lib/modules/$KVER d
	[ ! -e "$B" ] || cleanup > /dev/null
	for f in "$STAGE/sdsm.ko" "$STAGE/pkg_prog" "$m/modules.dep.bin" \
		"$STAGE/libsdsm1_${VERSION}_$ARCH.deb" \
		"$STAGE/sdsm-tools_${VERSION}_$ARCH.deb"; do
		[ -e "$f" ] || die "$f missing: run tests/build/test_deb.sh"
	done
	mkdir -p "$B/upper" "$B/work" "$R" || return 1
	: > "$B/console"
	mount -t overlay sdsm-boot -o "lowerdir=/,upperdir=$B/upper,workdir=$B/work" \
		"$R" || die "cannot mount the overlay root"
	: > "$B/mounted"
	# What the packages hold, unpacked as dpkg does it: through the
	# root's directory symlinks (/lib -> usr/lib).
	for d in libsdsm1 sdsm-tools; do
		dpkg-deb --fsys-tarfile "$STAGE/${d}_${VERSION}_$ARCH.deb" |
			tar -C "$R" -xf - --keep-directory-symlink ||
			die "cannot unpack $d"
	done
	[ -L "$R/lib" ] || die "unpacking replaced the /lib symlink"
	grep -q '^sdsm:' "$R/etc/group" && die "group sdsm exists before the boot"
	# No host enablement; sdsm.service enabled as its postinst does.
	rm -rf "${R:?}"/etc/systemd/system/* || return 1
	systemctl --root="$R" enable sdsm.service 2>&1 ||
		die "systemctl enable sdsm.service failed"
	# shellcheck disable=SC2086 # a list of names
	systemctl --root="$R" mask systemd-udev-trigger.service \
		console-getty.service $UNNEEDED > /dev/null 2>&1 ||
		die "cannot mask systemd-udev-trigger.service console-getty.service $UNNEEDED"
	mkdir -p "$R/etc/systemd/system-generators" || return 1
	for g in $UNNEEDED_GENERATORS; do
		ln -sf /dev/null "$R/etc/systemd/system-generators/$g" || return 1
	done
	ln -sf /dev/null "$R/etc/sysctl.d/50-pid-max.conf" || return 1
	# udevd's debug log names each rule it applies (the evidence that
	# 60-sdsm.rules made /dev/sdsm what it is).
	echo "udev_log=debug" >> "$R/etc/udev/udev.conf" || return 1
	# DKMS's place for the module, and depmod's tables for this kernel.
	if ! mkdir -p "$R/lib/modules/$KVER/updates/dkms" ||
	   ! cp "$m/updates/dkms/sdsm.ko" "$R/lib/modules/$KVER/updates/dkms/" ||
	   ! cp "$m"/modules.* "$R/lib/modules/$KVER/"; then
		die "cannot install sdsm.ko and the depmod tables"
	fi
	cmp -s "$m/updates/dkms/sdsm.ko" "$STAGE/sdsm.ko" ||
		die "the staged module tree does not hold the DKMS-built sdsm.ko"
	# The cluster, as the admin guide tells an administrator to write it.
	mkdir -p "$R/etc/sdsm" &&
		install -m 600 "$SDSM_KEY_FILE" "$R/etc/sdsm/cluster.key" || return 1
	conf=$R/etc/sdsm/cluster.conf
	{
		echo "# written by pkg_boot.sh"
		for a in ${SDSM_NODES//,/ }; do
			echo "node $k $a"
			k=$((k + 1))
		done
		echo "secret /etc/sdsm/cluster.key"
	} > "$conf"
	install -D -m 755 "$STAGE/pkg_prog" "$R/opt/sdsm-test/pkg_prog" || return 1
	mkdir -p "$R/var/log/journal" || return 1
	# The guest before the boot: no sdsm module, no cluster secret in
	# root's user keyring (sdsmctl join must add it), kernel.pid_max low.
	if [ -d /sys/module/sdsm ]; then
		sdsm_unload || die "cannot unload the harness's sdsm"
	fi
	a=$(keyctl search @u logon sdsm:cluster 2>/dev/null) &&
		{ keyctl unlink "$a" @u > /dev/null || die "cannot unlink the secret"; }
	cat /proc/sys/kernel/pid_max > "$B/pid_max.before"
	echo "$PID_MAX_LOW" > /proc/sys/kernel/pid_max || return 1
	echo "sdsm-test: pkg-boot" > /dev/kmsg
	msg "root ready: libsdsm1 and sdsm-tools unpacked, sdsm.service enabled, sdsm.ko in updates/dkms"
}

# The namespace's PID 1 until it execs systemd: the root's mounts, then
# pivot_root into it.
ns_init() {
	# A cgroup2 mount of this namespace's root (unshare's cgroup) in
	# place of the guest's: the same superblock cannot be mounted on
	# the root of a mount of itself (EBUSY).
	mount -t proc proc "$R/proc" &&
		mount --rbind /sys "$R/sys" &&
		umount -l "$R/sys/fs/cgroup" &&
		mount -t cgroup2 cgroup2 "$R/sys/fs/cgroup" &&
		mount --rbind /dev "$R/dev" &&
		mount --bind "$B/console" "$R/dev/console" &&
		mount -t tmpfs -o mode=755 tmpfs "$R/run" &&
		mount -t tmpfs -o mode=1777 tmpfs "$R/tmp" &&
		mount -t tmpfs -o mode=1777 tmpfs "$R/var/tmp" ||
		{ echo "ns_init: mounts failed"; exit 1; }
	cd "$R" && pivot_root . . && umount -l . ||
		{ echo "ns_init: pivot_root failed"; exit 1; }
	cd / || exit 1
	exec env -i container=sdsm-boot PATH=/usr/sbin:/usr/bin:/sbin:/bin \
		/lib/systemd/systemd
}

start() {
	local u p end
	[ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ] ||
		die "no cgroup2 at /sys/fs/cgroup"
	mkdir -p "$CG" || return 1
	# setsid: the boot outlives this on_node request's process group.
	# shellcheck disable=SC2016
	setsid bash -c 'echo $$ > "$1/cgroup.procs" || exit 1
		unshare --pid --mount --uts --ipc --cgroup --fork \
			--propagation private "$3" ns_init &
		echo $! > "$2/unshare.pid"
		wait $!
		echo $? > "$2/unshare.rc"' sh "$CG" "$B" "$SELF" \
		< /dev/null > "$B/unshare.log" 2>&1 &
	# PID 1 of the namespace: unshare's child ("PID " in children).
	end=$((SECONDS + 20))
	until u=$(upid) && [ -n "$u" ] &&
		p=$(cat "/proc/$u/task/$u/children" 2>/dev/null) && [ -n "${p// /}" ]; do
		[ $SECONDS -lt $end ] || die "unshare did not start: $(cat "$B/unshare.log")"
		sleep 0.2
	done
	echo "${p%% *}" > "$B/pid1"
}

# wait_boot SEC: until systemd says the boot has finished.
wait_boot() {
	local end=$((SECONDS + $1)) p state left
	p=$(pid1)
	until [ -S "/proc/$p/root/run/systemd/private" ]; do
		alive || die "systemd ended during its start (status $(cat "$B/unshare.rc" 2>/dev/null)): $(tail -5 "$B/unshare.log" "$B/console")"
		[ $SECONDS -lt $end ] || die "no systemd manager after $1 s: $(tail -5 "$B/console")"
		sleep 0.5
	done
	left=$((end - SECONDS))
	[ $left -gt 0 ] || left=1
	state=$(timeout "$left" nsenter -t "$p" -m -u -i -p -C -r -w \
		systemctl is-system-running --wait 2>&1)
	case $state in
	running) ;;
	degraded)
		msg "system degraded; failed units:"
		insys systemctl --failed --no-legend --plain --no-pager ;;
	*)
		msg "boot not finished after $1 s (state '$state'); jobs:"
		insys systemctl list-jobs --no-pager
		tail -20 "$B/console"
		return 1 ;;
	esac
	msg "systemd booted ($state) in $((SECONDS - end + $1)) s"
	# Its own account (a node whose QEMU shares a host core boots slower).
	msg "$(insys systemd-analyze --no-pager 2>&1 | head -n 1)"
}

up() {
	setup || return 1
	start || return 1
	wait_boot "$1"
}

# ---- after the boot ----

check() {
	local rc=0 out v gid i
	alive || die "the booted system is gone"
	out=$(insys systemctl status --no-pager --lines=20 sdsm.service 2>&1)
	printf '  %s\n' "$out"
	v=$(insys systemctl show -P ActiveState sdsm.service)
	[ "$v" = active ] || { msg "sdsm.service is $v, not active"; rc=1; }
	# The module modprobe found: DKMS's, from updates/dkms.
	v=$(insys modinfo -n sdsm 2>&1)
	[ "$v" = "/lib/modules/$KVER/updates/dkms/sdsm.ko" ] ||
		{ msg "modinfo -n sdsm says '$v'"; rc=1; }
	[ "$(cat /sys/module/sdsm/srcversion 2>&1)" = "$(modinfo -F srcversion "$STAGE/sdsm.ko")" ] &&
		[ "$(cat /sys/module/sdsm/version 2>&1)" = "$VERSION" ] ||
		{ msg "the loaded sdsm is not the DKMS-built $VERSION"; rc=1; }
	# kernel.pid_max: from our 32768 to sdsm's value, by systemd-sysctl.
	v=$(cat /proc/sys/kernel/pid_max)
	[ "$v" = "$PID_MAX" ] && [ "$(insys systemctl show -P ActiveState systemd-sysctl.service)" = active ] &&
		insys /lib/systemd/systemd-sysctl --cat-config 2>/dev/null |
		sed -n '\|^# /usr/lib/sysctl.d/60-sdsm.conf|,/^# \//p' |
		grep -qx "kernel.pid_max = $PID_MAX" ||
		{ msg "kernel.pid_max is $v, not $PID_MAX from 60-sdsm.conf"; rc=1; }
	msg "kernel.pid_max $(cat "$B/pid_max.before") -> $PID_MAX_LOW (before the boot) -> $v (systemd-sysctl)"
	# The group, by systemd-sysusers from sdsm-tools' sysusers.d file.
	# It is not in the guest's (the overlay's lower) /etc/group, the
	# maintainer scripts do not run, so only systemd-sysusers, which
	# must have succeeded, can have made it.  Its "Creating group" line
	# is logged too, to the journal or (early in the boot, before
	# journald) to the console: shown, not required.
	gid=$(insys getent group sdsm | cut -d: -f3)
	v=$(insys systemctl show -P Result systemd-sysusers.service)
	[ -n "$gid" ] && ! grep -q '^sdsm:' /etc/group && [ "$v" = success ] ||
		{ msg "group sdsm '$gid', systemd-sysusers result '$v'"; rc=1; }
	v=$(insys journalctl -b --no-pager -o cat -u systemd-sysusers.service 2>&1 |
		grep -i "creating group .sdsm.")
	msg "group sdsm: gid $gid; systemd-sysusers: $v"
	# /dev/sdsm: the packaged rule's owner and mode (devtmpfs alone
	# makes it 0600 root), applied by udevd: its debug log names the rule.
	v=$(insys stat -c '%a %U %G %F' /dev/sdsm 2>&1)
	[ "$v" = "660 root sdsm character special file" ] ||
		{ msg "/dev/sdsm is '$v'"; rc=1; }
	for ((i = 0; i < 20; i++)); do
		out=$(insys journalctl -b --no-pager -o cat -u systemd-udevd.service 2>&1 |
			grep -E '60-sdsm\.rules|Setting permissions /dev/sdsm')
		[ -n "$out" ] && break
		sleep 1
	done
	printf '  %s\n' "$out"
	[ "$(insys systemctl show -P ActiveState systemd-udevd.service)" = active ] &&
		grep -qE "60-sdsm\.rules|Setting permissions /dev/sdsm, uid=0, gid=$gid, mode=0?660" <<< "$out" ||
		{ msg "systemd-udevd is not running or did not apply 60-sdsm.rules"; rc=1; }
	msg "/dev/sdsm: $v, by systemd-udevd from 60-sdsm.rules"
	# A user in group sdsm opens it; one outside does not (EACCES).
	out=$(insys setpriv --reuid=65534 --regid=65534 --groups="${gid:-0}" \
		bash -c 'exec 3<>/dev/sdsm && echo opened' 2>&1)
	[ "$out" = opened ] || { msg "uid 65534 in group sdsm: $out"; rc=1; }
	out=$(insys setpriv --reuid=65534 --regid=65534 --clear-groups \
		bash -c 'exec 3<>/dev/sdsm && echo opened' 2>&1)
	case $out in
	*"Permission denied"*) ;;
	*) msg "uid 65534 outside group sdsm: '$out', want EACCES"; rc=1 ;;
	esac
	msg "open O_RDWR as uid 65534: in group sdsm ok, outside: ${out##*: }"
	return "$rc"
}

# do_poweroff SEC
do_poweroff() {
	local end=$((SECONDS + $1)) rc
	alive || die "the booted system is gone before the poweroff"
	insys systemctl poweroff || die "systemctl poweroff failed"
	while alive; do
		[ $SECONDS -lt "$end" ] || die "systemd still up $1 s after poweroff: $(tail -5 "$B/console")"
		sleep 0.5
	done
	rc=$(cat "$B/unshare.rc" 2>/dev/null)
	[ "$rc" = 130 ] || die "the namespace ended with status '$rc', not a poweroff's 130"
	msg "powered off in $((SECONDS - end + $1)) s"
}

after() {
	local rc=0 out
	[ ! -d /sys/module/sdsm ] || { msg "sdsm still loaded after the poweroff"; rc=1; }
	out=$(journalctl -D "$R/var/log/journal" --no-pager -o short-monotonic \
		-u sdsm.service 2>&1)
	printf '  %s\n' "$out"
	# Started (active) in this boot, stopped by ExecStop without error.
	grep -q 'Finished sdsm.service' <<< "$out" &&
		grep -q 'sdsm.service: Deactivated successfully' <<< "$out" &&
		grep -q 'Stopped sdsm.service' <<< "$out" &&
		! grep -qE 'sdsm.service: (Failed|Control process exited|Main process exited)' <<< "$out" ||
		{ msg "the journal does not show sdsm.service started and stopped cleanly"; rc=1; }
	return "$rc"
}

cleanup() {
	local p end
	if alive; then
		p=$(pid1)
		[ -n "$p" ] && kill -KILL "$p" 2>/dev/null
		end=$((SECONDS + 20))
		while alive && [ $SECONDS -lt $end ]; do
			sleep 0.2
		done
		alive && msg "the namespace did not end"
	fi
	# The booted system's console and journal, for the run's output.
	if [ -n "${SDSM_OUT:-}" ] && [ -e "$B/console" ] &&
	   mkdir -p "$SDSM_OUT/pkg-boot"; then
		cp "$B/console" "$SDSM_OUT/pkg-boot/console.log"
		cp "$B/unshare.log" "$SDSM_OUT/pkg-boot/unshare.log" 2>/dev/null
		journalctl -D "$R/var/log/journal" --no-pager -o short-monotonic \
			> "$SDSM_OUT/pkg-boot/journal.txt" 2>&1
	fi
	[ -e "$B/mounted" ] && { umount -l "$R" || msg "cannot unmount $R"; }
	rmdir "$CG" 2>/dev/null
	if [ -s "$B/pid_max.before" ]; then
		cat "$B/pid_max.before" > /proc/sys/kernel/pid_max
	fi
	rm -rf "$B"
	# The harness's cluster secret, for the next insmod.
	keyctl padd logon sdsm:cluster @u < "$SDSM_KEY_FILE" > /dev/null
}

# shellcheck source=tools/vcluster/guest-lib.sh
[ -z "${VCLUSTER_LIB:-}" ] || . "$VCLUSTER_LIB" || exit 1
cmd=${1:-}
shift
case $cmd in
up)
	up "${1:-120}" ;;
poweroff)
	do_poweroff "${1:-120}" ;;
check|after|cleanup|setup|start|ns_init)
	"$cmd" ;;
wait)
	wait_boot "${1:-120}" ;;
run)
	insys "$@" ;;
*)
	echo "usage: see the top of $0" >&2
	exit 2 ;;
esac
exit
}
