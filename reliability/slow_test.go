package reliability

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"runtime"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/zrviz/zrviz/web"
)

// stepLatencies has a healthy viewer take n single steps and returns how
// long each took from control to answering frame.
func stepLatencies(ctx context.Context, ls *liveServer, n int) ([]time.Duration, error) {
	q := url.Values{"image": {web.DemoID}, "path": {bench64}}
	v, _, err := dialViewer(ctx, ls.wsURL(q), nil)
	if err != nil {
		return nil, err
	}
	defer v.c.CloseNow()
	if _, err := v.read(ctx); err != nil { // hello
		return nil, err
	}
	var out []time.Duration
	for i := 0; i < n; i++ {
		t0 := time.Now()
		if err := v.send(ctx, `{"type":"step","n":1}`); err != nil {
			return nil, err
		}
		for {
			m, err := v.read(ctx)
			if err != nil {
				return nil, err
			}
			if m.Type == "frame" && m.Step == int64(i+1) {
				break
			}
		}
		out = append(out, time.Since(t0))
	}
	v.c.Close(websocket.StatusNormalClosure, "")
	return out, nil
}

func pct(d []time.Duration, p float64) time.Duration {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[min(len(s)-1, int(float64(len(s))*p))]
}

// TestSlowConsumersAndAborts: clients that never read and clients that
// drop the TCP connection in the middle of a frame are dropped (slow ones
// with 1008) without delaying healthy viewers, and leave no goroutines.
func TestSlowConsumersAndAborts(t *testing.T) {
	if testing.Short() {
		// A load test: the never-reading clients take about 45 s to fill their socket buffers and be
		// cut, whatever their number. The fast tier has web's unit tests of the same policy
		// (TestWSSlowClient, TestFollowerKickedWhenSlow, the mailbox tests); the full run does this one.
		t.Skip("load test: the full run (without -short) does it")
	}
	runtime.GC()
	before := runtime.NumGoroutine()
	ls := startServer(t, web.Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	const healthy, steps = 3, 40

	measure := func() []time.Duration {
		var mu sync.Mutex
		var all []time.Duration
		var wg sync.WaitGroup
		for i := 0; i < healthy; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				d, err := stepLatencies(ctx, ls, steps)
				if err != nil {
					t.Errorf("healthy viewer: %v", err)
					return
				}
				mu.Lock()
				all = append(all, d...)
				mu.Unlock()
			}()
		}
		wg.Wait()
		return all
	}
	base := measure()

	// Slow consumers: 20 times a second they ask for a full frame (seek
	// to the end and back, as a user dragging the slider), and never read.
	// Their socket buffers fill, the server's writes stall, and after 10 s
	// the server must drop them.
	const slow, aborts = 6, 40
	q := url.Values{"image": {web.DemoID}, "path": {bench64}}
	slowStart := time.Now()
	type dropped struct {
		after time.Duration
		err   error
	}
	drops := make(chan dropped, slow)
	var slowConns []*viewer
	for i := 0; i < slow; i++ {
		v, err := dialSlowViewer(ctx, ls.wsURL(q))
		if err != nil {
			t.Fatalf("slow viewer: %v", err)
		}
		slowConns = append(slowConns, v)
		// The flood ends when a write fails: the server cut the
		// connection. Reading would make the client fast again, so the
		// drop is seen from the writing side only.
		go func() {
			tk := time.NewTicker(50 * time.Millisecond)
			defer tk.Stop()
			stop := time.After(120 * time.Second)
			for k := 0; ; k++ {
				ctl := `{"type":"end"}`
				if k%2 == 1 {
					ctl = `{"type":"reset"}`
				}
				wctx, c := context.WithTimeout(ctx, 30*time.Second)
				err := v.send(wctx, ctl)
				c()
				if err != nil {
					drops <- dropped{time.Since(slowStart), err}
					return
				}
				select {
				case <-stop:
					drops <- dropped{time.Since(slowStart), nil}
					return
				case <-tk.C:
				}
			}
		}()
	}
	// Abrupt disconnects: handshake by hand, ask for a frame, read a few
	// bytes of it and reset the connection.
	addr := strings.TrimPrefix(ls.url, "http://")
	var abortErrs []error
	var wg sync.WaitGroup
	var mu sync.Mutex
	for i := 0; i < aborts; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, br, err := rawWS(addr, "/ws/run?"+q.Encode())
			if err != nil {
				mu.Lock()
				abortErrs = append(abortErrs, err)
				mu.Unlock()
				return
			}
			c.Write(maskedText([]byte(`{"type":"end"}`)))
			buf := make([]byte, 100+i*37)
			br.Read(buf) // part of the hello frame
			abort(c)
		}()
	}
	under := measure()
	wg.Wait()
	for _, err := range abortErrs {
		t.Errorf("abort client: %v", err)
	}

	// The slow consumers must have been dropped: the server closes them
	// once a frame has waited 10 s (a 1008 close frame cannot pass a full
	// socket buffer, so the client sees the connection cut).
	var dropTimes []string
	for range slow {
		d := <-drops
		if d.err == nil {
			t.Errorf("a slow viewer was still connected %v after it stopped reading", d.after.Round(time.Second))
			continue
		}
		dropTimes = append(dropTimes, d.after.Round(100*time.Millisecond).String())
	}
	var code []string
	for _, v := range slowConns {
		_, _, err := v.c.Read(ctx)
		code = append(code, fmt.Sprint(websocket.CloseStatus(err)))
		v.c.CloseNow()
	}
	t.Logf("healthy step latency (%d viewers × %d steps): alone p50 %v p99 %v max %v; with %d slow consumers and %d aborts p50 %v p99 %v max %v",
		healthy, steps, pct(base, .5), pct(base, .99), pct(base, 1), slow, aborts, pct(under, .5), pct(under, .99), pct(under, 1))
	t.Logf("slow consumers dropped after %v (close status seen: %v)", dropTimes, code)
	ls.close(t)
	after := settleGoroutines(before+2, 15*time.Second)
	t.Logf("goroutines: %d before the server, %d after Close", before, after)
	if after > before+2 {
		buf := make([]byte, 1<<20)
		n := runtime.Stack(buf, true)
		t.Errorf("goroutine leak: %d before, %d after\n%s", before, after, buf[:n])
	}
}

// dialSlowViewer dials with a 4 KiB receive buffer, so that a client that
// does not read stalls the server's writes within seconds rather than
// after the megabytes loopback autotuning would buffer.
func dialSlowViewer(ctx context.Context, u string) (*viewer, error) {
	d := &net.Dialer{Control: func(network, address string, rc syscall.RawConn) error {
		var serr error
		err := rc.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096)
		})
		return errors.Join(err, serr)
	}}
	hc := &http.Client{Transport: &http.Transport{DialContext: d.DialContext}}
	c, _, err := websocket.Dial(ctx, u, &websocket.DialOptions{HTTPClient: hc})
	if err != nil {
		return nil, err
	}
	c.SetReadLimit(64 << 20)
	return &viewer{c: c}, nil
}
