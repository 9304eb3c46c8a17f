/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * demangle.c - function names demangled for dkperf report (demangle.h).
 * Linux: GNU libiberty's cplus_demangle, as binutils and perf use it, which
 * reads C++ and both Rust manglings (the legacy one, hash and all, is C++'s
 * with escapes of its own). macOS: the system's __cxa_demangle, looked up
 * at run time in libc++abi so that dkperf links no C++ runtime.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "demangle.h"

#if defined(DKPERF_HAVE_LIBIBERTY)
#include <libiberty/demangle.h>
#elif defined(__APPLE__)
#include <dlfcn.h>
#include <pthread.h>
#endif

bool demangle_mangled(const char *name)
{
    return name[0] == '_' && (name[1] == 'Z' || name[1] == 'R');
}

#if defined(DKPERF_HAVE_LIBIBERTY)

const char *demangle_reader(void) { return "GNU libiberty"; }

const char *demangle_missing(void) { return NULL; }

char *demangle(const char *name)
{
    if (!demangle_mangled(name))
        return NULL;
    /* The parameters and qualifiers too: overloads stay apart. The style
     * is libiberty's automatic one, which tries Rust before C++. */
    return cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI);
}

#elif defined(__APPLE__)

typedef char *(*cxa_demangle_fn)(const char *, char *, size_t *, int *);

static pthread_once_t cxa_once = PTHREAD_ONCE_INIT;
static cxa_demangle_fn cxa_demangle;

/* libc++abi is part of every macOS (libc++ re-exports it); never unloaded. */
static void cxa_load(void)
{
    void *h = dlopen("/usr/lib/libc++abi.dylib", RTLD_LAZY | RTLD_LOCAL);
    if (h != NULL)
        cxa_demangle = (cxa_demangle_fn)(uintptr_t)dlsym(h, "__cxa_demangle");
}

const char *demangle_reader(void)
{
    pthread_once(&cxa_once, cxa_load);
    return cxa_demangle != NULL ? "libc++abi's __cxa_demangle" : NULL;
}

const char *demangle_missing(void)
{
    return demangle_reader() == NULL ? "libc++abi's __cxa_demangle was not found: C++ and Rust "
                                       "names are shown mangled"
                                     : NULL;
}

char *demangle(const char *name)
{
    if (name[0] != '_' || name[1] != 'Z' || demangle_reader() == NULL)
        return NULL;
    int status = -1;
    char *s = cxa_demangle(name, NULL, NULL, &status);
    if (status != 0) {
        free(s);
        return NULL;
    }
    return s;
}

#else

const char *demangle_reader(void) { return NULL; }

const char *demangle_missing(void)
{
    return "this dkperf was built without GNU libiberty: C++ and Rust names are shown mangled "
           "(install libiberty-dev, then build it again)";
}

char *demangle(const char *name)
{
    (void)name;
    return NULL;
}

#endif
