// SPDX-License-Identifier: GPL-2.0
/*
 * sdsm peer authentication: the input of the handshake's MACs.  The rules
 * are in sdsm_auth_input.h and sdsm_wire.h; this file holds no kernel
 * service.
 */
#include <asm/byteorder.h>
#include <linux/string.h>

#include "sdsm_auth_input.h"

/**
 * sdsm_auth_input_fill - build what a MAC of the connect handshake covers
 * @in: filled whole: the label zero padded, the reserved bytes zero
 * @label: SDSM_AUTH_LABEL_ACCEPT or SDSM_AUTH_LABEL_AUTH (its first
 *	SDSM_AUTH_LABEL_SIZE - 1 characters at most)
 * @nr_nodes: the cluster size both sides announced
 * @active: true on the side that connected, false on the one that accepted
 * @me: this node
 * @peer: the other side of the connection, from its connect private data
 *
 * The two sides of a connection, each passing its own @me and @active,
 * fill the same bytes for the same @label.
 */
void sdsm_auth_input_fill(struct sdsm_wire_auth_input *in, const char *label,
			  unsigned int nr_nodes, bool active,
			  const struct sdsm_auth_side *me,
			  const struct sdsm_auth_side *peer)
{
	const struct sdsm_auth_side *act = active ? me : peer;
	const struct sdsm_auth_side *pas = active ? peer : me;

	memset(in, 0, sizeof(*in));
	memcpy(in->label, label, strnlen(label, sizeof(in->label) - 1));
	in->nr_nodes = cpu_to_be16(nr_nodes);
	in->active_id = cpu_to_be16(act->id);
	in->passive_id = cpu_to_be16(pas->id);
	in->active_incarnation = cpu_to_be64(act->incarnation);
	in->passive_incarnation = cpu_to_be64(pas->incarnation);
	memcpy(in->active_nonce, act->nonce, SDSM_AUTH_NONCE_SIZE);
	memcpy(in->passive_nonce, pas->nonce, SDSM_AUTH_NONCE_SIZE);
}
