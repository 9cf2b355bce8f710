/* SPDX-License-Identifier: GPL-2.0 */
/* Host shim: <asm/page.h>, the page size of the module's x86-64 build. */
#ifndef _SDSM_HOST_SHIM_PAGE_H
#define _SDSM_HOST_SHIM_PAGE_H

#define PAGE_SIZE	4096UL

#endif
