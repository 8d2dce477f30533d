package reliability

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zrviz/zrviz/internal/testutil"

	"github.com/coder/websocket"
	"github.com/zrviz/zrviz/imgio"
	"github.com/zrviz/zrviz/web"
)

// liveServer is a web.Server listening on loopback with the demo added.
type liveServer struct {
	srv     *web.Server
	url     string
	dataDir string
	closed  bool
}

// startServer opens a server on 127.0.0.1:0. cfg.DataDir "" becomes a
// fresh temp dir the test can inspect.
func startServer(t testing.TB, cfg web.Config) *liveServer {
	t.Helper()
	if cfg.DataDir == "" {
		cfg.DataDir = t.TempDir()
	}
	cfg.Addr = "127.0.0.1:0"
	s, err := web.NewServer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	img, err := imgio.OpenFileContext(context.Background(), testutil.DemoImage(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddImage(web.DemoID, "demo.img", img); err != nil {
		t.Fatal(err)
	}
	if err := s.Open(); err != nil {
		t.Fatal(err)
	}
	ls := &liveServer{srv: s, url: s.URL(), dataDir: cfg.DataDir}
	t.Cleanup(func() { ls.close(t) })
	return ls
}

// close shuts the server down and fails if Close hangs.
func (ls *liveServer) close(t testing.TB) {
	t.Helper()
	if ls.closed {
		return
	}
	ls.closed = true
	done := make(chan error, 1)
	go func() { done <- ls.srv.Close() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Close: %v", err)
		}
	case <-time.After(60 * time.Second):
		t.Errorf("Close did not return in 60s")
	}
}

// wsURL is the websocket URL of a run.
func (ls *liveServer) wsURL(q url.Values) string {
	return "ws" + strings.TrimPrefix(ls.url, "http") + "/ws/run?" + q.Encode()
}

// imageIDs lists the ids GET /api/images reports.
func (ls *liveServer) imageIDs(t testing.TB) []string {
	t.Helper()
	res, err := http.Get(ls.url + "/api/images")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var body json.RawMessage
	if err := json.NewDecoder(res.Body).Decode(&body); err != nil {
		t.Fatalf("GET /api/images: %v", err)
	}
	var list []struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(body, &list); err != nil {
		var wrapped struct {
			Images []struct {
				ID string `json:"id"`
			} `json:"images"`
		}
		if err := json.Unmarshal(body, &wrapped); err != nil {
			t.Fatalf("GET /api/images: %.200s: %v", body, err)
		}
		list = wrapped.Images
	}
	var ids []string
	for _, x := range list {
		ids = append(ids, x.ID)
	}
	return ids
}

// wsMsg is the part of a server message the tests read.
type wsMsg struct {
	Type       string `json:"type"`
	Step       int64  `json:"step"`
	TotalSteps int64  `json:"totalSteps"`
	Error      string `json:"error"`
	// State has one entry per mode (protocol v2), per-block first.
	State []struct {
		Mode     string `json:"mode"`
		Done     bool   `json:"done"`
		Errno    string `json:"errno"`
		Counters struct {
			Calls int64 `json:"calls"`
		} `json:"counters"`
	} `json:"state"`
}

// viewer is one websocket client.
type viewer struct {
	c *websocket.Conn
}

func dialViewer(ctx context.Context, u string, hdr http.Header) (*viewer, *http.Response, error) {
	c, res, err := websocket.Dial(ctx, u, &websocket.DialOptions{HTTPHeader: hdr})
	if err != nil {
		return nil, res, err
	}
	c.SetReadLimit(64 << 20)
	return &viewer{c: c}, res, nil
}

func (v *viewer) read(ctx context.Context) (*wsMsg, error) {
	_, b, err := v.c.Read(ctx)
	if err != nil {
		return nil, err
	}
	var m wsMsg
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("decode %.100s: %w", b, err)
	}
	if m.Type == "error" {
		return &m, fmt.Errorf("server error message: %s", m.Error)
	}
	return &m, nil
}

func (v *viewer) send(ctx context.Context, ctl string) error {
	return v.c.Write(ctx, websocket.MessageText, []byte(ctl))
}

// playToEnd plays the run at full speed and returns each mode's final
// call counter once every mode is done.
func (v *viewer) playToEnd(ctx context.Context) (map[string]int64, error) {
	hello, err := v.read(ctx)
	if err != nil {
		return nil, err
	}
	if hello.Type != "hello" {
		return nil, fmt.Errorf("first message %q, want hello", hello.Type)
	}
	if err := v.send(ctx, `{"type":"speed","stepsPerSecond":1000000}`); err != nil {
		return nil, err
	}
	if err := v.send(ctx, `{"type":"play"}`); err != nil {
		return nil, err
	}
	for {
		m, err := v.read(ctx)
		if err != nil {
			return nil, err
		}
		if m.Type != "frame" || len(m.State) == 0 {
			continue
		}
		done := true
		out := map[string]int64{}
		for _, st := range m.State {
			done = done && st.Done
			out[st.Mode] = st.Counters.Calls
		}
		if done {
			return out, nil
		}
	}
}

// rawWS does a websocket handshake by hand on a plain TCP connection, so a
// test can cut it at any byte.
func rawWS(addr, path string) (net.Conn, *bufio.Reader, error) {
	c, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		return nil, nil, err
	}
	key := make([]byte, 16)
	rand.Read(key)
	fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
		"Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n", path, addr, base64.StdEncoding.EncodeToString(key))
	br := bufio.NewReader(c)
	c.SetReadDeadline(time.Now().Add(30 * time.Second))
	res, err := http.ReadResponse(br, nil)
	if err != nil {
		c.Close()
		return nil, nil, err
	}
	if res.StatusCode != http.StatusSwitchingProtocols {
		c.Close()
		return nil, nil, fmt.Errorf("handshake status %d", res.StatusCode)
	}
	return c, br, nil
}

// maskedText frames a client text message (clients must mask).
func maskedText(p []byte) []byte {
	var b []byte
	b = append(b, 0x81)
	switch {
	case len(p) < 126:
		b = append(b, 0x80|byte(len(p)))
	default:
		b = append(b, 0x80|126, byte(len(p)>>8), byte(len(p)))
	}
	mask := []byte{1, 2, 3, 4}
	b = append(b, mask...)
	for i, c := range p {
		b = append(b, c^mask[i%4])
	}
	return b
}

// abort closes c with a TCP reset instead of a FIN.
func abort(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetLinger(0)
	}
	c.Close()
}

// memSampler records the peak heap while it runs.
type memSampler struct {
	mu                 sync.Mutex
	peakInuse, peakSys uint64
	stop               chan struct{}
	done               chan struct{}
}

func startMemSampler() *memSampler {
	// Reset VmHWM so the peak is this test's, not the corpus's.
	os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
	m := &memSampler{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(m.done)
		tk := time.NewTicker(50 * time.Millisecond)
		defer tk.Stop()
		for {
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			m.mu.Lock()
			m.peakInuse = max(m.peakInuse, ms.HeapInuse)
			m.peakSys = max(m.peakSys, ms.Sys)
			m.mu.Unlock()
			select {
			case <-m.stop:
				return
			case <-tk.C:
			}
		}
	}()
	return m
}

func (m *memSampler) finish() (inuse, sys, hwm uint64) {
	close(m.stop)
	<-m.done
	return m.peakInuse, m.peakSys, vmHWM()
}

// vmHWM is the process's peak resident set in bytes (/proc/self/status).
func vmHWM() uint64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			f := strings.Fields(v)
			if len(f) > 0 {
				n, _ := strconv.ParseUint(f[0], 10, 64)
				return n << 10
			}
		}
	}
	return 0
}

// settleGoroutines waits up to d for the goroutine count to drop to want
// or below and returns the last count.
func settleGoroutines(want int, d time.Duration) int {
	n := runtime.NumGoroutine()
	waitFor(d, func() bool { n = runtime.NumGoroutine(); return n <= want })
	return n
}

// upload streams the file at name to POST /api/images and returns the
// status and body.
func upload(ctx context.Context, base, name string) (int, string, error) {
	f, err := os.Open(name)
	if err != nil {
		return 0, "", err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, "", err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/api/images?name="+url.QueryEscape(st.Name()), f)
	if err != nil {
		return 0, "", err
	}
	req.ContentLength = st.Size()
	req.Header.Set("Content-Type", "application/octet-stream")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	return res.StatusCode, string(b), nil
}

// postBytes posts b to path.
func postBytes(base, path string, b []byte) (int, string, error) {
	res, err := http.Post(base+path, "application/octet-stream", strings.NewReader(string(b)))
	if err != nil {
		return 0, "", err
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	return res.StatusCode, string(body), nil
}
