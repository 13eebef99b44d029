/* SPDX-License-Identifier: MIT */
/*
 * RC transport through the two-NIC simulation: SEND/RECV, WRITE, READ,
 * atomics, protection errors, RNR, malformed and out-of-sequence frames,
 * CQ wrap.  Data is checked byte for byte in the host-memory windows.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>

#include "arch/crc32_hw.h"
#include "fake_frames.h"
#include "fake_host.h"
#include "nic/top.h"
#include "unit.h"

#define STEPS 4000

struct rc_env {
	struct fsim *s;
	struct fpair p;
	struct fconn conn;
};

static struct rc_env *env_new_conn(const struct fconn *conn, uint32_t cqe)
{
	struct rc_env *e = calloc(1, sizeof(*e));

	e->s = fsim_new(4200);
	CU_ASSERT_PTR_NOT_NULL_FATAL(e->s->a.nic);
	CU_ASSERT_PTR_NOT_NULL_FATAL(e->s->b.nic);
	e->conn = *conn;
	CU_ASSERT_EQUAL_FATAL(fpair_setup(&e->p, e->s, conn, 1u << 20, cqe),
			      SNIC_ST_OK);
	return e;
}

static struct rc_env *env_new(void)
{
	struct fconn c;

	fconn_default(&c);
	return env_new_conn(&c, 256);
}

static void env_free(struct rc_env *e)
{
	struct fake_hal *ha = &e->s->a.hal, *hb = &e->s->b.hal;

	CU_ASSERT_EQUAL(ha->bad_frees + hb->bad_frees, 0);
	CU_ASSERT_EQUAL(ha->overflows + hb->overflows, 0);
	CU_ASSERT_EQUAL(fsim_free(e->s), 0); /* every buffer came back */
	free(e);
}

static uint8_t *A(struct rc_env *e, uint64_t off)
{
	return fdev_ptr(&e->s->a, e->p.bufa + off);
}

static uint8_t *B(struct rc_env *e, uint64_t off)
{
	return fdev_ptr(&e->s->b, e->p.bufb + off);
}

static void pattern(uint8_t *p, size_t n, uint32_t seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)((i * 131 + seed * 17 + (i >> 8)) ^ (seed >> 3));
}

static bool all_is(const uint8_t *p, size_t n, uint8_t v)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != v)
			return false;
	return true;
}

static struct snic_wqe_sge sga(struct rc_env *e, uint64_t off, uint32_t len)
{
	struct snic_wqe_sge s = { e->p.bufa + off, len, e->p.mra };
	return s;
}

static struct snic_wqe_sge sgb(struct rc_env *e, uint64_t off, uint32_t len)
{
	struct snic_wqe_sge s = { e->p.bufb + off, len, e->p.mrb };
	return s;
}

/* Split [off, off + len) into n SGEs of unequal sizes. */
static uint32_t split(struct snic_wqe_sge *out, struct snic_wqe_sge (*f)(struct rc_env *, uint64_t, uint32_t),
		      struct rc_env *e, uint64_t off, uint32_t len, uint32_t n)
{
	uint32_t done = 0, k = 0;

	for (uint32_t i = 0; i < n && done < len; i++) {
		uint32_t piece = (i == n - 1) ? len - done : (len / n) + 97 * i;

		if (piece > len - done)
			piece = len - done;
		out[k++] = f(e, off + done, piece);
		done += piece;
	}
	if (k == 0)
		out[k++] = f(e, off, 0);
	return k;
}

static bool wait_cqe(struct rc_env *e, struct fcq *cq, struct snic_cqe *c)
{
	memset(c, 0xee, sizeof(*c));
	return fsim_poll_cq(e->s, cq, c, STEPS);
}

static uint64_t cA(struct rc_env *e, const char *n)
{
	return fdev_counter(&e->s->a, n);
}

static uint64_t cB(struct rc_env *e, const char *n)
{
	return fdev_counter(&e->s->b, n);
}

static const uint32_t sizes[] = { 0, 1, 1023, 1024, 1025, 65536 };
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))

/* ---------------------------------------------------------------------- */
/* Data movement.                                                          */

static void test_rc_send_recv(void)
{
	struct rc_env *e = env_new();
	struct snic_cqe c;

	for (size_t i = 0; i < NSIZES; i++) {
		uint32_t len = sizes[i];
		struct snic_wqe_sge ss[4], rs[3];
		uint32_t ns = split(ss, sga, e, 0, len, len > 4096 ? 4 : 1);
		uint32_t nr = split(rs, sgb, e, 4096, len, len > 4096 ? 3 : 1);

		pattern(A(e, 0), len + 64, (uint32_t)i + 1);
		memset(B(e, 0), 0x5c, 4096 + len + 4096);
		fqp_post_recv(&e->p.qb, 1000 + i, rs, nr);
		struct fwr wr = { .wr_id = 500 + i, .opcode = SNIC_WR_SEND,
				  .flags = SNIC_SEND_SIGNALED, .sge = ss,
				  .num_sge = ns };
		fqp_post_send(&e->p.qa, &wr);
		CU_ASSERT_TRUE_FATAL(wait_cqe(e, &e->p.cqa, &c));
		CU_ASSERT_EQUAL(c.status, SNIC_WC_SUCCESS);
		CU_ASSERT_EQUAL(c.wr_id, 500 + i);
		CU_ASSERT_EQUAL(c.opcode, SNIC_WC_SEND);
		CU_ASSERT_EQUAL(c.is_send, 1);
		CU_ASSERT_EQUAL(c.qp_num, e->p.qa.qpn);
		CU_ASSERT_TRUE_FATAL(wait_cqe(e, &e->p.cqb, &c));
		CU_ASSERT_EQUAL(c.status, SNIC_WC_SUCCESS);
		CU_ASSERT_EQUAL(c.wr_id, 1000 + i);
		CU_ASSERT_EQUAL(c.opcode, SNIC_WC_RECV);
		CU_ASSERT_EQUAL(c.byte_len, len);
		CU_ASSERT_EQUAL(c.is_send, 0);
		CU_ASSERT_EQUAL(c.qp_num, e->p.qb.qpn);
		CU_ASSERT_EQUAL(c.src_qp, e->p.qa.qpn);
		CU_ASSERT_EQUAL(c.wc_flags & SNIC_WC_WITH_IMM, 0);
		CU_ASSERT_EQUAL(memcmp(B(e, 4096), A(e, 0), len), 0);
		CU_ASSERT_TRUE(all_is(B(e, 0), 4096, 0x5c));
		CU_ASSERT_TRUE(all_is(B(e, 4096 + len), 4096, 0x5c));
	}
	CU_ASSERT_EQUAL(fcq_poll(&e->p.cqa, &c), 0);
	CU_ASSERT_EQUAL(fcq_poll(&e->p.cqb, &c), 0);
	CU_ASSERT_EQUAL(cB(e, "recv_wqes"), NSIZES);
	CU_ASSERT_EQUAL(cA(e, "send_wqes"), NSIZES);
	CU_ASSERT_EQUAL(cA(e, "retransmits") + cB(e, "retransmits"), 0);
	CU_ASSERT_EQUAL(fqp_state(&e->p.qa), SNIC_QPS_RTS);
	CU_ASSERT_EQUAL(fqp_state(&e->p.qb), SNIC_QPS_RTS);
	env_free(e);
}

/* A WRITE of len bytes gathered by ss (from A's buffer at src) to B's
 * buffer at roff, completed and checked: B holds them there and nothing
 * around them changed. */
static void write_checked(struct rc_env *e, struct snic_wqe_sge *ss,
			  uint32_t ns, uint64_t src, uint64_t roff,
			  uint32_t len, uint64_t wr_id, uint32_t seed)
{
	struct snic_cqe c;

	pattern(A(e, 0), (uint32_t)src + len + 64, seed);
	memset(B(e, 0), 0x33, roff + len + 4096);
	struct fwr wr = { .wr_id = wr_id, .opcode = SNIC_WR_RDMA_WRITE,
			  .flags = SNIC_SEND_SIGNALED, .sge = ss,
			  .num_sge = ns, .remote_addr = e->p.bufb + roff,
			  .rkey = e->p.mrb };
	fqp_post_send(&e->p.qa, &wr);
	CU_ASSERT_TRUE_FATAL(wait_cqe(e, &e->p.cqa, &c));
	CU_ASSERT_EQUAL(c.status, SNIC_WC_SUCCESS);
	CU_ASSERT_EQUAL(c.wr_id, wr_id);
	CU_ASSERT_EQUAL(c.opcode, SNIC_WC_RDMA_WRITE);
	CU_ASSERT_EQUAL(memcmp(B(e, roff), A(e, src), len), 0);
	CU_ASSERT_TRUE(all_is(B(e, 0), roff, 0x33));
	CU_ASSERT_TRUE(all_is(B(e, roff + len), 4096, 0x33));
}

static void test_rc_write(void)
{
	struct rc_env *e = env_new();
	struct snic_cqe c;

	for (size_t i = 0; i < NSIZES; i++) {
		uint32_t len = sizes[i];
		struct snic_wqe_sge ss[4];
		uint32_t ns = split(ss, sga, e, 0, len, len > 4096 ? 4 : 1);

		/* to an unaligned target */
		write_checked(e, ss, ns, 0, 4096 + 3, len, 700 + i,
			      (uint32_t)i + 7);
	}
	/* a WRITE consumes no RECV and completes nothing on B */
	fsim_idle(e->s, 10);
	CU_ASSERT_EQUAL(fcq_poll(&e->p.cqb, &c), 0);
	CU_ASSERT_EQUAL(cB(e, "recv_wqes"), 0);
	env_free(e);
}

/* The payload's ICRC folded into its copy (the HAL's dma_read_crc, as
 * the emu's) or computed over the frame after a plain copy (a HAL without
 * it): the same frames.  WRITE and READ (whose responses are built the
 * same way) of odd lengths, from gather lists whose pieces are not
 * multiples of 4 (the fold stops there and the frame's ICRC is computed
 * whole) and of one piece (folded to the end).  Inline data (folded by
 * crc32_hw_copy itself): test_rc_imm_and_inline. */
static void rc_write_read_fold(bool fold)
{
	static const uint32_t lens[] = { 1, 3, 4, 13, 60, 61, 255, 1021, 1024,
					 4099, 9000 };
	struct falign al = { 0, 0 };
	struct rc_env *e;
	struct snic_cqe c;

	fake_hal_fold = fold;
	e = env_new();
	fake_hal_fold = true;
	fake_link_set_hook(&e->s->link, falign_hook, &al);
	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		uint32_t len = lens[i];
		struct snic_wqe_sge ss[4];
		uint32_t ns = split(ss, sga, e, 1 + (uint32_t)i, len, 1 + i % 3);
		uint64_t roff = 4096 + i;
		struct fwr wr = { .opcode = SNIC_WR_RDMA_READ,
				  .flags = SNIC_SEND_SIGNALED, .sge = ss,
				  .remote_addr = e->p.bufb + roff,
				  .rkey = e->p.mrb };

		write_checked(e, ss, ns, 1 + i, roff, len, i, (uint32_t)i + 31);
		/* and back: READ responses carry it from B's MR */
		ns = split(ss, sga, e, 16384 + i, len, 1 + (i + 1) % 3);
		memset(A(e, 16384), 0x44, i + len + 4096);
		wr.wr_id = 100 + i;
		wr.num_sge = ns;
		fqp_post_send(&e->p.qa, &wr);
		CU_ASSERT_TRUE_FATAL(wait_cqe(e, &e->p.cqa, &c));
		CU_ASSERT_EQUAL(c.status, SNIC_WC_SUCCESS);
		CU_ASSERT_EQUAL(memcmp(A(e, 16384 + i), B(e, roff), len), 0);
		CU_ASSERT_TRUE(all_is(A(e, 16384), i, 0x44));
		CU_ASSERT_TRUE(all_is(A(e, 16384 + i + len), 4096, 0x44));
	}
	/* the receivers checked every ICRC: none failed, nothing resent */
	CU_ASSERT_EQUAL(cA(e, "rx_drop_icrc") + cB(e, "rx_drop_icrc"), 0);
	CU_ASSERT_EQUAL(cA(e, "retransmits") + cB(e, "retransmits"), 0);
	/* the fold ran where the HAL has it, and only there */
	if (fold && crc32_hw_ok())
		CU_ASSERT_NOT_EQUAL(e->s->a.hal.crc_reads, 0);
	CU_ASSERT_EQUAL(e->s->b.hal.crc_reads != 0, fold && crc32_hw_ok());
	/* and the WRITEs' MIDDLE and LAST packets were placed with their
	 * check folded in (resp_write_more) where the HAL has it */
	CU_ASSERT_EQUAL(e->s->b.hal.crc_writes != 0, fold && crc32_hw_ok());
	/* each one's payload on a line (core_pkt_align): WRITE packets and
	 * READ responses of 512 bytes and more, at MTU
	 * 1024: 1021 and 1024 one each, 4099 four, 9000 nine, each way
	 * (FIRST, MIDDLE, LAST, ONLY: three header lengths) */
	CU_ASSERT_EQUAL(al.big, 2 * (1 + 1 + 4 + 9));
	CU_ASSERT_EQUAL(al.aligned, al.big);
	env_free(e);
}

static void test_rc_payload_icrc_fold(void)
{
	rc_write_read_fold(true);
}

static void test_rc_payload_icrc_copy(void)
{
	rc_write_read_fold(false);
}

static void test_rc_read(void)
{
	struct rc_env *e = env_new();
	struct snic_cqe c;

	for (size_t i = 0; i < NSIZES; i++) {
		uint32_t len = sizes[i];
		struct snic_wqe_sge ss[4];
		uint32_t ns = split(ss, sga, e, 8192 + 5, len, len > 4096 ? 4 : 1);

		pattern(B(e, 4096), len + 64, (uint32_t)i + 11);
		memset(A(e, 0), 0x77, 8192 + 5 + len + 4096);
		struct fwr wr = { .wr_id = 900 + i, .opcode = SNIC_WR_RDMA_READ,
				  .flags = SNIC_SEND_SIGNALED, .sge = ss,
				  .num_sge = ns, .remote_addr = e->p.bufb + 4096,
				  .rkey = e->p.mrb };
		fqp_post_send(&e->p.qa, &wr);
		CU_ASSERT_TRUE_FATAL(wait_cqe(e, &e->p.cqa, &c));
		CU_ASSERT_EQUAL(c.status, SNIC_WC_SUCCESS);
		CU_ASSERT_EQUAL(c.wr_id, 900 + i);
		CU_ASSERT_EQUAL(c.opcode, SNIC_WC_RDMA_READ);
		CU_ASSERT_EQUAL(c.byte_len, len);
		CU_ASSERT_EQUAL(memcmp(A(e, 8192 + 5), B(e, 4096), len), 0);
		CU_ASSERT_TRUE(all_is(A(e, 0), 8192 + 5, 0x77));
		CU_ASSERT_TRUE(all_is(A(e, 8192 + 5 + len), 4096, 0x77));
	}
	CU_ASSERT_EQUAL(fqp_state(&e->p.qa), SNIC_QPS_RTS);
	env_free(e);
}

static void test_rc_imm_and_inline(void)
{
	struct rc_env *e = env_new();
	struct snic_cqe c;
	struct snic_wqe_sge rs = sgb(e, 0, 4096);
	struct snic_wqe_sge ss = sga(e, 0, 3000);
	const char msg[] = "inline hello";

	pattern(A(e, 0), 4096, 3);
	/* SEND with immediate, 3 packets */
	fqp_post_recv(&e->p.qb, 1, &rs, 1);
	struct fwr w1 = { .wr_id = 11, .opcode = SNIC_WR_SEND_WITH_IMM,
			  .flags = SNIC_SEND_SIGNALED, .imm = 0x78563412,
			  .sge = &ss, .num_sge = 1 };
	fqp_post_send(&e->p.qa, &w1);
	CU_ASSERT_TRUE_FATAL(wait_cqe(e, &e->p.cqb, &c));
	CU_ASSERT_EQUAL(c.status, SNIC_WC_SUCCESS);
	CU_ASSERT_EQUAL(c.opcode, SNIC_WC_RECV);
	CU_ASSERT_EQUAL(c.byte_len, 3000);
	CU_ASSERT_EQUAL(c.imm_data, 0x78563412);
	CU_ASSERT_EQUAL(c.wc_flags & SNIC_WC_WITH_IMM, SNIC_WC_WITH_IMM);
	CU_ASSERT_EQUAL(memcmp(B(e, 0), A(e, 0), 3000), 0);
	CU_ASSERT_TRUE_FATAL(wait_cqe(e, &e->p.cqa, &c));
	CU_ASSERT_EQUAL(c.wr_id, 11);
	/* WRITE with immediate: data to the address, the RECV gets imm */
	fqp_post_recv(&e->p.qb, 2, &rs, 1);
	struct fwr w2 = { .wr_id = 12, .opcode = SNIC_WR_RDMA_WRITE_WITH_IMM,
			  .flags = SNIC_SEND_SIGNALED, .imm = 0xdeadbeef,
			  .sge = &ss, .num_sge = 1,
			  .remote_addr = e->p.bufb + 8192, .rkey = e->p.mrb };
	fqp_post_send(&e->p.qa, &w2);
	CU_ASSERT_TRUE_FATAL(wait_cqe(e, &e->p.cqb, &c));
	CU_ASSERT_EQUAL(c.status, SNIC_WC_SUCCESS);
	CU_ASSERT_EQUAL(c.wr_id, 2);
	CU_ASSERT_EQUAL(c.opcode, SNIC_WC_RECV_RDMA_WITH_IMM);
	CU_ASSERT_EQUAL(c.imm_data, 0xdeadbeef);
	CU_ASSERT_EQUAL(c.byte_len, 3000);
	CU_ASSERT_EQUAL(memcmp(B(e, 8192), A(e, 0), 3000), 0);
	CU_ASSERT_TRUE_FATAL(wait_cqe(e, &e->p.cqa, &c));
	CU_ASSERT_EQUAL(c.wr_id, 12);
	/* inline SEND */
	fqp_post_recv(&e->p.qb, 3, &rs, 1);
	struct fwr w3 = { .wr_id = 13, .opcode = SNIC_WR_SEND,
			  .flags = SNIC_SEND_SIGNALED | SNIC_SEND_INLINE,
			  .inline_data = msg, .inline_len = sizeof(msg) };
	fqp_post_send(&e->p.qa, &w3);
	CU_ASSERT_TRUE_FATAL(wait_cqe(e, &e->p.cqb, &c));
	CU_ASSERT_EQUAL(c.byte_len, sizeof(msg));
	CU_ASSERT_EQUAL(memcmp(B(e, 0), msg, sizeof(msg)), 0);
	CU_ASSERT_TRUE_FATAL(wait_cqe(e, &e->p.cqa, &c));
	CU_ASSERT_EQUAL(c.wr_id, 13);
	/* unsignaled WQEs leave no CQE; the next signaled one covers them */
	struct snic_wqe_sge s8 = sga(e, 0, 8);
	struct fwr w4 = { .wr_id = 14, .opcode = SNIC_WR_RDMA_WRITE,
			  .sge = &s8, .num_sge = 1,
			  .remote_addr = e->p.bufb, .rkey = e->p.mrb };
	fqp_post_send(&e->p.qa, &w4);
	w4.wr_id = 15;
	w4.flags = SNIC_SEND_SIGNALED;
	fqp_post_send(&e->p.qa, &w4);
	CU_ASSERT_TRUE_FATAL(wait_cqe(e, &e->p.cqa, &c));
	CU_ASSERT_EQUAL(c.wr_id, 15);
	CU_ASSERT_EQUAL(c.wqe_idx, 4);
	fsim_idle(e->s, 20);
	CU_ASSERT_EQUAL(fcq_poll(&e->p.cqa, &c), 0);
	env_free(e);
}

static void test_rc_atomics(void)
{
	struct rc_env *e = env_new();
	struct snic_cqe c;
	struct snic_wqe_sge res = sga(e, 64, 8);
	uint64_t v = 5, got;

	memcpy(B(e, 128), &v, 8);
	struct fwr w = { .wr_id = 1, .opcode = SNIC_WR_ATOMIC_CMP_AND_SWP,
			 .flags = SNIC_SEND_SIGNALED, .sge = &res, .num_sge = 1,
			 .remote_addr = e->p.bufb + 128, .rkey = e->p.mrb,
			 .compare_add = 5, .swap = 0x1122334455667788ull };
	fqp_post_send(&e->p.qa, &w);
	CU_ASSERT_TRUE_FATAL(wait_cqe(e, &e->p.cqa, &c));
	CU_ASSERT_EQUAL(c.status, SNIC_WC_SUCCESS);
	CU_ASSERT_EQUAL(c.opcode, SNIC_WC_COMP_SWAP);
	CU_ASSERT_EQUAL(c.byte_len, 8);
	memcpy(&got, A(e, 64), 8);
	CU_ASSERT_EQUAL(got, 5);
	memcpy(&got, B(e, 128), 8);
	CU_ASSERT_EQUAL(got, 0x1122334455667788ull);
	/* compare fails: memory unchanged, old value returned */
	w.wr_id = 2;
	w.compare_add = 5;
	w.swap = 99;
	fqp_post_send(&e->p.qa, &w);
	CU_ASSERT_TRUE_FATAL(wait_cqe(e, &e->p.cqa, &c));
	CU_ASSERT_EQUAL(c.status, SNIC_WC_SUCCESS);
	memcpy(&got, A(e, 64), 8);
	CU_ASSERT_EQUAL(got, 0x1122334455667788ull);
	memcpy(&got, B(e, 128), 8);
	CU_ASSERT_EQUAL(got, 0x1122334455667788ull);
	/* fetch and add, with a carry across the 32-bit halves */
	w.wr_id = 3;
	w.opcode = SNIC_WR_ATOMIC_FETCH_AND_ADD;
	w.compare_add = 0xffffffffull;
	fqp_post_send(&e->p.qa, &w);
	CU_ASSERT_TRUE_FATAL(wait_cqe(e, &e->p.cqa, &c));
	CU_ASSERT_EQUAL(c.status, SNIC_WC_SUCCESS);
	CU_ASSERT_EQUAL(c.opcode, SNIC_WC_FETCH_ADD);
	memcpy(&got, A(e, 64), 8);
	CU_ASSERT_EQUAL(got, 0x1122334455667788ull);
	memcpy(&got, B(e, 128), 8);
	CU_ASSERT_EQUAL(got, 0x1122334455667788ull + 0xffffffffull);
	/* several in a row (max_rd_atomic 16) */
	for (int i = 0; i < 10; i++) {
		struct snic_wqe_sge r = sga(e, 256 + 8 * i, 8);
		struct fwr f = { .wr_id = 10 + i,
				 .opcode = SNIC_WR_ATOMIC_FETCH_AND_ADD,
				 .flags = SNIC_SEND_SIGNALED, .sge = &r,
				 .num_sge = 1, .remote_addr = e->p.bufb + 512,
				 .rkey = e->p.mrb, .compare_add = 1 };
		fqp_post_send(&e->p.qa, &f);
	}
	for (int i = 0; i < 10; i++) {
		CU_ASSERT_TRUE_FATAL(wait_cqe(e, &e->p.cqa, &c));
		CU_ASSERT_EQUAL(c.wr_id, 10 + i);
		CU_ASSERT_EQUAL(c.status, SNIC_WC_SUCCESS);
		memcpy(&got, A(e, 256 + 8 * i), 8);
		CU_ASSERT_EQUAL(got, (uint64_t)i);
	}
	memcpy(&got, B(e, 512), 8);
	CU_ASSERT_EQUAL(got, 10);
	CU_ASSERT_EQUAL(cB(e, "atomics"), 13);
	env_free(e);
}

/* An unaligned atomic is an invalid request (IBTA 9.4.5). */
static void test_rc_atomic_unaligned(void)
{
	struct rc_env *e = env_new();
	struct snic_cqe c;
	struct snic_wqe_sge res = sga(e, 64, 8);
	uint64_t v = 7, got;

	memcpy(B(e, 132), &v, 8);
	struct fwr w = { .wr_id = 1, .opcode = SNIC_WR_ATOMIC_FETCH_AND_ADD,
			 .flags = SNIC_SEND_SIGNALED, .sge = &res, .num_sge = 1,
			 .remote_addr = e->p.bufb + 132, .rkey = e->p.mrb,
			 .compare_add = 1 };
	fqp_post_send(&e->p.qa, &w);
	CU_ASSERT_TRUE_FATAL(wait_cqe(e, &e->p.cqa, &c));
	CU_ASSERT_EQUAL(c.status, SNIC_WC_REM_INV_REQ_ERR);
	memcpy(&got, B(e, 132), 8);
	CU_ASSERT_EQUAL(got, 7);
	CU_ASSERT_EQUAL(cB(e, "nak_inv_req_sent"), 1);
	CU_ASSERT_EQUAL(fqp_state(&e->p.qa), SNIC_QPS_ERR);
	env_free(e);
}

/* ---------------------------------------------------------------------- */
/* Protection errors.                                                      */

static void test_rc_bad_lkey(void)
{
	struct rc_env *e = env_new();
	struct snic_cqe c;
	struct snic_wqe_sge rs = sgb(e, 0, 4096);
	struct snic_wqe_sge bad = sga(e, 0, 100), good = sga(e, 0, 100);

	bad.lkey ^= 0x100; /* another slot */
	fqp_post_recv(&e->p.qb, 1, &rs, 1);
	memset(B(e, 0), 0x42, 4096);
	struct fwr w1 = { .wr_id = 1, .opcode = SNIC_WR_SEND,
			  .flags = SNIC_SEND_SIGNALED, .sge = &bad, .num_sge = 1 };
	struct fwr w2 = { .wr_id = 2, .opcode = SNIC_WR_SEND,
			  .flags = SNIC_SEND_SIGNALED, .sge = &good, .num_sge = 1 };
	fqp_post_send(&e->p.qa, &w1);
	fqp_post_send(&e->p.qa, &w2);
	CU_ASSERT_TRUE_FATAL(wait_cqe(e, &e->p.cqa, &c));
	CU_ASSERT_EQUAL(c.wr_id, 1);
	CU_ASSERT_EQUAL(c.status, SNIC_WC_LOC_PROT_ERR);
	CU_ASSERT_TRUE_FATAL(wait_cqe(e, &e->p.cqa, &c));
	CU_ASSERT_EQUAL(c.wr_id, 2);
	CU_ASSERT_EQUAL(c.status, SNIC_WC_WR_FLUSH_ERR);
	CU_ASSERT_EQUAL(fqp_state(&e->p.qa), SNIC_QPS_ERR);
	CU_ASSERT_EQUAL(cA(e, "wqe_errors"), 1);
	/* nothing reached B */
	fsim_idle(e->s, 50);
	CU_ASSERT_EQUAL(fcq_poll(&e->p.cqb, &c), 0);
	CU_ASSERT_TRUE(all_is(B(e, 0), 4096, 0x42));
	CU_ASSERT_EQUAL(fqp_state(&e->p.qb), SNIC_QPS_RTS);
	env_free(e);
}

/* Local key variants: out of bounds, wrong PD, a read-only MR as a READ
 * target.  Each on a fresh pair. */
static void test_rc_bad_lkey_variants(void)
{
	for (int v = 0; v < 3; v++) {
		struct rc_env *e = env_new();
		struct snic_cqe c;
		struct snic_wqe_sge s = sga(e, 0, 64);
		uint8_t op = SNIC_WR_SEND;

		if (v == 0) {
			s.addr = e->p.bufa + e->p.buf_len - 10;
		} else if (v == 1) {
			uint32_t pd2, k;

			CU_ASSERT_EQUAL(fctx_alloc_pd(&e->p.ca, &pd2), SNIC_ST_OK);
			CU_ASSERT_EQUAL(fctx_reg_mr(&e->p.ca, pd2, e->p.bufa, 4096,
						    SNIC_ACCESS_LOCAL_WRITE, &k),
					SNIC_ST_OK);
			s.lkey = k;
		} else {
			uint32_t k;

			CU_ASSERT_EQUAL(fctx_reg_mr(&e->p.ca, e->p.pda, e->p.bufa,
						    4096, 0, &k), SNIC_ST_OK);
			s.lkey = k;
			op = SNIC_WR_RDMA_READ;
		}
		struct fwr w = { .wr_id = 5, .opcode = op,
				 .flags = SNIC_SEND_SIGNALED, .sge = &s,
				 .num_sge = 1, .remote_addr = e->p.bufb,
				 .rkey = e->p.mrb };
		fqp_post_send(&e->p.qa, &w);
		CU_ASSERT_TRUE_FATAL(wait_cqe(e, &e->p.cqa, &c));
		CU_ASSERT_EQUAL(c.status, SNIC_WC_LOC_PROT_ERR);
		CU_ASSERT_EQUAL(fqp_state(&e->p.qa), SNIC_QPS_ERR);
		env_free(e);
	}
}

static void test_rc_bad_rkey_write(void)
{
	for (int v = 0; v < 4; v++) {
		struct rc_env *e = env_new();
		struct snic_cqe c;
		struct snic_wqe_sge s = sga(e, 0, 2000);
		uint64_t raddr = e->p.bufb + 4096;
		uint32_t rkey = e->p.mrb;

		pattern(A(e, 0), 4096, 9);
		memset(B(e, 0), 0x11, 16384);
		if (v == 0) {
			rkey ^= 1; /* stale generation */
		} else if (v == 1) {
			raddr = e->p.bufb + e->p.buf_len - 1000; /* past the end */
		} else if (v == 2) {
			uint32_t k; /* MR without REMOTE_WRITE */

			CU_ASSERT_EQUAL(fctx_reg_mr(&e->p.cb, e->p.pdb, e->p.bufb,
						    16384, SNIC_ACCESS_LOCAL_WRITE |
						    SNIC_ACCESS_REMOTE_READ, &k),
					SNIC_ST_OK);
			rkey = k;
		} else {
			uint32_t pd2, k; /* MR of another PD */

			CU_ASSERT_EQUAL(fctx_alloc_pd(&e->p.cb, &pd2), SNIC_ST_OK);
			CU_ASSERT_EQUAL(fctx_reg_mr(&e->p.cb, pd2, e->p.bufb,
						    16384, 0xf, &k), SNIC_ST_OK);
			rkey = k;
		}
		struct fwr w = { .wr_id = 77, .opcode = SNIC_WR_RDMA_WRITE,
				 .flags = SNIC_SEND_SIGNALED, .sge = &s,
				 .num_sge = 1, .remote_addr = raddr, .rkey = rkey };
		fqp_post_send(&e->p.qa, &w);
		CU_ASSERT_TRUE_FATAL(wait_cqe(e, &e->p.cqa, &c));
		CU_ASSERT_EQUAL(c.wr_id, 77);
		CU_ASSERT_EQUAL(c.status, SNIC_WC_REM_ACCESS_ERR);
		CU_ASSERT_TRUE(all_is(B(e, 0), 16384, 0x11));
		if (v == 1)
			CU_ASSERT_TRUE(all_is(B(e, e->p.buf_len - 4096), 4096, 0));
		CU_ASSERT_EQUAL(cB(e, "nak_access_sent"), 1);
		CU_ASSERT_EQUAL(cA(e, "nak_access_recv"), 1);
		CU_ASSERT_EQUAL(fqp_state(&e->p.qa), SNIC_QPS_ERR);
		CU_ASSERT_EQUAL(fqp_state(&e->p.qb), SNIC_QPS_ERR);
		env_free(e);
	}
}

static void test_rc_bad_rkey_read(void)
{
	struct rc_env *e = env_new();
	struct snic_cqe c;
	struct snic_wqe_sge s = sga(e, 0, 3000);

	memset(A(e, 0), 0x21, 8192);
	pattern(B(e, 0), 8192, 4);
	struct fwr w = { .wr_id = 8, .opcode = SNIC_WR_RDMA_READ,
			 .flags = SNIC_SEND_SIGNALED, .sge = &s, .num_sge = 1,
			 .remote_addr = e->p.bufb, .rkey = e->p.mrb + 0x100 };
	fqp_post_send(&e->p.qa, &w);
	CU_ASSERT_TRUE_FATAL(wait_cqe(e, &e->p.cqa, &c));
	CU_ASSERT_EQUAL(c.wr_id, 8);
	CU_ASSERT_EQUAL(c.status, SNIC_WC_REM_ACCESS_ERR);
	CU_ASSERT_TRUE(all_is(A(e, 0), 8192, 0x21));
	CU_ASSERT_EQUAL(cB(e, "read_responses"), 0);
	CU_ASSERT_EQUAL(fqp_state(&e->p.qa), SNIC_QPS_ERR);
	CU_ASSERT_EQUAL(fqp_state(&e->p.qb), SNIC_QPS_ERR);
	env_free(e);
}

/* The QP's own access flags gate remote access too. */
static void test_rc_qp_access_flags(void)
{
	struct fconn conn;
	struct rc_env *e;
	struct snic_cqe c;

	fconn_default(&conn);
	conn.access = SNIC_ACCESS_REMOTE_READ; /* no remote write on the QPs */
	e = env_new_conn(&conn, 256);
	struct snic_wqe_sge s = sga(e, 0, 16);
	memset(B(e, 0), 0x66, 64);
	struct fwr w = { .wr_id = 1, .opcode = SNIC_WR_RDMA_WRITE,
			 .flags = SNIC_SEND_SIGNALED, .sge = &s, .num_sge = 1,
			 .remote_addr = e->p.bufb, .rkey = e->p.mrb };
	fqp_post_send(&e->p.qa, &w);
	CU_ASSERT_TRUE_FATAL(wait_cqe(e, &e->p.cqa, &c));
	CU_ASSERT_EQUAL(c.status, SNIC_WC_REM_ACCESS_ERR);
	CU_ASSERT_TRUE(all_is(B(e, 0), 64, 0x66));
	env_free(e);
}

/* ---------------------------------------------------------------------- */
/* RNR.                                                                    */

static void test_rc_rnr_then_recv(void)
{
	struct rc_env *e = env_new();
	struct snic_cqe c;
	struct snic_wqe_sge s = sga(e, 0, 2500), rs = sgb(e, 0, 4096);

	pattern(A(e, 0), 4096, 21);
	struct fwr w = { .wr_id = 31, .opcode = SNIC_WR_SEND,
			 .flags = SNIC_SEND_SIGNALED, .sge = &s, .num_sge = 1 };
	fqp_post_send(&e->p.qa, &w);
	fsim_idle(e->s, 300); /* 300 us of virtual time, timer 10 us */
	CU_ASSERT_EQUAL(fcq_poll(&e->p.cqa, &c), 0);
	CU_ASSERT_EQUAL(fcq_poll(&e->p.cqb, &c), 0);
	uint64_t naks = cB(e, "rnr_nak_sent");
	CU_ASSERT_TRUE(naks >= 5);
	CU_ASSERT_TRUE(naks <= 31);
	CU_ASSERT_EQUAL(cA(e, "rnr_nak_recv"), naks);
	fqp_post_recv(&e->p.qb, 41, &rs, 1);
	CU_ASSERT_TRUE_FATAL(wait_cqe(e, &e->p.cqb, &c));
	CU_ASSERT_EQUAL(c.status, SNIC_WC_SUCCESS);
	CU_ASSERT_EQUAL(c.wr_id, 41);
	CU_ASSERT_EQUAL(c.byte_len, 2500);
	CU_ASSERT_EQUAL(memcmp(B(e, 0), A(e, 0), 2500), 0);
	CU_ASSERT_TRUE_FATAL(wait_cqe(e, &e->p.cqa, &c));
	CU_ASSERT_EQUAL(c.status, SNIC_WC_SUCCESS);
	CU_ASSERT_EQUAL(c.wr_id, 31);
	/* exactly one RECV consumed, one completion each */
	fsim_idle(e->s, 50);
	CU_ASSERT_EQUAL(fcq_poll(&e->p.cqa, &c), 0);
	CU_ASSERT_EQUAL(fcq_poll(&e->p.cqb, &c), 0);
	CU_ASSERT_EQUAL(cB(e, "recv_wqes"), 1);
	env_free(e);
}

/* Eight one-packet SENDs and no RECV: the responder RNR-NAKs the first
 * and NAKs the rest as out of sequence, naming the same PSN.  That NAK
 * is the RNR's echo, not a loss: the requester keeps its full window
 * (cwnd 0) and waits out the RNR timer (no resend before it), and once
 * RECVs are there every SEND lands once, in order. */
static void test_rc_rnr_seq_echo(void)
{
	struct rc_env *e = env_new();
	struct snic_qp *qa = &e->s->a.nic->qps[SNIC_QPN_IDX(e->p.qa.qpn)];
	struct snic_wqe_sge s[8], rs[8];
	struct snic_cqe c;

	for (unsigned i = 0; i < 8; i++) {
		s[i] = sga(e, 256 * i, 200);
		rs[i] = sgb(e, 256 * i, 256);
		pattern(A(e, 256 * i), 200, (uint8_t)(40 + i));
		struct fwr w = { .wr_id = 70 + i, .opcode = SNIC_WR_SEND,
				 .flags = SNIC_SEND_SIGNALED, .sge = &s[i],
				 .num_sge = 1 };
		fqp_post_send(&e->p.qa, &w);
	}
	fsim_idle(e->s, 30);
	CU_ASSERT_TRUE(cA(e, "rnr_nak_recv") >= 1);
	CU_ASSERT_TRUE(cB(e, "nak_seq_sent") >= 1);
	CU_ASSERT_TRUE(cA(e, "nak_seq_recv") >= 1);
	/* every sequence NAK the requester took was the RNR's echo */
	CU_ASSERT_EQUAL(cA(e, "nak_seq_rnr"), cA(e, "nak_seq_recv"));
	CU_ASSERT_EQUAL(qa->cwnd, 0);
	for (unsigned i = 0; i < 8; i++)
		fqp_post_recv(&e->p.qb, 80 + i, &rs[i], 1);
	for (unsigned i = 0; i < 8; i++) {
		CU_ASSERT_TRUE_FATAL(wait_cqe(e, &e->p.cqb, &c));
		CU_ASSERT_EQUAL(c.status, SNIC_WC_SUCCESS);
		CU_ASSERT_EQUAL(c.wr_id, 80 + i);
		CU_ASSERT_EQUAL(c.byte_len, 200);
		CU_ASSERT_EQUAL(memcmp(B(e, 256 * i), A(e, 256 * i), 200), 0);
	}
	for (unsigned i = 0; i < 8; i++) {
		CU_ASSERT_TRUE_FATAL(wait_cqe(e, &e->p.cqa, &c));
		CU_ASSERT_EQUAL(c.status, SNIC_WC_SUCCESS);
		CU_ASSERT_EQUAL(c.wr_id, 70 + i);
	}
	CU_ASSERT_EQUAL(qa->cwnd, 0);
	CU_ASSERT_EQUAL(cB(e, "recv_wqes"), 8);
	env_free(e);
}

static void test_rc_rnr_retry_exceeded(void)
{
	struct fconn conn;
	struct rc_env *e;
	struct snic_cqe c;

	fconn_default(&conn);
	conn.rnr_retry = 2;
	e = env_new_conn(&conn, 256);
	struct snic_wqe_sge s = sga(e, 0, 100);
	struct fwr w = { .wr_id = 51, .opcode = SNIC_WR_SEND,
			 .flags = SNIC_SEND_SIGNALED, .sge = &s, .num_sge = 1 };
	fqp_post_send(&e->p.qa, &w);
	w.wr_id = 52;
	fqp_post_send(&e->p.qa, &w);
	CU_ASSERT_TRUE_FATAL(wait_cqe(e, &e->p.cqa, &c));
	CU_ASSERT_EQUAL(c.wr_id, 51);
	CU_ASSERT_EQUAL(c.status, SNIC_WC_RNR_RETRY_EXC_ERR);
	CU_ASSERT_TRUE_FATAL(wait_cqe(e, &e->p.cqa, &c));
	CU_ASSERT_EQUAL(c.wr_id, 52);
	CU_ASSERT_EQUAL(c.status, SNIC_WC_WR_FLUSH_ERR);
	CU_ASSERT_EQUAL(cA(e, "rnr_nak_recv"), 3); /* first try + 2 retries */
	CU_ASSERT_EQUAL(fqp_state(&e->p.qa), SNIC_QPS_ERR);
	CU_ASSERT_EQUAL(fqp_state(&e->p.qb), SNIC_QPS_RTS);
	env_free(e);
}

/* WRITE with immediate and no RECV posted: RNR, then the retry must be
 * accepted once a RECV is there. */
static void test_rc_rnr_write_imm(void)
{
	struct rc_env *e = env_new();
	struct snic_cqe c;
	struct snic_wqe_sge s = sga(e, 0, 100), rs = sgb(e, 0, 64);

	pattern(A(e, 0), 100, 5);
	struct fwr w = { .wr_id = 61, .opcode = SNIC_WR_RDMA_WRITE_WITH_IMM,
			 .flags = SNIC_SEND_SIGNALED, .imm = 0x01020304,
			 .sge = &s, .num_sge = 1,
			 .remote_addr = e->p.bufb + 4096, .rkey = e->p.mrb };
	fqp_post_send(&e->p.qa, &w);
	fsim_idle(e->s, 100);
	CU_ASSERT_TRUE(cB(e, "rnr_nak_sent") >= 1);
	fqp_post_recv(&e->p.qb, 62, &rs, 1);
	CU_ASSERT_TRUE_FATAL(wait_cqe(e, &e->p.cqb, &c));
	CU_ASSERT_EQUAL(c.status, SNIC_WC_SUCCESS);
	CU_ASSERT_EQUAL(c.opcode, SNIC_WC_RECV_RDMA_WITH_IMM);
	CU_ASSERT_EQUAL(c.imm_data, 0x01020304);
	CU_ASSERT_EQUAL(memcmp(B(e, 4096), A(e, 0), 100), 0);
	CU_ASSERT_TRUE_FATAL(wait_cqe(e, &e->p.cqa, &c));
	CU_ASSERT_EQUAL(c.status, SNIC_WC_SUCCESS);
	CU_ASSERT_EQUAL(cB(e, "rx_drop_opcode_seq"), 0);
	CU_ASSERT_EQUAL(fqp_state(&e->p.qb), SNIC_QPS_RTS);
	env_free(e);
}

/* ---------------------------------------------------------------------- */
/* Frames on the link.                                                     */

/* A request frame from A's QP to B's QP, built like the firmware does. */
static uint16_t mk_frame(struct rc_env *e, uint8_t *f, uint8_t opcode,
			 uint32_t dqpn, uint32_t psn, const void *payload,
			 uint32_t len)
{
	struct roce_hdrs h;

	memset(&h, 0, sizeof(h));
	memcpy(h.dmac, e->s->b.cfg.mac, 6);
	memcpy(h.smac, e->s->a.cfg.mac, 6);
	h.sip = FSIM_IP_A;
	h.dip = FSIM_IP_B;
	h.ttl = 64;
	h.sport = 0xc123;
	h.opcode = opcode;
	h.pkey = ROCE_DEFAULT_PKEY;
	h.dqpn = dqpn;
	h.psn = psn;
	h.ackreq = 1;
	if (len)
		memcpy(f + roce_hdr_len(opcode), payload, len);
	return (uint16_t)roce_build(f, &h, len);
}

static uint32_t epsn_b(struct rc_env *e)
{
	return e->s->b.nic->qps[SNIC_QPN_IDX(e->p.qb.qpn)].resp.epsn;
}

/* SEND of `len` bytes A -> B with a fresh RECV; true when both complete
 * with success and the bytes match. */
static bool send_ok(struct rc_env *e, uint32_t len, uint64_t id)
{
	struct snic_wqe_sge s = sga(e, 0, len), rs = sgb(e, 0, 65536);
	struct snic_cqe c1, c2;

	pattern(A(e, 0), len, (uint32_t)id);
	fqp_post_recv(&e->p.qb, id, &rs, 1);
	struct fwr w = { .wr_id = id, .opcode = SNIC_WR_SEND,
			 .flags = SNIC_SEND_SIGNALED, .sge = &s, .num_sge = 1 };
	fqp_post_send(&e->p.qa, &w);
	if (!wait_cqe(e, &e->p.cqb, &c1) || !wait_cqe(e, &e->p.cqa, &c2))
		return false;
	return c1.status == SNIC_WC_SUCCESS && c2.status == SNIC_WC_SUCCESS &&
	       c1.wr_id == id && c2.wr_id == id && c1.byte_len == len &&
	       memcmp(B(e, 0), A(e, 0), len) == 0;
}

static void inject_b(struct rc_env *e, const uint8_t *f, uint16_t len)
{
	CU_ASSERT_EQUAL(fake_link_inject(&e->s->link, 1, f, len), 0);
	fsim_idle(e->s, 3);
}

/* Buffers the NIC's cores hold by design: their packet caches and what
 * waits in their TX queues (every core's: with several, each has its
 * own). */
static unsigned held(struct snic_nic *nic)
{
	unsigned n = 0;

	for (unsigned k = 0; k < snic_nic_ncores(nic); k++) {
		const struct snic_core *c = &snic_nic_core(nic, k)->core;

		n += c->npkt_cache + (c->txq_tail - c->txq_head);
	}
	return n;
}

static void test_rc_malformed_frames(void)
{
	struct rc_env *e = env_new();
	static uint8_t f[FH_BUF_CAP];
	uint8_t pay[256];
	uint16_t n;
	uint64_t rx0;

	pattern(pay, sizeof(pay), 1);
	CU_ASSERT_TRUE(send_ok(e, 100, 1));
	/* bad ICRC: one payload bit flipped */
	n = mk_frame(e, f, ROCE_RC_SEND_ONLY, e->p.qb.qpn, epsn_b(e), pay, 256);
	f[n - 10] ^= 0x04;
	inject_b(e, f, n);
	CU_ASSERT_EQUAL(cB(e, "rx_drop_icrc"), 1);
	/* truncated: the frame ends before IP total length says */
	n = mk_frame(e, f, ROCE_RC_SEND_ONLY, e->p.qb.qpn, epsn_b(e), pay, 256);
	inject_b(e, f, (uint16_t)(n - 40));
	CU_ASSERT_EQUAL(cB(e, "rx_drop_truncated"), 1);
	inject_b(e, f, 20);
	CU_ASSERT_EQUAL(cB(e, "rx_drop_truncated"), 2);
	/* unknown QPN: a free index, and a live index with a stale gen */
	n = mk_frame(e, f, ROCE_RC_SEND_ONLY, 700, epsn_b(e), pay, 16);
	inject_b(e, f, n);
	n = mk_frame(e, f, ROCE_RC_SEND_ONLY, e->p.qb.qpn ^ (5u << 10),
		     epsn_b(e), pay, 16);
	inject_b(e, f, n);
	CU_ASSERT_EQUAL(cB(e, "rx_drop_unknown_qpn"), 2);
	/* not for our IP */
	n = mk_frame(e, f, ROCE_RC_SEND_ONLY, e->p.qb.qpn, epsn_b(e), pay, 16);
	f[ROCE_ETH_HLEN + 19] ^= 1; /* dip; fix the IP checksum by rebuilding */
	{
		struct roce_hdrs h;
		CU_ASSERT_EQUAL(roce_parse(f, n, &h), ROCE_ERR_IP_HDR);
		h.dip = FSIM_IP_B ^ 1;
	}
	inject_b(e, f, n);
	CU_ASSERT_EQUAL(cB(e, "rx_drop_ip_hdr"), 1);
	/* not RoCE at all (IPv6 ethertype) */
	memset(f, 0, 64);
	f[12] = 0x86;
	f[13] = 0xdd;
	inject_b(e, f, 64);
	CU_ASSERT_EQUAL(cB(e, "rx_drop_not_roce"), 1);
	/* the QP and the NIC carry on */
	CU_ASSERT_EQUAL(cB(e, "rx_drop_opcode_seq"), 0);
	CU_ASSERT_EQUAL(fqp_state(&e->p.qb), SNIC_QPS_RTS);
	rx0 = cB(e, "recv_wqes");
	CU_ASSERT_TRUE(send_ok(e, 3000, 2));
	CU_ASSERT_EQUAL(cB(e, "recv_wqes"), rx0 + 1);
	CU_ASSERT_EQUAL(fake_hal_outstanding(&e->s->b.hal), held(e->s->b.nic));
	env_free(e);
}

/* A READ spanning more than 2^22 PSNs (here 1 GiB + 256 bytes at path MTU
 * 256) would make 24-bit PSN distances ambiguous: refused locally with
 * LOC_LEN_ERR, nothing goes on the wire.  The local MR maps one page over
 * and over, so 1 GiB fits the fake window. */
static void test_rc_read_psn_span(void)
{
	struct fconn conn;
	struct rc_env *e;
	const uint32_t npages = (1u << 18) + 1;
	uint32_t *pages = malloc(npages * sizeof(*pages)), key;
	uint64_t len = (1ull << 30) + 256, tx0;
	struct snic_cqe c;

	fconn_default(&conn);
	conn.path_mtu = 1; /* 256 */
	e = env_new_conn(&conn, 256);
	for (uint32_t i = 0; i < npages; i++)
		pages[i] = (uint32_t)(e->p.bufa >> SNIC_PAGE_SHIFT);
	/* max_mr_size is the window size: let the firmware believe in a
	 * 4 GiB window (every page used here lies in the real one) */
	e->s->a.nic->core.cfg.host_mem_size = 4ull << 30;
	CU_ASSERT_EQUAL_FATAL(fctx_reg_mr_pages(&e->p.ca, e->p.pda, 1ull << 40, len,
						pages, npages,
						SNIC_ACCESS_LOCAL_WRITE, &key),
			      SNIC_ST_OK);
	struct snic_wqe_sge sg = { .addr = 1ull << 40, .length = (uint32_t)len,
				   .lkey = key };
	struct fwr w = { .wr_id = 77, .opcode = SNIC_WR_RDMA_READ,
			 .flags = SNIC_SEND_SIGNALED, .sge = &sg, .num_sge = 1,
			 .remote_addr = e->p.bufb, .rkey = e->p.mrb };
	tx0 = cA(e, "tx_frames");
	fqp_post_send(&e->p.qa, &w);
	CU_ASSERT_TRUE_FATAL(wait_cqe(e, &e->p.cqa, &c));
	CU_ASSERT_EQUAL(c.wr_id, 77);
	CU_ASSERT_EQUAL(c.status, SNIC_WC_LOC_LEN_ERR);
	CU_ASSERT_EQUAL(fqp_state(&e->p.qa), SNIC_QPS_ERR);
	CU_ASSERT_EQUAL(cA(e, "tx_frames"), tx0);
	free(pages);
	env_free(e);
}

/* A request at the right QPN and PSN but from another address: dropped
 * and counted, the connected QP never sees it. */
static void test_rc_wrong_peer(void)
{
	struct rc_env *e = env_new();
	static uint8_t f[FH_BUF_CAP];
	uint8_t pay[64];
	struct roce_hdrs h;
	uint32_t epsn;
	uint16_t n;

	pattern(pay, sizeof(pay), 3);
	CU_ASSERT_TRUE(send_ok(e, 100, 1));
	epsn = epsn_b(e);
	n = mk_frame(e, f, ROCE_RC_SEND_ONLY, e->p.qb.qpn, epsn, pay, 64);
	CU_ASSERT_EQUAL_FATAL(roce_parse(f, n, &h), ROCE_OK);
	h.sip = FSIM_IP_A ^ 0x10;
	n = (uint16_t)roce_build(f, &h, 64);
	inject_b(e, f, n);
	CU_ASSERT_EQUAL(cB(e, "rx_drop_wrong_peer"), 1);
	CU_ASSERT_EQUAL(epsn_b(e), epsn);
	CU_ASSERT_EQUAL(fqp_state(&e->p.qb), SNIC_QPS_RTS);
	CU_ASSERT_TRUE(send_ok(e, 200, 2));
	env_free(e);
}

/* A SEND MIDDLE with no FIRST at the expected PSN: an invalid request
 * (opcode sequence).  That QP ends in ERR; another QP pair on the same
 * NICs keeps working. */
static void test_rc_opcode_sequence(void)
{
	struct rc_env *e = env_new();
	static uint8_t f[FH_BUF_CAP];
	uint8_t pay[1024];
	uint16_t n;

	pattern(pay, sizeof(pay), 2);
	n = mk_frame(e, f, ROCE_RC_SEND_MIDDLE, e->p.qb.qpn, epsn_b(e), pay, 1024);
	inject_b(e, f, n);
	CU_ASSERT_EQUAL(cB(e, "rx_drop_opcode_seq"), 1);
	CU_ASSERT_EQUAL(cB(e, "nak_inv_req_sent"), 1);
	CU_ASSERT_EQUAL(fqp_state(&e->p.qb), SNIC_QPS_ERR);
	/* A had nothing outstanding: the NAK is unexpected there */
	CU_ASSERT_EQUAL(cA(e, "rx_drop_unexpected"), 1);
	CU_ASSERT_EQUAL(fqp_state(&e->p.qa), SNIC_QPS_RTS);
	/* a second pair over the same NICs */
	struct fqp qa2, qb2;
	struct fqp_caps caps = { .sq_cnt = 16, .rq_cnt = 16, .max_send_sge = 1,
				 .max_recv_sge = 1 };
	CU_ASSERT_EQUAL_FATAL(fqp_create(&qa2, &e->p.ca, e->p.pda, &e->p.cqa,
					 &e->p.cqa, &caps), SNIC_ST_OK);
	CU_ASSERT_EQUAL_FATAL(fqp_create(&qb2, &e->p.cb, e->p.pdb, &e->p.cqb,
					 &e->p.cqb, &caps), SNIC_ST_OK);
	CU_ASSERT_EQUAL_FATAL(fqp_connect(&qa2, &qb2, &e->conn), SNIC_ST_OK);
	/* drain flush CQEs of qb */
	struct snic_cqe c;
	while (fcq_poll(&e->p.cqb, &c))
		;
	e->p.qa = qa2;
	e->p.qb = qb2;
	CU_ASSERT_TRUE(send_ok(e, 1500, 9));
	/* a length error: SEND ONLY longer than the path MTU */
	n = mk_frame(e, f, ROCE_RC_SEND_ONLY, e->p.qb.qpn, epsn_b(e), pay, 1024);
	struct snic_wqe_sge rs = sgb(e, 0, 4096);
	fqp_post_recv(&e->p.qb, 10, &rs, 1);
	{
		static uint8_t big[FH_BUF_CAP];
		uint8_t p2[1028];
		pattern(p2, sizeof(p2), 3);
		n = mk_frame(e, big, ROCE_RC_SEND_ONLY, e->p.qb.qpn, epsn_b(e),
			     p2, 1028);
		inject_b(e, big, n);
	}
	CU_ASSERT_EQUAL(cB(e, "rx_drop_bad_length"), 1);
	env_free(e);
}

/* A connection set given back with responder resources still pending (a
 * QP destroyed while READ responses were owed) and taken by the next QP:
 * that QP starts with none of them (qp_conn_take), so its READ is counted
 * as its only one and its SEND's coalesced ACK goes out (before, the
 * stale ones drove rd_npend below zero and held its ACKs back). */
static void test_rc_conn_set_reuse(void)
{
	struct rc_env *e = env_new();
	struct snic_qp *q = &e->s->b.nic->qps[SNIC_QPN_IDX(e->p.qb.qpn)];
	struct fqp_caps caps = { .sq_cnt = 16, .rq_cnt = 16, .max_send_sge = 1,
				 .max_recv_sge = 1 };
	struct snic_wqe_sge s;
	struct snic_cqe c;
	struct fqp qa2, qb2;

	CU_ASSERT_PTR_NOT_NULL_FATAL(q->resp.rd);
	for (uint32_t i = 0; i < 4; i++) {      /* owed when it went */
		q->resp.rd[i].valid = true;
		q->resp.rd[i].pending = true;
		q->resp.rd[i].first_psn = q->resp.rd[i].end_psn = i;
	}
	CU_ASSERT_EQUAL_FATAL(fqp_destroy(&e->p.qb), SNIC_ST_OK);
	CU_ASSERT_EQUAL_FATAL(fqp_create(&qa2, &e->p.ca, e->p.pda, &e->p.cqa,
					 &e->p.cqa, &caps), SNIC_ST_OK);
	CU_ASSERT_EQUAL_FATAL(fqp_create(&qb2, &e->p.cb, e->p.pdb, &e->p.cqb,
					 &e->p.cqb, &caps), SNIC_ST_OK);
	CU_ASSERT_EQUAL_FATAL(fqp_connect(&qa2, &qb2, &e->conn), SNIC_ST_OK);
	q = &e->s->b.nic->qps[SNIC_QPN_IDX(qb2.qpn)];
	CU_ASSERT_FALSE(q->resp.rd[0].valid || q->resp.rd[0].pending);
	e->p.qa = qa2;
	e->p.qb = qb2;
	pattern(B(e, 0), 4096, 5);
	s = sga(e, 0, 4096);
	struct fwr w = { .wr_id = 1, .opcode = SNIC_WR_RDMA_READ,
			 .flags = SNIC_SEND_SIGNALED, .sge = &s, .num_sge = 1,
			 .remote_addr = e->p.bufb, .rkey = e->p.mrb };
	fqp_post_send(&e->p.qa, &w);
	CU_ASSERT_TRUE_FATAL(wait_cqe(e, &e->p.cqa, &c));
	CU_ASSERT_EQUAL(c.status, SNIC_WC_SUCCESS);
	CU_ASSERT_EQUAL(memcmp(A(e, 0), B(e, 0), 4096), 0);
	CU_ASSERT_EQUAL(q->resp.rd_npend, 0);
	CU_ASSERT_TRUE(send_ok(e, 100, 2));
	CU_ASSERT_TRUE(send_ok(e, 100, 3));
	CU_ASSERT_EQUAL(cA(e, "retransmits"), 0);
	env_free(e);
}

/* A request beyond the expected PSN: dropped, one sequence NAK, and the
 * QP keeps going. */
static void test_rc_psn_out_of_sequence(void)
{
	struct rc_env *e = env_new();
	static uint8_t f[FH_BUF_CAP];
	uint8_t pay[64];
	uint16_t n;
	struct snic_cqe c;

	CU_ASSERT_TRUE(send_ok(e, 10, 1));
	pattern(pay, sizeof(pay), 4);
	struct snic_wqe_sge rs = sgb(e, 0, 4096);
	fqp_post_recv(&e->p.qb, 2, &rs, 1);
	n = mk_frame(e, f, ROCE_RC_SEND_ONLY, e->p.qb.qpn,
		     (epsn_b(e) + 3) & ROCE_PSN_MASK, pay, 64);
	inject_b(e, f, n);
	inject_b(e, f, n); /* again: no second NAK for the same gap */
	CU_ASSERT_EQUAL(cB(e, "rx_drop_bad_psn"), 2);
	CU_ASSERT_EQUAL(cB(e, "nak_seq_sent"), 1);
	CU_ASSERT_EQUAL(fcq_poll(&e->p.cqb, &c), 0);
	/* an old PSN is a duplicate: re-ACKed, not executed */
	n = mk_frame(e, f, ROCE_RC_SEND_ONLY, e->p.qb.qpn,
		     (epsn_b(e) - 1) & ROCE_PSN_MASK, pay, 64);
	inject_b(e, f, n);
	CU_ASSERT_EQUAL(cB(e, "rx_dup_requests"), 1);
	CU_ASSERT_EQUAL(fcq_poll(&e->p.cqb, &c), 0);
	/* the posted RECV serves the next real SEND */
	struct snic_wqe_sge s = sga(e, 0, 200);
	pattern(A(e, 0), 200, 8);
	struct fwr w = { .wr_id = 3, .opcode = SNIC_WR_SEND,
			 .flags = SNIC_SEND_SIGNALED, .sge = &s, .num_sge = 1 };
	fqp_post_send(&e->p.qa, &w);
	CU_ASSERT_TRUE_FATAL(wait_cqe(e, &e->p.cqb, &c));
	CU_ASSERT_EQUAL(c.wr_id, 2);
	CU_ASSERT_EQUAL(c.byte_len, 200);
	CU_ASSERT_EQUAL(memcmp(B(e, 0), A(e, 0), 200), 0);
	CU_ASSERT_TRUE_FATAL(wait_cqe(e, &e->p.cqa, &c));
	CU_ASSERT_EQUAL(c.status, SNIC_WC_SUCCESS);
	CU_ASSERT_EQUAL(fqp_state(&e->p.qb), SNIC_QPS_RTS);
	env_free(e);
}

/* Link hooks. */
struct hook_state {
	int mode;           /* 0 pass, 1 drop the n-th request, 2 dup all */
	unsigned nth, seen;
	unsigned acted;
};

static enum fl_action hook(void *arg, int from, uint8_t *frame, uint16_t *len)
{
	struct hook_state *h = arg;
	struct roce_hdrs r;

	if (from != 0 || roce_parse(frame, *len, &r) != ROCE_OK ||
	    !(roce_opcodes[r.opcode].flags & ROCE_F_REQ))
		return FL_PASS;
	h->seen++;
	if (h->mode == 1 && h->seen == h->nth) {
		h->acted++;
		return FL_DROP;
	}
	if (h->mode == 2) {
		h->acted++;
		return FL_DUP;
	}
	return FL_PASS;
}

/* A lost middle packet: the next one is out of sequence, the NAK makes
 * the requester go back, the message arrives whole. */
static void test_rc_loss_go_back_n(void)
{
	struct rc_env *e = env_new();
	struct hook_state hs = { .mode = 1, .nth = 2 };

	fake_link_set_hook(&e->s->link, hook, &hs);
	CU_ASSERT_TRUE(send_ok(e, 5000, 1)); /* 5 packets at MTU 1024 */
	CU_ASSERT_EQUAL(hs.acted, 1);
	CU_ASSERT_EQUAL(cB(e, "nak_seq_sent"), 1);
	CU_ASSERT_EQUAL(cA(e, "nak_seq_recv"), 1);
	CU_ASSERT_TRUE(cA(e, "retransmits") >= 1);
	/* go-back-N resumes at the NAK's PSN, the lost packet, in the middle
	 * of the message: nothing the responder has is sent again */
	CU_ASSERT_EQUAL(cB(e, "rx_dup_requests"), 0);
	/* a lost WRITE middle packet */
	hs.seen = 0;
	hs.acted = 0;
	hs.nth = 3;
	struct snic_wqe_sge s = sga(e, 0, 4000);
	struct snic_cqe c;
	pattern(A(e, 0), 4000, 77);
	struct fwr w = { .wr_id = 2, .opcode = SNIC_WR_RDMA_WRITE,
			 .flags = SNIC_SEND_SIGNALED, .sge = &s, .num_sge = 1,
			 .remote_addr = e->p.bufb + 65536, .rkey = e->p.mrb };
	fqp_post_send(&e->p.qa, &w);
	CU_ASSERT_TRUE_FATAL(wait_cqe(e, &e->p.cqa, &c));
	CU_ASSERT_EQUAL(c.status, SNIC_WC_SUCCESS);
	CU_ASSERT_EQUAL(hs.acted, 1);
	CU_ASSERT_EQUAL(memcmp(B(e, 65536), A(e, 0), 4000), 0);
	env_free(e);
}

/* Every request delivered twice: duplicates are recognised, nothing
 * executes twice. */
static void test_rc_duplicates(void)
{
	struct rc_env *e = env_new();
	struct hook_state hs = { .mode = 2 };
	struct snic_cqe c;
	uint64_t v = 100, got;

	fake_link_set_hook(&e->s->link, hook, &hs);
	CU_ASSERT_TRUE(send_ok(e, 3000, 1));
	CU_ASSERT_TRUE(send_ok(e, 1, 2));
	CU_ASSERT_TRUE(cB(e, "rx_dup_requests") >= 4);
	fsim_idle(e->s, 20);
	CU_ASSERT_EQUAL(fcq_poll(&e->p.cqb, &c), 0);
	CU_ASSERT_EQUAL(fcq_poll(&e->p.cqa, &c), 0);
	CU_ASSERT_EQUAL(cB(e, "recv_wqes"), 2);
	/* an atomic delivered twice adds once */
	memcpy(B(e, 256), &v, 8);
	struct snic_wqe_sge r = sga(e, 64, 8);
	struct fwr w = { .wr_id = 3, .opcode = SNIC_WR_ATOMIC_FETCH_AND_ADD,
			 .flags = SNIC_SEND_SIGNALED, .sge = &r, .num_sge = 1,
			 .remote_addr = e->p.bufb + 256, .rkey = e->p.mrb,
			 .compare_add = 1 };
	fqp_post_send(&e->p.qa, &w);
	CU_ASSERT_TRUE_FATAL(wait_cqe(e, &e->p.cqa, &c));
	CU_ASSERT_EQUAL(c.status, SNIC_WC_SUCCESS);
	fsim_idle(e->s, 20);
	memcpy(&got, B(e, 256), 8);
	CU_ASSERT_EQUAL(got, 101);
	env_free(e);
}

/* ---------------------------------------------------------------------- */
/* CQ ring wrap.                                                           */

static void test_rc_cq_wrap(void)
{
	struct rc_env *e;
	struct fconn conn;
	struct snic_cqe c;

	fconn_default(&conn);
	e = env_new_conn(&conn, 4);
	const struct snic_cqe *ring = fdev_ptr(&e->s->a, e->p.cqa.ring_pa);

	for (uint32_t i = 0; i < 11; i++) {
		CU_ASSERT_TRUE_FATAL(send_ok(e, 8 + i, 100 + i));
		/* the CQE just consumed carries the owner bit of its pass */
		CU_ASSERT_EQUAL(ring[i & 3].owner, ((i / 4) & 1) ^ 1);
		CU_ASSERT_EQUAL(ring[i & 3].wr_id, 100 + i);
	}
	CU_ASSERT_EQUAL(e->p.cqa.ci, 11);
	CU_ASSERT_EQUAL(fcq_poll(&e->p.cqa, &c), 0);
	CU_ASSERT_EQUAL(cA(e, "cq_overruns") + cB(e, "cq_overruns"), 0);
	/* the host stops consuming: 5 CQEs into a ring of 4 is an overrun */
	for (uint32_t i = 0; i < 5; i++) {
		struct snic_wqe_sge s = sga(e, 0, 8);
		struct fwr w = { .wr_id = 200 + i, .opcode = SNIC_WR_RDMA_WRITE,
				 .flags = SNIC_SEND_SIGNALED, .sge = &s,
				 .num_sge = 1, .remote_addr = e->p.bufb,
				 .rkey = e->p.mrb };
		fqp_post_send(&e->p.qa, &w);
		fsim_idle(e->s, 20);
	}
	CU_ASSERT_EQUAL(cA(e, "cq_overruns"), 1);
	for (uint32_t i = 0; i < 4; i++) {
		CU_ASSERT_EQUAL(fcq_poll(&e->p.cqa, &c), 1);
		CU_ASSERT_EQUAL(c.wr_id, 200 + i);
	}
	CU_ASSERT_EQUAL(fcq_poll(&e->p.cqa, &c), 0);
	env_free(e);
}

/* ---------------------------------------------------------------------- */
/* RESET and reconnect.                                                    */

static void to_state(struct fqp *qp, uint32_t st)
{
	struct snic_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = st;
	CU_ASSERT_EQUAL(fqp_modify(qp, SNIC_QP_STATE, &a), SNIC_ST_OK);
}

/* After ERR -> RESET -> RTS with new PSNs, nothing of the old connection
 * may leak into the new one.  The WRITE behind the READ is lost on the
 * link; its completion must wait for an ACK that never comes (there is
 * no retransmission timer yet), and must certainly not be a success. */
static void test_rc_reset_reconnect(void)
{
	struct rc_env *e = env_new();
	struct snic_cqe c;
	struct fconn conn = e->conn;

	/* some traffic so that the old connection's ACK state is high */
	for (int i = 0; i < 5; i++)
		CU_ASSERT_TRUE(send_ok(e, 3000, 1 + i));
	to_state(&e->p.qa, SNIC_QPS_ERR);
	to_state(&e->p.qb, SNIC_QPS_ERR);
	fsim_idle(e->s, 10);
	while (fcq_poll(&e->p.cqa, &c))
		;
	while (fcq_poll(&e->p.cqb, &c))
		;
	to_state(&e->p.qa, SNIC_QPS_RESET);
	to_state(&e->p.qb, SNIC_QPS_RESET);
	conn.sq_psn_a = 0x10; /* below the old PSNs */
	conn.sq_psn_b = 0x20;
	CU_ASSERT_EQUAL_FATAL(fqp_connect(&e->p.qa, &e->p.qb, &conn), SNIC_ST_OK);
	CU_ASSERT_TRUE(send_ok(e, 100, 50));
	/* READ then WRITE; the WRITE's only packet is dropped */
	struct hook_state hs = { .mode = 1, .nth = 2 };
	fake_link_set_hook(&e->s->link, hook, &hs);
	struct snic_wqe_sge rd = sga(e, 0, 64), wr = sga(e, 4096, 64);
	memset(B(e, 8192), 0x3c, 64);
	pattern(A(e, 4096), 64, 1);
	struct fwr w1 = { .wr_id = 60, .opcode = SNIC_WR_RDMA_READ,
			  .flags = SNIC_SEND_SIGNALED, .sge = &rd, .num_sge = 1,
			  .remote_addr = e->p.bufb, .rkey = e->p.mrb };
	struct fwr w2 = { .wr_id = 61, .opcode = SNIC_WR_RDMA_WRITE,
			  .flags = SNIC_SEND_SIGNALED, .sge = &wr, .num_sge = 1,
			  .remote_addr = e->p.bufb + 8192, .rkey = e->p.mrb };
	fqp_post_send(&e->p.qa, &w1);
	fqp_post_send(&e->p.qa, &w2);
	CU_ASSERT_TRUE_FATAL(wait_cqe(e, &e->p.cqa, &c));
	CU_ASSERT_EQUAL(c.wr_id, 60);
	CU_ASSERT_EQUAL(c.status, SNIC_WC_SUCCESS);
	CU_ASSERT_EQUAL(hs.acted, 1);
	fsim_idle(e->s, 200);
	/* a success must mean the bytes are there (a retransmission timer
	 * may legitimately complete it; without one it stays pending) */
	int got = fcq_poll(&e->p.cqa, &c);
	bool landed = memcmp(B(e, 8192), A(e, 4096), 64) == 0;
	CU_ASSERT_FALSE(got && c.wr_id == 61 && c.status == SNIC_WC_SUCCESS &&
			!landed);
	CU_ASSERT_TRUE(!got || c.wr_id == 61);
	env_free(e);
}

/* ---------------------------------------------------------------------- */
/* Local failures: nothing goes on the wire without its data.              */

/* A signalled WRITE of len bytes (a pattern) from the start of A's
 * buffer to the start of B's (0x5a, and 4 KiB past it), with one side's
 * HAL failing the reads (rd) or the writes of [lo, hi) of that side's
 * buffer: its CQE. */
static struct snic_cqe write_faulted(struct rc_env *e, uint32_t len,
				     bool at_b, bool rd, uint32_t lo,
				     uint32_t hi, uint64_t wr_id)
{
	struct fake_hal *h = at_b ? &e->s->b.hal : &e->s->a.hal;
	uint64_t buf = at_b ? e->p.bufb : e->p.bufa;
	struct snic_wqe_sge s = sga(e, 0, len);
	struct fwr w = { .wr_id = wr_id, .opcode = SNIC_WR_RDMA_WRITE,
			 .flags = SNIC_SEND_SIGNALED, .sge = &s, .num_sge = 1,
			 .remote_addr = e->p.bufb, .rkey = e->p.mrb };
	struct snic_cqe c;

	pattern(A(e, 0), len, (unsigned)wr_id);
	memset(B(e, 0), 0x5a, len + 4096);
	*(rd ? &h->fail_rd_lo : &h->fail_wr_lo) = buf + lo;
	*(rd ? &h->fail_rd_hi : &h->fail_wr_hi) = buf + hi;
	fqp_post_send(&e->p.qa, &w);
	CU_ASSERT_TRUE_FATAL(wait_cqe(e, &e->p.cqa, &c));
	CU_ASSERT_EQUAL(c.wr_id, wr_id);
	return c;
}

/* The second half of a WRITE's source cannot be read: no frame carries
 * made-up data; the WQE completes with a local protection error. */
static void test_rc_gather_fails(void)
{
	struct rc_env *e = env_new();
	uint64_t dma0 = cA(e, "dma_errors");
	struct snic_cqe c = write_faulted(e, 65536, false, true, 32768, 65536, 5);

	CU_ASSERT_EQUAL(c.status, SNIC_WC_LOC_PROT_ERR);
	CU_ASSERT_EQUAL(memcmp(B(e, 0), A(e, 0), 32768), 0);
	CU_ASSERT_TRUE(all_is(B(e, 32768), 32768, 0x5a));
	CU_ASSERT(cA(e, "dma_errors") > dma0);
	CU_ASSERT_EQUAL(fqp_state(&e->p.qa), SNIC_QPS_ERR);
	fsim_idle(e->s, 100);
	CU_ASSERT_EQUAL(fcq_poll(&e->p.cqa, &c), 0); /* completed once */
	env_free(e);
}

/* The same through the unreliable send path (sq_unrel_packet, UD and
 * UC): the pair is connected as RC, then both QPs are turned into UC QPs
 * (same path fields), and a WRITE's source fails on its second packet. */
static void test_uc_gather_fails(void)
{
	struct rc_env *e = env_new();
	struct snic_cqe c;

	e->s->a.nic->qps[SNIC_QPN_IDX(e->p.qa.qpn)].type = SNIC_QPT_UC;
	e->s->b.nic->qps[SNIC_QPN_IDX(e->p.qb.qpn)].type = SNIC_QPT_UC;
	c = write_faulted(e, 4096, false, true, 1024, 4096, 6);
	CU_ASSERT_EQUAL(c.status, SNIC_WC_LOC_PROT_ERR);
	CU_ASSERT_EQUAL(memcmp(B(e, 0), A(e, 0), 1024), 0); /* first packet */
	CU_ASSERT_TRUE(all_is(B(e, 1024), 3072, 0x5a));      /* nothing more */
	CU_ASSERT_EQUAL(fqp_state(&e->p.qa), SNIC_QPS_ERR);
	env_free(e);
}

/* The READ's source cannot be read at the responder: no response frame,
 * a remote operational error NAK instead. */
static void test_rc_read_source_fails(void)
{
	struct rc_env *e = env_new();
	struct snic_cqe c;
	struct snic_wqe_sge s = sga(e, 0, 3000);

	memset(A(e, 0), 0x21, 8192);
	pattern(B(e, 0), 8192, 4);
	e->s->b.hal.fail_rd_lo = e->p.bufb;
	e->s->b.hal.fail_rd_hi = e->p.bufb + 8192;
	struct fwr w = { .wr_id = 8, .opcode = SNIC_WR_RDMA_READ,
			 .flags = SNIC_SEND_SIGNALED, .sge = &s, .num_sge = 1,
			 .remote_addr = e->p.bufb, .rkey = e->p.mrb };
	fqp_post_send(&e->p.qa, &w);
	CU_ASSERT_TRUE_FATAL(wait_cqe(e, &e->p.cqa, &c));
	CU_ASSERT_EQUAL(c.wr_id, 8);
	CU_ASSERT_EQUAL(c.status, SNIC_WC_REM_OP_ERR);
	CU_ASSERT_TRUE(all_is(A(e, 0), 8192, 0x21));
	CU_ASSERT_EQUAL(cB(e, "read_responses"), 0);
	CU_ASSERT_EQUAL(cB(e, "nak_rem_op_sent"), 1);
	CU_ASSERT_EQUAL(fqp_state(&e->p.qb), SNIC_QPS_ERR);
	env_free(e);
}

/* A READ's MIDDLE response cannot be written at the requester: the
 * folded placement (rx_fold, comp_read_more) declines it and the usual
 * path fails it, counted once; the WQE completes in error, the FIRST
 * response's bytes stay, nothing past them is written.  The length fit,
 * so the status is the sink memory's, LOC_PROT_ERR (as an atomic's). */
static void test_rc_read_middle_sink_fails(void)
{
	struct rc_env *e = env_new();
	struct snic_cqe c;
	struct snic_wqe_sge s = sga(e, 0, 3072);
	uint64_t dma0 = cA(e, "dma_errors");

	memset(A(e, 0), 0x21, 4096);
	pattern(B(e, 0), 3072, 5);
	e->s->a.hal.fail_wr_lo = e->p.bufa + 1024;
	e->s->a.hal.fail_wr_hi = e->p.bufa + 2048;
	struct fwr w = { .wr_id = 10, .opcode = SNIC_WR_RDMA_READ,
			 .flags = SNIC_SEND_SIGNALED, .sge = &s, .num_sge = 1,
			 .remote_addr = e->p.bufb, .rkey = e->p.mrb };
	fqp_post_send(&e->p.qa, &w);
	CU_ASSERT_TRUE_FATAL(wait_cqe(e, &e->p.cqa, &c));
	CU_ASSERT_EQUAL(c.wr_id, 10);
	CU_ASSERT_EQUAL(c.status, SNIC_WC_LOC_PROT_ERR);
	CU_ASSERT_EQUAL(cA(e, "dma_errors"), dma0 + 1);
	CU_ASSERT_EQUAL(memcmp(A(e, 0), B(e, 0), 1024), 0);
	CU_ASSERT_TRUE(all_is(A(e, 1024), 3072, 0x21));
	CU_ASSERT_EQUAL(fqp_state(&e->p.qa), SNIC_QPS_ERR);
	env_free(e);
}

/* The HAL's atomic fails at the responder: counted, NAKed. */
static void test_rc_atomic_hal_fails(void)
{
	struct rc_env *e = env_new();
	struct snic_cqe c;
	struct snic_wqe_sge res = sga(e, 64, 8);
	uint64_t dma0 = cB(e, "dma_errors");

	e->s->b.hal.fail_atomics = true;
	struct fwr w = { .wr_id = 3, .opcode = SNIC_WR_ATOMIC_FETCH_AND_ADD,
			 .flags = SNIC_SEND_SIGNALED, .sge = &res, .num_sge = 1,
			 .remote_addr = e->p.bufb + 128, .rkey = e->p.mrb,
			 .compare_add = 1 };
	fqp_post_send(&e->p.qa, &w);
	CU_ASSERT_TRUE_FATAL(wait_cqe(e, &e->p.cqa, &c));
	CU_ASSERT_EQUAL(c.status, SNIC_WC_REM_OP_ERR);
	CU_ASSERT_EQUAL(cB(e, "dma_errors"), dma0 + 1);
	CU_ASSERT_EQUAL(cB(e, "atomics"), 0);
	env_free(e);
}

/* The usual WRITE_ONLY's payload cannot be written at the responder
 * (its one step, rc_write_only.h, hands the packet to the state machine
 * with the headers made whole, resp_write_only_fail): counted, NAKed as a
 * remote access error, nothing else written, the requester's WQE fails. */
static void test_rc_write_only_dma_fails(void)
{
	struct rc_env *e = env_new();
	uint64_t dma0 = cB(e, "dma_errors");
	struct snic_cqe c = write_faulted(e, 64, true, false, 0, 64, 8);

	CU_ASSERT_EQUAL(c.status, SNIC_WC_REM_ACCESS_ERR);
	CU_ASSERT_EQUAL(cB(e, "dma_errors"), dma0 + 1);
	CU_ASSERT_EQUAL(cB(e, "nak_access_sent"), 1);
	CU_ASSERT_TRUE(all_is(B(e, 0), 128, 0x5a));
	env_free(e);
}

/* A WRITE's MIDDLE packet cannot be written at the responder: the folded
 * placement (rx_fold) declines it and the usual path fails it, counted
 * once, NAKed as a remote access error; the FIRST packet's bytes stay,
 * nothing past them is written, the requester's WQE fails. */
static void test_rc_write_middle_dma_fails(void)
{
	struct rc_env *e = env_new();
	uint64_t dma0 = cB(e, "dma_errors");
	struct snic_cqe c = write_faulted(e, 3072, true, false, 1024, 2048, 9);

	CU_ASSERT_EQUAL(c.status, SNIC_WC_REM_ACCESS_ERR);
	CU_ASSERT_EQUAL(cB(e, "dma_errors"), dma0 + 1);
	CU_ASSERT_EQUAL(cB(e, "nak_access_sent"), 1);
	CU_ASSERT_EQUAL(memcmp(B(e, 0), A(e, 0), 1024), 0);
	CU_ASSERT_TRUE(all_is(B(e, 1024), 3072, 0x5a));
	env_free(e);
}

/* A SEND's LAST whose last word cannot be written at the responder:
 * the RECV completes with a local protection error (recv_place), the
 * SEND is NAKed as a remote operational error, the failure counted once,
 * nothing written past the FIRST's bytes (the LAST's copy is one DMA). */
static void test_rc_send_last_tail_dma_fails(void)
{
	struct rc_env *e = env_new();
	struct snic_cqe c;
	struct snic_wqe_sge s = sga(e, 0, 2000), r = sgb(e, 0, 4096);
	uint64_t dma0 = cB(e, "dma_errors");

	pattern(A(e, 0), 2000, 7);
	memset(B(e, 0), 0x5a, 4096);
	e->s->b.hal.fail_wr_lo = e->p.bufb + 1996;
	e->s->b.hal.fail_wr_hi = e->p.bufb + 2000;
	fqp_post_recv(&e->p.qb, 0x31, &r, 1);
	struct fwr w = { .wr_id = 0x32, .opcode = SNIC_WR_SEND,
			 .flags = SNIC_SEND_SIGNALED, .sge = &s, .num_sge = 1 };
	fqp_post_send(&e->p.qa, &w);
	CU_ASSERT_TRUE_FATAL(wait_cqe(e, &e->p.cqa, &c));
	CU_ASSERT_EQUAL(c.wr_id, 0x32);
	CU_ASSERT_EQUAL(c.status, SNIC_WC_REM_OP_ERR);
	CU_ASSERT_TRUE_FATAL(wait_cqe(e, &e->p.cqb, &c));
	CU_ASSERT_EQUAL(c.wr_id, 0x31);
	CU_ASSERT_EQUAL(c.status, SNIC_WC_LOC_PROT_ERR);
	CU_ASSERT_EQUAL(cB(e, "dma_errors"), dma0 + 1);
	CU_ASSERT_EQUAL(cB(e, "nak_rem_op_sent"), 1);
	CU_ASSERT_EQUAL(memcmp(B(e, 0), A(e, 0), 1024), 0);
	CU_ASSERT_TRUE(all_is(B(e, 1024), 4096 - 1024, 0x5a));
	env_free(e);
}

/* A CQE that cannot be written is never published: the CQ goes to
 * error with an IBV_EVENT_CQ_ERR, and the QP whose CQE it was to error
 * with an IBV_EVENT_QP_FATAL, after it (qp_cq_lost). */
static void test_rc_cqe_write_fails(void)
{
	struct rc_env *e = env_new();
	struct snic_cqe c;
	struct snic_wqe_sge s = sga(e, 0, 16);
	struct snic_ctx_slot *slot = fdev_slot(&e->s->a, e->p.ca.slot);
	struct snic_cq *cq = &e->s->a.nic->cqs[handle_idx(e->p.cqa.cqn)];

	e->s->a.hal.fail_wr_lo = e->p.cqa.ring_pa;
	e->s->a.hal.fail_wr_hi = e->p.cqa.ring_pa + 64ull * e->p.cqa.cnt;
	struct fwr w = { .wr_id = 1, .opcode = SNIC_WR_RDMA_WRITE,
			 .flags = SNIC_SEND_SIGNALED, .sge = &s, .num_sge = 1,
			 .remote_addr = e->p.bufb, .rkey = e->p.mrb };
	fqp_post_send(&e->p.qa, &w);
	CU_ASSERT_FALSE(wait_cqe(e, &e->p.cqa, &c));
	CU_ASSERT_TRUE(cq->error);
	CU_ASSERT_EQUAL(cq->pi, 0);
	CU_ASSERT_EQUAL(slot->eq_pi, 2);
	CU_ASSERT_EQUAL(slot->eq[0].type, SNIC_EV_CQ_ERR);
	CU_ASSERT_EQUAL(slot->eq[0].obj, e->p.cqa.cqn);
	CU_ASSERT_EQUAL(slot->eq[1].type, SNIC_EV_QP_FATAL);
	CU_ASSERT_EQUAL(slot->eq[1].obj, e->p.qa.qpn);
	CU_ASSERT_EQUAL(fqp_state(&e->p.qa), SNIC_QPS_ERR);
	env_free(e);
}

/* The DMA writes into a CQ ring (first lap only), checked as they come:
 * a body write starts at a slot and is either one CQE's bytes before its
 * owner byte, or whole slots, the first with its owner byte not yet valid
 * (0) and any later ones valid (1: the host reaches them only after the
 * first); then a one-byte write of the first one's owner publishes it.
 * A write carrying bodies while another waits for its owner (a run
 * across the ring's end) has only valid ones. */
#define OWNER_AT offsetof(struct snic_cqe, owner)
struct owner_watch {
	uint64_t ring, end;
	int pending;            /* slot written, owner not yet: -1 none    */
	unsigned runs;          /* body writes of more than one CQE        */
	unsigned published, bad;
};

static void owner_watch_hook(void *arg, uint64_t pa, const void *src,
			     uint32_t len)
{
	struct owner_watch *w = arg;
	const uint8_t *b = src;
	int first = (int)((pa - w->ring) / 64);

	if (pa < w->ring || pa >= w->end)
		return;
	if (len == 1 && (pa - w->ring) % 64 == OWNER_AT) {
		w->bad += b[0] != 1 || first != w->pending;
		w->pending = -1;
		w->published++;
		return;
	}
	if ((pa - w->ring) % 64 == 0 && len == OWNER_AT) { /* one, no owner */
		w->bad += w->pending >= 0;
		w->pending = first;
		return;
	}
	if ((pa - w->ring) % 64 || len % 64 || len == 0) {
		w->bad++;
		return;
	}
	w->runs += len > 64;
	for (uint32_t i = 0; i < len / 64; i++) {
		bool later = i > 0 || w->pending >= 0;

		w->bad += b[i * 64 + OWNER_AT] != (later ? 1 : 0);
	}
	if (w->pending < 0)
		w->pending = first;
}

/* Every CQE's owner byte turns valid only after its body landed
 * (hostif.h): single CQEs and runs (an ACK that completes several WRITEs
 * writes their CQEs together, cq_run_flush). */
static void test_rc_cqe_owner_last(void)
{
	struct rc_env *e = env_new();
	struct snic_cqe c;
	struct snic_wqe_sge s = sga(e, 0, 16);
	struct owner_watch w = { .ring = e->p.cqa.ring_pa, .pending = -1 };

	CU_ASSERT_FATAL(e->p.cqa.cnt >= 16);
	w.end = w.ring + 64ull * e->p.cqa.cnt;
	e->s->a.hal.wr_hook = owner_watch_hook;
	e->s->a.hal.wr_hook_arg = &w;
	for (unsigned i = 0; i < 12; i++) {
		struct fwr wr = { .wr_id = 0x5eed + i, .opcode = SNIC_WR_RDMA_WRITE,
				  .flags = SNIC_SEND_SIGNALED, .sge = &s,
				  .num_sge = 1, .remote_addr = e->p.bufb,
				  .rkey = e->p.mrb };

		fqp_post_send(&e->p.qa, &wr);
	}
	for (unsigned i = 0; i < 12; i++) {
		CU_ASSERT_TRUE_FATAL(wait_cqe(e, &e->p.cqa, &c));
		CU_ASSERT_EQUAL(c.wr_id, 0x5eed + i);
		CU_ASSERT_EQUAL(c.status, SNIC_WC_SUCCESS);
	}
	CU_ASSERT_EQUAL(w.bad, 0);
	CU_ASSERT_EQUAL(w.pending, -1);
	CU_ASSERT(w.runs >= 1);
	CU_ASSERT(w.published >= 1 && w.published < 12);
	e->s->a.hal.wr_hook = NULL;
	env_free(e);
}
#undef OWNER_AT

/* Post n signalled 16-byte WRITEs at once (their ACKs complete them in
 * runs, cq_run_write), wr_ids from id. */
static void post_writes(struct rc_env *e, uint32_t n, uint64_t id)
{
	struct snic_wqe_sge s = sga(e, 0, 16);

	for (uint32_t i = 0; i < n; i++) {
		struct fwr wr = { .wr_id = id + i, .opcode = SNIC_WR_RDMA_WRITE,
				  .flags = SNIC_SEND_SIGNALED, .sge = &s,
				  .num_sge = 1, .remote_addr = e->p.bufb,
				  .rkey = e->p.mrb };

		fqp_post_send(&e->p.qa, &wr);
	}
}

/* What the read-ahead test saw: prefetches, and those outside the WQEs
 * posted after the one being read (or not at a slot's start). */
struct ahead_watch {
	struct rc_env *e;
	uint32_t calls, bad, max_ahead, multi;
};

static void ahead_hook(void *arg, uint64_t pa, uint32_t len)
{
	struct ahead_watch *w = arg;
	const struct fqp *fq = &w->e->p.qa;
	const struct snic_qp *qp =
		&w->e->s->a.nic->qps[SNIC_QPN_IDX(fq->qpn)];
	uint64_t off = pa - fq->sq_pa, slot = off >> fq->sq_stride_log;
	uint32_t ahead = (uint32_t)(slot - qp->sq_fetch) & (fq->sq_cnt - 1);
	uint32_t stride = 1u << fq->sq_stride_log;
	/* the slots it touches: from `slot`, whole ones past the first
	 * (a WQE's header and first SGE, or several whole WQEs) */
	uint32_t n = len <= stride ? 1 : len / stride, last = ahead + n - 1;

	w->calls++;
	if (pa < fq->sq_pa || slot >= fq->sq_cnt ||
	    (off & (stride - 1)) || len == 0 ||
	    (len > stride && len % stride) || slot + n > fq->sq_cnt ||
	    ahead == 0 || last >= qp->sq_pi - qp->sq_fetch)
		w->bad++;
	if (n > 1)
		w->multi++;
	if (last > w->max_ahead)
		w->max_ahead = last;
}

/* The WQE read-ahead (sq.c, the HAL's dma_prefetch): batches of 1..9
 * WRITEs around the 64-slot send queue, twice round.  Every prefetch is of
 * slots the host has posted after the WQE being read, never the one it
 * may be writing next, nor past the ring's end; it happens, up to 3 ahead
 * (sq.c's distance), and with only a few posted as one call for all of
 * them (a short list's nearer WQEs); every WRITE completes and lands. */
static void test_rc_wqe_read_ahead(void)
{
	struct rc_env *e = env_new();
	struct ahead_watch w = { .e = e };
	struct snic_cqe c;
	uint64_t id = 0x3000;

	CU_ASSERT_EQUAL_FATAL(e->p.qa.sq_cnt & (e->p.qa.sq_cnt - 1), 0);
	e->s->a.hal.prefetch_hook = ahead_hook;
	e->s->a.hal.prefetch_hook_arg = &w;
	for (uint32_t r = 0; r < 30; r++) {
		uint32_t n = 1 + r % 9;

		memset(B(e, 0), 0, 16);
		memset(A(e, 0), (int)(r + 1), 16);
		post_writes(e, n, id);
		for (uint32_t i = 0; i < n; i++, id++) {
			CU_ASSERT_TRUE_FATAL(wait_cqe(e, &e->p.cqa, &c));
			CU_ASSERT_EQUAL(c.wr_id, id);
			CU_ASSERT_EQUAL(c.status, SNIC_WC_SUCCESS);
		}
		CU_ASSERT_EQUAL(memcmp(A(e, 0), B(e, 0), 16), 0);
	}
	CU_ASSERT(w.calls > 0);
	CU_ASSERT(w.multi > 0);
	CU_ASSERT_EQUAL(w.bad, 0);
	CU_ASSERT_EQUAL(w.max_ahead, 3);
	CU_ASSERT_EQUAL(e->s->b.hal.prefetches, 0); /* B posted no sends */
	e->s->a.hal.prefetch_hook = NULL;
	env_free(e);
}

/* CQE runs across the ring's end of a 16-entry CQ, lap after lap: every
 * completion once, in order, successful; then 19 completions into it
 * with nobody consuming: the first 16 in order and one overrun, as
 * cq_post alone gives. */
static void test_rc_cqe_run_wrap(void)
{
	struct fconn conn;
	struct rc_env *e;
	struct snic_cqe c;
	uint64_t id = 0x1000;

	fconn_default(&conn);
	e = env_new_conn(&conn, 16);
	CU_ASSERT_EQUAL_FATAL(e->p.cqa.cnt, 16);
	for (uint32_t r = 0; r < 40; r++) {
		uint32_t n = 3 + r % 12;

		post_writes(e, n, id);
		for (uint32_t i = 0; i < n; i++, id++) {
			CU_ASSERT_TRUE_FATAL(wait_cqe(e, &e->p.cqa, &c));
			CU_ASSERT_EQUAL(c.wr_id, id);
			CU_ASSERT_EQUAL(c.status, SNIC_WC_SUCCESS);
		}
		CU_ASSERT_EQUAL(fcq_poll(&e->p.cqa, &c), 0);
	}
	CU_ASSERT(id - 0x1000 > 16 * 10);
	CU_ASSERT_EQUAL(cA(e, "cq_overruns"), 0);
	post_writes(e, 19, 0x2000);
	fsim_idle(e->s, 200);
	CU_ASSERT_EQUAL(cA(e, "cq_overruns"), 1);
	for (uint32_t i = 0; i < 16; i++) {
		CU_ASSERT_EQUAL_FATAL(fcq_poll(&e->p.cqa, &c), 1);
		CU_ASSERT_EQUAL(c.wr_id, 0x2000 + i);
	}
	CU_ASSERT_EQUAL(fcq_poll(&e->p.cqa, &c), 0);
	env_free(e);
}

/* The firmware's index of a fake CQ. */
static uint32_t cq_index_of(struct snic_nic *nic, const struct fcq *cq)
{
	for (uint32_t i = 0; i < SNIC_MAX_CQ; i++)
		if (nic->cqs[i].in_use && nic->cqs[i].ring_pa == cq->ring_pa)
			return i;
	CU_FAIL_FATAL("no such CQ");
	return 0;
}

/* What cq_run_write relies on to write a run without asking the host:
 * the cached consumer index never runs ahead of the host's, so room by
 * the cache is room by the host's index. */
/* The host's consumer index as the firmware last read it (one core: for
 * cq_full; several: for the claims). */
static uint32_t known_ci(const struct snic_nic *nic, const struct snic_cq *cq)
{
	return nic->core.xc ? atomic_load_explicit(&cq->claim_ci,
						   memory_order_relaxed)
			    : cq->ci_cache;
}

static void check_ci_cache(const struct snic_nic *nic,
			   const struct snic_cq *cq, const struct fcq *h)
{
	uint32_t pi = cq_produced(nic, cq);
	uint32_t known = known_ci(nic, cq);

	CU_ASSERT_TRUE(h->ci - known <= pi - known);
	CU_ASSERT_TRUE(pi - h->ci <= cq->cnt);
}

/* A CQE run never lands on a CQE the host has not consumed (the review
 * gap of rc/cqe_run_wrap, where the cached consumer index kept the runs
 * on cq_post).  On fresh 16-entry CQs of the NIC, lap after lap: the
 * host consumes a random number of CQEs (the firmware's cached index
 * goes stale), then single CQEs (cq_post) and runs of 2-8 (cq_run_write)
 * go in, each while the ring has room by the host's index; last, a run
 * longer than the room left.  The host must then read every CQE posted
 * before, in order, the run's first ones up to the ring's capacity, and
 * one overrun (the CQ in error, IBTA 11.4.2.1) - never fewer CQEs nor
 * one of the run in an unconsumed one's slot.  Fails when cq_run_write
 * ignores the room left (checked by making its test always true: the
 * final run then overwrote the oldest unconsumed CQEs). */
static void test_rc_cqe_run_room(void)
{
	struct rc_env *e = env_new();
	struct snic_nic *nic = e->s->a.nic;
	uint64_t rng = 0x5eed5eedull, id = 1, want = 1;
	unsigned runs = 0, stale = 0;

#define RND(n) ((uint32_t)((rng = rng * 6364136223846793005ull + \
			    1442695040888963407ull) >> 33) % (n))
	for (unsigned t = 0; t < 24; t++) {
		struct fcq h;
		struct snic_cqe c;
		struct cq_run r;
		struct snic_cq *cq;
		uint32_t idx, room, n, overrun0 = cA(e, "cq_overruns");

		CU_ASSERT_EQUAL_FATAL(fcq_create(&h, &e->p.ca, 16), SNIC_ST_OK);
		idx = cq_index_of(nic, &h);
		cq = &nic->cqs[idx];
		CU_ASSERT_EQUAL_FATAL(cq->cnt, 16);
		want = id;
		for (unsigned round = 0; round < 30; round++) {
			/* the host consumes some */
			for (uint32_t k = RND(cq_produced(nic, cq) - h.ci + 1);
			     k; k--) {
				CU_ASSERT_EQUAL_FATAL(fcq_poll(&h, &c), 1);
				CU_ASSERT_EQUAL(c.wr_id, want);
				want++;
			}
			stale += h.ci != known_ci(nic, cq);
			room = cq->cnt - (cq_produced(nic, cq) - h.ci);
			n = 1 + RND(8);
			if (n > room)
				n = room;
			if (!n)
				continue;
			memset(&r, 0, sizeof(r));
			r.cq_idx = idx;
			for (uint32_t i = 0; i < n; i++)
				r.cqe[r.n++].wr_id = id++;
			if (n == 1) {
				cq_post(nic, idx, &r.cqe[0], false);
			} else {
				cq_run_write(nic, &r);
				runs++;
			}
			check_ci_cache(nic, cq, &h);
			CU_ASSERT_FALSE_FATAL(cq->error);
		}
		/* a run longer than the room left (at most 6 left) */
		for (uint32_t left = RND(7);
		     cq->cnt - (cq_produced(nic, cq) - h.ci) > left;) {
			c.wr_id = id++;
			cq_post(nic, idx, &c, false);
		}
		room = cq->cnt - (cq_produced(nic, cq) - h.ci);
		n = room + 1 + RND(SNIC_CQ_RUN - room);
		n = n < 2 ? 2 : n;
		memset(&r, 0, sizeof(r));
		r.cq_idx = idx;
		for (uint32_t i = 0; i < n; i++)
			r.cqe[r.n++].wr_id = id + i;
		cq_run_write(nic, &r);
		CU_ASSERT_TRUE(cq->error);
		CU_ASSERT_EQUAL(cA(e, "cq_overruns"), overrun0 + 1);
		/* every CQE posted before, then the run's first `room` */
		while (fcq_poll(&h, &c) == 1) {
			CU_ASSERT_EQUAL(c.wr_id, want);
			want++;
		}
		CU_ASSERT_EQUAL(want, id + room);
		id += n;
		CU_ASSERT_EQUAL_FATAL(fcq_destroy(&h), SNIC_ST_OK);
	}
#undef RND
	/* both paths were taken, and a stale cache with them */
	CU_ASSERT(runs > 100);
	CU_ASSERT(stale > 100);
	env_free(e);
}

/* The CQ overruns on the 2nd of 3 messages one ACK retires (the review
 * gap of retire_acked: the first CQE goes to cq_post, the rest to a run
 * that cq_run_flush writes one by one once the ring is full, and then
 * the window's head moves on once, retired()).  A 4-entry CQ holds 3
 * unconsumed CQEs; 3 signalled WRITEs go out together and the responder
 * answers their burst with one ACK.  The host then reads the 3 older
 * CQEs and the first of the batch, in order, and nothing more, however
 * long it waits: the 2nd overran the CQ (once counted, one CQ_ERR event,
 * IBTA 11.4.2.1: the CQ takes no CQE after it), the 3rd was not written
 * into a slot the host has not consumed, and no message stays in flight
 * to complete again later.  The WRITEs' data arrived.  The QP is in
 * error, with the Local Work Queue Catastrophic Error (IBV_EVENT_QP_FATAL)
 * an SQ that posts to a CQ in error gets, after the CQ's event; the flush
 * that follows has no CQ to write into and writes nothing. */
static void test_rc_cq_overrun_mid_ack(void)
{
	struct fconn conn;
	struct rc_env *e;
	struct snic_cqe c;
	struct snic_ctx_slot *slot;
	struct snic_qp *qp;
	uint64_t acks0;
	uint32_t ev0;

	fconn_default(&conn);
	e = env_new_conn(&conn, 4);
	CU_ASSERT_EQUAL_FATAL(e->p.cqa.cnt, 4);
	slot = fdev_slot(&e->s->a, e->p.ca.slot);
	qp = &e->s->a.nic->qps[SNIC_QPN_IDX(e->p.qa.qpn)];
	memset(A(e, 0), 0x5a, 16);
	/* 3 completions the host leaves in the ring */
	for (uint32_t i = 0; i < 3; i++) {
		post_writes(e, 1, 0x100 + i);
		fsim_idle(e->s, 50);
	}
	CU_ASSERT_EQUAL_FATAL(qp->infl_head, qp->infl_tail);
	CU_ASSERT_EQUAL(cA(e, "cq_overruns"), 0);
	acks0 = cA(e, "acks_recv");
	ev0 = slot->eq_pi;
	memset(B(e, 0), 0, 16);
	post_writes(e, 3, 0x200);
	fsim_idle(e->s, 200);
	/* one ACK retired all three (else this is not the case asked for) */
	CU_ASSERT_EQUAL_FATAL(cA(e, "acks_recv"), acks0 + 1);
	CU_ASSERT_EQUAL(qp->infl_head, qp->infl_tail);
	CU_ASSERT_EQUAL(qp->retain_head, qp->retain_tail);
	CU_ASSERT_TRUE(all_is(B(e, 0), 16, 0x5a));
	CU_ASSERT_EQUAL(cA(e, "cq_overruns"), 1);
	CU_ASSERT_EQUAL_FATAL(slot->eq_pi, ev0 + 2);
	CU_ASSERT_EQUAL(slot->eq[ev0].type, SNIC_EV_CQ_ERR);
	CU_ASSERT_EQUAL(slot->eq[ev0].obj, e->p.cqa.cqn);
	CU_ASSERT_EQUAL(slot->eq[ev0 + 1].type, SNIC_EV_QP_FATAL);
	CU_ASSERT_EQUAL(slot->eq[ev0 + 1].obj, e->p.qa.qpn);
	CU_ASSERT_EQUAL(fqp_state(&e->p.qa), SNIC_QPS_ERR);
	CU_ASSERT_FALSE(qp->flush_pending);
	for (uint32_t i = 0; i < 4; i++) {
		CU_ASSERT_EQUAL_FATAL(fcq_poll(&e->p.cqa, &c), 1);
		CU_ASSERT_EQUAL(c.wr_id, i < 3 ? 0x100 + i : 0x200);
		CU_ASSERT_EQUAL(c.status, SNIC_WC_SUCCESS);
	}
	/* nothing later: not the 3rd, not a copy of one already read */
	fsim_idle(e->s, 200);
	CU_ASSERT_EQUAL(fcq_poll(&e->p.cqa, &c), 0);
	CU_ASSERT_EQUAL(cA(e, "cq_overruns"), 1);
	CU_ASSERT_EQUAL(slot->eq_pi, ev0 + 2); /* no more events either */
	env_free(e);
}

/* The responder's CQ overruns: B's 4-entry CQ takes 4 RECV completions
 * the host leaves there; the 5th SEND lands (its data in place) but its
 * CQE is dropped, so B's QP goes to error (CQ_ERR on B's CQ, then
 * QP_FATAL on B's QP, IBTA's CQ Error and Local Work Queue Catastrophic
 * Error).  The 4 CQEs read back in order, once; the RECV still posted
 * flushes nowhere (its only CQ is the failed one): no CQE after them.
 * The 5th is not acknowledged: B NAKs it (remote operational error,
 * 9.7.5.2: a local error at the responder) and A completes it with
 * IBV_WC_REM_OP_ERR (before: B ACKed it and A saw a success for a
 * message whose completion B lost).  A 6th SEND then flushes on A. */
static void cq_overrun_recv(uint32_t n)
{
	struct fconn conn;
	struct rc_env *e;
	struct snic_cqe c;
	struct snic_ctx_slot *slot;
	uint32_t ev0;

	fconn_default(&conn);
	e = env_new_conn(&conn, 4);
	CU_ASSERT_EQUAL_FATAL(e->p.cqb.cnt, 4);
	slot = fdev_slot(&e->s->b, e->p.cb.slot);
	ev0 = slot->eq_pi;
	for (uint32_t i = 0; i < 6; i++) {
		struct snic_wqe_sge r = sgb(e, (uint64_t)n * i, n);

		fqp_post_recv(&e->p.qb, 0x300 + i, &r, 1);
	}
	memset(B(e, 0), 0, 6 * n);
	for (uint32_t i = 0; i < 5; i++) {
		struct snic_wqe_sge s = sga(e, (uint64_t)n * i, n);
		struct fwr w = { .wr_id = 0x400 + i, .opcode = SNIC_WR_SEND,
				 .sge = &s, .num_sge = 1 };

		memset(A(e, (uint64_t)n * i), 0x10 + i, n);
		fqp_post_send(&e->p.qa, &w);
		fsim_idle(e->s, 50);
	}
	CU_ASSERT_EQUAL(fdev_counter(&e->s->b, "cq_overruns"), 1);
	CU_ASSERT_TRUE(all_is(B(e, 4 * n), n, 0x14)); /* the 5th landed */
	CU_ASSERT_EQUAL(fqp_state(&e->p.qb), SNIC_QPS_ERR);
	CU_ASSERT_EQUAL_FATAL(slot->eq_pi, ev0 + 2);
	CU_ASSERT_EQUAL(slot->eq[ev0].type, SNIC_EV_CQ_ERR);
	CU_ASSERT_EQUAL(slot->eq[ev0].obj, e->p.cqb.cqn);
	CU_ASSERT_EQUAL(slot->eq[ev0 + 1].type, SNIC_EV_QP_FATAL);
	CU_ASSERT_EQUAL(slot->eq[ev0 + 1].obj, e->p.qb.qpn);
	CU_ASSERT_EQUAL(fdev_counter(&e->s->b, "nak_rem_op_sent"), 1);
	CU_ASSERT_EQUAL(fdev_counter(&e->s->b, "acks_sent") +
			fdev_counter(&e->s->b, "nak_rem_op_sent"),
			fdev_counter(&e->s->a, "acks_recv") +
			fdev_counter(&e->s->a, "nak_rem_op_recv"));
	CU_ASSERT_EQUAL_FATAL(fcq_poll(&e->p.cqa, &c), 1); /* unsignaled */
	CU_ASSERT_EQUAL(c.wr_id, 0x404);
	CU_ASSERT_EQUAL(c.status, SNIC_WC_REM_OP_ERR);
	CU_ASSERT_EQUAL(fqp_state(&e->p.qa), SNIC_QPS_ERR);
	for (uint32_t i = 0; i < 4; i++) {
		CU_ASSERT_EQUAL_FATAL(fcq_poll(&e->p.cqb, &c), 1);
		CU_ASSERT_EQUAL(c.wr_id, 0x300 + i);
		CU_ASSERT_EQUAL(c.status, SNIC_WC_SUCCESS);
		CU_ASSERT_EQUAL(c.byte_len, n);
		CU_ASSERT_TRUE(all_is(B(e, (uint64_t)n * i), n, (uint8_t)(0x10 + i)));
	}
	{
		struct snic_wqe_sge s = sga(e, 0, n);
		struct fwr w = { .wr_id = 0x405, .opcode = SNIC_WR_SEND,
				 .sge = &s, .num_sge = 1 };

		memset(A(e, 0), 0x77, n);
		fqp_post_send(&e->p.qa, &w);
	}
	fsim_idle(e->s, 200);
	CU_ASSERT_EQUAL_FATAL(fcq_poll(&e->p.cqa, &c), 1);
	CU_ASSERT_EQUAL(c.wr_id, 0x405);
	CU_ASSERT_EQUAL(c.status, SNIC_WC_WR_FLUSH_ERR);
	CU_ASSERT_EQUAL(fcq_poll(&e->p.cqb, &c), 0);
	CU_ASSERT_TRUE(all_is(B(e, 5 * n), n, 0));
	CU_ASSERT_EQUAL(fdev_counter(&e->s->b, "cq_overruns"), 1);
	CU_ASSERT_EQUAL(slot->eq_pi, ev0 + 2);
	env_free(e);
}

static void test_rc_cq_overrun_recv(void)
{
	cq_overrun_recv(64);
}

/* The same with SENDs of two packets (1024 + 976 bytes): the 5th SEND's
 * LAST, which completes its RECV, finds the CQ full (do_send): NAKed all
 * the same, its FIRST's bytes and its LAST's in place. */
static void test_rc_cq_overrun_recv_last(void)
{
	cq_overrun_recv(2000);
}

/* A signalled 16-byte WRITE from q (a QP of A) into B's buffer. */
static void write_on(struct rc_env *e, struct fqp *q, uint64_t wr_id)
{
	struct snic_wqe_sge s = sga(e, 0, 16);
	struct fwr w = { .wr_id = wr_id, .opcode = SNIC_WR_RDMA_WRITE,
			 .flags = SNIC_SEND_SIGNALED, .sge = &s, .num_sge = 1,
			 .remote_addr = e->p.bufb, .rkey = e->p.mrb };

	fqp_post_send(q, &w);
}

/* A QP whose send and receive CQs differ: its send CQ overruns, the QP
 * goes to error, and its posted RECVs flush into the receive CQ, which
 * still takes CQEs - each once, in order, IBV_WC_WR_FLUSH_ERR (C10-39);
 * the send WQEs after the lost one flush into nothing.  A second QP on
 * the failed CQ stays in RTS until a CQE of its own is dropped too: the
 * Local Work Queue Catastrophic Error is the work queue's that tries to
 * use the CQ in error. */
static void test_rc_cq_overrun_split_cqs(void)
{
	struct fconn conn;
	struct rc_env *e;
	struct snic_cqe c;
	struct snic_ctx_slot *slot;
	struct fcq scq;
	struct fqp qs, qt, q2, q2b;
	struct fqp_caps caps = { .sq_cnt = 16, .rq_cnt = 16, .max_send_sge = 1,
				 .max_recv_sge = 1 };
	struct snic_wqe_sge r;
	uint32_t ev0;

	fconn_default(&conn);
	e = env_new();
	slot = fdev_slot(&e->s->a, e->p.ca.slot);
	CU_ASSERT_EQUAL_FATAL(fcq_create(&scq, &e->p.ca, 4), SNIC_ST_OK);
	CU_ASSERT_EQUAL_FATAL(scq.cnt, 4);
	CU_ASSERT_EQUAL_FATAL(fqp_create(&qs, &e->p.ca, e->p.pda, &scq,
					 &e->p.cqa, &caps), SNIC_ST_OK);
	CU_ASSERT_EQUAL_FATAL(fqp_create(&q2, &e->p.ca, e->p.pda, &scq,
					 &scq, &caps), SNIC_ST_OK);
	CU_ASSERT_EQUAL_FATAL(fqp_create(&qt, &e->p.cb, e->p.pdb, &e->p.cqb,
					 &e->p.cqb, &caps), SNIC_ST_OK);
	CU_ASSERT_EQUAL_FATAL(fqp_create(&q2b, &e->p.cb, e->p.pdb, &e->p.cqb,
					 &e->p.cqb, &caps), SNIC_ST_OK);
	CU_ASSERT_EQUAL_FATAL(fqp_connect(&qs, &qt, &conn), SNIC_ST_OK);
	CU_ASSERT_EQUAL_FATAL(fqp_connect(&q2, &q2b, &conn), SNIC_ST_OK);
	fsim_idle(e->s, 4);
	r = sga(e, 4096, 64);
	for (uint32_t i = 0; i < 3; i++)
		fqp_post_recv(&qs, 0x500 + i, &r, 1);
	ev0 = slot->eq_pi;
	for (uint32_t i = 0; i < 5; i++) {
		write_on(e, &qs, 0x600 + i);
		fsim_idle(e->s, 50);
	}
	CU_ASSERT_EQUAL(cA(e, "cq_overruns"), 1);
	CU_ASSERT_EQUAL(fqp_state(&qs), SNIC_QPS_ERR);
	CU_ASSERT_EQUAL(fqp_state(&q2), SNIC_QPS_RTS);
	CU_ASSERT_EQUAL_FATAL(slot->eq_pi, ev0 + 2);
	CU_ASSERT_EQUAL(slot->eq[ev0].type, SNIC_EV_CQ_ERR);
	CU_ASSERT_EQUAL(slot->eq[ev0].obj, scq.cqn);
	CU_ASSERT_EQUAL(slot->eq[ev0 + 1].type, SNIC_EV_QP_FATAL);
	CU_ASSERT_EQUAL(slot->eq[ev0 + 1].obj, qs.qpn);
	/* a WRITE posted now flushes: into the failed CQ, so nowhere */
	write_on(e, &qs, 0x605);
	fsim_idle(e->s, 100);
	for (uint32_t i = 0; i < 3; i++) {
		CU_ASSERT_EQUAL_FATAL(fcq_poll(&e->p.cqa, &c), 1);
		CU_ASSERT_EQUAL(c.wr_id, 0x500 + i);
		CU_ASSERT_EQUAL(c.status, SNIC_WC_WR_FLUSH_ERR);
		CU_ASSERT_EQUAL(c.qp_num, qs.qpn);
		CU_ASSERT_FALSE(c.is_send);
	}
	CU_ASSERT_EQUAL(fcq_poll(&e->p.cqa, &c), 0);
	for (uint32_t i = 0; i < 4; i++) {
		CU_ASSERT_EQUAL_FATAL(fcq_poll(&scq, &c), 1);
		CU_ASSERT_EQUAL(c.wr_id, 0x600 + i);
		CU_ASSERT_EQUAL(c.status, SNIC_WC_SUCCESS);
	}
	CU_ASSERT_EQUAL(fcq_poll(&scq, &c), 0);
	/* the other QP on the failed CQ: its next completion is dropped */
	write_on(e, &q2, 0x700);
	fsim_idle(e->s, 100);
	CU_ASSERT_EQUAL(fqp_state(&q2), SNIC_QPS_ERR);
	CU_ASSERT_EQUAL(fcq_poll(&scq, &c), 0);
	CU_ASSERT_EQUAL(cA(e, "cq_overruns"), 1); /* one overrun, then error */
	CU_ASSERT_EQUAL_FATAL(slot->eq_pi, ev0 + 3);
	CU_ASSERT_EQUAL(slot->eq[ev0 + 2].type, SNIC_EV_QP_FATAL);
	CU_ASSERT_EQUAL(slot->eq[ev0 + 2].obj, q2.qpn);
	env_free(e);
}

/* A QP sent to ERR in the middle of a long WRITE completes it once. */
static void test_rc_flush_partial_once(void)
{
	struct rc_env *e = env_new();
	struct snic_cqe c;
	struct snic_wqe_sge s = sga(e, 0, 1u << 20);
	struct snic_qp_attr a = { .qp_state = SNIC_QPS_ERR };
	unsigned n = 0;

	struct fwr w = { .wr_id = 7, .opcode = SNIC_WR_RDMA_WRITE,
			 .flags = SNIC_SEND_SIGNALED, .sge = &s, .num_sge = 1,
			 .remote_addr = e->p.bufb, .rkey = e->p.mrb };
	fqp_post_send(&e->p.qa, &w);
	fsim_step(e->s);
	CU_ASSERT_TRUE_FATAL(e->s->a.nic->qps[SNIC_QPN_IDX(e->p.qa.qpn)].cur.valid);
	CU_ASSERT_EQUAL_FATAL(fqp_modify(&e->p.qa, SNIC_QP_STATE, &a), SNIC_ST_OK);
	fsim_idle(e->s, 100);
	while (fcq_poll(&e->p.cqa, &c) == 1) {
		CU_ASSERT_EQUAL(c.wr_id, 7);
		CU_ASSERT_EQUAL(c.status, SNIC_WC_WR_FLUSH_ERR);
		n++;
	}
	CU_ASSERT_EQUAL(n, 1);
	env_free(e);
}

/* sq_opcode's table (transport/sq.c) against the opcode table: for every
 * work request a service sends and every position of a packet in its
 * message, the BTH opcode is of the service's family, has the FIRST/LAST
 * flags of that position (the one-packet kinds: READ request, atomics),
 * and is what roce_seg_opcode() searches for SEND and WRITE. */
static void test_sq_opcode_table(void)
{
	static const uint8_t types[] = { SNIC_QPT_RC, SNIC_QPT_UC,
					 SNIC_QPT_XRC_SEND };
	struct snic_qp qp;
	struct snic_req_cur cur;

	memset(&qp, 0, sizeof(qp));
	memset(&cur, 0, sizeof(cur));
	qp.mtu = 1024;
	for (unsigned t = 0; t < sizeof(types); t++) {
		qp.type = types[t];
		for (uint8_t wr = 0; wr < 32; wr++) {
			uint8_t base = xport_of(&qp)->bth_base;

			if (!(xport_of(&qp)->wr_ops & (1u << wr)) ||
			    wr == SNIC_WR_LOCAL_INV || wr == SNIC_WR_BIND_MW)
				continue;
			cur.hdr.ctrl.opcode = wr;
			for (unsigned pos = 0; pos < 4; pos++) {
				bool first = pos & 2, last = pos & 1;
				bool imm = wr == SNIC_WR_SEND_WITH_IMM ||
					   wr == SNIC_WR_RDMA_WRITE_WITH_IMM;
				uint8_t op, want;
				uint32_t fl;

				cur.len = 4096;
				cur.sent = first ? 0 : 1024;
				if (last)
					cur.len = cur.sent + 100;
				op = sq_opcode(&qp, &cur);
				fl = roce_opcodes[op].flags;
				CU_ASSERT_TRUE(fl & ROCE_F_VALID);
				if (wr == SNIC_WR_RDMA_READ)
					want = base | ROCE_RC_READ_REQ;
				else if (wr == SNIC_WR_ATOMIC_CMP_AND_SWP)
					want = base | ROCE_RC_CMP_SWAP;
				else if (wr == SNIC_WR_ATOMIC_FETCH_AND_ADD)
					want = base | ROCE_RC_FETCH_ADD;
				else if (wr == SNIC_WR_ATOMIC_WRITE)
					want = ROCE_RC_ATOMIC_WRITE;
				else if (wr == SNIC_WR_SEND_WITH_INV && last)
					want = first ? ROCE_RC_SEND_ONLY_INV
						     : ROCE_RC_SEND_LAST_INV;
				else
					want = roce_seg_opcode(
						base | (wr == SNIC_WR_RDMA_WRITE ||
							wr == SNIC_WR_RDMA_WRITE_WITH_IMM
							? ROCE_RC_WRITE_FIRST
							: ROCE_RC_SEND_FIRST),
						first, last,
						imm);
				CU_ASSERT_EQUAL(op, want);
				if ((fl & (ROCE_F_SEND | ROCE_F_WRITE)) &&
				    !(fl & ROCE_F_ATOMIC_WRITE)) {
					CU_ASSERT_EQUAL(!!(fl & ROCE_F_FIRST), first);
					CU_ASSERT_EQUAL(!!(fl & ROCE_F_LAST), last);
				}
			}
		}
	}
}

UNIT_SUITE(rc, NULL, NULL,
	   UNIT_TEST(test_sq_opcode_table),
	   UNIT_TEST(test_rc_send_recv),
	   UNIT_TEST(test_rc_write),
	   UNIT_TEST(test_rc_read),
	   UNIT_TEST(test_rc_payload_icrc_fold),
	   UNIT_TEST(test_rc_payload_icrc_copy),
	   UNIT_TEST(test_rc_imm_and_inline),
	   UNIT_TEST(test_rc_atomics),
	   UNIT_TEST(test_rc_atomic_unaligned),
	   UNIT_TEST(test_rc_bad_lkey),
	   UNIT_TEST(test_rc_bad_lkey_variants),
	   UNIT_TEST(test_rc_bad_rkey_write),
	   UNIT_TEST(test_rc_bad_rkey_read),
	   UNIT_TEST(test_rc_qp_access_flags),
	   UNIT_TEST(test_rc_rnr_then_recv),
	   UNIT_TEST(test_rc_rnr_seq_echo),
	   UNIT_TEST(test_rc_rnr_retry_exceeded),
	   UNIT_TEST(test_rc_rnr_write_imm),
	   UNIT_TEST(test_rc_malformed_frames),
	   UNIT_TEST(test_rc_wrong_peer),
	   UNIT_TEST(test_rc_read_psn_span),
	   UNIT_TEST(test_rc_opcode_sequence),
	   UNIT_TEST(test_rc_psn_out_of_sequence),
	   UNIT_TEST(test_rc_conn_set_reuse),
	   UNIT_TEST(test_rc_loss_go_back_n),
	   UNIT_TEST(test_rc_duplicates),
	   UNIT_TEST(test_rc_cq_wrap),
	   UNIT_TEST(test_rc_reset_reconnect),
	   UNIT_TEST(test_rc_gather_fails),
	   UNIT_TEST(test_uc_gather_fails),
	   UNIT_TEST(test_rc_read_source_fails),
	   UNIT_TEST(test_rc_read_middle_sink_fails),
	   UNIT_TEST(test_rc_atomic_hal_fails),
	   UNIT_TEST(test_rc_write_only_dma_fails),
	   UNIT_TEST(test_rc_write_middle_dma_fails),
	   UNIT_TEST(test_rc_send_last_tail_dma_fails),
	   UNIT_TEST(test_rc_cqe_write_fails),
	   UNIT_TEST(test_rc_cqe_owner_last),
	   UNIT_TEST(test_rc_cqe_run_wrap),
	   UNIT_TEST(test_rc_wqe_read_ahead),
	   UNIT_TEST(test_rc_cqe_run_room),
	   UNIT_TEST(test_rc_cq_overrun_mid_ack),
	   UNIT_TEST(test_rc_cq_overrun_recv),
	   UNIT_TEST(test_rc_cq_overrun_recv_last),
	   UNIT_TEST(test_rc_cq_overrun_split_cqs),
	   UNIT_TEST(test_rc_flush_partial_once));
