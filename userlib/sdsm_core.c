// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libsdsm core: the process's file of /dev/sdsm, the module's GET_INFO
 * answer, feature checks, and error reporting.
 *
 * The device is opened lazily, once per process, under sdsm_dev_lock, and
 * kept open: locks taken through it belong to it (so to the process), and
 * the mappings of allocations outlive nothing but the process.  A failed
 * open is not cached, so a program can wait for the module to be loaded.
 *
 * "Not there" is told apart precisely: ENODEV when the module is not loaded
 * (no sysfs directory) or the file is not an sdsm device, ENOENT when the
 * module is loaded but the device node is missing, ENOSYS when the module
 * lacks the feature an ioctl needs (a bit of sdsm_info.features, or ENOTTY
 * from an older module).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sdsm_internal.h"

static __thread char sdsm_errbuf[256];

/* Protects sdsm_dev_fd and sdsm_dev_info; both are set once. */
static pthread_mutex_t sdsm_dev_lock = PTHREAD_MUTEX_INITIALIZER;
static int sdsm_dev_fd = -1;
static struct sdsm_info sdsm_dev_info;

int sdsm_fail(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(sdsm_errbuf, sizeof(sdsm_errbuf), fmt, ap);
	va_end(ap);
	errno = err;
	return -1;
}

void sdsm_clear_error(void)
{
	sdsm_errbuf[0] = '\0';
}

const char *sdsm_last_error(void)
{
	return sdsm_errbuf[0] ? sdsm_errbuf : "no error";
}

const char *sdsm_strerror(int errnum)
{
	switch (errnum) {
	case ENODEV:
		return "sdsm module not loaded, or not an sdsm device";
	case ENOENT:
		return "no such region, or /dev/sdsm missing while the module is loaded";
	case ENOSYS:
		return "the loaded sdsm module lacks this feature";
	case EPROTO:
		return "the loaded sdsm module has another API version";
	case EHOSTDOWN:
		return "a node that must take part is down";
	case ETIMEDOUT:
		return "no answer from the cluster in time";
	case EEXIST:
		return "a region of that name exists";
	case EBUSY:
		return "busy: region mapped, page already placed, or lock held";
	case EPERM:
		return "not permitted: lock not held, or the default region";
	case EDEADLK:
		return "this thread already holds the lock";
	default:
		return strerror(errnum);
	}
}

static const char *sdsm_device_path(void)
{
	const char *p = getenv("SDSM_DEVICE");

	return p && *p ? p : SDSM_DEVICE_PATH;
}

static int sdsm_dev_open(void)
{
	const char *path = sdsm_device_path();
	struct sdsm_info info;
	struct stat st;
	int fd, err;

	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		err = errno;
		if (err != ENOENT)
			return sdsm_fail(err, "%s: %s", path, strerror(err));
		if (stat(sdsm_sysfs_root(), &st) < 0)
			return sdsm_fail(ENODEV,
					 "%s: sdsm module not loaded (no %s)",
					 path, sdsm_sysfs_root());
		return sdsm_fail(ENOENT,
				 "%s: missing, but the sdsm module is loaded",
				 path);
	}
	memset(&info, 0, sizeof(info));
	info.size = sizeof(info);
	if (ioctl(fd, SDSM_IOC_GET_INFO, &info) < 0) {
		err = errno;
		close(fd);
		if (err == ENOTTY || err == EINVAL)
			return sdsm_fail(ENODEV, "%s: not an sdsm device", path);
		return sdsm_fail(err, "%s: GET_INFO: %s", path, strerror(err));
	}
	if (info.api_version != SDSM_API_VERSION) {
		close(fd);
		return sdsm_fail(EPROTO,
				 "%s: module API version %u, library knows %u",
				 path, info.api_version, SDSM_API_VERSION);
	}
	sdsm_dev_info = info;
	sdsm_dev_fd = fd;
	return fd;
}

int sdsm_dev(struct sdsm_info *info)
{
	int fd;

	pthread_mutex_lock(&sdsm_dev_lock);
	fd = sdsm_dev_fd;
	if (fd < 0)
		fd = sdsm_dev_open();
	if (fd >= 0 && info)
		*info = sdsm_dev_info;
	pthread_mutex_unlock(&sdsm_dev_lock);
	return fd;
}

const char *sdsm_feature_name(uint64_t feature)
{
	switch (feature) {
	case SDSM_FEATURE_PAGE_TRANSPORT:	return "page_transport";
	case SDSM_FEATURE_COHERENT_MEMORY:	return "coherent_memory";
	case SDSM_FEATURE_REGIONS:		return "regions";
	case SDSM_FEATURE_PLACEMENT:		return "placement";
	case SDSM_FEATURE_LOCKS:		return "locks";
	case SDSM_FEATURE_BARRIERS:		return "barriers";
	case SDSM_FEATURE_FUTEX:		return "futex";
	case SDSM_FEATURE_LOCK_THREADS:		return "lock_threads";
	case SDSM_FEATURE_BARRIER_SERIAL:	return "barrier_serial";
	}
	return NULL;
}

int sdsm_dev_ioctl(unsigned long req, void *arg, uint64_t feature,
		   const char *what)
{
	struct sdsm_info info;
	int fd, err;

	fd = sdsm_dev(&info);
	if (fd < 0)
		return -1;
	if (feature && !(info.features & feature))
		return sdsm_fail(ENOSYS, "%s: module lacks feature %s", what,
				 sdsm_feature_name(feature));
	if (ioctl(fd, req, arg) == 0)
		return 0;
	err = errno;
	if (err == ENOTTY)
		return sdsm_fail(ENOSYS, "%s: module lacks feature %s", what,
				 feature ? sdsm_feature_name(feature) : "?");
	return sdsm_fail(err, "%s: %s", what, sdsm_strerror(err));
}

int sdsm_available(void)
{
	return sdsm_dev(NULL) < 0 ? -1 : 0;
}

int sdsm_fd(void)
{
	return sdsm_dev(NULL);
}

int sdsm_num_nodes(void)
{
	struct sdsm_info info;

	if (sdsm_dev(&info) < 0)
		return -1;
	return info.nr_nodes;
}

int sdsm_node_id(void)
{
	struct sdsm_info info;

	if (sdsm_dev(&info) < 0)
		return -1;
	return info.node_id;
}

int sdsm_features(uint64_t *features)
{
	struct sdsm_info info;

	if (!features)
		return sdsm_fail(EINVAL, "sdsm_features: NULL pointer");
	if (sdsm_dev(&info) < 0)
		return -1;
	*features = info.features;
	return 0;
}

int sdsm_has_feature(uint64_t feature)
{
	struct sdsm_info info;

	if (sdsm_dev(&info) < 0)
		return -1;
	return (info.features & feature) == feature && feature;
}

unsigned int sdsm_live_nr_nodes(void)
{
	struct sdsm_info info;
	int n, saved = errno;

	n = sdsm_sysfs_nr_nodes();
	if (n <= 0)
		n = sdsm_dev(&info) >= 0 ? (int)info.nr_nodes : 0;
	errno = saved;
	return n;
}
