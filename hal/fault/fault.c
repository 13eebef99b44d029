/* SPDX-License-Identifier: MIT */
/* Fault injection of fault.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fault.h"

#define DEFAULT_DELAY_MIN_NS 10000ull   /* 10 us  */
#define DEFAULT_DELAY_MAX_NS 200000ull  /* 200 us */

enum fault_action { FA_PASS, FA_DROP, FA_DUP, FA_DELAY };

/* ---------------------------------------------------------------------- */
/* Configuration.                                                          */

static int set_err(char *err, size_t errlen, const char *what, const char *tok)
{
	if (err && errlen)
		snprintf(err, errlen, "%s: '%s'", what, tok);
	return -1;
}

static int parse_rate(const char *v, uint32_t *ppm)
{
	char *end;
	double d = strtod(v, &end);

	if (end == v || *end || !(d >= 0.0 && d <= 1.0))
		return -1;
	*ppm = (uint32_t)(d * SNIC_FAULT_PPM + 0.5);
	return 0;
}

static int parse_u64(const char *v, uint64_t *out)
{
	char *end;
	unsigned long long x = strtoull(v, &end, 0);

	if (end == v || *end || *v == '-')
		return -1;
	*out = x;
	return 0;
}

static int parse_one(struct snic_fault_cfg *cfg, const char *key,
		     const char *val)
{
	uint64_t us;

	if (!strcmp(key, "loss"))
		return parse_rate(val, &cfg->loss);
	if (!strcmp(key, "dup"))
		return parse_rate(val, &cfg->dup);
	if (!strcmp(key, "reorder"))
		return parse_rate(val, &cfg->reorder);
	if (!strcmp(key, "corrupt"))
		return parse_rate(val, &cfg->corrupt);
	if (!strcmp(key, "seed"))
		return parse_u64(val, &cfg->seed);
	if (!strcmp(key, "queue") && !parse_u64(val, &us) && us <= UINT32_MAX) {
		cfg->queue_len = (uint32_t)us;
		return 0;
	}
	if (!strcmp(key, "drain_ns"))
		return parse_u64(val, &cfg->drain_ns);
	if (!strcmp(key, "delay_us") && !parse_u64(val, &us)) {
		cfg->delay_max_ns = us * 1000;
		return 0;
	}
	if (!strcmp(key, "delay_min_us") && !parse_u64(val, &us)) {
		cfg->delay_min_ns = us * 1000;
		return 0;
	}
	return -1;
}

int snic_fault_parse(struct snic_fault_cfg *cfg, const char *spec, char *err,
		     size_t errlen)
{
	char buf[256], *save = NULL;

	memset(cfg, 0, sizeof(*cfg));
	cfg->delay_min_ns = DEFAULT_DELAY_MIN_NS;
	cfg->delay_max_ns = DEFAULT_DELAY_MAX_NS;
	cfg->seed = 1;
	if (!spec || strlen(spec) >= sizeof(buf))
		return set_err(err, errlen, "fault spec missing or too long",
			       spec ? spec : "");
	strcpy(buf, spec);
	for (char *tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');

		if (!eq)
			return set_err(err, errlen, "expected key=value", tok);
		*eq = 0;
		if (parse_one(cfg, tok, eq + 1)) {
			*eq = '=';
			return set_err(err, errlen,
				       "unknown key or bad value (keys: loss dup "
				       "reorder corrupt seed delay_us delay_min_us "
				       "queue drain_ns)",
				       tok);
		}
	}
	if (cfg->delay_min_ns > cfg->delay_max_ns)
		cfg->delay_min_ns = cfg->delay_max_ns;
	if (cfg->queue_len && !cfg->drain_ns)
		return set_err(err, errlen, "queue needs drain_ns", spec);
	return 0;
}

void snic_fault_init(struct snic_fault *f, const struct snic_fault_cfg *cfg)
{
	memset(f, 0, sizeof(*f));
	f->cfg = *cfg;
	/* splitmix64 of the seed: seeds 1, 2, 3 give unrelated streams */
	uint64_t z = cfg->seed + 0x9e3779b97f4a7c15ull;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	f->rng = (z ^ (z >> 31)) | 1; /* xorshift state must not be 0 */
}

uint64_t snic_fault_rand(struct snic_fault *f)
{
	uint64_t x = f->rng;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	f->rng = x;
	return x * 0x2545f4914f6cdd1dull;
}

static bool roll(struct snic_fault *f, uint32_t ppm)
{
	return ppm && snic_fault_rand(f) % SNIC_FAULT_PPM < ppm;
}

/* ---------------------------------------------------------------------- */
/* Per frame.                                                              */

/* The bounded queue: does a frame arriving at `now` find room?  The
 * queue is kept as the time it needs to drain (frames x drain_ns), so
 * no frame is held: what fits passes at once (its queueing delay is not
 * modelled, only the overflow). */
static bool queue_admits(struct snic_fault *f, uint64_t now)
{
	uint64_t passed;

	if (!f->cfg.queue_len)
		return true;
	passed = now > f->bq_at ? now - f->bq_at : 0;
	f->bq_backlog_ns = f->bq_backlog_ns > passed ? f->bq_backlog_ns - passed : 0;
	f->bq_at = now > f->bq_at ? now : f->bq_at;
	if (f->bq_backlog_ns + f->cfg.drain_ns >
	    (uint64_t)f->cfg.queue_len * f->cfg.drain_ns) {
		f->overflowed++;
		return false;
	}
	f->bq_backlog_ns += f->cfg.drain_ns;
	return true;
}

static enum fault_action decide(struct snic_fault *f)
{
	if (roll(f, f->cfg.loss))
		return FA_DROP;
	if (roll(f, f->cfg.dup))
		return FA_DUP;
	if (roll(f, f->cfg.reorder))
		return FA_DELAY;
	return FA_PASS;
}

/* Flip one random bit of the frame, at the corruption rate. */
static void maybe_corrupt(struct snic_fault *f, struct snic_pkt *p)
{
	if (!p->len || !roll(f, f->cfg.corrupt))
		return;
	uint64_t bit = snic_fault_rand(f) % ((uint64_t)p->len * 8);

	p->data[bit / 8] ^= (uint8_t)(1u << (bit % 8));
	f->corrupted++;
}

static uint64_t delay_ns(struct snic_fault *f)
{
	uint64_t span = f->cfg.delay_max_ns - f->cfg.delay_min_ns;

	return f->cfg.delay_min_ns + (span ? snic_fault_rand(f) % (span + 1) : 0);
}

static bool hold(struct snic_fault *f, struct snic_pkt *p, uint64_t due)
{
	struct snic_fault_held *h;

	if (f->q_len == SNIC_FAULT_QLEN)
		return false;
	h = &f->q[(f->q_head + f->q_len++) % SNIC_FAULT_QLEN];
	h->pkt = p;
	h->due = due;
	f->delayed++;
	return true;
}

/* The oldest held frame, once its time has come (FIFO: a frame held for
 * less time behind one held longer waits for it; still a reordering). */
static struct snic_pkt *release(struct snic_fault *f, uint64_t now)
{
	struct snic_fault_held *h = &f->q[f->q_head];

	if (!f->q_len || h->due > now)
		return NULL;
	f->q_head = (f->q_head + 1) % SNIC_FAULT_QLEN;
	f->q_len--;
	f->released++;
	return h->pkt;
}

static uint16_t one(struct snic_fault *f, struct snic_pkt *p,
		    struct snic_pkt **out, uint16_t k, uint16_t cap,
		    uint64_t now, const struct snic_fault_io *io)
{
	struct snic_pkt *c;

	f->seen++;
	if (!queue_admits(f, now)) {
		io->free(io->ctx, p);
		return k;
	}
	switch (decide(f)) {
	case FA_DROP:
		f->dropped++;
		io->free(io->ctx, p);
		return k;
	case FA_DELAY:
		if (hold(f, p, now + delay_ns(f)))
			return k;
		break;
	case FA_DUP:
		if (k + 1 < cap && (c = io->clone(io->ctx, p)) != NULL) {
			f->duplicated++;
			maybe_corrupt(f, c);
			out[k++] = c;
		}
		break;
	case FA_PASS:
		break;
	}
	maybe_corrupt(f, p);
	out[k++] = p;
	return k;
}

uint16_t snic_fault_rx(struct snic_fault *f, struct snic_pkt **pkts,
		       uint16_t n, uint16_t cap, uint64_t now,
		       const struct snic_fault_io *io)
{
	struct snic_pkt *in[SNIC_FAULT_BURST];
	struct snic_pkt *p;
	uint16_t k = 0;

	if (n > SNIC_FAULT_BURST)
		n = SNIC_FAULT_BURST; /* caller's bug: never more than asked */
	while (n > cap) /* caller's bug too: no room for them */
		io->free(io->ctx, pkts[--n]);
	memcpy(in, pkts, n * sizeof(*pkts));
	/* held frames first: they were received before this burst */
	while (k < cap && k + n < cap && (p = release(f, now)) != NULL)
		pkts[k++] = p;
	/* each frame with the room the ones after it still need: a clone
	 * must not leave a later frame past cap (pkts has no more) */
	for (uint16_t i = 0; i < n; i++)
		k = one(f, in[i], pkts, k, (uint16_t)(cap - (n - 1 - i)), now,
			io);
	return k;
}

uint64_t snic_fault_next_due(const struct snic_fault *f)
{
	return f->q_len ? f->q[f->q_head].due : UINT64_MAX;
}

unsigned snic_fault_drain(struct snic_fault *f, const struct snic_fault_io *io)
{
	unsigned n = 0;

	while (f->q_len) {
		io->free(io->ctx, f->q[f->q_head].pkt);
		f->q_head = (f->q_head + 1) % SNIC_FAULT_QLEN;
		f->q_len--;
		n++;
	}
	return n;
}

int snic_fault_format(const struct snic_fault *f, char *buf, size_t len)
{
	return snprintf(buf, len,
			"seed %llu: seen %llu dropped %llu duplicated %llu "
			"delayed %llu corrupted %llu overflowed %llu",
			(unsigned long long)f->cfg.seed,
			(unsigned long long)f->seen,
			(unsigned long long)f->dropped,
			(unsigned long long)f->duplicated,
			(unsigned long long)f->delayed,
			(unsigned long long)f->corrupted,
			(unsigned long long)f->overflowed);
}
