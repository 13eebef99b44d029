/* SPDX-License-Identifier: MIT */
/*
 * Minimal classic-pcap writer (LINKTYPE_ETHERNET, microsecond timestamps,
 * snaplen 65535) for capturing a running NIC's frames.
 *
 * Records are appended whole to an internal buffer and written to the file
 * only in whole records, so a reader (tshark, the wire oracles) looking at
 * the file while the NIC runs sees a valid pcap that at most lacks the
 * newest records.  The buffer is written when full, when
 * PCAP_FILE_FLUSH_MS have passed since the last write-out, and on
 * pcap_file_flush()/pcap_file_close().  All calls are thread safe.
 */
#ifndef SNIC_PCAP_FILE_H
#define SNIC_PCAP_FILE_H

#include <stdint.h>

#define PCAP_FILE_SNAPLEN  65535u
#define PCAP_FILE_FLUSH_MS 200u

struct pcap_file;

/* Create (truncate) path and write the global header.  NULL + errno on
 * failure. */
struct pcap_file *pcap_file_open(const char *path);

/* Append one Ethernet frame captured at ts_ns (nanoseconds since the Unix
 * epoch, stored with microsecond resolution).  Frames longer than the
 * snaplen are cut, with the original length recorded.  0 or -1 + errno. */
int pcap_file_write(struct pcap_file *pf, const uint8_t *frame,
		    uint32_t len, uint64_t ts_ns);

/* Write buffered records to the file now.  0 or -1 + errno. */
int pcap_file_flush(struct pcap_file *pf);

/* Flush, close and free (pf may be NULL).  0 or -1 + errno. */
int pcap_file_close(struct pcap_file *pf);

#endif /* SNIC_PCAP_FILE_H */
