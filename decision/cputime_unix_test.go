//go:build unix

package decision

import (
	"syscall"
	"time"
)

// processCPU returns the user+system CPU time of this process. Benchmarks
// report it per operation next to wall time, because wall time on a shared
// 2-core machine mostly measures the other tenants.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
