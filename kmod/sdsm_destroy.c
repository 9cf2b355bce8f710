// SPDX-License-Identifier: GPL-2.0
/*
 * sdsm_destroy.c - how a region destroy ends (see sdsm_destroy.h).
 * Kernel-free: no locks, no allocation, no messages; the caller holds
 * what protects the state it passes.
 */
#include "sdsm_destroy.h"

/**
 * sdsm_destroy_commits - the destroyer's decision
 * @all_agreed: every node answered PREPARE with yes
 * @sessions_kept: no node's session with the destroyer ended since its
 *	PREPARE (a node whose session ended decides without the destroyer,
 *	and aborts unless another node saw a commit, which none can have)
 *
 * Return: true to commit, false to abort.
 */
bool sdsm_destroy_commits(bool all_agreed, bool sessions_kept)
{
	return all_agreed && sessions_kept;
}

/**
 * sdsm_destroy_view - this node's answer to a node in doubt
 * @gone: this node saw the commit: it removed the region on a COMMIT or
 *	after a round, or had a COMMIT without it (its tombstone)
 * @prepared: a destroy prepared it here (or this node voted on that
 *	destroy without the region, which it may yet learn)
 * @in_doubt: that destroy's destroyer went down before this node learned
 *	its decision
 * @destroyer_up: that destroyer is up here (its session lives), or is
 *	this node
 *
 * A node without the region that saw no commit knows of none: it never
 * learned the region, or learns it yet.
 */
enum sdsm_destroy_view sdsm_destroy_view(bool gone, bool prepared,
					 bool in_doubt, bool destroyer_up)
{
	if (gone)
		return SDSM_DESTROY_GONE;
	if (prepared && !in_doubt && destroyer_up)
		return SDSM_DESTROY_WAIT;
	return SDSM_DESTROY_KEPT;
}

/* Count one answer of the round (a missing one as SDSM_DESTROY_WAIT). */
void sdsm_destroy_tally_add(struct sdsm_destroy_tally *t,
			    enum sdsm_destroy_view v)
{
	if (v == SDSM_DESTROY_GONE)
		t->gone = true;
	else if (v == SDSM_DESTROY_WAIT)
		t->wait = true;
}

/**
 * sdsm_destroy_end - the decision of a node in doubt after a round
 * @t: the round's answers, from every other node that is up
 *
 * A node that saw the commit: commit.  Else, while some
 * node may still see the destroyer's decision (or did not answer), wait.
 * Else no node can have committed (a commit leaves the destroyer only
 * once every session it needs is kept) but the destroyer itself, which
 * is gone from here: abort.
 */
enum sdsm_destroy_end sdsm_destroy_end(const struct sdsm_destroy_tally *t)
{
	if (t->gone)
		return SDSM_DESTROY_COMMIT;
	if (t->wait)
		return SDSM_DESTROY_AGAIN;
	return SDSM_DESTROY_ABORT;
}
