/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * string.c - string helpers every layer uses.
 */
#include <string.h>

#include "util/util.h"

size_t dk__strlcpy(char *dst, const char *src, size_t size)
{
    size_t len = strlen(src);
    if (size > 0) {
        size_t n = len < size - 1 ? len : size - 1;
        memcpy(dst, src, n);
        dst[n] = '\0';
    }
    return len;
}

void dk__root_key(const char *root, char *key, size_t size)
{
    dk__strlcpy(key, root, size);
    for (size_t len = strlen(key); len > 0 && key[len - 1] == '/'; len--)
        key[len - 1] = '\0';
}

static int lower(int c) { return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c; }

int dk__strcasecmp(const char *a, const char *b)
{
    for (;; a++, b++) {
        int x = lower((unsigned char)*a), y = lower((unsigned char)*b);
        if (x != y || x == 0)
            return x - y;
    }
}

bool dk__strcasestr(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    for (; *hay != '\0'; hay++) {
        size_t i = 0;
        while (i < n && hay[i] != '\0' &&
               lower((unsigned char)hay[i]) == lower((unsigned char)needle[i]))
            i++;
        if (i == n)
            return true;
    }
    return n == 0;
}

/*
 * Banded Levenshtein distance: only the band of width 2 * limit + 1 around
 * the diagonal is computed, so a name costs O(length * limit): the few hundred names of a
 * database are checked in microseconds.
 */
size_t dk__edit_distance(const char *a, const char *b, size_t limit)
{
    enum { MAX = 64 };
    size_t la = strlen(a), lb = strlen(b);
    if (la > MAX || lb > MAX)
        return limit + 1;
    if ((la > lb ? la - lb : lb - la) > limit)
        return limit + 1;
    size_t prev[MAX + 1], cur[MAX + 1];
    for (size_t j = 0; j <= lb; j++)
        prev[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t lo = i > limit ? i - limit : 1, hi = i + limit < lb ? i + limit : lb;
        size_t best = limit + 1;
        cur[0] = i;
        if (lo > 1)
            cur[lo - 1] = limit + 1;
        for (size_t j = lo; j <= hi; j++) {
            int ca = a[i - 1] >= 'A' && a[i - 1] <= 'Z' ? a[i - 1] + 32 : a[i - 1];
            int cb = b[j - 1] >= 'A' && b[j - 1] <= 'Z' ? b[j - 1] + 32 : b[j - 1];
            size_t d = prev[j - 1] + (ca != cb);
            if (j < i + limit && prev[j] + 1 < d) /* prev[j] is inside the band */
                d = prev[j] + 1;
            if (cur[j - 1] + 1 < d)
                d = cur[j - 1] + 1;
            cur[j] = d;
            if (d < best)
                best = d;
        }
        if (hi < lb)
            cur[hi + 1] = limit + 1;
        if (best > limit)
            return limit + 1;
        memcpy(prev, cur, sizeof prev);
    }
    return prev[lb];
}
