/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Host model of an sdsm cluster running kmod/sdsm_proto.c: nodes, pages,
 * per-(src,dst) FIFO channels, local accesses, and the invariants checked
 * after every step.  Page data are 64-bit values; a write stores a new,
 * strictly increasing one.
 */
#ifndef _SDSM_SIM_H
#define _SDSM_SIM_H

#include <stdarg.h>
#include <stddef.h>
#include <linux/types.h>
#include "../../kmod/sdsm_proto.h"

#define SIM_NODES	4
#define SIM_PAGES	4
#define SIM_CHAN_CAP	64
#define SIM_ACC		4	/* concurrent accesses per node */
#define SIM_TRACE	48	/* trace lines kept for a failure report */
#define SIM_HOOKS	(2 * SIM_NODES)

/*
 * Planted bugs.  The protocol source has no test hooks: the simulator
 * plays each bug by corrupting state, forging or swallowing a message or
 * an action at the exact point where a buggy implementation would.
 */
enum sim_mutation {
	MUT_NONE = 0,
	MUT_EARLY_GRANT,	/* home grants WRITE before all INV_ACKs */
	MUT_ACK_KEEPS_COPY,	/* node acks INV without dropping its copy */
	MUT_FORGET_SHARER,	/* home forgets to record a new sharer */
	MUT_NO_COALESCE,	/* second local fault sends a second request */
	MUT_LOST_WAKEUP,	/* grant does not wake the waiting faults */
	MUT_FETCH_KEEPS_RW,	/* owner answers FETCH but stays writable */
	MUT_NO_HOLD,		/* a grant is not held: the livelock */
	MUT_DATA_BEFORE_REVOKE,	/* owner snapshots DATA, then write-protects */
	MUT_GRANT_BEFORE_DATA,	/* home forwards its copy, not the owner's */
	MUT_DEFERRED_DROPPED,	/* hold ends, the deferred message is lost */
	MUT_DROP_PARKED,	/* home drops a request parked while busy */
	MUT_REORDER,		/* transport reorders a node pair's messages */
	MUT_NO_HOME_CHECK,	/* a non-home serves a request: two homes */
	MUT_OWN_FETCH_KEEPS_RW,	/* home takes its own copy, stays writable */
	MUT_PREFETCH_NOT_HELD,	/* a fault joins a prefetch, grant not held */
	MUT_EXCL_SHARED,	/* a READ granted writable while others read */
	MUT_OWN_GRANT_SHARED,	/* home grants its own write, others read */
	MUT_OWN_GRANT_STALE,	/* home grants itself, copy not refreshed */
	MUT_OWN_FINISH_NOT_HELD, /* home's grant at a txn's end not held */
	MUT_OWN_INV_HELD,	/* home drops its own held read copy */
	MUT_MIGRATORY_KEEPS_COPY, /* a migratory READ: FETCH, not FETCH_INV */
	MUT_LEAVE_NO_TAKE_BACK,	/* a node leaves, its pages not taken back */
	MUT_NR,
};

struct sim_msg {
	struct sdsm_proto_msg m;
	u64 data;		/* payload, if m.flags has SDSM_PROTO_F_DATA */
};

struct sim_chan {
	struct sim_msg q[SIM_CHAN_CAP];
	unsigned int head;
	unsigned int len;
};

enum sim_acc_state {
	ACC_FREE = 0,
	ACC_WAIT,		/* fault returned WAIT, not woken yet */
	ACC_RUNNABLE,		/* woken, will fault again */
};

struct sim_access {
	int state;
	int page;
	bool write;
	unsigned int id;
};

struct sim {
	int nnodes;
	int npages;
	int mutation;
	bool failures;		/* random schedules may kill one node */
	bool prefetch;		/* random schedules also prefetch pages */
	bool exclusive;		/* homes grant unowned pages' READs writable */
	bool migratory;		/* homes serve migratory pages' READs so */
	bool own_grant;		/* homes grant their own faults in the call */
	/*
	 * Random schedules may make one idle node leave (rmmod): it starts
	 * nothing more, the homes of the pages it holds writable read them
	 * back (the module's HANDBACK), then it dies (its BYE).
	 */
	bool leaves;
	int leaver;		/* the node leaving or gone so, or -1 */
	int expect_errors;	/* protocol errors tolerated (bad-input test) */
	int errors;		/* protocol errors seen */
	u64 rng;

	int home[SIM_PAGES];
	/*
	 * Where each node sends its requests for each page: the home, or
	 * (a view from before a placement change) another node, until that
	 * node's NACK(ESTALE) makes it ask again and learn the home.
	 */
	int view[SIM_NODES][SIM_PAGES];
	/* A directory each non-home keeps for the page: must serve nothing. */
	struct sdsm_proto_home stray[SIM_NODES][SIM_PAGES];
	struct sdsm_proto_node node[SIM_NODES][SIM_PAGES];
	struct sdsm_proto_home dir[SIM_PAGES];
	u64 local[SIM_NODES][SIM_PAGES];	/* each node's copy */
	u8 map[SIM_NODES][SIM_PAGES];		/* enum sdsm_proto_map */
	u64 backing[SIM_PAGES];			/* the home copy */
	u64 last[SIM_PAGES];			/* last value written */
	u64 next_value;
	bool lost[SIM_PAGES];
	bool dead[SIM_NODES];
	bool told[SIM_NODES];		/* has heard of the death */
	int victim;			/* the node that died, or -1 */
	struct sim_chan chan[SIM_NODES][SIM_NODES];
	struct sim_access acc[SIM_NODES][SIM_ACC];
	unsigned int next_id;

	/* Mutation bookkeeping: forged-message work after a protocol call. */
	struct sdsm_proto_msg hook[SIM_HOOKS];
	int nhook;
	int swallow_ack[SIM_NODES][SIM_PAGES];
	int swallow_data[SIM_NODES][SIM_PAGES];
	u64 snap[SIM_NODES][SIM_PAGES];		/* MUT_DATA_BEFORE_REVOKE */
	bool has_snap[SIM_NODES][SIM_PAGES];

	/* Progress bookkeeping. */
	bool unused[SIM_NODES][SIM_PAGES];	/* granted, no fault since */
	bool ahead[SIM_NODES][SIM_PAGES];	/* prefetched, no fault since */
	int bypass[SIM_PAGES][SIM_NODES];	/* grants to others while parked */
	bool in_peer_down;			/* revocations are not takebacks */
	bool lax_progress;	/* no take-back check: measure raw starvation */
	bool quiet;		/* no trace: fast; replay the seed to see one */
	unsigned long done[SIM_NODES];		/* accesses completed per node */

	/* Results. */
	unsigned long steps;
	unsigned long reads, writes, errs, delivered, coalesced;
	unsigned long inv_vs_upgrade;	/* INV met a pending upgrade */
	unsigned long parked;		/* request arrived at a busy home */
	unsigned long fetches;		/* FETCH or FETCH_INV delivered */
	unsigned long self_msgs;	/* messages a home sent itself */
	unsigned long own_fetches;	/* home took its own modified copy */
	unsigned long own_grants;	/* home granted its own fault in it */
	unsigned long own_finishes;	/* ...or at its transaction's end */
	unsigned long own_invs;		/* home dropped its own read copy */
	unsigned long deferred;		/* INV/FETCH deferred by a hold */
	unsigned long released;		/* deferred answered after a use */
	unsigned long hold_timeouts;	/* deferred answered on the bound */
	unsigned long redirects;	/* NACK(ESTALE) from a non-home */
	unsigned long prefetches;	/* READs sent ahead of any fault */
	unsigned long exclusive_grants;	/* READs answered GRANT_WRITE */
	unsigned long migratory_grants;	/* ...of them for a migratory page */
	unsigned long migratory_reverts; /* pages found read-shared again */
	unsigned long prefetch_joined;	/* faults that waited for one */
	unsigned long prefetch_unused;	/* prefetched copies taken back unused */
	unsigned long taken_back;	/* reads a home started for a leaver */
	int max_bypass;			/* most grants a parked request saw */
	u64 last_read;		/* value of the last successful read */
	int last_err;		/* errno of the last failed access */
	bool failed;
	char why[512];
	char trace[SIM_TRACE][160];
	unsigned int ntrace;
};

void sim_init(struct sim *s, int nnodes, int npages, const int *homes,
	      u64 seed);
void sim_fail(struct sim *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void sim_tracef(struct sim *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void sim_dump(const struct sim *s, const char *prefix);
u64 sim_rand(struct sim *s, u64 bound);

/* Scripted control; each returns after checking every invariant. */
int sim_access(struct sim *s, int n, int p, bool write);
void sim_retry(struct sim *s, int n, int slot);
bool sim_prefetch(struct sim *s, int n, int p);
int sim_retry_all(struct sim *s);
void sim_deliver(struct sim *s, int src, int dst);
const struct sim_msg *sim_peek(const struct sim *s, int src, int dst);
void sim_die(struct sim *s, int x);
void sim_tell(struct sim *s, int n);
void sim_kill(struct sim *s, int x);	/* sim_die(), then tell everyone */
bool sim_drain(struct sim *s, unsigned long bound);
void sim_check(struct sim *s);
void sim_check_final(struct sim *s);
void sim_release(struct sim *s, int n, int p, bool timeout);
bool sim_can_release(const struct sim *s, int n, int p, bool timeout);
int sim_pending_accesses(const struct sim *s);
int sim_pending_accesses_node(const struct sim *s, int n);

/* One random schedule of @steps steps, then drain and final checks. */
void sim_random(struct sim *s, unsigned long steps);

#endif
