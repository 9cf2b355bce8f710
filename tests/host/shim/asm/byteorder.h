/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Host shim: the kernel's byte order conversions (<asm/byteorder.h>) for
 * kmod/sdsm_auth_input.c, on any host byte order.
 */
#ifndef _SDSM_HOST_SHIM_BYTEORDER_H
#define _SDSM_HOST_SHIM_BYTEORDER_H

#include <endian.h>
#include <linux/types.h>

#define cpu_to_be16(x)	((__be16)htobe16((__u16)(x)))
#define cpu_to_be32(x)	((__be32)htobe32((__u32)(x)))
#define cpu_to_be64(x)	((__be64)htobe64((__u64)(x)))
#define be16_to_cpu(x)	((__u16)be16toh((__be16)(x)))
#define be32_to_cpu(x)	((__u32)be32toh((__be32)(x)))
#define be64_to_cpu(x)	((__u64)be64toh((__be64)(x)))

#endif
