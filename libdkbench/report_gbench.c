/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * report_gbench.c - google benchmark's --benchmark_format=json layout, so
 * that tools written for it (compare.py) read our results: one "iteration"
 * entry per benchmark, times in ns per iteration (real_time and cpu_time
 * both the time estimate: the harness measures wall time), the events per
 * iteration as counters, and bytes_per_second or items_per_second as
 * google benchmark names them.
 */
#include <math.h>
#include <stdio.h>

#include "common/error.h"
#include "libdkbench/report.h"
#include "libdkbench/report_common.h"
#include "common/json.h"

int dkb_report_gbench(FILE *out, const dkb_run_info *run, const dkb_result *const *results,
                      size_t n)
{
    if (out == NULL || run == NULL || (results == NULL && n > 0))
        return dkb_fail(DK_EINVAL, "dkb_report_gbench: out, run and results must not be NULL");
    fputs("{\n  \"context\": {\n    \"date\": ", out);
    dk__json_string(out, run->date);
    fputs(",\n    \"host_name\": ", out);
    dk__json_string(out, run->host);
    fputs(",\n    \"executable\": \"\",\n    \"num_cpus\": 0,\n    \"mhz_per_cpu\": 0,\n"
          "    \"cpu_scaling_enabled\": false,\n    \"caches\": [],\n"
          "    \"library_build_type\": \"release\",\n    \"dkbench_backend\": ",
          out);
    dk__json_string(out, run->backend);
    fputs(",\n    \"dkbench_cpu\": ", out);
    dk__json_string(out, run->cpu);
    fputs("\n  },\n  \"benchmarks\": [", out);
    for (size_t i = 0; i < n; i++) {
        const dkb_result *r = results[i];
        if (r == NULL)
            return dkb_fail(DK_EINVAL, "dkb_report_gbench: result %zu is NULL", i);
        const dkb_measure *t = r->n_measures > 0 && dkb__has_estimates(r, &r->m[0]) ? &r->m[0]
                                                                                    : NULL;
        double iters = 0;
        for (size_t s = 0; r->iterations != NULL && s < r->n_samples; s++)
            iters += r->iterations[s];
        fputs(i ? ",\n    {" : "\n    {", out);
        fputs("\n      \"name\": ", out);
        dk__json_string(out, r->name);
        fputs(",\n      \"family_index\": ", out);
        fprintf(out, "%zu", i);
        fputs(",\n      \"per_family_instance_index\": 0,\n      \"run_name\": ", out);
        dk__json_string(out, r->name);
        fprintf(out,
                ",\n      \"run_type\": \"iteration\",\n      \"repetitions\": 1,\n"
                "      \"repetition_index\": 0,\n      \"threads\": 1,\n      \"iterations\": ");
        dk__json_number(out, iters);
        fputs(",\n      \"real_time\": ", out);
        dk__json_number(out, t ? t->slope.point : NAN);
        fputs(",\n      \"cpu_time\": ", out);
        dk__json_number(out, t ? t->slope.point : NAN);
        fputs(",\n      \"time_unit\": \"ns\"", out);
        if (t && t->slope.point > 0 && r->throughput_kind != DKB_THROUGHPUT_NONE) {
            fputs(r->throughput_kind == DKB_THROUGHPUT_BYTES ? ",\n      \"bytes_per_second\": "
                                                             : ",\n      \"items_per_second\": ",
                  out);
            dk__json_number(out, r->throughput_per_iter / (t->slope.point * 1e-9));
        }
        size_t nm = r->n_measures < DKB_MAX_MEASURES ? r->n_measures : DKB_MAX_MEASURES;
        for (size_t j = 1; j < nm; j++) {
            if (!dkb__has_estimates(r, &r->m[j]) || !isfinite(r->m[j].slope.point))
                continue;
            fputs(",\n      ", out);
            dk__json_string(out, r->m[j].name);
            fputs(": ", out);
            dk__json_number(out, r->m[j].slope.point);
        }
        fputs("\n    }", out);
    }
    fputs("\n  ]\n}\n", out);
    return dkb__report_done(out, "google benchmark JSON");
}
