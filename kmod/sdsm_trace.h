/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sdsm tracepoints: messages sent and received, peer state changes, page
 * faults of coherent memory and the coherence protocol's messages.
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
			     u32 seq),
		    TP_ARGS(peer, type, len, page, seq),
		    TP_STRUCT__entry(__field(unsigned int, peer)
				     __field(u16, type)
				     __field(u32, len)
				     __field(bool, page)
				     __field(u32, seq)),
		    TP_fast_assign(__entry->peer = peer;
				   __entry->type = type;
				   __entry->len = len;
				   __entry->page = page;
				   __entry->seq = seq;),
		    TP_printk("node=%u type=%u len=%u page=%d seq=%u",
			      __entry->peer, __entry->type, __entry->len,
			      __entry->page, __entry->seq)
);

DEFINE_EVENT(sdsm_msg_class, sdsm_msg_send,
	     TP_PROTO(unsigned int peer, u16 type, u32 len, bool page,
		      u32 seq),
	     TP_ARGS(peer, type, len, page, seq));

DEFINE_EVENT(sdsm_msg_class, sdsm_msg_recv,
	     TP_PROTO(unsigned int peer, u16 type, u32 len, bool page,
		      u32 seq),
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

TRACE_EVENT(sdsm_fault_begin,
	    TP_PROTO(unsigned long addr, u32 region, u64 page, bool write),
	    TP_ARGS(addr, region, page, write),
	    TP_STRUCT__entry(__field(unsigned long, addr)
			     __field(u32, region)
			     __field(u64, page)
			     __field(bool, write)),
	    TP_fast_assign(__entry->addr = addr;
			   __entry->region = region;
			   __entry->page = page;
			   __entry->write = write;),
	    TP_printk("addr=0x%lx region=%u page=%llu write=%d",
		      __entry->addr, __entry->region, __entry->page,
		      __entry->write)
);

/* result: 0 mapped, 1 retry (waited with the mmap lock dropped), <0 errno */
TRACE_EVENT(sdsm_fault_end,
	    TP_PROTO(unsigned long addr, u32 region, u64 page, bool write,
		     u64 latency_ns, int result),
	    TP_ARGS(addr, region, page, write, latency_ns, result),
	    TP_STRUCT__entry(__field(unsigned long, addr)
			     __field(u32, region)
			     __field(u64, page)
			     __field(bool, write)
			     __field(u64, latency_ns)
			     __field(int, result)),
	    TP_fast_assign(__entry->addr = addr;
			   __entry->region = region;
			   __entry->page = page;
			   __entry->write = write;
			   __entry->latency_ns = latency_ns;
			   __entry->result = result;),
	    TP_printk("addr=0x%lx region=%u page=%llu write=%d latency_ns=%llu result=%d",
		      __entry->addr, __entry->region, __entry->page,
		      __entry->write, __entry->latency_ns, __entry->result)
);

/* Values of enum sdsm_proto_msg_type. */
#define sdsm_show_proto_msg(t)						\
	__print_symbolic(t, { 1, "READ" }, { 2, "WRITE" },		\
			 { 3, "INV_ACK" }, { 4, "DATA" },		\
			 { 5, "GRANT_READ" }, { 6, "GRANT_WRITE" },	\
			 { 7, "INV" }, { 8, "FETCH" },			\
			 { 9, "FETCH_INV" }, { 10, "NACK" })

DECLARE_EVENT_CLASS(sdsm_coh_class,
		    TP_PROTO(unsigned int node, u32 region, u64 page, u8 type,
			     u32 seq, u8 data),
		    TP_ARGS(node, region, page, type, seq, data),
		    TP_STRUCT__entry(__field(unsigned int, node)
				     __field(u32, region)
				     __field(u64, page)
				     __field(u8, type)
				     __field(u32, seq)
				     __field(u8, data)),
		    TP_fast_assign(__entry->node = node;
				   __entry->region = region;
				   __entry->page = page;
				   __entry->type = type;
				   __entry->seq = seq;
				   __entry->data = data;),
		    TP_printk("node=%u region=%u page=%llu %s seq=%u data=%u",
			      __entry->node, __entry->region, __entry->page,
			      sdsm_show_proto_msg(__entry->type), __entry->seq,
			      __entry->data)
);

/* node: the destination */
DEFINE_EVENT(sdsm_coh_class, sdsm_coh_send,
	     TP_PROTO(unsigned int node, u32 region, u64 page, u8 type,
		      u32 seq, u8 data),
	     TP_ARGS(node, region, page, type, seq, data));

/* node: the source */
DEFINE_EVENT(sdsm_coh_class, sdsm_coh_recv,
	     TP_PROTO(unsigned int node, u32 region, u64 page, u8 type,
		      u32 seq, u8 data),
	     TP_ARGS(node, region, page, type, seq, data));

#endif /* SDSM_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#define TRACE_INCLUDE_FILE sdsm_trace
#include <trace/define_trace.h>
