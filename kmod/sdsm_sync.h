/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sdsm cluster-wide locks, barriers and futexes: the interface sdsm_main.c
 * uses, and the region table's and the statistics' hooks.
 * The protocol and its failure rules are described at the top of
 * sdsm_sync.c and in Documentation/locks-barriers.rst.
 */
#ifndef SDSM_SYNC_H
#define SDSM_SYNC_H

#include <linux/types.h>

struct file;
struct sdsm_lock;
struct sdsm_barrier;
struct sdsm_futex;

/*
 * Module init, after sdsm_cluster_start(); best before
 * sdsm_transport_start(), so that no peer can send a lock or barrier
 * message before the handlers exist (peers already up are picked up from
 * their state).  Undone by sdsm_sync_exit().
 */
int sdsm_sync_init(void);
/*
 * Module exit (or init failure): after the cluster is stopped or before it
 * runs, while sdsm_cl.wq still exists.  No file of /dev/sdsm is open then.
 */
void sdsm_sync_exit(void);

/* The release fop: drop every lock @file holds.  Process context. */
void sdsm_sync_release_file(struct file *file);

/*
 * Release region @region left this node's region table: its write
 * notices go from the lock and barrier tables here.  Process context,
 * sdsm_regions_mutex not held (this takes the sync lock).
 */
void sdsm_sync_rc_forget(u32 region);
/* Write notices kept in lock tables here, for sysfs; any time. */
unsigned long sdsm_sync_rc_lock_notices(void);

/* SDSM_IOC_LOCK and SDSM_IOC_BARRIER; @cmd already copied in.  -errno. */
int sdsm_sync_lock(struct file *file, struct sdsm_lock *cmd);
int sdsm_sync_barrier(struct file *file, struct sdsm_barrier *cmd);
/* SDSM_IOC_FUTEX; fills in cmd->woken.  -errno. */
int sdsm_sync_futex(struct file *file, struct sdsm_futex *cmd);

#endif /* SDSM_SYNC_H */
