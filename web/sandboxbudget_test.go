package web

import (
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zrviz/zrviz/request"
	"github.com/zrviz/zrviz/sandbox"
)

// peakHeap runs f and returns how far heap in use rose above where it started, sampled every
// millisecond (a lower bound of the true peak).
func peakHeap(f func()) int64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := int64(ms.HeapInuse)
	var stop atomic.Bool
	var peak atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		var m runtime.MemStats
		for !stop.Load() {
			runtime.ReadMemStats(&m)
			if v := int64(m.HeapInuse) - base; v > peak.Load() {
				peak.Store(v)
			}
			time.Sleep(time.Millisecond) // the peak meter's sampling interval, not synchronisation
		}
	}()
	f()
	stop.Store(true)
	<-done
	return peak.Load()
}

// TestSandboxReservation compares what a sandbox list reserves with the heap its simulation grows by,
// for the largest lists the parser takes: one range of MaxSlots, and a MaxInput of short ranges.
func TestSandboxReservation(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: simulates 10 M slots in both modes")
	}
	var many strings.Builder
	for a := 34304; many.Len() < sandbox.MaxInput-32; a += 200 {
		fmt.Fprintf(&many, "%d-%d ", a, a+99)
	}
	for name, in := range map[string]string{
		"one range of MaxSlots": fmt.Sprintf("34304-%d", 34304+sandbox.MaxSlots-1),
		"MaxInput of ranges":    strings.TrimSpace(many.String()),
	} {
		l, err := sandbox.Parse(in)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var serr error
		used := peakHeap(func() { _, serr = sandbox.Simulate(l, request.Both()) })
		if serr != nil {
			t.Fatalf("%s: %v", name, serr)
		}
		res := sandboxBytes(l, len(in))
		t.Logf("%s: %d slots, heap +%d MiB, reserved %d MiB", name, l.Len(), used>>20, res>>20)
		if used > res {
			t.Errorf("%s: the simulation grew the heap by %d MiB, past its reservation of %d MiB", name, used>>20, res>>20)
		}
	}
}
