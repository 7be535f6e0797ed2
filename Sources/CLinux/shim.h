// Linux calls that Swift's Glibc module does not import: timerfd and eventfd.
#ifndef CHIME_CLINUX_SHIM_H
#define CHIME_CLINUX_SHIM_H

#include <sys/timerfd.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>

// The flags are macros or enum members depending on the libc headers: give them one type.
static inline int chime_tfd_flags(void) { return TFD_CLOEXEC | TFD_NONBLOCK; }
static inline int chime_tfd_abstime_cancel_on_set(void) { return TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET; }
static inline int chime_efd_flags(void) { return EFD_CLOEXEC | EFD_NONBLOCK; }
// Timer slack: let the kernel fire our deadlines within 1 µs rather than the default 50 µs.
static inline int chime_set_timer_slack_ns(unsigned long ns) { return prctl(PR_SET_TIMERSLACK, ns, 0, 0, 0); }

#endif
