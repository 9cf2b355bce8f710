// SPDX-License-Identifier: GPL-2.0
/*
 * sdsm sysfs view, /sys/kernel/sdsm/ (documented in
 * Documentation/ABI/testing/sysfs-kernel-sdsm):
 *
 *   node_id, nr_nodes, metadata_bytes_per_page
 *   nodes/<n>/{addr,state,link,rtt_us,tx_msgs,rx_msgs,tx_bytes,rx_bytes,
 *             homed_pages,resumes}
 *
 * stats/ is sdsm_stats.c's, regions/ is sdsm_region.c's.
 *
 * Every file is read-only.  A node directory is named by its id, which is
 * how its show functions find the struct sdsm_peer.  The directories are
 * removed before the peers go away, and kernfs waits for running reads.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kstrtox.h>
#include <linux/slab.h>
#include <linux/sysfs.h>

#include "sdsm.h"
#include "sdsm_mem.h"

static ssize_t node_id_show(struct kobject *kobj, struct kobj_attribute *attr,
			    char *buf)
{
	return sysfs_emit(buf, "%u\n", sdsm_cl.node_id);
}

static struct kobj_attribute sdsm_attr_node_id = __ATTR_RO(node_id);

static ssize_t nr_nodes_show(struct kobject *kobj, struct kobj_attribute *attr,
			     char *buf)
{
	return sysfs_emit(buf, "%u\n", sdsm_cl.nr_nodes);
}

static struct kobj_attribute sdsm_attr_nr_nodes = __ATTR_RO(nr_nodes);

/*
 * The module's memory per 4 KiB page of a region on a node that is the
 * page's home (the most any node spends on it): the page's share of its
 * node-side chunk (struct sdsm_page) and of its home-side chunk (struct
 * sdsm_home_page: the directory entry and the home copy's pointer), each
 * as allocated (sdsm_chunk_bytes()), and of the region's two arrays of
 * chunk pointers, rounded up.  A node that is not the page's home has no
 * home side for it.  Not counted: the copies themselves (data), transient
 * state (holds, queued messages).
 */
static size_t sdsm_metadata_bytes_per_page(void)
{
	return DIV_ROUND_UP(sdsm_chunk_bytes(sizeof(struct sdsm_chunk)) +
			    sdsm_chunk_bytes(sizeof(struct sdsm_home_chunk)) +
			    sizeof(struct sdsm_chunk *) +
			    sizeof(struct sdsm_home_chunk *),
			    SDSM_CHUNK_PAGES);
}

static ssize_t metadata_bytes_per_page_show(struct kobject *kobj,
					    struct kobj_attribute *attr,
					    char *buf)
{
	return sysfs_emit(buf, "%zu\n", sdsm_metadata_bytes_per_page());
}

static struct kobj_attribute sdsm_attr_metadata_bytes_per_page =
	__ATTR_RO(metadata_bytes_per_page);

static struct attribute *sdsm_top_attrs[] = {
	&sdsm_attr_node_id.attr,
	&sdsm_attr_nr_nodes.attr,
	&sdsm_attr_metadata_bytes_per_page.attr,
	NULL,
};

static const struct attribute_group sdsm_top_group = {
	.attrs = sdsm_top_attrs,
};

static struct sdsm_peer *sdsm_kobj_peer(struct kobject *kobj)
{
	unsigned int id;

	if (kstrtouint(kobject_name(kobj), 10, &id) || id >= sdsm_cl.nr_nodes)
		return NULL;
	return &sdsm_cl.peers[id];
}

static ssize_t addr_show(struct kobject *kobj, struct kobj_attribute *attr,
			 char *buf)
{
	struct sdsm_peer *peer = sdsm_kobj_peer(kobj);

	return peer ? sysfs_emit(buf, "%pI4\n", &peer->addr.sin_addr) : -ENODEV;
}

static ssize_t state_show(struct kobject *kobj, struct kobj_attribute *attr,
			  char *buf)
{
	struct sdsm_peer *peer = sdsm_kobj_peer(kobj);

	if (!peer)
		return -ENODEV;
	return sysfs_emit(buf, "%s\n",
			  sdsm_peer_state_name(sdsm_peer_shown_state(peer)));
}

/* The state of the link alone: "up" only while a connection carries it. */
static ssize_t link_show(struct kobject *kobj, struct kobj_attribute *attr,
			 char *buf)
{
	struct sdsm_peer *peer = sdsm_kobj_peer(kobj);

	if (!peer)
		return -ENODEV;
	return sysfs_emit(buf, "%s\n",
			  sdsm_peer_state_name(READ_ONCE(peer->state)));
}

static ssize_t rtt_us_show(struct kobject *kobj, struct kobj_attribute *attr,
			   char *buf)
{
	struct sdsm_peer *peer = sdsm_kobj_peer(kobj);

	if (!peer)
		return -ENODEV;
	return sysfs_emit(buf, "%llu\n",
			  div_u64(READ_ONCE(peer->srtt_ns), NSEC_PER_USEC));
}

/* Counters are atomic64_t members of struct sdsm_peer, found by offset. */
struct sdsm_counter_attr {
	struct kobj_attribute attr;
	size_t offset;
};

static ssize_t sdsm_counter_show(struct kobject *kobj,
				 struct kobj_attribute *attr, char *buf)
{
	struct sdsm_counter_attr *ca =
		container_of(attr, struct sdsm_counter_attr, attr);
	struct sdsm_peer *peer = sdsm_kobj_peer(kobj);
	atomic64_t *counter;

	if (!peer)
		return -ENODEV;
	counter = (void *)peer + ca->offset;
	return sysfs_emit(buf, "%lld\n", atomic64_read(counter));
}

static struct sdsm_counter_attr sdsm_attr_tx_msgs = {
	.attr = __ATTR(tx_msgs, 0444, sdsm_counter_show, NULL),
	.offset = offsetof(struct sdsm_peer, tx_msgs),
};

static struct sdsm_counter_attr sdsm_attr_rx_msgs = {
	.attr = __ATTR(rx_msgs, 0444, sdsm_counter_show, NULL),
	.offset = offsetof(struct sdsm_peer, rx_msgs),
};

static struct sdsm_counter_attr sdsm_attr_tx_bytes = {
	.attr = __ATTR(tx_bytes, 0444, sdsm_counter_show, NULL),
	.offset = offsetof(struct sdsm_peer, tx_bytes),
};

static struct sdsm_counter_attr sdsm_attr_rx_bytes = {
	.attr = __ATTR(rx_bytes, 0444, sdsm_counter_show, NULL),
	.offset = offsetof(struct sdsm_peer, rx_bytes),
};

static struct sdsm_counter_attr sdsm_attr_resumes = {
	.attr = __ATTR(resumes, 0444, sdsm_counter_show, NULL),
	.offset = offsetof(struct sdsm_peer, resumes),
};

/* Pages this node knows to be homed at the node (sdsm_mem.c counts). */
static ssize_t homed_pages_show(struct kobject *kobj,
				struct kobj_attribute *attr, char *buf)
{
	struct sdsm_peer *peer = sdsm_kobj_peer(kobj);

	if (!peer)
		return -ENODEV;
	return sysfs_emit(buf, "%lld\n",
			  atomic64_read(&sdsm_homed_pages[peer->id]));
}

static struct kobj_attribute sdsm_attr_addr = __ATTR_RO(addr);
static struct kobj_attribute sdsm_attr_homed_pages = __ATTR_RO(homed_pages);
static struct kobj_attribute sdsm_attr_state = __ATTR_RO(state);
static struct kobj_attribute sdsm_attr_link = __ATTR_RO(link);
static struct kobj_attribute sdsm_attr_rtt_us = __ATTR_RO(rtt_us);

static struct attribute *sdsm_node_attrs[] = {
	&sdsm_attr_addr.attr,
	&sdsm_attr_state.attr,
	&sdsm_attr_link.attr,
	&sdsm_attr_rtt_us.attr,
	&sdsm_attr_tx_msgs.attr.attr,
	&sdsm_attr_rx_msgs.attr.attr,
	&sdsm_attr_tx_bytes.attr.attr,
	&sdsm_attr_rx_bytes.attr.attr,
	&sdsm_attr_homed_pages.attr,
	&sdsm_attr_resumes.attr.attr,
	NULL,
};

static const struct attribute_group sdsm_node_group = {
	.attrs = sdsm_node_attrs,
};

int sdsm_sysfs_init(void)
{
	unsigned int i;
	char name[16];
	int ret;

	sdsm_cl.kobj = kobject_create_and_add("sdsm", kernel_kobj);
	if (!sdsm_cl.kobj)
		return -ENOMEM;
	ret = sysfs_create_group(sdsm_cl.kobj, &sdsm_top_group);
	if (ret)
		goto out_remove;
	sdsm_cl.nodes_kobj = kobject_create_and_add("nodes", sdsm_cl.kobj);
	if (!sdsm_cl.nodes_kobj) {
		ret = -ENOMEM;
		goto out_remove;
	}
	for (i = 0; i < sdsm_cl.nr_nodes; i++) {
		struct kobject *kobj;

		snprintf(name, sizeof(name), "%u", i);
		kobj = kobject_create_and_add(name, sdsm_cl.nodes_kobj);
		if (!kobj) {
			ret = -ENOMEM;
			goto out_remove;
		}
		sdsm_cl.peers[i].kobj = kobj;
		ret = sysfs_create_group(kobj, &sdsm_node_group);
		if (ret)
			goto out_remove;
	}
	return 0;

out_remove:
	sdsm_sysfs_exit();
	return ret;
}

/* Idempotent; also undoes a partial sdsm_sysfs_init(). */
void sdsm_sysfs_exit(void)
{
	unsigned int i;

	for (i = 0; i < sdsm_cl.nr_nodes; i++) {
		kobject_put(sdsm_cl.peers[i].kobj);
		sdsm_cl.peers[i].kobj = NULL;
	}
	kobject_put(sdsm_cl.nodes_kobj);
	sdsm_cl.nodes_kobj = NULL;
	kobject_put(sdsm_cl.kobj);
	sdsm_cl.kobj = NULL;
}
