/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * dkrec.c - what the recording file's writer (dkrec_write.c) and reader
 * (dkrec_read.c) share: the header's magic and the chunks' CRC-32 (see
 * dkrec.h and doc/RECORD-FORMAT.md).
 */
#include <stdbool.h>

#include "dkrec_format.h"

const uint8_t dkrec__magic[8] = {'D', 'K', 'R', 'E', 'C', 0x1a, '\n', 0};

static uint32_t crc_table[256];
static bool crc_ready;

static void crc_init(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = (c & 1) ? 0xedb88320u ^ (c >> 1) : c >> 1;
        crc_table[i] = c;
    }
    crc_ready = true;
}

uint32_t dkrec__crc32(const uint8_t *p, size_t n)
{
    if (!crc_ready)
        crc_init();
    uint32_t c = 0xffffffffu;
    for (size_t i = 0; i < n; i++)
        c = crc_table[(c ^ p[i]) & 0xff] ^ (c >> 8);
    return c ^ 0xffffffffu;
}
