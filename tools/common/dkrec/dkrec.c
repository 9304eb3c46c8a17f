/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * dkrec.c - what the recording file's writer (dkrec_write.c) and reader
 * (dkrec_read.c) share: the header's magic and the chunks' CRC-32 (see
 * dkrec.h and doc/RECORD-FORMAT.md).
 */
#include <stdbool.h>

#include "dkrec_format.h"

const uint8_t dkrec__magic[8] = {'D', 'K', 'R', 'E', 'C', 0x1a, '\n', 0};

/* Slicing by 8 (Intel's method): crc_table[k][b] is the CRC of byte b
 * followed by k zero bytes, so 8 bytes take 8 lookups and no chain of 8
 * dependent steps; the reader checks every chunk at this speed. */
static uint32_t crc_table[8][256];
static bool crc_ready;

static void crc_init(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = (c & 1) ? 0xedb88320u ^ (c >> 1) : c >> 1;
        crc_table[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; i++)
        for (int k = 1; k < 8; k++)
            crc_table[k][i] = crc_table[0][crc_table[k - 1][i] & 0xff] ^ (crc_table[k - 1][i] >> 8);
    crc_ready = true;
}

uint32_t dkrec__crc32(const uint8_t *p, size_t n)
{
    if (!crc_ready)
        crc_init();
    uint32_t c = 0xffffffffu;
    for (; n >= 8; n -= 8, p += 8) {
        uint32_t lo = c ^ ((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
                           (uint32_t)p[3] << 24);
        uint32_t hi = (uint32_t)p[4] | (uint32_t)p[5] << 8 | (uint32_t)p[6] << 16 |
                      (uint32_t)p[7] << 24;
        c = crc_table[7][lo & 0xff] ^ crc_table[6][(lo >> 8) & 0xff] ^
            crc_table[5][(lo >> 16) & 0xff] ^ crc_table[4][lo >> 24] ^ crc_table[3][hi & 0xff] ^
            crc_table[2][(hi >> 8) & 0xff] ^ crc_table[1][(hi >> 16) & 0xff] ^
            crc_table[0][hi >> 24];
    }
    for (; n > 0; n--)
        c = crc_table[0][(c ^ *p++) & 0xff] ^ (c >> 8);
    return c ^ 0xffffffffu;
}
