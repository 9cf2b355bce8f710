/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Host shim: the kernel's <linux/types.h> names for kmod/sdsm_proto.[ch]
 * built as plain user-space C.  On the -I path before the system headers.
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

#endif
