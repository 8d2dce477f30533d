package reliability

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The hostile uploads of issue 13, crafted in code and sent to the built binary (`zrviz serve`, a
// process of its own, so its resident set and CPU time are the server's alone: /proc/PID/status
// VmRSS and VmHWM, /proc/PID/stat utime+stime). Figures are logged with the load average; the
// issue's targets are asserted on counts, bytes and memory, and on the server's CPU time where the
// target is a time (CPU time does not grow with the load of a shared machine as wall time does).

// procStats is what a measured request cost the server process.
type procStats struct {
	bytes   int64         // body bytes received
	code    int           // status
	wall    time.Duration // the client's wait
	cpu     time.Duration // the server's CPU time (user + system) meanwhile
	rss0    int64         // the server's RSS before
	rss     int64         // after
	hwmGrow int64         // peak RSS during, less rss0
}

func (s procStats) String() string {
	return fmt.Sprintf("%d, %s in %v (server CPU %v), RSS %s → %s, peak +%s", s.code, mbs(s.bytes),
		s.wall.Round(time.Millisecond), s.cpu, mbs(s.rss0), mbs(s.rss), mbs(s.hwmGrow))
}

func mbs(n int64) string { return fmt.Sprintf("%.1f MB", float64(n)/1e6) }

// measure runs fn against the process pid and returns what it cost; fn returns the status and the
// body bytes it read.
func measure(t *testing.T, pid int, fn func() (int, int64)) procStats {
	t.Helper()
	if err := ResetHWM(pid); err != nil {
		t.Fatalf("reset VmHWM: %v", err)
	}
	m0, err := ReadProcMem(pid)
	if err != nil {
		t.Fatal(err)
	}
	c0, err := ReadProcCPU(pid)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	code, n := fn()
	wall := time.Since(t0)
	c1, _ := ReadProcCPU(pid)
	m1, _ := ReadProcMem(pid)
	return procStats{bytes: n, code: code, wall: wall, cpu: c1 - c0, rss0: m0.RSS, rss: m1.RSS, hwmGrow: m1.HWM - m0.RSS}
}

// getBody GETs url and reads the body, returning the status and the bytes (the body too when keep).
func getBody(t *testing.T, u string, keep bool) (int, int64, []byte) {
	t.Helper()
	res, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if keep {
		b, err := io.ReadAll(res.Body)
		if err != nil {
			t.Fatal(err)
		}
		return res.StatusCode, int64(len(b)), b
	}
	n, err := io.Copy(io.Discard, res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, n, nil
}

// uploadTo posts body as an upload named name and returns the stored image.
func uploadTo(t *testing.T, base, name string, body []byte) listed {
	t.Helper()
	code, resp, err := postBytes(base, "/api/images?name="+url.QueryEscape(name), body)
	if err != nil || (code != http.StatusCreated && code != http.StatusOK) {
		t.Fatalf("upload %s: %d %s %v", name, code, resp, err)
	}
	var up listed
	if err := json.Unmarshal([]byte(resp), &up); err != nil {
		t.Fatal(err)
	}
	return up
}

// freshServer starts a new `zrviz serve` on the env's data dir (its uploads persist), waits until
// it answers, and stops it (SIGTERM, exit 0 expected) when the test ends.
func freshServer(t *testing.T, e *env, extra ...string) *serveProc {
	t.Helper()
	p := e.start(t, extra...)
	p.list(t)
	t.Cleanup(func() {
		select {
		case <-p.done:
			return
		default:
		}
		if code, _ := p.stop(t, syscall.SIGTERM, time.Minute); code != 0 {
			t.Errorf("exit status %d after SIGTERM:\n%s", code, p.out)
		}
	})
	return p
}

func (p *serveProc) ws(q url.Values) string {
	return "ws" + strings.TrimPrefix(p.url, "http") + "/ws/run?" + q.Encode()
}

// wsState is the part of a frame the many-slots viewers check.
type wsState struct {
	Type       string `json:"type"`
	Step       int64  `json:"step"`
	TotalSteps int64  `json:"totalSteps"`
	Error      string `json:"error"`
	Status     int    `json:"status"`
	State      []struct {
		Mode     string `json:"mode"`
		Done     bool   `json:"done"`
		Errno    string `json:"errno"`
		Counters struct {
			Calls             int64 `json:"calls"`
			BlocksInvalidated int64 `json:"blocksInvalidated"`
			SlotsVisited      int64 `json:"slotsVisited"`
		} `json:"counters"`
	} `json:"state"`
}

// readUntil reads messages until one of type typ (an error message is an error).
func readUntil(ctx context.Context, v *viewer, typ string) (*wsState, int, error) {
	for {
		_, b, err := v.c.Read(ctx)
		if err != nil {
			return nil, 0, err
		}
		var m wsState
		if err := json.Unmarshal(b, &m); err != nil {
			return nil, 0, fmt.Errorf("decode %.100s: %w", b, err)
		}
		if m.Type == "error" {
			return &m, len(b), fmt.Errorf("server error %d: %s", m.Status, m.Error)
		}
		if m.Type == typ {
			return &m, len(b), nil
		}
	}
}

// seekAndEnd sends n seeks to random steps of a run of total steps (each answered by a frame), then
// "end", and returns the last frame.
func seekAndEnd(ctx context.Context, v *viewer, n int, total int64, seed uint64) (*wsState, error) {
	r := rand.New(rand.NewPCG(seed, 13))
	for i := 0; i <= n; i++ {
		ctl := fmt.Sprintf(`{"type":"seek","step":%d}`, r.Int64N(max(total, 1)))
		if i == n {
			ctl = `{"type":"end"}`
		}
		if err := v.send(ctx, ctl); err != nil {
			return nil, err
		}
		m, _, err := readUntil(ctx, v, "frame")
		if err != nil {
			return nil, err
		}
		if i == n {
			return m, nil
		}
	}
	return nil, nil
}

// rightAtEnd checks a final frame of the many-slots run (of total steps, from the hello): at the
// last step, both modes done, no error, one call per slot in each.
func rightAtEnd(m *wsState, total, slots int64) error {
	if m == nil || len(m.State) != 2 || m.Step != total {
		return fmt.Errorf("final frame %+v, want step %d", m, total)
	}
	for _, st := range m.State {
		if !st.Done || st.Errno != "" || st.Counters.Calls != slots || st.Counters.BlocksInvalidated != slots || st.Counters.SlotsVisited != slots {
			return fmt.Errorf("%s at the end: done %v errno %q counters %+v, want %d calls, blocks and slots", st.Mode, st.Done, st.Errno, st.Counters, slots)
		}
	}
	return nil
}

// mapBody is a page of GET /api/images/{id}/map.
type mapBody struct {
	From    uint64 `json:"from"`
	Next    uint64 `json:"next"`
	Extents []struct {
		Index uint64 `json:"index"`
		Count uint64 `json:"count"`
		State string `json:"state"`
		Addr  uint32 `json:"addr"`
	} `json:"extents"`
}
