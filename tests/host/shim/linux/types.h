/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Host shim: the kernel's <linux/types.h> names for the kernel-free sources
 * of kmod/ (sdsm_proto, sdsm_rc, sdsm_session, sdsm_auth_input) and for
 * kmod/sdsm_wire.h, built as plain user-space C.  On the -I path before the
 * system headers.  The __u* and __be* types are those of the kernel's uapi
 * (asm-generic/int-ll64.h, linux/types.h without sparse's __bitwise), so
 * they agree with a system header that defines them too.
 */
#ifndef _SDSM_HOST_SHIM_TYPES_H
#define _SDSM_HOST_SHIM_TYPES_H

#include <stdbool.h>
#include <stdint.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int8_t s8;
typedef int16_t s16;
typedef int32_t s32;
typedef int64_t s64;

typedef unsigned char __u8;
typedef unsigned short __u16;
typedef unsigned int __u32;
typedef unsigned long long __u64;
typedef __u16 __be16;
typedef __u32 __be32;
typedef __u64 __be64;

#endif
