// SPDX-License-Identifier: GPL-2.0
#include <linux/module.h>
#include <linux/sdsm.h>
static int __init sdsm_init(void) { return 0; }
static void __exit sdsm_exit(void) { }
module_init(sdsm_init);
module_exit(sdsm_exit);
MODULE_LICENSE("GPL");
