/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * json.h - a small strict JSON reader (RFC 8259) for the files the tools
 * write themselves, such as dkperf bench's baselines: the whole text is
 * parsed into a tree of values. Strings keep their bytes with escapes
 * decoded (\uXXXX to UTF-8); numbers are doubles.
 */
#ifndef DKPERF_TOOLS_JSON_H
#define DKPERF_TOOLS_JSON_H

#include <stdbool.h>
#include <stddef.h>

typedef enum json_kind { JSON_NULL, JSON_BOOL, JSON_NUMBER, JSON_STRING, JSON_ARRAY, JSON_OBJECT } json_kind;

typedef struct json_value {
    json_kind kind;
    bool boolean;
    double number;
    char *string;              /* JSON_STRING; NUL-terminated */
    size_t n;                  /* JSON_ARRAY, JSON_OBJECT: the number of items */
    struct json_value *items;  /* JSON_ARRAY, JSON_OBJECT: the values */
    char **keys;               /* JSON_OBJECT: the member names, in order */
} json_value;

/*
 * Parse text[0..len-1]. Returns the root (free with json_free), or NULL with
 * why set to one line naming the problem and its byte offset.
 */
json_value *json_parse(const char *text, size_t len, char *why, size_t why_size);
void json_free(json_value *v);

/* The member called key of an object, or NULL (also when v is not an object). */
const json_value *json_get(const json_value *v, const char *key);

#endif /* DKPERF_TOOLS_JSON_H */
