//go:build linux

package pace

import (
	"fmt"
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// EnterRealtime locks the calling goroutine to its OS thread and puts that
// thread in the SCHED_FIFO class at priority prio (1–99), so the kernel runs
// it as soon as it wakes whatever else keeps the cores busy. The returned
// leave restores SCHED_OTHER and unlocks the thread; call it on the same
// goroutine before doing anything long. It needs CAP_SYS_NICE (or an
// RLIMIT_RTPRIO ≥ prio); otherwise it returns an error and leaves nothing
// changed.
//
// Only short, sleeping work belongs in the real-time class: a frame's
// encryption and socket write between two Waits.
func EnterRealtime(prio int) (leave func(), err error) {
	runtime.LockOSThread()
	if err := unix.SchedSetAttr(0, &unix.SchedAttr{Policy: unix.SCHED_FIFO, Priority: uint32(prio)}, 0); err != nil {
		runtime.UnlockOSThread()
		return nil, fmt.Errorf("pace: enter realtime (SCHED_FIFO %d): %w", prio, err)
	}
	return func() {
		unix.SchedSetAttr(0, &unix.SchedAttr{Policy: unix.SCHED_NORMAL}, 0)
		runtime.UnlockOSThread()
	}, nil
}

// sleepAbsolute sleeps d on the calling thread with
// clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME): the thread itself wakes at
// the deadline instead of waiting for the Go timer machinery. The sleep is
// not interruptible; callers bound d by one interval.
func sleepAbsolute(d time.Duration) error {
	var now unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &now); err != nil {
		return fmt.Errorf("pace: clock_gettime: %w", err)
	}
	due := unix.NsecToTimespec(now.Nano() + int64(d))
	for {
		err := unix.ClockNanosleep(unix.CLOCK_MONOTONIC, unix.TIMER_ABSTIME, &due, nil)
		if err != unix.EINTR {
			if err != nil {
				return fmt.Errorf("pace: clock_nanosleep: %w", err)
			}
			return nil
		}
	}
}
