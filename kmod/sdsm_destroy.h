/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sdsm_destroy.h - how a region destroy ends: the destroyer's decision,
 * and the survivors' when the destroyer went down before they learned it
 * ("Destroys in doubt" in sdsm_region.c, "Regions" in
 * Documentation/coherent-memory.rst).  Kernel-free: sdsm_region.c uses it,
 * and tests/host/test_destroy.c checks it in a model of the cluster.
 */
#ifndef SDSM_DESTROY_H
#define SDSM_DESTROY_H

#include <linux/types.h>

/**
 * enum sdsm_destroy_view - what a node answers about a destroy in doubt
 * @SDSM_DESTROY_KEPT: no commit seen here, and no decision can reach this
 *	node any more (not prepared, or prepared for a destroyer that is not
 *	up here, or in doubt itself)
 * @SDSM_DESTROY_GONE: this node saw the commit
 * @SDSM_DESTROY_WAIT: prepared for a destroyer that is up here (or is
 *	this node): its decision may still come.  An answer that did not
 *	come counts as this.
 */
enum sdsm_destroy_view {
	SDSM_DESTROY_KEPT,
	SDSM_DESTROY_GONE,
	SDSM_DESTROY_WAIT,
};

/**
 * enum sdsm_destroy_end - how a node in doubt ends the destroy
 * @SDSM_DESTROY_ABORT: nobody can have committed: the region stays
 * @SDSM_DESTROY_COMMIT: some node committed: the region goes here too
 * @SDSM_DESTROY_AGAIN: not yet: ask again later
 */
enum sdsm_destroy_end {
	SDSM_DESTROY_ABORT,
	SDSM_DESTROY_COMMIT,
	SDSM_DESTROY_AGAIN,
};

/**
 * struct sdsm_destroy_tally - the answers of one round of questions
 * @gone: some node answered SDSM_DESTROY_GONE
 * @wait: some node answered SDSM_DESTROY_WAIT, or did not answer
 *
 * Zero it before the round.
 */
struct sdsm_destroy_tally {
	bool gone;
	bool wait;
};

bool sdsm_destroy_commits(bool all_agreed, bool sessions_kept);
enum sdsm_destroy_view sdsm_destroy_view(bool gone, bool prepared,
					 bool in_doubt, bool destroyer_up);
void sdsm_destroy_tally_add(struct sdsm_destroy_tally *t,
			    enum sdsm_destroy_view v);
enum sdsm_destroy_end sdsm_destroy_end(const struct sdsm_destroy_tally *t);

#endif /* SDSM_DESTROY_H */
