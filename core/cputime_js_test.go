//go:build js

package core

import "time"

// cpuTime is 0 under WebAssembly (GOOS=js), which has no getrusage: the core's tests run there to
// hold the static site's engine to the kernel fixtures (scripts/test), its benchmarks do not.
func cpuTime() time.Duration { return 0 }
