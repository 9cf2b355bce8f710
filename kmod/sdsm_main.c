// SPDX-License-Identifier: GPL-2.0
/*
 * sdsm - software distributed shared memory over RDMA: module init and
 * exit, module parameters, and the /dev/sdsm misc device.
 *
 * Parameters are checked completely before anything is created; a bad one
 * fails insmod with -EINVAL and exactly one kernel-log line naming it.
 * They are read-only once loaded.
 *
 * Teardown order (exit and init failure): set sdsm_cl.shutdown, remove the
 * device and sysfs, (exit only) hand the pages held writable back to their
 * homes and say BYE, stop the listener and the ib_client (closes every
 * connection bound to a device), then sdsm_cluster_stop() closes whatever
 * is left.  No step holds a lock while it waits.
 *
 * The ioctls follow include/uapi/linux/iommufd.h: a table indexed by
 * command number, size-first structs read with copy_struct_from_user().
 * Coherent memory (mmap, regions, placement) lives in sdsm_mem.c and
 * sdsm_region.c; this file only wires it to the device.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/fs.h>
#include <linux/inet.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/sdsm.h>

#include "sdsm.h"
#include "sdsm_mem.h"
#include "sdsm_stats.h"
#include "sdsm_sync.h"

struct sdsm_cluster sdsm_cl;

static int node_id = -1;
module_param(node_id, int, 0444);
MODULE_PARM_DESC(node_id, "id of this node: index of its address in nodes=");

static char *nodes;
module_param(nodes, charp, 0444);
MODULE_PARM_DESC(nodes, "comma-separated IPv4 addresses of every node, index = node id");

static int port = SDSM_DEFAULT_PORT;
module_param(port, int, 0444);
MODULE_PARM_DESC(port, "rdma_cm TCP port space port (default 18610)");

static int heartbeat_ms = 500;
module_param(heartbeat_ms, int, 0444);
MODULE_PARM_DESC(heartbeat_ms, "PING interval in ms (10..60000, default 500)");

static int peer_timeout_ms = 3000;
module_param(peer_timeout_ms, int, 0444);
MODULE_PARM_DESC(peer_timeout_ms,
		 "silence in ms after which a peer is down (2 * heartbeat_ms..600000, default 3000)");

/*
 * The RC local ACK timeout of every queue pair, IB encoding: 4.096 us *
 * 2^ack_timeout, the time a sender waits for an acknowledgment before it
 * retransmits.  rdma_cm's own choice on RoCE is 2^19 (2.1 s), so one lost
 * frame at the end of a burst stalls the queue pair for 2 s; 14 (67 ms)
 * is perftest's default.  With retry_count 6, the connection fails after
 * 7 timeouts without an acknowledgment (0.47 s), on an HCA and on
 * soft-RoCE alike (which takes 7 to mean forever); the session waits for
 * the next connection, and declares the peer down after peer_timeout_ms
 * of silence.
 */
static int ack_timeout = 14;
module_param(ack_timeout, int, 0444);
MODULE_PARM_DESC(ack_timeout,
		 "RC ACK timeout, 4.096 us * 2^ack_timeout (1..31, default 14: 67 ms; 0: rdma_cm's default)");

/* Parse nodes= into sdsm_cl.peers[].addr; one log line on error. */
static char *auth = "hmac-sha256";
module_param(auth, charp, 0444);
MODULE_PARM_DESC(auth, "peer authentication: hmac-sha256 (default, needs the cluster secret) or none");

static char *auth_key = "sdsm:cluster";
module_param(auth_key, charp, 0444);
MODULE_PARM_DESC(auth_key, "description of the logon key holding the cluster secret (default sdsm:cluster)");

static int sdsm_parse_nodes(void)
{
	char *copy, *cur, *tok;
	unsigned int n = 0, i;
	int ret = -EINVAL;

	if (!nodes || !*nodes) {
		pr_err("nodes= is required: comma-separated IPv4 addresses of every node\n");
		return -EINVAL;
	}
	copy = kstrdup(nodes, GFP_KERNEL);
	if (!copy)
		return -ENOMEM;
	cur = copy;
	while ((tok = strsep(&cur, ",")) != NULL) {
		const char *end;
		__be32 a;

		if (n == SDSM_MAX_NODES) {
			pr_err("nodes= lists more than %d addresses\n",
			       SDSM_MAX_NODES);
			goto out_free;
		}
		if (!*tok) {
			pr_err("nodes= entry %u is empty\n", n);
			goto out_free;
		}
		if (!in4_pton(tok, -1, (u8 *)&a, -1, &end) || *end) {
			pr_err("nodes= entry %u '%s' is not an IPv4 address\n",
			       n, tok);
			goto out_free;
		}
		if (ipv4_is_zeronet(a) || ipv4_is_multicast(a) ||
		    ipv4_is_lbcast(a)) {
			pr_err("nodes= entry %u %pI4 is not a unicast address\n",
			       n, &a);
			goto out_free;
		}
		for (i = 0; i < n; i++) {
			if (sdsm_cl.peers[i].addr.sin_addr.s_addr == a) {
				pr_err("nodes= lists %pI4 twice (entries %u and %u)\n",
				       &a, i, n);
				goto out_free;
			}
		}
		sdsm_cl.peers[n].id = n;
		sdsm_cl.peers[n].addr.sin_family = AF_INET;
		sdsm_cl.peers[n].addr.sin_addr.s_addr = a;
		n++;
	}
	sdsm_cl.nr_nodes = n;
	ret = 0;
out_free:
	kfree(copy);
	return ret;
}

static int sdsm_check_params(void)
{
	int ret;

	ret = sdsm_parse_nodes();
	if (ret)
		return ret;
	if (node_id < 0 || node_id >= sdsm_cl.nr_nodes) {
		if (node_id == -1)
			pr_err("node_id= is required: this node's index in nodes= (0..%u)\n",
			       sdsm_cl.nr_nodes - 1);
		else
			pr_err("node_id=%d out of range: nodes= lists %u addresses\n",
			       node_id, sdsm_cl.nr_nodes);
		return -EINVAL;
	}
	if (port < 1 || port > 65535) {
		pr_err("port=%d out of range 1..65535\n", port);
		return -EINVAL;
	}
	if (heartbeat_ms < 10 || heartbeat_ms > 60000) {
		pr_err("heartbeat_ms=%d out of range 10..60000\n",
		       heartbeat_ms);
		return -EINVAL;
	}
	if (peer_timeout_ms < 2 * heartbeat_ms || peer_timeout_ms > 600000) {
		pr_err("peer_timeout_ms=%d out of range %d..600000 (at least 2 * heartbeat_ms)\n",
		       peer_timeout_ms, 2 * heartbeat_ms);
		return -EINVAL;
	}
	if (ack_timeout < 0 || ack_timeout > 31) {
		pr_err("ack_timeout=%d out of range 0..31\n", ack_timeout);
		return -EINVAL;
	}
	if (!auth || (strcmp(auth, "hmac-sha256") && strcmp(auth, "none"))) {
		pr_err("auth=%s: must be hmac-sha256 or none\n",
		       auth ?: "");
		return -EINVAL;
	}
	/* A logon key's description is "prefix:name". */
	if (!auth_key || !*auth_key || *auth_key == ':' ||
	    !strchr(auth_key, ':')) {
		pr_err("auth_key=%s: a logon key description is prefix:name\n",
		       auth_key ?: "");
		return -EINVAL;
	}
	ret = sdsm_mem_check_params();
	if (ret)
		return ret;
	sdsm_cl.auth_key = strcmp(auth, "none") ? auth_key : NULL;
	sdsm_cl.node_id = node_id;
	sdsm_cl.port = port;
	sdsm_cl.heartbeat_ms = heartbeat_ms;
	sdsm_cl.peer_timeout_ms = peer_timeout_ms;
	sdsm_cl.ack_timeout = ack_timeout;
	return 0;
}

/* ------------------------------------------------------------------ */
/* /dev/sdsm                                                           */

static int sdsm_cmd_get_info(struct file *file, void *cmd)
{
	struct sdsm_info *info = cmd;

	if (info->flags)
		return -EOPNOTSUPP;
	if (info->__reserved)
		return -EINVAL;
	info->api_version = SDSM_API_VERSION;
	info->node_id = sdsm_cl.node_id;
	info->nr_nodes = sdsm_cl.nr_nodes;
	info->features = SDSM_FEATURE_PAGE_TRANSPORT |
			 SDSM_FEATURE_COHERENT_MEMORY | SDSM_FEATURE_REGIONS |
			 SDSM_FEATURE_PLACEMENT | SDSM_FEATURE_LOCKS |
			 SDSM_FEATURE_BARRIERS | SDSM_FEATURE_FUTEX |
			 SDSM_FEATURE_LOCK_THREADS |
			 SDSM_FEATURE_BARRIER_SERIAL;
	return 0;
}

static int sdsm_cmd_lock(struct file *file, void *cmd)
{
	return sdsm_sync_lock(file, cmd);
}

static int sdsm_cmd_barrier(struct file *file, void *cmd)
{
	return sdsm_sync_barrier(file, cmd);
}

static int sdsm_cmd_futex(struct file *file, void *cmd)
{
	return sdsm_sync_futex(file, cmd);
}

union sdsm_ioctl_buffer {
	struct sdsm_info info;
	struct sdsm_region_create region_create;
	struct sdsm_region_info region_info;
	struct sdsm_region_destroy region_destroy;
	struct sdsm_set_policy set_policy;
	struct sdsm_query_home query_home;
	struct sdsm_lock lock;
	struct sdsm_barrier barrier;
	struct sdsm_futex futex;
};

struct sdsm_ioctl_op {
	unsigned int size;	/* kernel's struct size */
	unsigned int min_size;	/* size of the first version */
	unsigned int ioctl_num;
	int (*execute)(struct file *file, void *cmd);
};

static const struct sdsm_ioctl_op sdsm_ioctl_ops[] = {
	[SDSM_CMD_GET_INFO - SDSM_CMD_BASE] = {
		.size = sizeof(struct sdsm_info),
		.min_size = offsetofend(struct sdsm_info, features),
		.ioctl_num = SDSM_IOC_GET_INFO,
		.execute = sdsm_cmd_get_info,
	},
	[SDSM_CMD_REGION_CREATE - SDSM_CMD_BASE] = {
		.size = sizeof(struct sdsm_region_create),
		.min_size = offsetofend(struct sdsm_region_create, offset),
		.ioctl_num = SDSM_IOC_REGION_CREATE,
		.execute = sdsm_cmd_region_create,
	},
	[SDSM_CMD_REGION_OPEN - SDSM_CMD_BASE] = {
		.size = sizeof(struct sdsm_region_info),
		.min_size = offsetofend(struct sdsm_region_info, policy),
		.ioctl_num = SDSM_IOC_REGION_OPEN,
		.execute = sdsm_cmd_region_open,
	},
	[SDSM_CMD_REGION_INFO - SDSM_CMD_BASE] = {
		.size = sizeof(struct sdsm_region_info),
		.min_size = offsetofend(struct sdsm_region_info, policy),
		.ioctl_num = SDSM_IOC_REGION_INFO,
		.execute = sdsm_cmd_region_info,
	},
	[SDSM_CMD_REGION_DESTROY - SDSM_CMD_BASE] = {
		.size = sizeof(struct sdsm_region_destroy),
		.min_size = offsetofend(struct sdsm_region_destroy, __reserved),
		.ioctl_num = SDSM_IOC_REGION_DESTROY,
		.execute = sdsm_cmd_region_destroy,
	},
	[SDSM_CMD_SET_POLICY - SDSM_CMD_BASE] = {
		.size = sizeof(struct sdsm_set_policy),
		.min_size = offsetofend(struct sdsm_set_policy, policy),
		.ioctl_num = SDSM_IOC_SET_POLICY,
		.execute = sdsm_cmd_set_policy,
	},
	[SDSM_CMD_QUERY_HOME - SDSM_CMD_BASE] = {
		.size = sizeof(struct sdsm_query_home),
		.min_size = offsetofend(struct sdsm_query_home, homes),
		.ioctl_num = SDSM_IOC_QUERY_HOME,
		.execute = sdsm_cmd_query_home,
	},
	[SDSM_CMD_LOCK - SDSM_CMD_BASE] = {
		.size = sizeof(struct sdsm_lock),
		.min_size = offsetofend(struct sdsm_lock, lock_id),
		.ioctl_num = SDSM_IOC_LOCK,
		.execute = sdsm_cmd_lock,
	},
	[SDSM_CMD_BARRIER - SDSM_CMD_BASE] = {
		.size = sizeof(struct sdsm_barrier),
		.min_size = offsetofend(struct sdsm_barrier, nodemask),
		.ioctl_num = SDSM_IOC_BARRIER,
		.execute = sdsm_cmd_barrier,
	},
	[SDSM_CMD_FUTEX - SDSM_CMD_BASE] = {
		.size = sizeof(struct sdsm_futex),
		.min_size = offsetofend(struct sdsm_futex, __reserved),
		.ioctl_num = SDSM_IOC_FUTEX,
		.execute = sdsm_cmd_futex,
	},
};

static long sdsm_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	void __user *ubuf = (void __user *)arg;
	const struct sdsm_ioctl_op *op;
	union sdsm_ioctl_buffer buf;
	unsigned int nr = _IOC_NR(cmd);
	u32 user_size;
	int ret;

	if (_IOC_TYPE(cmd) != SDSM_TYPE || nr < SDSM_CMD_BASE ||
	    nr - SDSM_CMD_BASE >= ARRAY_SIZE(sdsm_ioctl_ops))
		return -ENOTTY;
	op = &sdsm_ioctl_ops[nr - SDSM_CMD_BASE];
	if (!op->execute || op->ioctl_num != cmd)
		return -ENOTTY;

	if (get_user(user_size, (u32 __user *)ubuf))
		return -EFAULT;
	if (user_size < op->min_size)
		return -EINVAL;
	ret = copy_struct_from_user(&buf, op->size, ubuf, user_size);
	if (ret)
		return ret;
	ret = op->execute(file, &buf);
	if (ret)
		return ret;
	if (copy_to_user(ubuf, &buf, min_t(u32, user_size, op->size)))
		return -EFAULT;
	return 0;
}

static int sdsm_open(struct inode *inode, struct file *file)
{
	return sdsm_mem_open(inode, file);
}

static int sdsm_fadvise(struct file *file, loff_t offset, loff_t len,
			int advice)
{
	return 0;	/* no page cache behind /dev/sdsm: nothing to advise */
}

static int sdsm_release(struct inode *inode, struct file *file)
{
	sdsm_sync_release_file(file);
	sdsm_region_release_file(file);
	return 0;
}

static const struct file_operations sdsm_fops = {
	.owner = THIS_MODULE,
	.open = sdsm_open,
	.release = sdsm_release,
	.unlocked_ioctl = sdsm_ioctl,
	.mmap = sdsm_mem_mmap,
	.fadvise = sdsm_fadvise,
	.compat_ioctl = compat_ptr_ioctl,
	.llseek = noop_llseek,
};

static struct miscdevice sdsm_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "sdsm",
	.fops = &sdsm_fops,
};

/* ------------------------------------------------------------------ */

static int __init sdsm_init(void)
{
	int ret;

	ret = sdsm_check_params();
	if (ret)
		return ret;
	do {
		sdsm_cl.incarnation = get_random_u64();
	} while (!sdsm_cl.incarnation);
	spin_lock_init(&sdsm_cl.reap_lock);
	INIT_LIST_HEAD(&sdsm_cl.reap_list);

	/* Counters first: every later layer may count from its first step. */
	ret = sdsm_stats_alloc();
	if (ret)
		return ret;
	sdsm_cl.wq = alloc_workqueue("sdsm", WQ_UNBOUND | WQ_MEM_RECLAIM, 0);
	if (!sdsm_cl.wq) {
		ret = -ENOMEM;
		goto out_free_stats;
	}
	sdsm_cl.tx_wq = alloc_workqueue("sdsm_tx", WQ_UNBOUND | WQ_MEM_RECLAIM,
					0);
	if (!sdsm_cl.tx_wq) {
		ret = -ENOMEM;
		goto out_destroy_wq;
	}
	ret = sdsm_cluster_start();
	if (ret)
		goto out_destroy_tx_wq;
	ret = sdsm_sysfs_init();
	if (ret)
		goto out_stop_cluster;
	ret = sdsm_stats_init(sdsm_cl.kobj);
	if (ret)
		goto out_sysfs_exit;
	/*
	 * Every message handler and peer notifier is registered before the
	 * listener exists, so no message from a peer finds its layer missing.
	 */
	ret = sdsm_mem_init();
	if (ret)
		goto out_stats_exit;
	ret = sdsm_sync_init();
	if (ret)
		goto out_mem_exit;
	ret = sdsm_transport_start();
	if (ret)
		goto out_sync_exit;
	ret = misc_register(&sdsm_misc);
	if (ret) {
		pr_err("cannot register /dev/sdsm: %d\n", ret);
		goto out_stop_transport;
	}
	sdsm_cluster_run();
	pr_info("node %u of %u (%pI4), port %u, incarnation %llx\n",
		sdsm_cl.node_id, sdsm_cl.nr_nodes,
		&sdsm_cl.peers[sdsm_cl.node_id].addr.sin_addr, sdsm_cl.port,
		sdsm_cl.incarnation);
	return 0;

out_stop_transport:
	WRITE_ONCE(sdsm_cl.shutdown, true);
	sdsm_transport_stop();
out_sync_exit:
	sdsm_sync_exit();
out_mem_exit:
	sdsm_mem_exit();
out_stats_exit:
	sdsm_stats_exit();
out_sysfs_exit:
	sdsm_sysfs_exit();
out_stop_cluster:
	sdsm_cluster_stop();
	sdsm_queues_purge();
	sdsm_cluster_free();
out_destroy_tx_wq:
	destroy_workqueue(sdsm_cl.tx_wq);
out_destroy_wq:
	destroy_workqueue(sdsm_cl.wq);
out_free_stats:
	sdsm_stats_free();
	return ret;
}

/*
 * The reverse of sdsm_init(), after what only this node holds went back
 * to the pages' homes (sdsm_mem_leave(); no process maps a region, the
 * device is gone): the transport goes first, so no message is
 * received and no handler runs while the layers above tear down (before,
 * a peer's messages arrived after the memory layer had gone and were
 * dropped).  Stopping the cluster reports every peer DOWN to the layers,
 * which are still there to fail what waits for a peer.
 */
static void __exit sdsm_exit(void)
{
	WRITE_ONCE(sdsm_cl.shutdown, true);
	misc_deregister(&sdsm_misc);
	sdsm_mem_leave();
	sdsm_transport_goodbye();
	sdsm_transport_stop();
	sdsm_cluster_stop();
	sdsm_sync_exit();
	sdsm_mem_exit();
	sdsm_queues_purge();	/* what the layers queued as they went */
	sdsm_cluster_free();
	sdsm_stats_exit();
	sdsm_sysfs_exit();
	destroy_workqueue(sdsm_cl.tx_wq);
	destroy_workqueue(sdsm_cl.wq);
	sdsm_stats_free();	/* last: everything above may still count */
	pr_info("unloaded\n");
}

module_init(sdsm_init);
module_exit(sdsm_exit);

MODULE_DESCRIPTION("Software distributed shared memory over RDMA");
MODULE_LICENSE("GPL");
MODULE_VERSION(SDSM_VERSION);
