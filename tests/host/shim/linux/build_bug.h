/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Host shim: static_assert() of the kernel's <linux/build_bug.h>, for
 * kmod/sdsm_wire.h: the message is optional, as in the kernel (C11's
 * <assert.h> wants one).
 */
#ifndef _SDSM_HOST_SHIM_BUILD_BUG_H
#define _SDSM_HOST_SHIM_BUILD_BUG_H

#undef static_assert
#define static_assert(expr, ...) __static_assert(expr, ##__VA_ARGS__, #expr)
#define __static_assert(expr, msg, ...) _Static_assert(expr, msg)

#endif
