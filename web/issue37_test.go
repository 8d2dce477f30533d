package web

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/zrviz/zrviz/core"
	"github.com/zrviz/zrviz/request"
)

// issue37Write is a run whose `before=` operation leaves many dirty pages (a buffered write, no
// fsync): the played zero over them writes them back first (filemap_write_and_wait_range).
func issue37Write(played string) url.Values {
	return url.Values{"path": {"/cases/holes.bin"}, "offset": {"0"}, "length": {played}, "mode": {"per-block"},
		FieldBefore: {"write /cases/holes.bin 0 67108864"}}
}

// TestPlayedWritebackReserved (issue 37, finding 1): the played zero's writeback of the pages its
// `before=` operations left dirty reserves its memory before it runs, also when their result is
// cached, and runs once for a view and its reloads.
func TestPlayedWritebackReserved(t *testing.T) {
	s := mustOpenServer(t, Config{MaxMemory: 256 << 20}).Server
	// A punch of the same run caches the operations' result (a punch writes nothing back first).
	q := issue37Write("67108864")
	q.Set("op", "punch")
	if d := serveDiscard(s, "GET", "/api/images/demo/run?"+q.Encode(), nil); d.code != http.StatusOK {
		t.Fatalf("the punch: %d", d.code)
	}
	if s.resolved.misses != 1 {
		t.Fatalf("%d simulations of the operations, want 1", s.resolved.misses)
	}
	// All but 1 MiB of the budget in use: the zero's writeback of 16,384 pages cannot be reserved.
	hold, err := s.budget.reserve(s.budget.limit - s.budget.inUse() - 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	q = issue37Write("67108864")
	d := serveDiscard(s, "GET", "/api/images/demo/run?"+q.Encode(), nil)
	if d.code != http.StatusServiceUnavailable {
		t.Fatalf("the zero over 16,384 dirty pages with 1 MiB of the budget left: %d, want 503 (its writeback reserved)", d.code)
	}
	if s.resolved.prepares != 0 {
		t.Fatalf("the refused request wrote the pages back")
	}
	hold()
	for range 3 { // the run API, then reloads: one writeback
		if d := serveDiscard(s, "GET", "/api/images/demo/run?"+q.Encode(), nil); d.code != http.StatusOK {
			t.Fatalf("the zero with the budget free: %d", d.code)
		}
	}
	if s.resolved.misses != 1 || s.resolved.prepares != 1 {
		t.Fatalf("%d simulations of the operations and %d writebacks of the played range for three requests, want 1 and 1",
			s.resolved.misses, s.resolved.prepares)
	}
	if u, c := s.budget.inUse(), s.resolved.charged; u != c {
		t.Fatalf("%d bytes still reserved after the requests, %d of them the kept inputs'", u, c)
	}
}

// TestPlayedWritebackStops (issue 37, finding 1): the played zero's writeback runs on the request's
// context: a client that left stops it (it ran on context.Background, 35–68 CPU-s after the client
// left).
func TestPlayedWritebackStops(t *testing.T) {
	s := mustOpenServer(t, Config{}).Server
	si, err := s.image(DemoID)
	if err != nil {
		t.Fatal(err)
	}
	rq, err := s.parseRunQuery(func() url.Values { q := issue37Write("67108864"); q.Set("image", DemoID); return q }())
	if err != nil {
		t.Fatal(err)
	}
	f, err := s.resolvePath(context.Background(), si, rq.run.Path)
	if err != nil {
		t.Fatal(err)
	}
	// The operations' result, as the cache keeps it.
	t0, err := s.resolve(context.Background(), si, punchOf(rq.run), rq.before)
	if err != nil {
		t.Fatal(err)
	}
	in := t0.spec.Input
	if len(in.Inode.Dirty) < 16384 {
		t.Fatalf("%d dirty pages after the write, want 16,384", len(in.Inode.Dirty))
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = s.prepareZero(ctx, resolvedKey(si, f.Path(), rq.before), in, rq.run)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("the writeback for a client that left: %v, want context.Canceled", err)
	}
	// And one that leaves while it runs stops within 100 ms (a heavy-work slot is free).
	in2 := in
	ctx, cancel = context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := s.prepareZero(ctx, "other", in2, rq.run)
		errc <- err
	}()
	time.Sleep(5 * time.Millisecond)
	cancel()
	left := time.Now()
	select {
	case err := <-errc:
		if err != nil && !errors.Is(err, context.Canceled) {
			t.Fatal(err)
		}
		t.Logf("stopped %v after the client left (%v)", time.Since(left), err)
	case <-time.After(2 * time.Second):
		t.Fatal("the writeback went on 2 s after its client left")
	}
}

func punchOf(r request.Run) request.Run {
	r.Op = core.OpPunch
	return r
}

// TestNeverFitsRefusedBeforeWork (issue 37, finding 3): a view whose reservation passes the whole
// budget is a 413 that says by how much, decided before its `before=` operations run (the
// after-check and the writeback view ran them, then reserved, and answered 503 "retry in 5 s" after
// 3.3 CPU-s); one that fits the budget but not what is free now is a 503 with Retry-After, also
// before any work.
func TestNeverFitsRefusedBeforeWork(t *testing.T) {
	q := issue37Write("67108864")
	views := map[string]string{
		"writeback":   "/api/images/demo/writeback?" + q.Encode(),
		"after-check": "/api/images/demo/aftercheck?after=demo&" + q.Encode(),
		"run API":     "/api/images/demo/run?" + q.Encode(),
		"next":        "/api/images/demo/next?" + q.Encode(),
	}
	for name, target := range views {
		s := mustOpenServer(t, Config{MaxMemory: 16 << 20}).Server
		d := serveDiscardBody(s, target)
		if d.code != http.StatusRequestEntityTooLarge || d.h.Get("Retry-After") != "" {
			t.Errorf("%s under a 16 MiB budget: %d (Retry-After %q), want 413 without Retry-After", name, d.code, d.h.Get("Retry-After"))
		}
		if !strings.Contains(d.body, "more than its whole 16 MiB budget") {
			t.Errorf("%s: %q does not say by how much it passes the budget", name, d.body)
		}
		if s.resolved.misses+s.resolved.prepares != 0 {
			t.Errorf("%s: the refused request ran its operations", name)
		}
		// The same under a budget it fits, all of it in use: 503 with Retry-After, before any work.
		s = mustOpenServer(t, Config{MaxMemory: 1 << 30}).Server
		hold, err := s.budget.reserve(s.budget.limit - 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		d = serveDiscardBody(s, target)
		if d.code != http.StatusServiceUnavailable || d.h.Get("Retry-After") == "" {
			t.Errorf("%s with the budget in use: %d (Retry-After %q), want 503 with Retry-After", name, d.code, d.h.Get("Retry-After"))
		}
		if s.resolved.misses+s.resolved.prepares != 0 {
			t.Errorf("%s: the request refused for a busy budget ran its operations", name)
		}
		hold()
	}
}

// bodyWriter is a discardWriter that keeps the body (small answers: errors).
type bodyWriter struct {
	discardWriter
	body string
}

func (d *bodyWriter) Write(b []byte) (int, error) {
	d.body += string(b)
	return d.discardWriter.Write(b)
}

func serveDiscardBody(s *Server, target string) *bodyWriter {
	r := httptest.NewRequest("GET", target, nil)
	r.Host = "127.0.0.1"
	d := &bodyWriter{}
	s.Handler().ServeHTTP(d, r)
	return d
}
