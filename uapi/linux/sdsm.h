/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * sdsm - software distributed shared memory: the user-space ABI of /dev/sdsm.
 *
 * Style of include/uapi/linux/iommufd.h: every command is an ioctl with a
 * struct that starts with "__u32 size" and "__u32 flags"; the kernel accepts
 * any size from the size of the first version of the struct upwards
 * (copy_struct_from_user() semantics), so structs only ever grow at the end.
 */
#ifndef _UAPI_LINUX_SDSM_H
#define _UAPI_LINUX_SDSM_H

#include <linux/types.h>
#include <linux/ioctl.h>

/* Bumped on any incompatible change of this header; never expected. */
#define SDSM_API_VERSION	1

#define SDSM_TYPE		0xD5

/* Node ids are 0..SDSM_MAX_NODES-1; node masks are __u64 bitmaps. */
#define SDSM_MAX_NODES		32

/**
 * DOC: General ioctl format
 *
 * Every ioctl passes a pointer to a struct whose first member is the size of
 * the struct as user space knows it and whose second member is flags.
 * The kernel reads min(size, kernel size) bytes; bytes beyond what the kernel
 * knows must be zero.  Output members are written back up to that size.
 *
 * Errno values common to all commands:
 *
 * - ENOTTY: unknown ioctl number.
 * - EFAULT: the argument pointer is not readable or writable.
 * - EINVAL: size is smaller than the first version of the struct, or a
 *   __reserved member is not zero.
 * - E2BIG: size is larger than the kernel's struct and the extra bytes are
 *   not zero (the caller uses a newer feature this kernel lacks).
 * - EOPNOTSUPP: an unknown bit is set in flags.
 */

/* Command numbers.  Append only. */
enum {
	SDSM_CMD_BASE = 0x80,
	SDSM_CMD_GET_INFO = SDSM_CMD_BASE,
	SDSM_CMD_REGION_CREATE,
	SDSM_CMD_REGION_OPEN,
	SDSM_CMD_REGION_INFO,
	SDSM_CMD_REGION_DESTROY,
	SDSM_CMD_SET_POLICY,
	SDSM_CMD_QUERY_HOME,
	SDSM_CMD_LOCK,
	SDSM_CMD_BARRIER,
	SDSM_CMD_FUTEX,
};

/**
 * struct sdsm_info - ioctl(SDSM_IOC_GET_INFO)
 * @size: sizeof(struct sdsm_info)
 * @flags: must be 0
 * @api_version: out: SDSM_API_VERSION of the loaded module
 * @node_id: out: id of this node (module parameter node_id)
 * @nr_nodes: out: number of nodes in the cluster (module parameter nodes)
 * @__reserved: must be 0
 * @features: out: bitmap of enum sdsm_features the module supports
 *
 * Describe the cluster as this node sees it.  The per-node state lives in
 * sysfs, /sys/kernel/sdsm/nodes/<n>/.
 */
struct sdsm_info {
	__u32 size;
	__u32 flags;
	__u32 api_version;
	__u32 node_id;
	__u32 nr_nodes;
	__u32 __reserved;
	__aligned_u64 features;
};

#define SDSM_IOC_GET_INFO	_IO(SDSM_TYPE, SDSM_CMD_GET_INFO)

/**
 * enum sdsm_features - bits of sdsm_info.features
 * @SDSM_FEATURE_PAGE_TRANSPORT: peers exchange messages that carry a page
 * @SDSM_FEATURE_COHERENT_MEMORY: mmap() of /dev/sdsm gives coherent memory
 * @SDSM_FEATURE_REGIONS: SDSM_IOC_REGION_* work
 * @SDSM_FEATURE_PLACEMENT: SDSM_IOC_SET_POLICY and SDSM_IOC_QUERY_HOME work
 * @SDSM_FEATURE_LOCKS: SDSM_IOC_LOCK works
 * @SDSM_FEATURE_BARRIERS: SDSM_IOC_BARRIER works
 * @SDSM_FEATURE_FUTEX: SDSM_IOC_FUTEX works
 * @SDSM_FEATURE_LOCK_THREADS: a lock is owned by the thread that took it
 *	(without it, by the open file: all its threads)
 * @SDSM_FEATURE_BARRIER_SERIAL: SDSM_IOC_BARRIER sets
 *	SDSM_BARRIER_OUT_SERIAL in struct sdsm_barrier's @out_flags
 *
 * A bit is set only when the loaded module implements the feature.
 */
enum sdsm_features {
	SDSM_FEATURE_PAGE_TRANSPORT = 1 << 0,
	SDSM_FEATURE_COHERENT_MEMORY = 1 << 1,
	SDSM_FEATURE_REGIONS = 1 << 2,
	SDSM_FEATURE_PLACEMENT = 1 << 3,
	SDSM_FEATURE_LOCKS = 1 << 4,
	SDSM_FEATURE_BARRIERS = 1 << 5,
	SDSM_FEATURE_FUTEX = 1 << 6,
	SDSM_FEATURE_LOCK_THREADS = 1 << 7,
	SDSM_FEATURE_BARRIER_SERIAL = 1 << 8,
};

/* Region names: NUL-terminated, [A-Za-z0-9_.-], 1..SDSM_NAME_MAX-1 chars. */
#define SDSM_NAME_MAX		32

/* The default region: id 0, mmap offset 0, interleaved over all nodes. */
#define SDSM_DEFAULT_REGION	0

/**
 * enum sdsm_policy_mode - where the pages of a range have their home
 * @SDSM_POLICY_INTERLEAVE: homes rotate over @nodemask in blocks of
 *	@block_size bytes, by page offset in the region (like numactl
 *	--interleave, but deterministic: the home does not depend on who
 *	touches first)
 * @SDSM_POLICY_BIND: the home is the first node to touch the page if it is
 *	in @nodemask, else the node of @nodemask the interleave rule picks
 *	(numactl --membind)
 * @SDSM_POLICY_PREFERRED: the home is @preferred_node while it is up when
 *	the page is first touched, else the first node to touch it
 *	(numactl --preferred)
 * @SDSM_POLICY_FIRST_TOUCH: the home is the first node to touch the page
 *	(numactl --localalloc)
 *
 * A page's home is fixed the first time any node touches it and never
 * moves afterwards; until then the policy of its range may be changed with
 * SDSM_IOC_SET_POLICY.  INTERLEAVE homes are known before the first touch.
 */
enum sdsm_policy_mode {
	SDSM_POLICY_INTERLEAVE = 0,
	SDSM_POLICY_BIND = 1,
	SDSM_POLICY_PREFERRED = 2,
	SDSM_POLICY_FIRST_TOUCH = 3,
};

/**
 * struct sdsm_policy - a placement policy
 * @mode: enum sdsm_policy_mode
 * @preferred_node: node id for SDSM_POLICY_PREFERRED, else must be 0
 * @nodemask: bit n set = node n; for INTERLEAVE and BIND; 0 means every
 *	node of the cluster; must be 0 for PREFERRED and FIRST_TOUCH
 * @block_size: INTERLEAVE only: bytes per node before the rotation moves
 *	on, a multiple of 4096; 0 means 4096; must be 0 for other modes
 */
struct sdsm_policy {
	__u32 mode;
	__u32 preferred_node;
	__aligned_u64 nodemask;
	__aligned_u64 block_size;
};

/**
 * enum sdsm_region_flags - flags of struct sdsm_region_create
 * @SDSM_REGION_F_EXCL: fail with EEXIST if the name exists (otherwise an
 *	existing region of that name, size and policy is opened instead)
 * @SDSM_REGION_F_OWNED: the region belongs to the file that created it:
 *	when that file is released (the last process holding it exits,
 *	dies or execs), the module destroys the region on every node, as
 *	SDSM_IOC_REGION_DESTROY would, retrying while it is mapped elsewhere
 *	or a node is down (see Documentation/userspace-api.rst).  Ignored
 *	when CREATE opens an existing region.  A module without it fails
 *	with EOPNOTSUPP.
 * @SDSM_REGION_F_MODE: @mode holds the region's permission bits (without
 *	it they are 0600).  Ignored when CREATE opens an existing region.  A
 *	module without it fails with EOPNOTSUPP.
 * @SDSM_REGION_F_RELEASE: the region's consistency is
 *	SDSM_CONSISTENCY_RELEASE (without it SDSM_CONSISTENCY_SEQUENTIAL).
 *	CREATE of an existing name of the other consistency fails with
 *	EEXIST.  A module without it fails with EOPNOTSUPP.
 * @SDSM_REGION_F_MANAGER: node @manager of struct sdsm_region_create fixes
 *	the home of every page at its first touch (without it, each page's
 *	manager is its interleave node over the whole cluster, so most
 *	first touches ask another node).  Only for a policy that does not
 *	compute homes by itself (BIND to several nodes, PREFERRED,
 *	FIRST_TOUCH), else EINVAL.  A module without it fails with
 *	EOPNOTSUPP.
 */
enum sdsm_region_flags {
	SDSM_REGION_F_EXCL = 1 << 0,
	SDSM_REGION_F_OWNED = 1 << 1,
	SDSM_REGION_F_MODE = 1 << 2,
	SDSM_REGION_F_RELEASE = 1 << 3,
	SDSM_REGION_F_MANAGER = 1 << 4,
};

/* struct sdsm_region_info.manager of a region without SDSM_REGION_F_MANAGER */
#define SDSM_MANAGER_INTERLEAVE	0xffffffffU

/**
 * enum sdsm_consistency - the memory model of a region
 * @SDSM_CONSISTENCY_SEQUENTIAL: every write is visible to every node once
 *	the writing access returns (one writer or many readers per page;
 *	the default)
 * @SDSM_CONSISTENCY_RELEASE: release consistency: many nodes may write a
 *	page at once; a node's writes become visible to another node at
 *	the other node's next acquire (cluster lock grant, barrier
 *	departure) that follows the writer's release (lock release, barrier
 *	arrival).  See Documentation/protocol.rst, "Release consistency".
 */
enum sdsm_consistency {
	SDSM_CONSISTENCY_SEQUENTIAL = 0,
	SDSM_CONSISTENCY_RELEASE = 1,
};

/**
 * struct sdsm_region_create - ioctl(SDSM_IOC_REGION_CREATE)
 * @size: sizeof(struct sdsm_region_create)
 * @flags: enum sdsm_region_flags
 * @length: in: bytes, a non-zero multiple of 4096, at most the module's
 *	region size limit
 * @policy: in: placement of the region's pages
 * @name: in: cluster-wide unique name
 * @region_id: out: the cluster-wide id of the region
 * @__reserved: must be 0
 * @offset: out: the mmap() offset of the region on /dev/sdsm
 * @mode: in, with SDSM_REGION_F_MODE: permission bits (0..0777) for the
 *	owner, the group and others, as for a file: read allows
 *	SDSM_IOC_REGION_OPEN and mmap(PROT_READ), write mmap(PROT_WRITE)
 *	and SDSM_IOC_SET_POLICY
 * @manager: in, with SDSM_REGION_F_MANAGER: the node id of the region's
 *	manager, less than the cluster's nr_nodes; else must be 0
 *
 * Creates a region every node of the cluster can open by name, owned by
 * the caller's effective uid and gid (the same numbers on every node).
 * Errors: EEXIST (name taken, with SDSM_REGION_F_EXCL, or taken with
 * another length, policy, consistency or manager), EACCES (the name exists
 * and the caller may not read and write it), EINVAL (bad name, length,
 * policy, mode or manager), ENOSPC
 * (no region ids or offsets left), EHOSTDOWN (a node the creation must
 * reach is down), EFBIG (longer than another node's max_region_mb;
 * nothing is created), ETIMEDOUT (no answer in time), ENOENT (the name
 * existed, and its region was destroyed before this call could open it;
 * or, rarely, other nodes refused 16 new ids in a row as ids of regions
 * destroyed lately).
 */
struct sdsm_region_create {
	__u32 size;
	__u32 flags;
	__aligned_u64 length;
	struct sdsm_policy policy;
	char name[SDSM_NAME_MAX];
	__u32 region_id;
	__u32 __reserved;
	__aligned_u64 offset;
	__u32 mode;
	__u32 manager;
};

/**
 * struct sdsm_region_info - ioctl(SDSM_IOC_REGION_OPEN) and
 *	ioctl(SDSM_IOC_REGION_INFO)
 * @size: sizeof(struct sdsm_region_info)
 * @flags: must be 0
 * @region_id: in for INFO, out for OPEN
 * @__reserved: must be 0
 * @name: in for OPEN (by name), out for INFO
 * @length: out: bytes
 * @offset: out: the mmap() offset of the region on /dev/sdsm
 * @policy: out: the region's policy at creation
 * @uid: out: the owner's user id
 * @gid: out: the owner's group id
 * @mode: out: the permission bits
 * @consistency: out: enum sdsm_consistency
 * @manager: out: the node that fixes the homes of pages at their first
 *	touch (SDSM_REGION_F_MANAGER), or SDSM_MANAGER_INTERLEAVE
 * @__reserved2: out: 0
 *
 * OPEN looks a region up by @name from any node; INFO by @region_id.  OPEN
 * needs read permission (as mmap does; INFO, like sysfs, does not).  The
 * first OPEN of a region on a node that did not create it makes sure
 * every node that is up knows it (a round trip), as CREATE does.
 * Errors: ENOENT (no such region, or destroyed meanwhile), EINVAL (bad
 * name), EACCES (OPEN: no read permission), ETIMEDOUT (OPEN: a node did
 * not answer in time).
 */
struct sdsm_region_info {
	__u32 size;
	__u32 flags;
	__u32 region_id;
	__u32 __reserved;
	char name[SDSM_NAME_MAX];
	__aligned_u64 length;
	__aligned_u64 offset;
	struct sdsm_policy policy;
	__u32 uid;
	__u32 gid;
	__u32 mode;
	__u32 consistency;
	__u32 manager;
	__u32 __reserved2;
};

/**
 * struct sdsm_region_destroy - ioctl(SDSM_IOC_REGION_DESTROY)
 * @size: sizeof(struct sdsm_region_destroy)
 * @flags: must be 0
 * @region_id: the region
 * @__reserved: must be 0
 *
 * Destroys a region on every node.  Only its owner (or a process with
 * CAP_SYS_ADMIN) may.  Errors: ENOENT (no such region), EBUSY (mapped by
 * some process on some node; nothing is destroyed), EPERM (the default
 * region, or not the owner), EHOSTDOWN / ETIMEDOUT as for create.
 */
struct sdsm_region_destroy {
	__u32 size;
	__u32 flags;
	__u32 region_id;
	__u32 __reserved;
};

/**
 * struct sdsm_set_policy - ioctl(SDSM_IOC_SET_POLICY), like mbind(2)
 * @size: sizeof(struct sdsm_set_policy)
 * @flags: must be 0
 * @addr: start of a range in this process mapped from /dev/sdsm, page
 *	aligned
 * @length: bytes, a non-zero multiple of 4096; the range lies in one
 *	mapping of one region
 * @policy: the policy for the range's pages
 *
 * Sets, on every node, where the pages of the range get their home when
 * first touched.  Pages that already have their home keep it, as with
 * mbind(2) without MPOL_MF_MOVE.  Errors: EFAULT (range not mapped from
 * /dev/sdsm), EINVAL (unaligned, bad policy, spans mappings), EACCES (no
 * write permission on the region), EHOSTDOWN / ETIMEDOUT (a node could
 * not be told).
 */
struct sdsm_set_policy {
	__u32 size;
	__u32 flags;
	__aligned_u64 addr;
	__aligned_u64 length;
	struct sdsm_policy policy;
};

/**
 * struct sdsm_query_home - ioctl(SDSM_IOC_QUERY_HOME), like move_pages(2)
 *	with a NULL target
 * @size: sizeof(struct sdsm_query_home)
 * @flags: must be 0
 * @count: number of addresses, 1..4096
 * @__reserved: must be 0
 * @addrs: user pointer to @count __u64 addresses in this process
 * @homes: user pointer to @count __s32: out, per address, the node id of
 *	the home, or a negative errno: -ENOENT (no home yet: a page that no
 *	node has touched and whose policy is neither INTERLEAVE nor BIND to
 *	a single node), -EFAULT (not
 *	an address mapped from /dev/sdsm), -EHOSTDOWN (the node that knows is
 *	down)
 *
 * Returns 0 when every entry is filled in, even if some are negative.
 */
struct sdsm_query_home {
	__u32 size;
	__u32 flags;
	__u32 count;
	__u32 __reserved;
	__aligned_u64 addrs;
	__aligned_u64 homes;
};

/**
 * enum sdsm_lock_op - what SDSM_IOC_LOCK does
 * @SDSM_LOCK_ACQUIRE: wait until the calling thread holds the lock
 * @SDSM_LOCK_TRY: take the lock if it is free, else fail with EBUSY
 * @SDSM_LOCK_RELEASE: release a lock the calling thread holds, else EPERM
 */
enum sdsm_lock_op {
	SDSM_LOCK_ACQUIRE = 0,
	SDSM_LOCK_TRY = 1,
	SDSM_LOCK_RELEASE = 2,
};

/**
 * struct sdsm_lock - ioctl(SDSM_IOC_LOCK): a cluster-wide mutex
 * @size: sizeof(struct sdsm_lock)
 * @flags: must be 0
 * @op: enum sdsm_lock_op
 * @timeout_ms: ACQUIRE: give up with ETIMEDOUT after this long; 0 means
 *	wait until released, the process is killed, or the lock's node dies
 * @lock_id: any 64-bit key agreed by the users; the same key is the same
 *	lock on every node
 *
 * A lock is held by the thread that took it, through the open file of
 * /dev/sdsm it used; another thread waits for it as a thread of another
 * node does.  Every lock held through a file is released when the file is
 * closed (process exit included).  Acquiring orders memory: writes made by
 * the previous holder before its release are visible to the new holder.
 * Errors: EBUSY (TRY on a held lock), EPERM (RELEASE of a lock this thread
 * does not hold through this file), EDEADLK (ACQUIRE of a lock this thread
 * holds through this file), ETIMEDOUT, EINTR (a signal arrived while waiting),
 * EHOSTDOWN (the node that manages the lock is down).
 */
struct sdsm_lock {
	__u32 size;
	__u32 flags;
	__u32 op;
	__u32 timeout_ms;
	__aligned_u64 lock_id;
};

/**
 * struct sdsm_barrier - ioctl(SDSM_IOC_BARRIER): a cluster-wide barrier
 * @size: sizeof(struct sdsm_barrier)
 * @flags: must be 0
 * @count: participants that must arrive; 0 means one per node of
 *	@nodemask
 * @timeout_ms: give up with ETIMEDOUT after this long; 0 means no limit
 *	(still interruptible, and EHOSTDOWN if a node of @nodemask dies)
 * @barrier_id: any 64-bit key agreed by the participants
 * @nodemask: the nodes taking part; 0 means every node of the cluster
 * @out_flags: output, ignored on input: SDSM_BARRIER_OUT_SERIAL in the
 *	one call of each generation that arrived last (what
 *	pthread_barrier_wait() calls the serial thread), 0 in the others.
 *	Set by modules with SDSM_FEATURE_BARRIER_SERIAL; a caller whose
 *	@size ends before it passes the barrier without it.
 * @__reserved: must be 0
 *
 * Returns when @count calls with the same @barrier_id and @nodemask have
 * arrived; the barrier may then be reused.  Errors: ETIMEDOUT, EINTR,
 * EHOSTDOWN (a node of @nodemask is down), EINVAL (this node not in
 * @nodemask, or a different @count or @nodemask than other arrivals).
 */
struct sdsm_barrier {
	__u32 size;
	__u32 flags;
	__u32 count;
	__u32 timeout_ms;
	__aligned_u64 barrier_id;
	__aligned_u64 nodemask;
	__u32 out_flags;
	__u32 __reserved;
};

/**
 * enum sdsm_barrier_out_flags - struct sdsm_barrier's @out_flags
 * @SDSM_BARRIER_OUT_SERIAL: this call arrived last in its generation
 */
enum sdsm_barrier_out_flags {
	SDSM_BARRIER_OUT_SERIAL = 1 << 0,
};

/**
 * enum sdsm_futex_op - what SDSM_IOC_FUTEX does
 * @SDSM_FUTEX_WAIT: FUTEX_WAIT_BITSET: if the u32 at @addr equals @val,
 *	sleep until a WAKE whose bitset shares a bit with @bitset, the
 *	timeout or a signal; else fail with EAGAIN at once
 * @SDSM_FUTEX_WAKE: FUTEX_WAKE_BITSET: wake up to @val waiters of @addr
 *	(oldest first) whose bitset shares a bit with @bitset; @woken tells
 *	how many were woken
 */
enum sdsm_futex_op {
	SDSM_FUTEX_WAIT = 0,
	SDSM_FUTEX_WAKE = 1,
};

/**
 * enum sdsm_futex_flags - flags of struct sdsm_futex
 * @SDSM_FUTEX_F_ABSTIME: WAIT: @timeout_ns is an absolute time of clock
 *	@clockid, not a duration
 */
enum sdsm_futex_flags {
	SDSM_FUTEX_F_ABSTIME = 1 << 0,
};

/* A WAIT bitset that any WAKE matches (FUTEX_BITSET_MATCH_ANY). */
#define SDSM_FUTEX_BITSET_ANY	0xffffffffU

/**
 * struct sdsm_futex - ioctl(SDSM_IOC_FUTEX): futex(2) on coherent memory
 * @size: sizeof(struct sdsm_futex)
 * @flags: enum sdsm_futex_flags; 0 for WAKE
 * @op: enum sdsm_futex_op
 * @val: WAIT: the value expected at @addr; WAKE: most waiters to wake, at
 *	least 1 (INT_MAX or more: all)
 * @addr: a 4-byte aligned address of this process inside a mapping of
 *	/dev/sdsm; the same word of a region is the same futex on every node,
 *	whatever its virtual address
 * @bitset: non-zero; SDSM_FUTEX_BITSET_ANY for plain FUTEX_WAIT/WAKE
 * @clockid: CLOCK_REALTIME (0) or CLOCK_MONOTONIC (1); used by WAIT with
 *	SDSM_FUTEX_F_ABSTIME only, but checked always
 * @timeout_ns: WAIT: negative: no timeout; else nanoseconds from now, or
 *	with SDSM_FUTEX_F_ABSTIME the absolute time on @clockid; ignored by
 *	WAKE
 * @woken: out: WAKE: the number of waiters woken; WAIT: 0
 * @__reserved: must be 0
 *
 * The semantics of futex(2) FUTEX_WAIT_BITSET / FUTEX_WAKE_BITSET across
 * the cluster: a WAIT that returns 0 was woken by a WAKE (or is one of the
 * spurious wake-ups futex(2) allows, never lost ones); a WAKE that follows
 * a store to @addr wakes every waiter that saw the old value.  The futex
 * is managed by the home node of @addr's page.  Errors: EAGAIN (WAIT: the
 * value differs), ETIMEDOUT (WAIT: the timeout passed; WAKE: the manager
 * did not answer in time), EINTR (a signal arrived; a WAIT without a
 * timeout or with an absolute one is restarted instead when the handler
 * has SA_RESTART), EFAULT (@addr not readable or not in a mapping of
 * /dev/sdsm), EINVAL (unaligned @addr, zero @bitset, bad @clockid, zero
 * @val for WAKE, unknown @op), EHOSTDOWN (the home of @addr's page is down,
 * or died while this call waited), ENOSPC (the manager keeps too many
 * waiters of this node already), ENOMEM, or the error that makes every
 * access to @addr's page fail (SIGBUS), e.g. EIO when its data was lost
 * with a node that died.
 */
struct sdsm_futex {
	__u32 size;
	__u32 flags;
	__u32 op;
	__u32 val;
	__aligned_u64 addr;
	__u32 bitset;
	__s32 clockid;
	__s64 timeout_ns;
	__u32 woken;
	__u32 __reserved;
};

#define SDSM_IOC_REGION_CREATE	_IO(SDSM_TYPE, SDSM_CMD_REGION_CREATE)
#define SDSM_IOC_REGION_OPEN	_IO(SDSM_TYPE, SDSM_CMD_REGION_OPEN)
#define SDSM_IOC_REGION_INFO	_IO(SDSM_TYPE, SDSM_CMD_REGION_INFO)
#define SDSM_IOC_REGION_DESTROY	_IO(SDSM_TYPE, SDSM_CMD_REGION_DESTROY)
#define SDSM_IOC_SET_POLICY	_IO(SDSM_TYPE, SDSM_CMD_SET_POLICY)
#define SDSM_IOC_QUERY_HOME	_IO(SDSM_TYPE, SDSM_CMD_QUERY_HOME)
#define SDSM_IOC_LOCK		_IO(SDSM_TYPE, SDSM_CMD_LOCK)
#define SDSM_IOC_BARRIER	_IO(SDSM_TYPE, SDSM_CMD_BARRIER)
#define SDSM_IOC_FUTEX		_IO(SDSM_TYPE, SDSM_CMD_FUTEX)

#endif /* _UAPI_LINUX_SDSM_H */
