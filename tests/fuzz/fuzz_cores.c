/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: fuzz_wqe's inputs (WQEs, doorbell records, raw doorbell
 * page words) against NICs of two firmware cores each, polled in turn:
 * the QPs of the world spread over both cores, so core 1 takes its own
 * doorbells from the context page, builds and sends its own frames and
 * writes its own CQEs (DESIGN.md "Many cores").  Seeds: fuzz_wqe's.
 */
#define FZ_WQE_CORES 2
#include "fuzz_wqe.c"
