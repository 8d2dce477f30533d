package web

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/zrviz/zrviz/core"
	"github.com/zrviz/zrviz/player"
)

// TestOutlineBuildBudget: an outline build reserves about 96 bytes a page per mode while it runs: a
// run whose build passes the whole budget is refused with 413 before the upgrade, no Retry-After
// (no wait makes it fit: issue 37), and nothing stays reserved; one that fits is played, and its reservation ends with the build.
func TestOutlineBuildBudget(t *testing.T) {
	t.Parallel()
	// The pages are core.PagesOf's: a regular file (the argument checks pass) whose 16,384 slots are
	// mapped (so Pages.Reach does not cut them).
	spec := player.Spec{Input: core.Input{Inode: core.Inode{Type: "file", SlotsEnd: 16384}},
		Request: core.Request{Offset: 0, Length: 64 << 20}, Modes: []core.Mode{core.PerBlock, core.Batched}}
	if got, want := outlineBuildBytes(spec), int64(16384*2*outlineBuildPerPage); got != want {
		t.Errorf("bench64's build: %d bytes, want %d", got, want)
	}
	// bench64 in both modes needs 3 MiB to build; one mode needs 1.5 MiB.
	ts := mustOpenServer(t, Config{MaxMemory: 2 << 20})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	u := "ws" + strings.TrimPrefix(ts.ts.URL, "http") + "/ws/run?" + bench64
	_, res, err := websocket.Dial(ctx, u+"&mode=both", nil)
	if err == nil || res == nil || res.StatusCode != http.StatusRequestEntityTooLarge || res.Header.Get("Retry-After") != "" {
		t.Fatalf("a build over the whole budget: %v %v; want 413 without Retry-After", res, err)
	}
	if n := ts.budget.inUse(); n != 0 {
		t.Errorf("%d bytes reserved after a refused build", n)
	}
	// One mode: 1.5 MiB to build, then the viewer's own reservation (about 1 MiB, which fits once
	// the build's is given back).
	c, _, err := websocket.Dial(ctx, u+"&mode=batched", nil)
	if err != nil {
		t.Fatalf("a build within the budget: %v", err)
	}
	defer c.CloseNow()
	if _, _, err := c.Read(ctx); err != nil {
		t.Fatal(err)
	}
	if n := ts.budget.inUse(); n >= outlineBuildBytes(spec)/2 || n == 0 {
		t.Errorf("%d bytes reserved while one viewer plays, want its own reservation only", n)
	}
}
