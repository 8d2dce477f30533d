package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"strings"
	"testing"

	"github.com/zrviz/zrviz/core"
)

// serveWSDiscard runs a websocket request (the upgrade asked for, same origin) through s's routes
// into a discardWriter: what it answers before any upgrade.
func serveWSDiscard(s *Server, target string) *discardWriter {
	r := httptest.NewRequest("GET", target, nil)
	r.Host = "127.0.0.1"
	r.Header.Set("Origin", "http://127.0.0.1")
	r.Header.Set("Connection", "Upgrade")
	r.Header.Set("Upgrade", "websocket")
	r.Header.Set("Sec-WebSocket-Version", "13")
	r.Header.Set("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==")
	d := &discardWriter{}
	s.Handler().ServeHTTP(d, r)
	return d
}

// TestPlayerRefusedBeforeOperations: a player (/ws/run, the player page) whose outline the budget
// refuses is refused before the `before=` operations it names are simulated (the resolved-input
// cache counts every simulation of them), with 413 and no Retry-After (the outline alone passes the
// whole budget: issue 37), whichever the mode; one that
// fits runs them once, and a second view of it reuses them.
func TestPlayerRefusedBeforeOperations(t *testing.T) {
	// 192 MiB: the operations' own reservation fits (148 MiB), the outline's does not (216 MiB a
	// mode), so only the outline's bound can refuse them.
	s := mustOpenServer(t, Config{MaxMemory: 192 << 20}).Server
	for _, mode := range []string{"both", "per-block"} {
		q := url.Values{"image": {"demo"}, "path": {"/cases/sparse-9g.bin"}, "mode": {mode}}
		for range request63 {
			q.Add(FieldBefore, "zero /cases/sparse-9g.bin 0 9664729088")
		}
		for _, c := range []struct {
			name string
			do   func() *discardWriter
		}{
			{"/ws/run", func() *discardWriter { return serveWSDiscard(s, "/ws/run?"+q.Encode()) }},
			{"the player page", func() *discardWriter { return serveDiscard(s, "GET", "/images/demo/run?"+q.Encode(), nil) }},
		} {
			d := c.do()
			if d.code != http.StatusRequestEntityTooLarge || d.h.Get("Retry-After") != "" {
				t.Fatalf("%s, %s, the 9 GiB file after 63 zeros: %d (Retry-After %q), want 413 without Retry-After", c.name, mode, d.code, d.h.Get("Retry-After"))
			}
			if m := s.resolved.misses; m != 0 {
				t.Fatalf("%s, %s: the refused request simulated its operations (%d simulations)", c.name, mode, m)
			}
		}
	}
	q := url.Values{"path": {"/cases/holes.bin"}, "mode": {"both"}, FieldBefore: {"zero /cases/holes.bin 67584 195560"}}
	if d := serveDiscard(s, "GET", "/images/demo/run?"+q.Encode(), nil); d.code != http.StatusOK || s.resolved.misses != 1 {
		t.Fatalf("a player page that fits: %d, %d simulations of its operations; want 200 and 1", d.code, s.resolved.misses)
	}
	rq, err := s.parseRunQuery(url.Values{"image": {"demo"}, "path": q["path"], "mode": q["mode"], FieldBefore: q[FieldBefore]})
	if err != nil {
		t.Fatal(err)
	}
	if b := s.outlineBound(t.Context(), rq); b != 0 {
		t.Fatalf("its operations are cached, yet a second view would hold %d bytes for them", b)
	}
	if d := serveDiscard(s, "GET", "/images/demo/run?"+q.Encode(), nil); d.code != http.StatusOK || s.resolved.misses != 1 {
		t.Fatalf("the same page again: %d, %d simulations; want 200 and still 1", d.code, s.resolved.misses)
	}
	if u, c := s.budget.inUse(), s.resolved.charged; u != c {
		t.Fatalf("%d bytes still reserved after the requests, %d of them the kept input's", u, c)
	}
}

// TestResolvedCacheCharged: the kept resolved inputs are charged to the budget while kept, and an
// evicted one gives its charge back (nine distinct runs: eight kept).
func TestResolvedCacheCharged(t *testing.T) {
	s := mustOpenServer(t, Config{MaxMemory: 256 << 20}).Server
	for k := range maxResolved + 1 {
		q := url.Values{"path": {"/cases/holes.bin"}, FieldBefore: {fmt.Sprintf("zero /cases/holes.bin %d 4096", 4096*k)}}
		if d := serveDiscard(s, "GET", "/images/demo/run?"+q.Encode(), nil); d.code != http.StatusOK {
			t.Fatalf("run %d: %d", k, d.code)
		}
		if got, want := s.budget.inUse(), s.resolved.charged; got != want || want < resolvedBase*int64(min(k+1, maxResolved)) {
			t.Fatalf("after %d runs: %d bytes in use, %d charged by the %d kept inputs", k+1, got, want, len(s.resolved.m))
		}
	}
	if n := len(s.resolved.m); n != maxResolved {
		t.Fatalf("%d inputs kept, want %d", n, maxResolved)
	}
	s.resolved.drop()
	if u := s.budget.inUse(); u != 0 {
		t.Fatalf("%d bytes in use after the cache let go of everything", u)
	}
}

// TestResolvedCacheCharge holds the charge of a kept input against the heap it retains (in use
// after a collection while it is kept, less after it is dropped), for the worst `before=` inputs of
// TestBeforeReservation.
func TestResolvedCacheCharge(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: writes back a 1 GiB volume's every block")
	}
	s := mustOpenServer(t, Config{MaxMemory: -1}).Server
	emptyVolume(t, s, "v", 1<<10)
	// The churn of worstBefore ends in ENOSPC, which is not kept; this one stays within the free
	// space: each round's zero leaves its blocks prefree, the sync's checkpoint frees them.
	var kept []string
	for range 4 {
		kept = append(kept, "write /f 0 67108864", "fsync /f", "zero /f 1 67108864", "sync")
	}
	cases := append(worstBefore(), beforeCase{"4 × (write 64 MiB, fsync, zero, sync) (1 GiB volume)", "v", "/f", kept})
	for _, c := range cases {
		s.resolved.drop()
		q := url.Values{"image": {c.image}, "path": {c.path}, "offset": {"0"}, "length": {"4096"}, FieldBefore: c.before}
		if _, err := s.resolveRun(context.Background(), q); err != nil {
			if strings.Contains(err.Error(), "ENOSPC") || errors.Is(err, core.ErrUnmodelled) {
				continue // not kept (out of space, or refused where the kernel may take SSR): nothing to charge
			}
			t.Fatalf("%s: %v", c.name, err)
		}
		charged := s.resolved.charged
		kept := heapInUse()
		s.resolved.drop()
		retained := kept - heapInUse()
		t.Logf("%s: retained %.2f MiB, charged %.2f MiB", c.name, float64(retained)/(1<<20), float64(charged)/(1<<20))
		if charged <= 0 || retained > charged {
			t.Errorf("%s: the kept input retains %d bytes, past the %d charged", c.name, retained, charged)
		}
	}
}

// heapInUse is the heap in use after a collection.
func heapInUse() int64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapInuse)
}

// TestWritebackReservation: the writeback answers with the most pages we know to write back: the
// whole free space of a 256 MiB volume written and fsynced, and 4 rounds of writing a quarter of
// it, fsync, zero and sync (each round's pages recorded anew; 15 rounds pass the request's 60 s
// on this loaded machine).
func TestWritebackReservation(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: writes back a volume's every block")
	}
	s := mustOpenServer(t, Config{MaxMemory: -1}).Server
	emptyVolume(t, s, "w", 256)
	// The free space short of f2fs_need_SSR's threshold (21 reserved sections: 44 free ones), past
	// which the model refuses (gc/ssr.go).
	whole := fmt.Sprint(128 << 20)
	var rounds []string
	for range 4 {
		rounds = append(rounds, "write /f 0 67108864", "fsync /f", "zero /f 1 67108864", "sync")
	}
	answered := 0
	for _, c := range []struct {
		name   string
		before []string
		// mayRefuse: the rounds' syncs write node pages the model does not place, and a later
		// segment choice they could change is refused (issue 36, gc/nodes.go).
		mayRefuse bool
	}{
		{"write + fsync of 128 MiB, the free space short of SSR", []string{"write /f 0 " + whole, "fsync /f"}, false},
		{"4 × (write 64 MiB, fsync, zero, sync)", rounds, true},
		{"write 64 MiB, fsync, zero", rounds[:3:3], false},
	} {
		s.resolved.drop()
		q := url.Values{"path": {"/f"}, "offset": {"0"}, "length": {"4096"}, FieldBefore: c.before}
		var d *discardWriter
		heap, res := reservedAndHeap(s, func() { d = serveDiscard(s, "GET", "/api/images/w/writeback?"+q.Encode(), nil) })
		if d.code == http.StatusUnprocessableEntity && c.mayRefuse {
			t.Logf("%s: refused (422): the unplaced node writes of its syncs", c.name)
			continue
		}
		if d.code != http.StatusOK {
			t.Fatalf("%s: %d", c.name, d.code)
		}
		answered++
		checkReservation(t, fmt.Sprintf("writeback, %s (%d bytes)", c.name, d.n), heap, res)
	}
	if answered < 2 {
		t.Errorf("%d writebacks answered: the test measures too little", answered)
	}
}

// TestGCReservation: the cleaner's model within its reservation: the player's what-happens-next
// timeline after the costliest run the demo has (63 zeros of its 9 GiB sparse file before a zero
// of all of it, replayed on the SIT) against the heap; the gc API's 64 ops (foreground and
// background calls, checkpoints), the /next page and a small timeline refused past the budget.
func TestGCReservation(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: replays 63 zeros of a 9 GiB file")
	}
	s := mustOpenServer(t, Config{MaxMemory: -1}).Server
	ops := url.Values{}
	for k := range maxGCOps {
		ops.Add("op", []string{"gc 1", "gc 0", "checkpoint", "sync"}[k%4])
	}
	zeros := url.Values{"path": {"/cases/sparse-9g.bin"}, "policy": {"cost-benefit"}}
	for range request63 {
		zeros.Add(FieldBefore, "zero /cases/sparse-9g.bin 0 9664729088")
	}
	for _, c := range []struct{ name, target string }{
		{"timeline after 63 zeros of the 9 GiB file", "/api/images/demo/next?" + zeros.Encode()},
	} {
		s.resolved.drop()
		s.next = newNextCache(s.budget)
		var d *discardWriter
		heap, res := reservedAndHeap(s, func() { d = serveDiscard(s, "GET", c.target, nil) })
		if d.code != http.StatusOK {
			t.Fatalf("%s: %d", c.name, d.code)
		}
		checkReservation(t, fmt.Sprintf("%s (%d bytes)", c.name, d.n), heap, res)
	}
	// The gc API and page, and the timeline of the demo's densest file zeroed whole, hold their
	// reservations for about the sampler's millisecond (+0.5 MiB of heap each, sampled): that they
	// reserve is shown by a budget of gcBase refusing them (gcBytes is more than that).
	small := mustOpenServer(t, Config{MaxMemory: gcBase}).Server
	for _, target := range []string{"/images/demo/next?" + ops.Encode(), "/api/images/demo/gc?" + ops.Encode(),
		"/api/images/demo/next?path=/seed/bench64.bin"} {
		if d := serveDiscard(small, "GET", target, nil); d.code != http.StatusRequestEntityTooLarge {
			t.Errorf("%s under a %d-byte budget: %d, want 413 (more than the whole budget)", target, int64(gcBase), d.code)
		}
	}
}

// TestAfterCheckReservation: the after-image check whose model writes and fsyncs the whole free
// space of a 256 MiB volume, held in both modes against the volume as it was (every block the model
// wrote is a difference).
func TestAfterCheckReservation(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: models writing back a volume's every block, twice")
	}
	s := mustOpenServer(t, Config{MaxMemory: -1}).Server
	emptyVolume(t, s, "w", 256)
	q := url.Values{"path": {"/f"}, "offset": {"0"}, "length": {"4096"}, "mode": {"both"}, FieldAfter: {"w"},
		FieldBefore: {"write /f 0 " + fmt.Sprint(256<<20), "fsync /f"}}
	var d *discardWriter
	heap, res := reservedAndHeap(s, func() { d = serveDiscard(s, "GET", "/api/images/w/aftercheck?"+q.Encode(), nil) })
	if d.code != http.StatusOK && d.code != http.StatusUnprocessableEntity {
		t.Fatalf("after-check: %d", d.code)
	}
	checkReservation(t, fmt.Sprintf("after-check of write + fsync of the free space, both modes (%d, %d bytes)", d.code, d.n), heap, res)
}
