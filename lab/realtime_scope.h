// RealtimeScope: SCHED_FIFO for a scope, for the benchmarks' durable arms
// (--realtime). They sleep on I/O most of the time, and on CPUs other
// processes keep busy a woken SCHED_OTHER thread can wait a scheduler tick
// for a CPU after every wait, which then measures the neighbours rather than
// the I/O path. CPU-bound arms and setup stay SCHED_OTHER, so a bench never
// hogs a CPU at real-time priority.
#ifndef REGIONSTORE_LAB_REALTIME_SCOPE_H_
#define REGIONSTORE_LAB_REALTIME_SCOPE_H_

#include <sched.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace regionstore::bench {

class RealtimeScope {
 public:
  // `who` prefixes the warning printed when the scheduler refuses.
  RealtimeScope(bool enabled, const char* who) {
    if (!enabled) return;
    const sched_param param{10};
    if (::sched_setscheduler(0, SCHED_FIFO, &param) != 0) {
      std::fprintf(stderr, "%s: --realtime: sched_setscheduler: %s; running SCHED_OTHER\n", who,
                   std::strerror(errno));
      return;
    }
    active_ = true;
  }
  RealtimeScope(const RealtimeScope&) = delete;
  RealtimeScope& operator=(const RealtimeScope&) = delete;
  ~RealtimeScope() {
    if (!active_) return;
    const sched_param param{0};
    ::sched_setscheduler(0, SCHED_OTHER, &param);
  }
  bool active() const { return active_; }

 private:
  bool active_ = false;
};

}  // namespace regionstore::bench

#endif  // REGIONSTORE_LAB_REALTIME_SCOPE_H_
