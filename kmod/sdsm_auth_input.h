/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sdsm peer authentication: what the MAC of each direction of the connect
 * handshake covers, struct sdsm_wire_auth_input, free of kernel services.
 *
 * Each side of a connection builds the input from its own point of view:
 * its own id, incarnation and nonce, the peer's from the connect private
 * data, and whether it connected (the active side) or accepted.  Both
 * sides must get the same bytes for a label, or no MAC ever verifies.
 * The crypto stays with the caller (sdsm_auth_mac() in sdsm_transport.c).
 * The same source is compiled into the module and into the host test
 * (tests/host/test_auth.c).  See Documentation/transport.rst.
 */
#ifndef _SDSM_AUTH_INPUT_H
#define _SDSM_AUTH_INPUT_H

#include <linux/types.h>

#include "sdsm_wire.h"

/**
 * struct sdsm_auth_side - one side of a connection, as the MAC input sees it
 * @id: its node id
 * @incarnation: the incarnation it announced in its connect private data
 * @nonce: SDSM_AUTH_NONCE_SIZE bytes: the nonce of its connect request
 *	(active side) or of its accept (passive side)
 */
struct sdsm_auth_side {
	unsigned int id;
	u64 incarnation;
	const u8 *nonce;
};

void sdsm_auth_input_fill(struct sdsm_wire_auth_input *in, const char *label,
			  unsigned int nr_nodes, bool active,
			  const struct sdsm_auth_side *me,
			  const struct sdsm_auth_side *peer);

#endif /* _SDSM_AUTH_INPUT_H */
