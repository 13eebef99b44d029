/* SPDX-License-Identifier: MIT */
/*
 * Whether a memfd the agent handed out is still held by anybody (the
 * agent's and QEMU's own references aside), by the kernel's word rather
 * than a look through /proc: every hand-out is a new open file of the
 * memfd (a reopen of /proc/self/fd/N), and the kernel reports that open
 * file's final release (inotify IN_CLOSE) only once no descriptor, no
 * mapping and no descriptor in flight on a Unix socket (SCM_RIGHTS not yet
 * received) refers to it any more, whoever holds it and whether or not
 * that process lets itself be inspected.
 *
 * A memfd is:
 *   FRESH    never handed out
 *   OUT      handed out, its open file not released yet (busy)
 *   CLEAN    handed out before, released since (reusable)
 *   RETIRED  opened or changed (chmod: IN_OPEN, IN_ATTRIB) by somebody
 *            else than the agent, its mode not the agent's 0000 before a
 *            reopen, or events lost (queue overflow): nobody can say who
 *            holds it, so it is not handed out again until QEMU restarts
 *            (busy)
 * Between hand-outs the memfd's mode is 0000, so that a process other
 * than root cannot open it through QEMU's /proc/<pid>/fd either.  A
 * process that kept an O_PATH descriptor of it (no IN_OPEN, no
 * permission needed, not a reference the agent sees) can still chmod it
 * (same uid) and open it: that is seen (IN_ATTRIB, IN_OPEN) but not
 * prevented, so a memfd handed out at that moment is "breached": its
 * holder's context is to be ended at once (mref_breached).
 */
#ifndef SNIC_QA_MEMFD_REFS_H
#define SNIC_QA_MEMFD_REFS_H

enum mref_state { MREF_FRESH, MREF_OUT, MREF_CLEAN, MREF_RETIRED };

struct mref {
	int fd;                 /* the agent's memfd                        */
	int wd;                 /* its inotify watch                        */
	unsigned own_opens;     /* our reopens whose IN_OPEN is not read    */
	unsigned own_attribs;   /* our chmods whose IN_ATTRIB is not read   */
	int breached;           /* a stranger's open/chmod while OUT        */
	enum mref_state state;
};

/* Watch r's memfd (its mode still lets us read it): 0, or -1 (said on
 * stderr; the agent then retires every memfd after one hand-out). */
int mref_watch(struct mref *r, int fd);
/* From now on opens not the agent's retire a memfd; mode 0000 on all. */
void mrefs_start(void);
/* A new open file of r's memfd to hand out (state OUT), or -1. */
int mref_open(struct mref *r);
/* 1 (once) when a stranger opened or chmodded r's memfd while it was
 * handed out: whoever holds that hand-out must lose it now. */
int mref_breached(struct mref *r);
/* 1 when r must not be handed out now (OUT or RETIRED). */
int mref_busy(struct mref *r);
/* Read the kernel's events (non-blocking); the inotify descriptor for
 * poll() (-1 without one). */
void mrefs_drain(void);
int mrefs_fd(void);
/* Counters for the exit line. */
unsigned long mrefs_retired(void);
int mrefs_lost(void);

#endif /* SNIC_QA_MEMFD_REFS_H */
