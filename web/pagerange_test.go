package web

import (
	"net/http"
	"net/url"
	"testing"
)

// TestHugeLengthIsENOSPC: a zero-range of 1 TiB from a 4 MiB file walks the file's 1,024 blocks,
// then reserves holes until the volume's free blocks run out: the kernel's answer is ENOSPC, which
// the socket and the API give at once. The range the hello carries (what the page allocates) and
// what the budget reserves stop where the run can reach, not at 2^28 pages (core.Pages.Reach).
func TestHugeLengthIsENOSPC(t *testing.T) {
	t.Parallel()
	ts := mustOpenServer(t, Config{MaxMemory: 256 << 20})
	q := "image=demo&path=/cases/contiguous.bin&offset=0&length=1TiB&mode=both"
	w := ts.dialWS(t, q)
	h := w.readType("hello")
	if n := h.Range.End - h.Range.Start; n == 0 || n > 1<<17 {
		t.Fatalf("range %+v: %d pages", h.Range, n)
	}
	w.send(ctl{"type": "end"})
	f := w.readType("frame")
	for _, m := range []string{"per-block", "batched"} {
		if st := f.mode(m); st.Errno != "ENOSPC" || st.Counters.BlocksInvalidated != 1024 {
			t.Errorf("%s: errno %q, %d blocks invalidated; want ENOSPC after the file's 1,024", m, st.Errno, st.Counters.BlocksInvalidated)
		}
	}
	var res struct {
		Results []struct {
			Mode  string `json:"mode"`
			Errno string `json:"errno"`
			Stats struct {
				BlocksInvalidated uint64 `json:"blocksInvalidated"`
			} `json:"stats"`
		} `json:"results"`
	}
	if code := ts.get(t, "/api/images/demo/run?path=/cases/contiguous.bin&length=1TiB", &res); code != http.StatusOK {
		t.Fatalf("API: %d", code)
	}
	for _, r := range res.Results {
		if r.Errno != "ENOSPC" || r.Stats.BlocksInvalidated != 1024 {
			t.Errorf("API %s: %q, %d blocks invalidated", r.Mode, r.Errno, r.Stats.BlocksInvalidated)
		}
	}
	// A huge offset is refused by vfs_fallocate (offset+len > s_maxbytes): EFBIG, no page.
	w2 := ts.dialWS(t, "image=demo&path=/cases/contiguous.bin&offset=999999999999999&length=4096")
	h2 := w2.readType("hello")
	if h2.Range.End != h2.Range.Start {
		t.Errorf("EFBIG: range %+v", h2.Range)
	}
	w2.send(ctl{"type": "end"})
	if st := w2.readType("frame").mode("per-block"); st.Errno != "EFBIG" {
		t.Errorf("huge offset: errno %q, want EFBIG", st.Errno)
	}
}

// TestWSModeSwitchKeepsThePoint: b at the end of bench64 (both) gives per-block's end (49,188),
// and three switches come back to 65,675; mid-run the new hello's step has the same slot cursor.
func TestWSModeSwitchKeepsThePoint(t *testing.T) {
	t.Parallel()
	ts := mustOpenServer(t, Config{})
	w := ts.dialWS(t, bench64+"&mode=both")
	w.readType("hello")
	w.send(ctl{"type": "end"})
	w.readType("frame")
	steps := []int64{}
	for _, m := range []string{"per-block", "batched", "both"} {
		w.send(ctl{"type": "mode", "mode": m})
		h := w.readType("hello")
		steps = append(steps, h.Step)
		if h.Step != h.TotalSteps {
			t.Errorf("%s after the end: step %d of %d", m, h.Step, h.TotalSteps)
		}
	}
	if steps[0] != 49188 || steps[2] != 65675 {
		t.Errorf("steps %v, want 49,188 … 65,675", steps)
	}
	w.send(ctl{"type": "seek", "step": 3501})
	f := w.readType("frame")
	cursor := min(f.mode("per-block").Cursor, f.mode("batched").Cursor) // the player's cursor: the engine behind
	w.send(ctl{"type": "mode", "mode": "batched"})
	h := w.readType("hello")
	if st := h.mode("batched"); st == nil || st.Cursor < cursor || h.Step == 0 || h.Step == h.TotalSteps {
		t.Errorf("mid-run: batched at step %d, state %+v; both's cursor was %d", h.Step, st, cursor)
	}
}

// TestRunResolvedOnce: a player page with an earlier operation simulates it once; its websocket
// (and a mode switch) reuse the input it left.
func TestRunResolvedOnce(t *testing.T) {
	t.Parallel()
	ts := mustOpenServer(t, Config{})
	q := "path=/cases/contiguous.bin&offset=524288&length=2097152&before=" + url.QueryEscape("zero /cases/contiguous.bin 1048576 1048576")
	if _, code := ts.getPage(t, "/images/demo/run?"+q); code != http.StatusOK {
		t.Fatalf("page: %d", code)
	}
	w := ts.dialWS(t, "image=demo&"+q+"&mode=both")
	w.readType("hello")
	w.send(ctl{"type": "mode", "mode": "batched"})
	h := w.readType("hello")
	w.send(ctl{"type": "end"})
	if st := w.readType("frame").mode("batched"); st.Counters.BlocksInvalidated != 256 || h.Run.Mode != "batched" {
		t.Errorf("kernel case 9 after the switch: %+v", st.Counters)
	}
	ts.resolved.mu.Lock()
	misses := ts.resolved.misses
	ts.resolved.mu.Unlock()
	if misses != 1 {
		t.Errorf("the earlier operation was simulated %d times for one view", misses)
	}
}
