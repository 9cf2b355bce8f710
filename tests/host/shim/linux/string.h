/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Host shim: the kernel's <linux/string.h> (memset, memcpy, strnlen) for
 * kmod/sdsm_auth_input.c.  Shadows the system's deprecated uapi header.
 */
#ifndef _SDSM_HOST_SHIM_STRING_H
#define _SDSM_HOST_SHIM_STRING_H

#include <string.h>

#endif
