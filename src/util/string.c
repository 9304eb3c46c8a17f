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
        while (i < n && hay[i] != '\0' && lower((unsigned char)hay[i]) == lower((unsigned char)needle[i]))
            i++;
        if (i == n)
            return true;
    }
    return n == 0;
}
