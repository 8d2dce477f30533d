//go:build !js

package core

import (
	"syscall"
	"time"
)

// cpuTime is the process's user+system CPU time; benchmarks report it
// next to wall time because the shared machine is often busy.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
