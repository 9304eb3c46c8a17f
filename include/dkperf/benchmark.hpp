// SPDX-License-Identifier: MIT OR Apache-2.0
//
// dkperf/benchmark.hpp - hardware counters in a google benchmark suite, one
// line per benchmark. C++11, header-only over libdkperf's C API.
//
//     #include <benchmark/benchmark.h>
//     #include <dkperf/benchmark.hpp>
//
//     static void BM_sum(benchmark::State &state) {
//         dkperf::BenchmarkCounters counters(state); // "instructions,cycles"
//         for (auto _ : state) { ... }
//     }
//
// The events (a list as "dkperf stat -e" reads it) are counted on the calling
// thread from the constructor to the destructor, which writes each as
// state.counters[NAME], NAME as written, per iteration (kAvgIterations).
// Under ->Threads(n) each thread counts itself; google benchmark sums the
// threads' counters and divides by all their iterations: a thread's count
// per iteration. On a Mac: instructions and cycles without root
// (thread_selfcounts), any event with root (kperf); on Linux perf_event.
//
// Everything the thread does between the two is counted: the setup before
// the loop, the loop's own cost, and what runs between PauseTiming and
// ResumeTiming too (google benchmark's pause stops its clocks, not these
// counters), all divided by the iterations. Under ->Iterations(1) or few
// iterations that fixed cost weighs: keep setup above the constructor.
//
// An event that cannot be counted here is named once per process on stderr,
// with the library's reason, and left out; the benchmark still runs. So is
// an event list that does not parse. Nothing throws.
//
// The sampler (framework loading, the event database) is opened at the first
// use and kept for the process, since google benchmark calls a benchmark
// function several times while it sizes the iteration count; it is closed
// at exit, after closing the thread samplers still counting (a benchmark
// that calls exit() in its loop), so that no counters stay taken.
#ifndef DKPERF_BENCHMARK_HPP
#define DKPERF_BENCHMARK_HPP

#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdio>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "dkperf.h"

namespace dkperf {

namespace detail {

// What a list of events comes to in this process: the names to open
// together, or why none can be.
struct Plan {
    std::vector<std::string> names;
    std::vector<const char *> cnames; // into names, for dk_thread_open_names
};

class Process {
public:
    static Process &get()
    {
        // Constructed on first use (thread-safe in C++11), destroyed at exit.
        static Process p;
        return p;
    }

    // The sampler and the plan for list, or a null sampler when nothing of
    // it can be counted. The plan lives as long as the process.
    dk_sampler *plan(const char *list, const Plan **out)
    {
        std::lock_guard<std::mutex> lock(mu_);
        *out = nullptr;
        try {
            std::map<std::string, Plan>::iterator it = plans_.find(list);
            if (it == plans_.end())
                it = plans_.insert(std::make_pair(std::string(list), make_plan(list))).first;
            *out = &it->second;
        } catch (...) {
            return nullptr; // out of memory: count nothing
        }
        return sampler_;
    }

    // Names on stderr, with why, those of names not named before in this
    // process: an event is named once, whatever else fails later.
    void refuse(const std::vector<std::string> &names, const std::string &why)
    {
        std::lock_guard<std::mutex> lock(mu_);
        refuse_locked(names, why);
    }

    // t counts until closed, here or at exit. False when it cannot be
    // noted (out of memory): then t is closed.
    bool opened(dk_thread *t) noexcept
    {
        std::lock_guard<std::mutex> lock(mu_);
        try {
            live_.insert(t);
            return true;
        } catch (...) {
            dk_thread_close(t);
            return false;
        }
    }

    void close(dk_thread *t) noexcept
    {
        std::lock_guard<std::mutex> lock(mu_);
        live_.erase(t);
        dk_thread_close(t);
    }

private:
    Process() = default;
    Process(const Process &) = delete;
    Process &operator=(const Process &) = delete;
    ~Process()
    {
        for (std::set<dk_thread *>::iterator it = live_.begin(); it != live_.end(); ++it)
            dk_thread_close(*it);
        dk_sampler_close(sampler_);
    }

    void say_once_locked(const std::string &msg)
    {
        if (said_.insert(msg).second)
            std::fprintf(stderr, "dkperf: %s\n", msg.c_str());
    }

    void refuse_locked(const std::vector<std::string> &names, const std::string &why)
    {
        std::vector<std::string> fresh;
        for (size_t i = 0; i < names.size(); i++)
            if (named_.insert(names[i]).second)
                fresh.push_back(names[i]);
        if (!fresh.empty())
            say_once_locked(join(fresh) + ": not counted: " + why);
    }

    bool open_sampler()
    {
        if (!tried_) {
            tried_ = true;
            int rc = dk_sampler_open(&sampler_, nullptr);
            if (rc != 0) {
                sampler_ = nullptr;
                why_ = std::string(dk_error_name(rc)) + ": " + dk_last_error();
            }
        }
        return sampler_ != nullptr;
    }

    // Whether names open together on this thread, leaving *why the reason
    // when they do not.
    bool opens(const std::vector<const char *> &names, std::string *why)
    {
        dk_thread *t = nullptr;
        int rc = dk_thread_open_names(sampler_, names.data(), names.size(), &t);
        if (rc == 0) {
            dk_thread_close(t);
            return true;
        }
        *why = dk_last_error();
        if (why->empty())
            *why = dk_error_name(rc);
        return false;
    }

    Plan make_plan(const char *list)
    {
        Plan plan;
        std::vector<std::string> wanted;
        size_t pos = 0;
        dk_event_spec sp;
        int rc;
        for (;;) {
            sp = dk_event_spec();
            sp.size = sizeof sp;
            rc = dk_event_list_next(list, &pos, &sp);
            if (rc != 1)
                break;
            std::string name(sp.text, sp.base_len);
            if (sp.period != 0 || sp.freq != 0) {
                say_once_locked("event list '" + std::string(list) + "': event '" +
                                std::string(sp.text, sp.len) +
                                "' gives a sampling rate, which counting has no use for; "
                                "no events are counted");
                return Plan();
            }
            wanted.push_back(name);
        }
        if (rc < 0) {
            say_once_locked("event list '" + std::string(list) + "': " + dk_last_error() +
                            "; no events are counted");
            return Plan();
        }
        if (!open_sampler()) {
            refuse_locked(wanted, "no counters could be opened (" + why_ + ")");
            return Plan();
        }
        if (wanted.size() > DK_MAX_EVENTS) {
            say_once_locked("event list '" + std::string(list) + "': more than " +
                            std::to_string(DK_MAX_EVENTS) + " events; no events are counted");
            return Plan();
        }
        // Each event alone, then with the ones kept so far: an event that
        // cannot be counted here, or not beside the others, is named and
        // left out. Events that fail for the same reason share one line.
        std::vector<std::pair<std::string, std::vector<std::string> > > refused; // reason, names
        for (size_t i = 0; i < wanted.size(); i++) {
            std::vector<const char *> one(1, wanted[i].c_str());
            std::string why;
            bool ok = opens(one, &why);
            if (ok) {
                std::vector<const char *> with = plan.cnames;
                with.push_back(wanted[i].c_str());
                ok = opens(with, &why);
                if (!ok)
                    why = "not beside " + join(plan.names) + ": " + why;
            }
            if (ok) {
                plan.names.push_back(wanted[i]);
                plan.cnames.clear();
                for (size_t k = 0; k < plan.names.size(); k++)
                    plan.cnames.push_back(plan.names[k].c_str());
                continue;
            }
            size_t k = 0;
            while (k < refused.size() && refused[k].first != why)
                k++;
            if (k == refused.size())
                refused.push_back(std::make_pair(why, std::vector<std::string>(1, wanted[i])));
            else
                refused[k].second.push_back(wanted[i]);
        }
        for (size_t k = 0; k < refused.size(); k++)
            refuse_locked(refused[k].second, refused[k].first);
        return plan;
    }

    static std::string join(const std::vector<std::string> &v)
    {
        std::string s;
        for (size_t i = 0; i < v.size(); i++)
            s += (i ? ", " : "") + v[i];
        return s;
    }

    std::mutex mu_;
    bool tried_ = false;
    dk_sampler *sampler_ = nullptr;
    std::string why_;
    std::map<std::string, Plan> plans_;
    std::set<std::string> said_;
    std::set<std::string> named_; // events named on stderr
    std::set<dk_thread *> live_; // thread samplers not yet closed
};

} // namespace detail

class BenchmarkCounters {
public:
    explicit BenchmarkCounters(benchmark::State &state,
                               const char *events = "instructions,cycles") noexcept
        : state_(state)
    {
        if (events == nullptr)
            events = "";
        dk_sampler *s = detail::Process::get().plan(events, &plan_);
        if (s == nullptr || plan_ == nullptr || plan_->names.empty())
            return;
        n_ = plan_->cnames.size();
        int rc = dk_thread_open_names(s, plan_->cnames.data(), n_, &t_);
        if (rc != 0)
            t_ = nullptr;
        if (rc == 0 && !detail::Process::get().opened(t_)) {
            t_ = nullptr;
            return;
        }
        if (rc == 0)
            rc = dk_thread_start(t_);
        // Counting has begun: the last thing done is the first reading.
        if (rc == 0)
            rc = dk_thread_sample(t_, before_);
        if (rc != 0)
            fail(rc);
    }

    ~BenchmarkCounters()
    {
        if (t_ == nullptr)
            return;
        // The first thing done is the last reading.
        int rc = dk_thread_sample(t_, after_);
        if (rc != 0) {
            fail(rc);
            return;
        }
        detail::Process::get().close(t_);
        t_ = nullptr;
        try {
            for (size_t i = 0; i < n_; i++)
                state_.counters[plan_->names[i]] =
                    benchmark::Counter(static_cast<double>(after_[i] - before_[i]),
                                       benchmark::Counter::kAvgIterations);
        } catch (...) {
            // out of memory: the counters are left out
        }
    }

    BenchmarkCounters(const BenchmarkCounters &) = delete;
    BenchmarkCounters &operator=(const BenchmarkCounters &) = delete;

private:
    void fail(int rc) noexcept
    {
        try {
            std::string why = dk_last_error();
            detail::Process::get().refuse(plan_->names, why.empty() ? dk_error_name(rc) : why);
        } catch (...) {
        }
        if (t_ != nullptr)
            detail::Process::get().close(t_);
        t_ = nullptr;
    }

    benchmark::State &state_;
    const detail::Plan *plan_ = nullptr;
    dk_thread *t_ = nullptr;
    size_t n_ = 0;
    uint64_t before_[DK_MAX_EVENTS];
    uint64_t after_[DK_MAX_EVENTS];
};

} // namespace dkperf

#endif // DKPERF_BENCHMARK_HPP
