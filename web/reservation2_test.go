package web

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
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
// cache counts every simulation of them), with 503 and Retry-After, whichever the mode; one that
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
			if d.code != http.StatusServiceUnavailable || d.h.Get("Retry-After") == "" {
				t.Fatalf("%s, %s, the 9 GiB file after 63 zeros: %d (Retry-After %q), want 503", c.name, mode, d.code, d.h.Get("Retry-After"))
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
	if b := s.outlineBound(t.Context(), url.Values{"image": {"demo"}, "path": q["path"], "mode": q["mode"], FieldBefore: q[FieldBefore]}); b != 0 {
		t.Fatalf("its operations are cached, yet a second view would hold %d bytes for them", b)
	}
	if d := serveDiscard(s, "GET", "/images/demo/run?"+q.Encode(), nil); d.code != http.StatusOK || s.resolved.misses != 1 {
		t.Fatalf("the same page again: %d, %d simulations; want 200 and still 1", d.code, s.resolved.misses)
	}
	if u := s.budget.inUse(); u != 0 {
		t.Fatalf("%d bytes still reserved after the requests", u)
	}
}
