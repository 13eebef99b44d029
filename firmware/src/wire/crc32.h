/* SPDX-License-Identifier: MIT */
/*
 * CRC-32 with the IEEE 802.3 / zlib polynomial (0x04C11DB7, processed
 * reflected as 0xEDB88320), the CRC RoCEv2 uses for the ICRC (IBTA vol. 1
 * Annex A17.3.3, which reuses the InfiniBand ICRC of vol. 1 ch. 7).
 *
 * Convention (the same as zlib's crc32()): the value passed in and returned
 * is the finished CRC, i.e. the register is preset to all ones and the
 * result is complemented internally.  Start with 0 and chain calls:
 *
 *     uint32_t c = crc32_update(0, a, na);
 *     c = crc32_update(c, b, nb);          // == CRC of a followed by b
 *
 * crc32_update(0, "123456789", 9) == 0xCBF43926.
 */
#ifndef SNIC_CRC32_H
#define SNIC_CRC32_H

#include <stddef.h>
#include <stdint.h>

#define CRC32_CHECK_VALUE 0xCBF43926u /* CRC of the ASCII "123456789" */

uint32_t crc32_update(uint32_t crc, const void *p, size_t n);

#endif /* SNIC_CRC32_H */
