package web

import (
	"context"
	"net/http"
	"net/url"
	"testing"
)

// BenchmarkNextTimeline measures building the what-happens-next timeline of a run from scratch
// (replaying the run's calls on a fresh mount of the SIT, a checkpoint, the cleaner calls): what
// the first frame request of a (run, clock, policy) costs.
func BenchmarkNextTimeline(b *testing.B) {
	ts := mustOpenServer(b, Config{})
	for _, c := range []struct{ name, q string }{
		{"bench64-greedy", nextRun + "&policy=greedy"},
		{"bench64-cost-benefit", nextRun + "&policy=cost-benefit&now=3600"},
	} {
		b.Run(c.name, func(b *testing.B) {
			q, _ := url.ParseQuery(c.q)
			q.Set("image", "demo")
			n, err := parseNextQuery(q)
			if err != nil {
				b.Fatal(err)
			}
			t, err := ts.resolveRun(context.Background(), q)
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				ts.next = newNextCache(ts.budget)
				if _, err := ts.timeline(context.Background(), t, n); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkNextFrame measures one frame request with its timeline cached: what each step of the
// panel costs the server, the HTTP round trip and the JSON included.
func BenchmarkNextFrame(b *testing.B) {
	ts := mustOpenServer(b, Config{})
	u := ts.ts.URL + "/api/images/demo/next?" + nextRun + "&at=3"
	for b.Loop() {
		res, err := http.Get(u)
		if err != nil {
			b.Fatal(err)
		}
		if res.StatusCode != 200 {
			b.Fatalf("status %d", res.StatusCode)
		}
		res.Body.Close()
	}
}

// BenchmarkNextNewClock measures the next panel's answer for a clock not asked before, after a
// run whose `before=` operations mount mode=lfs and write 64 MiB (16,384 pages, then the played zero writes them
// back): "kept" with the sequence's clock-free state cached (issue 37: the state is redone at the
// clock, gc.State.AtClock), "replayed" with nothing cached (the sequence run again, as each new
// clock did before).
func BenchmarkNextNewClock(b *testing.B) {
	ts := mustOpenServer(b, Config{})
	q := url.Values{"image": {"demo"}, "path": {"/cases/holes.bin"}, "offset": {"0"}, "length": {"67108864"},
		FieldBefore: {"mount mode=lfs", "write /cases/holes.bin 0 67108864"}}
	t, err := ts.resolveRun(context.Background(), q)
	if err != nil {
		b.Fatal(err)
	}
	for _, kept := range []bool{true, false} {
		name := "replayed"
		if kept {
			name = "kept"
		}
		b.Run(name, func(b *testing.B) {
			ts.next = newNextCache(ts.budget)
			now := uint64(0)
			for b.Loop() {
				if !kept {
					ts.next = newNextCache(ts.budget)
				}
				now++
				if _, err := ts.timeline(context.Background(), t, nextQuery{policy: policyGreedy, now: now}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
