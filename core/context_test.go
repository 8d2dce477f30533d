package core

import (
	"context"
	"errors"
	"testing"
)

// TestContextStopsTheLoops: SimulateContext and WalkContext give up with the context's error, at
// once for a context already done and soon after one cancelled mid-run (well before the run's end:
// they look at it every ctxEvery turns, a turn being an event or a chunk's pass 2), and a context
// that is never done changes nothing.
func TestContextStopsTheLoops(t *testing.T) {
	const n = 1 << 20 // 4 GiB contiguous: ~1,030 dnode chunks
	in := contiguousInput(n)
	req := Request{Length: n * 4096}
	for _, mode := range []Mode{PerBlock, Batched} {
		done, cancel := context.WithCancel(context.Background())
		cancel()
		if res, err := SimulateContext(done, in, req, mode); !errors.Is(err, context.Canceled) || res != nil {
			t.Errorf("%s: SimulateContext on a cancelled context = %v, %v; want context.Canceled", mode, res, err)
		}
		if res, err := WalkContext(done, in, req, mode, func(*Event) bool { return true }); !errors.Is(err, context.Canceled) || res != nil {
			t.Errorf("%s: WalkContext on a cancelled context = %v, %v; want context.Canceled", mode, res, err)
		}

		var total int64
		want, err := Walk(in, req, mode, func(*Event) bool { total++; return true })
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		var seen int64
		_, err = WalkContext(ctx, in, req, mode, func(*Event) bool {
			if seen++; seen == total/10 {
				cancel()
			}
			return true
		})
		cancel()
		if !errors.Is(err, context.Canceled) || seen >= total/2 {
			t.Errorf("%s: cancelled after %d of %d events: %v after %d; want context.Canceled well before the end", mode, total/10, total, err, seen)
		}

		got, err := SimulateContext(context.Background(), in, req, mode)
		if err != nil || got.Stats != want.Stats {
			t.Errorf("%s: SimulateContext = %+v, %v; Walk gave %+v", mode, got.Stats, err, want.Stats)
		}
	}
}
