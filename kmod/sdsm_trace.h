/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sdsm tracepoints: messages sent and received, peer state changes.
 *
 *   perf record -e 'sdsm:*' ...   or   bpftrace -e 'tracepoint:sdsm:* {...}'
 *
 * Arguments are plain integers so the events need no sdsm structs.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM sdsm

#if !defined(SDSM_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define SDSM_TRACE_H

#include <linux/tracepoint.h>

/* Values of enum sdsm_peer_state. */
#define sdsm_show_state(s)						\
	__print_symbolic(s, { 0, "self" }, { 1, "down" },		\
			 { 2, "connecting" }, { 3, "up" })

DECLARE_EVENT_CLASS(sdsm_msg_class,
		    TP_PROTO(unsigned int peer, u16 type, u32 len, bool page,
			     u64 seq),
		    TP_ARGS(peer, type, len, page, seq),
		    TP_STRUCT__entry(__field(unsigned int, peer)
				     __field(u16, type)
				     __field(u32, len)
				     __field(bool, page)
				     __field(u64, seq)),
		    TP_fast_assign(__entry->peer = peer;
				   __entry->type = type;
				   __entry->len = len;
				   __entry->page = page;
				   __entry->seq = seq;),
		    TP_printk("node=%u type=%u len=%u page=%d seq=%llu",
			      __entry->peer, __entry->type, __entry->len,
			      __entry->page, __entry->seq)
);

DEFINE_EVENT(sdsm_msg_class, sdsm_msg_send,
	     TP_PROTO(unsigned int peer, u16 type, u32 len, bool page,
		      u64 seq),
	     TP_ARGS(peer, type, len, page, seq));

DEFINE_EVENT(sdsm_msg_class, sdsm_msg_recv,
	     TP_PROTO(unsigned int peer, u16 type, u32 len, bool page,
		      u64 seq),
	     TP_ARGS(peer, type, len, page, seq));

TRACE_EVENT(sdsm_peer_state,
	    TP_PROTO(unsigned int peer, int old, int new),
	    TP_ARGS(peer, old, new),
	    TP_STRUCT__entry(__field(unsigned int, peer)
			     __field(int, old)
			     __field(int, new)),
	    TP_fast_assign(__entry->peer = peer;
			   __entry->old = old;
			   __entry->new = new;),
	    TP_printk("node=%u %s -> %s", __entry->peer,
		      sdsm_show_state(__entry->old),
		      sdsm_show_state(__entry->new))
);

#endif /* SDSM_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#define TRACE_INCLUDE_FILE sdsm_trace
#include <trace/define_trace.h>
