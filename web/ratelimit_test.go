package web

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

// TestControlLimiter checks the token bucket in the bubble's fake clock: a burst of controlBurst goes
// through at once, after which controls are taken controlRate a second.
func TestControlLimiter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var l controlLimiter
		ctx := context.Background()
		start := time.Now()
		for i := 0; i < int(controlBurst); i++ {
			if err := l.wait(ctx); err != nil {
				t.Fatal(err)
			}
		}
		if d := time.Since(start); d != 0 {
			t.Fatalf("the first %v controls waited %v, want no wait", controlBurst, d)
		}
		for i := 0; i < 100; i++ {
			if err := l.wait(ctx); err != nil {
				t.Fatal(err)
			}
		}
		want := time.Duration(100 / controlRate * float64(time.Second))
		if d := time.Since(start); d < want-time.Millisecond || d > want+time.Millisecond {
			t.Fatalf("100 controls past the burst took %v of fake time, want %v", d, want)
		}
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		if err := l.wait(cctx); err == nil {
			t.Fatal("wait on a cancelled context with an empty bucket returned nil")
		}
	})
}
