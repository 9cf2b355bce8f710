// SPDX-License-Identifier: GPL-2.0
/*
 * Host test of what the MACs of peer authentication cover
 * (kmod/sdsm_auth_input.c, the module's own source): the bytes of struct
 * sdsm_wire_auth_input that each side of a connection builds, from its
 * own point of view, before it MACs them with HMAC-SHA256 (the kernel's
 * crypto API in the module; a small SHA-256 and HMAC of its own here).
 * Printed as TAP 13.
 *
 * A connection here is what both sides know of it after the connect
 * handshake: nr_nodes, the active and the passive side's id, incarnation
 * and nonce.  Checks, each over random connections from both sides and
 * for both labels:
 *
 *  agreement   the active and the passive side fill the same bytes;
 *  wire bytes  every field is at its documented offset, big endian, the
 *              label zero padded, the reserved bytes zero;
 *  direction   SDSM_AUTH_LABEL_ACCEPT and SDSM_AUTH_LABEL_AUTH differ,
 *              in the label only;
 *  coverage    flipping any one bit of nr_nodes, of either id, of either
 *              incarnation or of either nonce changes the bytes, in that
 *              field only;
 *  swap        swapping the two sides' nonces, incarnations or ids
 *              changes the bytes;
 *  KAT         HMAC-SHA256 of one fixed connection under a fixed key is
 *              the value computed independently with python3, so any
 *              change of layout or byte order fails.
 *
 * The SHA-256 and HMAC of the test are checked first against FIPS 180-2
 * and RFC 4231 vectors.  Planted bugs, one TAP line each: mutations of a
 * copy of the fill logic kept here (fill_copy(), in step with the
 * module's), each of which the check it names must catch.
 *
 * Environment: SDSM_SEED (random connections), SDSM_SCHEDULES (their
 * number, default 5000; the coverage check takes a tenth).  Options:
 * --seed S, --schedules N (override the environment), --count, --first N,
 * --prefix STR, --no-plan.
 */
#include <endian.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <asm/byteorder.h>
#include "sdsm_auth_input.h"
#include "tap_args.h"

#define NONCE		SDSM_AUTH_NONCE_SIZE
#define ACT		0		/* the active side, in struct tcase */
#define PAS		1		/* the passive side */

/* The layout of struct sdsm_wire_auth_input as sdsm_wire.h documents it. */
#define OFF_LABEL	0
#define OFF_NR_NODES	16
#define OFF_ACT_ID	18
#define OFF_PAS_ID	20
#define OFF_RESERVED	22
#define OFF_ACT_INC	24
#define OFF_PAS_INC	32
#define OFF_ACT_NONCE	40
#define OFF_PAS_NONCE	72
#define INPUT_SIZE	104

static unsigned long long base_seed;
static unsigned long schedules = 5000;

typedef void fill_fn(struct sdsm_wire_auth_input *in, const char *label,
		     unsigned int nr_nodes, bool active,
		     const struct sdsm_auth_side *me,
		     const struct sdsm_auth_side *peer);

static const char *const labels[2] = {
	SDSM_AUTH_LABEL_ACCEPT, SDSM_AUTH_LABEL_AUTH,
};

static const char *const side_name[2] = { "active", "passive" };

/* ---- random numbers (splitmix64) ---- */

static u64 rng;

static void rng_seed(u64 seed)
{
	rng = seed;
}

static u64 rnd(void)
{
	u64 z = (rng += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* ---- SHA-256 (FIPS 180-4) and HMAC-SHA256 (RFC 2104) ---- */

struct sha256 {
	u32 h[8];
	u64 len;		/* bytes hashed */
	u8 buf[64];
	size_t n;		/* bytes in buf */
};

static const u32 sha256_k[64] = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1,
	0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
	0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
	0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
	0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
	0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
	0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
	0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
	0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
	0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
	0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static u32 ror32(u32 x, unsigned int n)
{
	return x >> n | x << (32 - n);
}

static void sha256_block(u32 *h, const u8 *p)
{
	u32 w[64], a, b, c, d, e, f, g, hh, t1, t2;
	int i;

	for (i = 0; i < 16; i++)
		w[i] = (u32)p[4 * i] << 24 | (u32)p[4 * i + 1] << 16 |
		       (u32)p[4 * i + 2] << 8 | p[4 * i + 3];
	for (i = 16; i < 64; i++)
		w[i] = w[i - 16] + w[i - 7] +
		       (ror32(w[i - 15], 7) ^ ror32(w[i - 15], 18) ^
			w[i - 15] >> 3) +
		       (ror32(w[i - 2], 17) ^ ror32(w[i - 2], 19) ^
			w[i - 2] >> 10);
	a = h[0]; b = h[1]; c = h[2]; d = h[3];
	e = h[4]; f = h[5]; g = h[6]; hh = h[7];
	for (i = 0; i < 64; i++) {
		t1 = hh + (ror32(e, 6) ^ ror32(e, 11) ^ ror32(e, 25)) +
		     ((e & f) ^ (~e & g)) + sha256_k[i] + w[i];
		t2 = (ror32(a, 2) ^ ror32(a, 13) ^ ror32(a, 22)) +
		     ((a & b) ^ (a & c) ^ (b & c));
		hh = g; g = f; f = e; e = d + t1;
		d = c; c = b; b = a; a = t1 + t2;
	}
	h[0] += a; h[1] += b; h[2] += c; h[3] += d;
	h[4] += e; h[5] += f; h[6] += g; h[7] += hh;
}

static void sha256_init(struct sha256 *s)
{
	static const u32 iv[8] = {
		0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
		0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
	};

	memcpy(s->h, iv, sizeof(iv));
	s->len = 0;
	s->n = 0;
}

static void sha256_update(struct sha256 *s, const void *data, size_t len)
{
	const u8 *p = data;

	s->len += len;
	while (len) {
		size_t k = sizeof(s->buf) - s->n;

		if (k > len)
			k = len;
		memcpy(s->buf + s->n, p, k);
		s->n += k;
		p += k;
		len -= k;
		if (s->n == sizeof(s->buf)) {
			sha256_block(s->h, s->buf);
			s->n = 0;
		}
	}
}

static void sha256_final(struct sha256 *s, u8 *out)
{
	u64 bits = s->len * 8;
	u8 pad = 0x80, zero = 0, be[8];
	int i;

	sha256_update(s, &pad, 1);
	while (s->n != 56)
		sha256_update(s, &zero, 1);
	for (i = 0; i < 8; i++)
		be[i] = bits >> (56 - 8 * i);
	sha256_update(s, be, 8);
	for (i = 0; i < 32; i++)
		out[i] = s->h[i / 4] >> (24 - 8 * (i % 4));
}

static void sha256(const void *data, size_t len, u8 *out)
{
	struct sha256 s;

	sha256_init(&s);
	sha256_update(&s, data, len);
	sha256_final(&s, out);
}

static void hmac_sha256(const void *key, size_t klen, const void *msg,
			size_t mlen, u8 *out)
{
	u8 k[64] = { 0 }, pad[64], inner[32];
	struct sha256 s;
	int i;

	if (klen > sizeof(k))
		sha256(key, klen, k);
	else
		memcpy(k, key, klen);
	for (i = 0; i < 64; i++)
		pad[i] = k[i] ^ 0x36;
	sha256_init(&s);
	sha256_update(&s, pad, sizeof(pad));
	sha256_update(&s, msg, mlen);
	sha256_final(&s, inner);
	for (i = 0; i < 64; i++)
		pad[i] = k[i] ^ 0x5c;
	sha256_init(&s);
	sha256_update(&s, pad, sizeof(pad));
	sha256_update(&s, inner, sizeof(inner));
	sha256_final(&s, out);
}

/* @hex (lower case) of the @n bytes at @p, in @buf of 2 * @n + 1. */
static const char *to_hex(const u8 *p, size_t n, char *buf)
{
	size_t i;

	for (i = 0; i < n; i++)
		sprintf(buf + 2 * i, "%02x", p[i]);
	buf[2 * n] = '\0';
	return buf;
}

static bool test_sha256(int arg)
{
	static const struct {
		const char *data;
		const char *md;
	} fips[] = {
		{ "", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" },
		{ "abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" },
		{ "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
		  "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1" },
	};
	/* RFC 4231, test cases 1, 2 and 6 (a key longer than a block). */
	static const char tc6_data[] =
		"Test Using Larger Than Block-Size Key - Hash Key First";
	u8 key[131], md[32];
	char hex[65];
	size_t i;

	(void)arg;
	for (i = 0; i < sizeof(fips) / sizeof(fips[0]); i++) {
		sha256(fips[i].data, strlen(fips[i].data), md);
		TAP_CHECK(!strcmp(to_hex(md, 32, hex), fips[i].md),
		      "SHA-256(\"%s\") = %s", fips[i].data, hex);
	}
	memset(key, 0x0b, 20);
	hmac_sha256(key, 20, "Hi There", 8, md);
	TAP_CHECK(!strcmp(to_hex(md, 32, hex),
		      "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"),
	      "RFC 4231 case 1: %s", hex);
	hmac_sha256("Jefe", 4, "what do ya want for nothing?", 28, md);
	TAP_CHECK(!strcmp(to_hex(md, 32, hex),
		      "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"),
	      "RFC 4231 case 2: %s", hex);
	memset(key, 0xaa, sizeof(key));
	hmac_sha256(key, sizeof(key), tc6_data, strlen(tc6_data), md);
	TAP_CHECK(!strcmp(to_hex(md, 32, hex),
		      "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"),
	      "RFC 4231 case 6: %s", hex);
	return true;
}

/* ---- connections and the two sides' views ---- */

/* A connection as both sides know it after the connect handshake. */
struct tcase {
	unsigned int nr_nodes;
	unsigned int id[2];		/* [ACT], [PAS] */
	u64 inc[2];
	u8 nonce[2][NONCE];
};

/* Side @s of @c fills @in for @label, from its own point of view. */
static void fill_as(fill_fn *fill, const struct tcase *c, int s,
		    const char *label, struct sdsm_wire_auth_input *in)
{
	const struct sdsm_auth_side me = {
		.id = c->id[s], .incarnation = c->inc[s], .nonce = c->nonce[s],
	};
	const struct sdsm_auth_side peer = {
		.id = c->id[!s], .incarnation = c->inc[!s],
		.nonce = c->nonce[!s],
	};

	/* Garbage first: the fill must write every byte. */
	memset(in, 0xa5, sizeof(*in));
	fill(in, label, c->nr_nodes, s == ACT, &me, &peer);
}

/* Distinct ids, incarnations and nonces of the two sides. */
static void rand_case(struct tcase *c)
{
	int s;
	size_t i;

	c->nr_nodes = 1 + rnd() % 0xffff;
	c->id[ACT] = rnd() & 0xffff;
	do
		c->id[PAS] = rnd() & 0xffff;
	while (c->id[PAS] == c->id[ACT]);
	do {
		c->inc[ACT] = rnd();
		c->inc[PAS] = rnd();
	} while (c->inc[ACT] == c->inc[PAS]);
	do {
		for (s = 0; s < 2; s++)
			for (i = 0; i < NONCE; i++)
				c->nonce[s][i] = rnd();
	} while (!memcmp(c->nonce[ACT], c->nonce[PAS], NONCE));
}

static u64 get_be(const u8 *p, int n)
{
	u64 v = 0;

	while (n--)
		v = v << 8 | *p++;
	return v;
}

/* ---- the checks, each of a fill function ---- */

static bool check_agreement(fill_fn *fill)
{
	struct sdsm_wire_auth_input a, p;
	struct tcase c;
	unsigned long r;
	int l;

	rng_seed(base_seed);
	for (r = 0; r < schedules; r++) {
		rand_case(&c);
		for (l = 0; l < 2; l++) {
			fill_as(fill, &c, ACT, labels[l], &a);
			fill_as(fill, &c, PAS, labels[l], &p);
			TAP_CHECK(!memcmp(&a, &p, sizeof(a)),
			      "connection %lu, \"%s\": the sides differ", r,
			      labels[l]);
		}
	}
	return true;
}

static bool check_wire_bytes(fill_fn *fill)
{
	struct sdsm_wire_auth_input in;
	const u8 *b = (const u8 *)&in;
	struct tcase c;
	unsigned long r;
	size_t i, n;
	int l, s;

	rng_seed(base_seed + 1);
	for (r = 0; r < schedules; r++) {
		rand_case(&c);
		for (l = 0; l < 2; l++) {
			n = strlen(labels[l]);
			for (s = 0; s < 2; s++) {
				fill_as(fill, &c, s, labels[l], &in);
				TAP_CHECK(!memcmp(b + OFF_LABEL, labels[l], n),
				      "%s side: label", side_name[s]);
				for (i = n; i < SDSM_AUTH_LABEL_SIZE; i++)
					TAP_CHECK(!b[OFF_LABEL + i],
					      "%s side, \"%s\": label byte %zu not zero",
					      side_name[s], labels[l], i);
				TAP_CHECK(get_be(b + OFF_NR_NODES, 2) == c.nr_nodes,
				      "%s side: nr_nodes", side_name[s]);
				TAP_CHECK(get_be(b + OFF_ACT_ID, 2) == c.id[ACT],
				      "%s side: active_id", side_name[s]);
				TAP_CHECK(get_be(b + OFF_PAS_ID, 2) == c.id[PAS],
				      "%s side: passive_id", side_name[s]);
				TAP_CHECK(get_be(b + OFF_RESERVED, 2) == 0,
				      "%s side: reserved bytes", side_name[s]);
				TAP_CHECK(get_be(b + OFF_ACT_INC, 8) == c.inc[ACT],
				      "%s side: active_incarnation",
				      side_name[s]);
				TAP_CHECK(get_be(b + OFF_PAS_INC, 8) == c.inc[PAS],
				      "%s side: passive_incarnation",
				      side_name[s]);
				TAP_CHECK(!memcmp(b + OFF_ACT_NONCE, c.nonce[ACT],
					      NONCE),
				      "%s side: active_nonce", side_name[s]);
				TAP_CHECK(!memcmp(b + OFF_PAS_NONCE, c.nonce[PAS],
					      NONCE),
				      "%s side: passive_nonce", side_name[s]);
			}
		}
	}
	return true;
}

static bool check_direction(fill_fn *fill)
{
	struct sdsm_wire_auth_input in[2];
	u8 want[SDSM_AUTH_LABEL_SIZE];
	struct tcase c;
	unsigned long r;
	int l, s;

	rng_seed(base_seed + 2);
	for (r = 0; r < schedules; r++) {
		rand_case(&c);
		for (s = 0; s < 2; s++) {
			for (l = 0; l < 2; l++) {
				fill_as(fill, &c, s, labels[l], &in[l]);
				memset(want, 0, sizeof(want));
				memcpy(want, labels[l], strlen(labels[l]));
				TAP_CHECK(!memcmp(in[l].label, want, sizeof(want)),
				      "%s side: label \"%s\" not zero padded",
				      side_name[s], labels[l]);
			}
			TAP_CHECK(memcmp(&in[0], &in[1], sizeof(in[0])),
			      "%s side: both labels give the same bytes",
			      side_name[s]);
			TAP_CHECK(!memcmp((u8 *)&in[0] + SDSM_AUTH_LABEL_SIZE,
				      (u8 *)&in[1] + SDSM_AUTH_LABEL_SIZE,
				      sizeof(in[0]) - SDSM_AUTH_LABEL_SIZE),
			      "%s side: the labels differ beyond the label",
			      side_name[s]);
		}
	}
	return true;
}

/* The fields a connection's values fill, and the bits each value has. */
static const struct {
	const char *name;
	size_t off, size;
	unsigned int bits;
} fields[] = {
	{ "nr_nodes", OFF_NR_NODES, 2, 16 },
	{ "active id", OFF_ACT_ID, 2, 16 },
	{ "passive id", OFF_PAS_ID, 2, 16 },
	{ "active incarnation", OFF_ACT_INC, 8, 64 },
	{ "passive incarnation", OFF_PAS_INC, 8, 64 },
	{ "active nonce", OFF_ACT_NONCE, NONCE, NONCE * 8 },
	{ "passive nonce", OFF_PAS_NONCE, NONCE, NONCE * 8 },
};

#define NFIELDS ((int)(sizeof(fields) / sizeof(fields[0])))

/* Flip bit @bit of the value of field @f of @c. */
static void flip(struct tcase *c, int f, unsigned int bit)
{
	switch (f) {
	case 0:
		c->nr_nodes ^= 1u << bit;
		break;
	case 1:
	case 2:
		c->id[f - 1] ^= 1u << bit;
		break;
	case 3:
	case 4:
		c->inc[f - 3] ^= 1ull << bit;
		break;
	default:
		c->nonce[f - 5][bit / 8] ^= 1u << (bit % 8);
		break;
	}
}

/* @d is @c with bit @bit of field @f flipped: only that field changes. */
static bool cover_one(fill_fn *fill, const struct tcase *c,
		      const struct tcase *d, int f, unsigned int bit)
{
	struct sdsm_wire_auth_input in, out;
	const u8 *a = (const u8 *)&in, *b = (const u8 *)&out;
	bool changed;
	size_t i;
	int l, s;

	for (l = 0; l < 2; l++) {
		for (s = 0; s < 2; s++) {
			fill_as(fill, c, s, labels[l], &in);
			fill_as(fill, d, s, labels[l], &out);
			changed = false;
			for (i = 0; i < sizeof(in); i++) {
				if (a[i] == b[i])
					continue;
				TAP_CHECK(i >= fields[f].off &&
				      i < fields[f].off + fields[f].size,
				      "%s side: bit %u of the %s changes byte %zu",
				      side_name[s], bit, fields[f].name, i);
				changed = true;
			}
			TAP_CHECK(changed, "%s side: bit %u of the %s changes nothing",
			      side_name[s], bit, fields[f].name);
		}
	}
	return true;
}

static bool check_coverage(fill_fn *fill)
{
	unsigned long r, rounds = schedules / 10 ?: 1;
	struct tcase c, d;
	unsigned int bit;
	int f;

	rng_seed(base_seed + 3);
	for (r = 0; r < rounds; r++) {
		rand_case(&c);
		for (f = 0; f < NFIELDS; f++) {
			for (bit = 0; bit < fields[f].bits; bit++) {
				d = c;
				flip(&d, f, bit);
				if (!cover_one(fill, &c, &d, f, bit))
					return false;
			}
		}
	}
	return true;
}

static bool check_swap(fill_fn *fill)
{
	static const char *const what[3] = { "nonces", "incarnations", "ids" };
	struct sdsm_wire_auth_input in, out;
	struct tcase c, d;
	unsigned long r;
	int l, s, w;

	rng_seed(base_seed + 4);
	for (r = 0; r < schedules; r++) {
		rand_case(&c);
		for (w = 0; w < 3; w++) {
			d = c;
			if (w == 0) {
				memcpy(d.nonce[ACT], c.nonce[PAS], NONCE);
				memcpy(d.nonce[PAS], c.nonce[ACT], NONCE);
			} else if (w == 1) {
				d.inc[ACT] = c.inc[PAS];
				d.inc[PAS] = c.inc[ACT];
			} else {
				d.id[ACT] = c.id[PAS];
				d.id[PAS] = c.id[ACT];
			}
			for (l = 0; l < 2; l++) {
				for (s = 0; s < 2; s++) {
					fill_as(fill, &c, s, labels[l], &in);
					fill_as(fill, &d, s, labels[l], &out);
					TAP_CHECK(memcmp(&in, &out, sizeof(in)),
					      "%s side: swapped %s change nothing",
					      side_name[s], what[w]);
				}
			}
		}
	}
	return true;
}

/*
 * The known answer: HMAC-SHA256 under kat_key of the input of kat_case,
 * for each label, computed independently of this file by
 *
 * python3 -c 'import hmac,struct;m=lambda l:struct.pack(">16s4H2Q32s32s",l,5,1,3,0,0x0123456789abcdef,0xfedcba9876543210,bytes(range(32)),bytes(range(160,192)));[print(hmac.new(b"sdsm host test cluster secret",m(l),"sha256").hexdigest()) for l in (b"sdsm v2 accept",b"sdsm v2 auth")]'
 *
 * (struct: big endian, no padding; 16s pads the label with zeroes).
 */
static const char kat_key[] = "sdsm host test cluster secret";
static const char *const kat_mac[2] = {
	"1d25ab5314d87420da547b4ba3fe0be2354aad78c092f4e1d0c975bf8273f72e",
	"6366e8599b0b2b396171f4dae63c1e2a9811b476e476801d008726c54b6e984c",
};

static bool check_kat(fill_fn *fill)
{
	struct sdsm_wire_auth_input in;
	struct tcase c = {
		.nr_nodes = 5,
		.id = { 1, 3 },
		.inc = { 0x0123456789abcdefull, 0xfedcba9876543210ull },
	};
	u8 mac[32];
	char hex[65];
	int i, l, s;

	for (i = 0; i < NONCE; i++) {
		c.nonce[ACT][i] = i;
		c.nonce[PAS][i] = 160 + i;
	}
	for (l = 0; l < 2; l++) {
		for (s = 0; s < 2; s++) {
			fill_as(fill, &c, s, labels[l], &in);
			hmac_sha256(kat_key, strlen(kat_key), &in, sizeof(in),
				    mac);
			TAP_CHECK(!strcmp(to_hex(mac, sizeof(mac), hex), kat_mac[l]),
			      "%s side, \"%s\": %s", side_name[s], labels[l],
			      hex);
		}
	}
	return true;
}

static const struct {
	const char *name;
	bool (*fn)(fill_fn *fill);
} checks[] = {
	{ "agreement", check_agreement },
	{ "wire bytes", check_wire_bytes },
	{ "direction", check_direction },
	{ "coverage", check_coverage },
	{ "swap", check_swap },
	{ "KAT", check_kat },
};

#define NCHECKS ((int)(sizeof(checks) / sizeof(checks[0])))

/* Check number @i of the module's sdsm_auth_input_fill(). */
static bool test_check(int i)
{
	return checks[i].fn(sdsm_auth_input_fill);
}

static bool test_layout(int arg)
{
	const struct sdsm_wire_auth_input *in = NULL;

	(void)arg;
	TAP_CHECK(sizeof(*in) == INPUT_SIZE, "sizeof %zu", sizeof(*in));
	TAP_CHECK(offsetof(struct sdsm_wire_auth_input, label) == OFF_LABEL &&
	      sizeof(in->label) == SDSM_AUTH_LABEL_SIZE &&
	      SDSM_AUTH_LABEL_SIZE == 16, "label");
	TAP_CHECK(offsetof(struct sdsm_wire_auth_input, nr_nodes) == OFF_NR_NODES &&
	      sizeof(in->nr_nodes) == 2, "nr_nodes");
	TAP_CHECK(offsetof(struct sdsm_wire_auth_input, active_id) == OFF_ACT_ID &&
	      sizeof(in->active_id) == 2, "active_id");
	TAP_CHECK(offsetof(struct sdsm_wire_auth_input, passive_id) == OFF_PAS_ID &&
	      sizeof(in->passive_id) == 2, "passive_id");
	TAP_CHECK(offsetof(struct sdsm_wire_auth_input, __reserved) ==
	      OFF_RESERVED && sizeof(in->__reserved) == 2, "__reserved");
	TAP_CHECK(offsetof(struct sdsm_wire_auth_input, active_incarnation) ==
	      OFF_ACT_INC && sizeof(in->active_incarnation) == 8,
	      "active_incarnation");
	TAP_CHECK(offsetof(struct sdsm_wire_auth_input, passive_incarnation) ==
	      OFF_PAS_INC && sizeof(in->passive_incarnation) == 8,
	      "passive_incarnation");
	TAP_CHECK(offsetof(struct sdsm_wire_auth_input, active_nonce) ==
	      OFF_ACT_NONCE && sizeof(in->active_nonce) == NONCE &&
	      NONCE == 32, "active_nonce");
	TAP_CHECK(offsetof(struct sdsm_wire_auth_input, passive_nonce) ==
	      OFF_PAS_NONCE && sizeof(in->passive_nonce) == NONCE,
	      "passive_nonce");
	TAP_CHECK(strlen(SDSM_AUTH_LABEL_ACCEPT) < SDSM_AUTH_LABEL_SIZE &&
	      strlen(SDSM_AUTH_LABEL_AUTH) < SDSM_AUTH_LABEL_SIZE,
	      "a label does not fit with its NUL");
	return true;
}

/* ---- planted bugs: a copy of the fill logic, mutated ---- */

enum mut {
	MUT_NONE,
	MUT_PASSIVE_NONCES,	/* the passive side puts its own nonce first */
	MUT_PEER_ID_BOTH,	/* the peer's id as both ids */
	MUT_INC_HOST_ORDER,	/* incarnations little endian */
	MUT_INC_LOW32,		/* incarnations cut to 32 bits */
	MUT_NR_NODES_UNSET,	/* nr_nodes left zero */
	MUT_LABEL_CUT,		/* label cut to 8 bytes: "sdsm v2 " */
	MUT_LABEL_SPACES,	/* label padded with spaces */
	MUT_NONCE_XOR,		/* both nonce fields hold their xor */
};

static enum mut mutation;

/* sdsm_auth_input_fill(), kept in step with the module's, and @mutation. */
static void fill_copy(struct sdsm_wire_auth_input *in, const char *label,
		      unsigned int nr_nodes, bool active,
		      const struct sdsm_auth_side *me,
		      const struct sdsm_auth_side *peer)
{
	const struct sdsm_auth_side *act = active ? me : peer;
	const struct sdsm_auth_side *pas = active ? peer : me;
	const u8 *act_nonce = act->nonce, *pas_nonce = pas->nonce;
	size_t n = strnlen(label, sizeof(in->label) - 1);
	int i;

	memset(in, 0, sizeof(*in));
	if (mutation == MUT_LABEL_CUT && n > 8)
		n = 8;
	memcpy(in->label, label, n);
	if (mutation == MUT_LABEL_SPACES)
		memset(in->label + n, ' ', sizeof(in->label) - n);
	if (mutation != MUT_NR_NODES_UNSET)
		in->nr_nodes = cpu_to_be16(nr_nodes);
	if (mutation == MUT_PEER_ID_BOTH) {
		in->active_id = cpu_to_be16(peer->id);
		in->passive_id = cpu_to_be16(peer->id);
	} else {
		in->active_id = cpu_to_be16(act->id);
		in->passive_id = cpu_to_be16(pas->id);
	}
	if (mutation == MUT_INC_HOST_ORDER) {
		in->active_incarnation = htole64(act->incarnation);
		in->passive_incarnation = htole64(pas->incarnation);
	} else if (mutation == MUT_INC_LOW32) {
		in->active_incarnation = cpu_to_be64((u32)act->incarnation);
		in->passive_incarnation = cpu_to_be64((u32)pas->incarnation);
	} else {
		in->active_incarnation = cpu_to_be64(act->incarnation);
		in->passive_incarnation = cpu_to_be64(pas->incarnation);
	}
	if (mutation == MUT_PASSIVE_NONCES && !active) {
		act_nonce = pas->nonce;
		pas_nonce = act->nonce;
	}
	memcpy(in->active_nonce, act_nonce, SDSM_AUTH_NONCE_SIZE);
	memcpy(in->passive_nonce, pas_nonce, SDSM_AUTH_NONCE_SIZE);
	if (mutation == MUT_NONCE_XOR)
		for (i = 0; i < SDSM_AUTH_NONCE_SIZE; i++)
			in->active_nonce[i] = in->passive_nonce[i] =
				act_nonce[i] ^ pas_nonce[i];
}

/* The copy, unmutated, passes every check and fills the module's bytes. */
static bool test_copy(int arg)
{
	struct sdsm_wire_auth_input a, b;
	struct tcase c;
	unsigned long r;
	int i, l, s;

	(void)arg;
	mutation = MUT_NONE;
	rng_seed(base_seed + 5);
	for (r = 0; r < schedules; r++) {
		rand_case(&c);
		for (l = 0; l < 2; l++) {
			for (s = 0; s < 2; s++) {
				fill_as(sdsm_auth_input_fill, &c, s, labels[l],
					&a);
				fill_as(fill_copy, &c, s, labels[l], &b);
				TAP_CHECK(!memcmp(&a, &b, sizeof(a)),
				      "connection %lu, %s side: the copy differs from the module",
				      r, side_name[s]);
			}
		}
	}
	for (i = 0; i < NCHECKS; i++)
		TAP_CHECK(checks[i].fn(fill_copy), "%s", checks[i].name);
	return true;
}

static const struct {
	const char *name;
	enum mut mut;
	int check;		/* index in checks[] that must catch it */
} plants[] = {
	{ "passive side puts its own nonce first", MUT_PASSIVE_NONCES, 0 },
	{ "peer's id used for both ids", MUT_PEER_ID_BOTH, 0 },
	{ "incarnations not byte-swapped (little endian)", MUT_INC_HOST_ORDER,
	  5 },
	{ "incarnations cut to 32 bits", MUT_INC_LOW32, 3 },
	{ "nr_nodes left out", MUT_NR_NODES_UNSET, 3 },
	{ "label cut to 8 bytes (both directions alike)", MUT_LABEL_CUT, 2 },
	{ "label padded with spaces, not zeroes", MUT_LABEL_SPACES, 2 },
	{ "nonces combined by xor (their order lost)", MUT_NONCE_XOR, 4 },
};

#define NPLANTS ((int)(sizeof(plants) / sizeof(plants[0])))

static char caught_by[128];

/* Every check runs on the mutant; the one the plant names must fail. */
static bool test_planted(int p)
{
	bool caught = false;
	int i;

	mutation = plants[p].mut;
	caught_by[0] = '\0';
	for (i = 0; i < NCHECKS; i++) {
		if (checks[i].fn(fill_copy))
			continue;
		snprintf(caught_by + strlen(caught_by),
			 sizeof(caught_by) - strlen(caught_by), "%s%s",
			 caught_by[0] ? ", " : "", checks[i].name);
		if (i == plants[p].check)
			caught = true;
	}
	mutation = MUT_NONE;
	printf("# caught by: %s\n", caught_by[0] ? caught_by : "nothing");
	return caught;
}

static const struct {
	const char *name;
	bool (*fn)(int arg);
	int arg;
} tests[] = {
	{ "auth input: struct sdsm_wire_auth_input has the documented offsets, sizes and 104 bytes",
	  test_layout, 0 },
	{ "auth input: the test's SHA-256 and HMAC-SHA256 give the FIPS 180-2 and RFC 4231 (cases 1, 2, 6) values",
	  test_sha256, 0 },
	{ "auth input: active and passive side fill the same bytes for both labels",
	  test_check, 0 },
	{ "auth input: every field at its documented offset, big endian; label zero padded, reserved zero",
	  test_check, 1 },
	{ "auth input: the accept and auth labels give different bytes, in the label only",
	  test_check, 2 },
	{ "auth input: every bit of nr_nodes, the ids, the incarnations and the nonces changes its field and only it",
	  test_check, 3 },
	{ "auth input: swapping the sides' nonces, incarnations or ids changes the bytes",
	  test_check, 4 },
	{ "auth input: known answer, HMAC-SHA256 of a fixed connection from both sides",
	  test_check, 5 },
	{ "auth input: the test's copy of the fill, unmutated, passes every check with the module's bytes",
	  test_copy, 0 },
};

#define NTESTS ((int)(sizeof(tests) / sizeof(tests[0])))

int main(int argc, char **argv)
{
	struct tap_args ta;
	int i, ret, failed = 0;
	bool ok;

	ret = tap_begin_seeded(argc, argv, NTESTS + NPLANTS, &ta, &base_seed,
			       &schedules, "auth input", "connections");
	if (ret >= 0)
		return ret;
	for (i = 0; i < NTESTS; i++) {
		fflush(stdout);
		ok = tests[i].fn(tests[i].arg);
		tap_result(&ta, i, ok, "%s", tests[i].name);
		failed += !ok;
	}
	for (i = 0; i < NPLANTS; i++) {
		fflush(stdout);
		ok = test_planted(i);
		tap_result(&ta, NTESTS + i, ok, "planted %s is caught (by %s)",
			   plants[i].name, checks[plants[i].check].name);
		failed += !ok;
	}
	return failed ? 1 : 0;
}
