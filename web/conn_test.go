package web

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// TestWSForeignOriginCostsNothing: a websocket request from another site's page is refused (403,
// JSON) before the run is resolved: an unknown image, a sandbox list, a missing room all answer
// 403, not the 404 or 400 that resolving them would give, and no outline is built.
func TestWSForeignOriginCostsNothing(t *testing.T) {
	t.Parallel()
	ts := mustOpenServer(t, Config{})
	hdr := http.Header{"Origin": {"http://evil.example"}}
	for _, path := range []string{
		"/ws/run?" + bench64 + "&mode=both",
		"/ws/run?image=nope&path=/x",
		"/ws/run?sandbox=" + strings.Repeat("34304-34815+", 200) + "&mode=both",
		"/ws/follow?code=nosuchroom",
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		c, res, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(ts.ts.URL, "http")+path, &websocket.DialOptions{HTTPHeader: hdr})
		cancel()
		if err == nil {
			c.CloseNow()
			t.Errorf("%.40s: upgraded", path)
			continue
		}
		if res == nil || res.StatusCode != http.StatusForbidden {
			t.Errorf("%.40s: %v; want 403", path, res)
			continue
		}
		var body errorBody
		if err := json.NewDecoder(res.Body).Decode(&body); err != nil || body.Code != EFORBIDDEN || body.Error == "" {
			t.Errorf("%.40s: body %+v (%v); want a JSON cross-origin error", path, body, err)
		}
	}
	ts.outlines.mu.Lock()
	n := len(ts.outlines.m)
	ts.outlines.mu.Unlock()
	if n != 0 {
		t.Fatalf("foreign requests built %d outlines", n)
	}
	if u := ts.budget.inUse(); u != 0 {
		t.Fatalf("foreign requests hold %d bytes of the budget", u)
	}
}

// TestFollowerKickedWhenSlow: a follower that does not read while the room sends it messages is
// closed by the server with a policy violation once its queue is full (the report a send gives),
// its queue's bytes go back to the budget, and the presenter goes on.
func TestFollowerKickedWhenSlow(t *testing.T) {
	t.Parallel()
	ts := mustOpenServer(t, Config{})
	p, _, r := startRoom(t, ts, bench64+"&mode=both")
	slow := ts.dialFollow(t, r.Code)
	slow.readType("hello")
	rm, _ := ts.rooms.get(r.Code)
	rm.mu.Lock()
	var f *follower
	for f = range rm.followers {
	}
	rm.mu.Unlock()
	// The client reads nothing: what the socket's buffers do not take stays queued, and within a
	// bounded number of sends (buffers plus maxQueued) one is refused.
	big := []byte(`"` + strings.Repeat("x", maxQueued/4) + `"`)
	refused := false
	for range 64 {
		if err := f.c.sendBytes(big, false); err != nil {
			if err != errSlowClient {
				t.Fatalf("send: %v", err)
			}
			refused = true
			break
		}
	}
	if !refused {
		t.Fatal("64 sends of 2 MiB to a client that reads nothing were all queued")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var err error
	for err == nil {
		_, _, err = slow.c.Read(ctx)
	}
	if st := websocket.CloseStatus(err); st != websocket.StatusPolicyViolation {
		t.Fatalf("the slow follower read %v; want close status 1008", err)
	}
	p.send(ctl{"type": "end"})
	if fr := p.readType("frame"); fr.mode("batched").Counters.Calls != 19 {
		t.Fatalf("the presenter after the kick: %+v", fr.mode("batched").Counters)
	}
}
