/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * demangle.h - C++ (Itanium ABI) and Rust (legacy and v0) function names
 * made readable for dkperf report, through the platform's demangler: GNU
 * libiberty's on Linux where it is found (DKPERF_HAVE_LIBIBERTY), the
 * system's __cxa_demangle on macOS. Every output of report takes its names
 * from the model (report_model.c), which demangles each symbol once.
 */
#ifndef DKPERF_DEMANGLE_H
#define DKPERF_DEMANGLE_H

#include <stdbool.h>

/* Whether name looks mangled by a scheme demangle knows (C++ "_Z", Rust
 * "_R"): a C name never starts so, the C standard reserving it. */
bool demangle_mangled(const char *name);

/* name demangled, in memory of its own for the caller to free, or NULL:
 * not a mangled name, not one the demangler reads, no demangler in this
 * build, or out of memory (the caller keeps the name as it is). */
char *demangle(const char *name);

/* When mangled is a Rust legacy name (_ZN...17h<16 hex digits>E) and
 * cxx its Itanium demangling ("a::b::h0123456789abcdef"), the name as Rust
 * writes it (a::b), in memory of its own: the hash dropped, rustc's
 * escapes ($LT$, $u20$, ...) and ".." decoded. NULL when it is not one, or
 * holds an escape rustc does not write, or out of memory. Linear in the
 * lengths: the names come from untrusted images. */
char *demangle_rust_legacy(const char *mangled, const char *cxx);

/* When mangled is a Rust v0 name (_R...), the name as GNU libiberty's
 * cplus_demangle writes it without DMGL_VERBOSE (no crate hashes, no
 * instantiating crate, a ".llvm.N" suffix dropped), in memory of its own;
 * NULL when it is not one, is malformed, or would pass the caps of its
 * output (64 KiB), depth or steps (a backref can repeat a path already
 * written: the name of n bytes could write 2^n), or out of memory. Linear
 * in the length of mangled, never reading past its NUL: the names come
 * from untrusted images. */
char *demangle_rust_v0(const char *mangled);

/* Which demangler this build uses ("GNU libiberty", ...), or NULL when it
 * has none. */
const char *demangle_reader(void);

/* When this build has no demangler, one sentence saying so and what would
 * give one; else NULL. */
const char *demangle_missing(void);

#endif /* DKPERF_DEMANGLE_H */
