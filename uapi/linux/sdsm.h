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

/* Command numbers.  Append only: issue 3 adds region, lock, barrier. */
enum {
	SDSM_CMD_BASE = 0x80,
	SDSM_CMD_GET_INFO = SDSM_CMD_BASE,
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
 *	(the transport issue 3 builds coherent memory on)
 */
enum sdsm_features {
	SDSM_FEATURE_PAGE_TRANSPORT = 1 << 0,
};

#endif /* _UAPI_LINUX_SDSM_H */
