package web

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// clientFrom is an HTTP client whose connections come from the loopback address ip (127.0.0.2,
// …), so one test can be several clients.
func clientFrom(ip string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 10 * time.Second}
	return &http.Client{Transport: &http.Transport{DialContext: d.DialContext, DisableKeepAlives: true}}
}

// stalledUpload starts an upload of body from client that sends half of it and waits for gate.
// The returned channel yields the status.
func stalledUpload(ts *testServer, client *http.Client, body []byte, gate chan struct{}) chan int {
	done := make(chan int, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodPost, ts.ts.URL+"/api/images?name=stalled.img",
			&gateReader{r: bytes.NewReader(body), n: int64(len(body) / 2), gate: gate})
		req.ContentLength = int64(len(body))
		res, err := client.Do(req)
		if err != nil {
			done <- -1
			return
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		done <- res.StatusCode
	}()
	return done
}

// waitUploads waits until n uploads are in flight.
func waitUploads(t *testing.T, s *Server, n int) {
	t.Helper()
	eventually(t, 30*time.Second, fmt.Sprintf("%d uploads in flight", n), func() bool {
		s.upMu.Lock()
		defer s.upMu.Unlock()
		return len(s.inflight) >= n
	})
}

// TestUploadCaps: past the per-client and the global cap, uploads are answered 503 with
// Retry-After and a JSON error before their body is read; a freed slot takes the next one.
func TestUploadCaps(t *testing.T) {
	t.Parallel()
	ts := mustOpenServer(t, Config{MaxUploads: 2, MaxUploadsPerClient: 1})
	body := fixtureVariant(t, "basic", "caps")
	gate := make(chan struct{})
	a := clientFrom("127.0.0.1")
	first := stalledUpload(ts, a, body, gate)
	waitUploads(t, ts.Server, 1)

	refused := func(c *http.Client, what string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, ts.ts.URL+"/api/images?name=x.img", bytes.NewReader(body))
		res, err := c.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		var e errorBody
		code := decode(t, res, &e)
		res.Body.Close()
		if code != http.StatusServiceUnavailable || res.Header.Get("Retry-After") != "10" || e.Code != EUNAVAILABLE || e.Error == "" {
			t.Errorf("%s: %d Retry-After %q %q; want 503, Retry-After 10, a JSON error", what, code, res.Header.Get("Retry-After"), e.Error)
		}
	}
	refused(a, "second upload from one client")
	b := clientFrom("127.0.0.2")
	second := stalledUpload(ts, b, fixtureVariant(t, "basic", "caps2"), gate)
	waitUploads(t, ts.Server, 2)
	refused(clientFrom("127.0.0.3"), "third client past the global cap")
	close(gate)
	if c1, c2 := <-first, <-second; c1 != 201 || c2 != 201 {
		t.Fatalf("the uploads holding the slots: %d %d", c1, c2)
	}
	var up uploadBody
	if code := ts.post(t, "?name=after.img", bytes.NewReader(fixtureVariant(t, "basic", "caps3")), -1, "", &up); code != 201 {
		t.Errorf("upload after the slots were freed: %d", code)
	}
}

// TestUploadMinRate: a body that stops arriving is cut at the rate window with 408 and leaves no
// file; one arriving fast enough under the same bound is stored.
func TestUploadMinRate(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ts := mustOpenServer(t, Config{DataDir: dir, UploadMinRate: 64 << 10, UploadRateWindow: 500 * time.Millisecond})
	body := fixtureVariant(t, "basic", "rate")
	addr := strings.TrimPrefix(ts.ts.URL, "http://")
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	t0 := time.Now()
	fmt.Fprintf(c, "POST /api/images?name=slow.img HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\n\r\n", addr, len(body))
	c.Write(body[:1024])
	// Then a byte a second: far below 64 KiB/s.
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for i := 1024; i < len(body); i++ {
			select {
			case <-stop:
				return
			case <-time.After(time.Second):
			}
			if _, err := c.Write(body[i : i+1]); err != nil {
				return
			}
		}
	}()
	c.SetReadDeadline(time.Now().Add(30 * time.Second))
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("no answer to a stalled upload: %v", err)
	}
	var e errorBody
	json.NewDecoder(res.Body).Decode(&e)
	t.Logf("stalled upload: %d %q after %v", res.StatusCode, e.Error, time.Since(t0).Round(time.Millisecond))
	if res.StatusCode != http.StatusRequestTimeout || e.Code != ETIMEOUT {
		t.Errorf("stalled upload: %d %q, want 408 too slow", res.StatusCode, e.Error)
	}
	if es, _ := os.ReadDir(filepath.Join(dir, uploadsSubdir)); len(es) != 0 {
		t.Errorf("the cut upload left %d entries", len(es))
	}
	var up uploadBody
	if code := ts.post(t, "?name=fast.img", bytes.NewReader(body), int64(len(body)), "", &up); code != 201 {
		t.Errorf("a fast upload under the same bound: %d", code)
	}
}

// TestCloseCutsUploads: Close lets a fast upload finish in the grace period, then cuts one still
// streaming (its client gets 503 or a closed connection), returns no error, leaves no partial
// upload, and the finished upload is there at the next start.
func TestCloseCutsUploads(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s, err := NewServer(Config{Addr: "127.0.0.1:0", DataDir: dir, ShutdownGrace: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Open(); err != nil {
		t.Fatal(err)
	}
	post := func(name string, body io.Reader, n int64) chan int {
		done := make(chan int, 1)
		go func() {
			req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, s.URL()+"/api/images?name="+name, body)
			req.ContentLength = n
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				done <- -1
				return
			}
			res.Body.Close()
			done <- res.StatusCode
		}()
		return done
	}
	fast := fixtureVariant(t, "basic", "fast")
	if code := <-post("fast.img", bytes.NewReader(fast), int64(len(fast))); code != 201 {
		t.Fatalf("fast upload: %d", code)
	}
	slow := fixtureVariant(t, "basic", "slow")
	gate := make(chan struct{})
	cut := post("slow.img", &gateReader{r: bytes.NewReader(slow), n: int64(len(slow) / 2), gate: gate}, int64(len(slow)))
	waitUploads(t, s, 1)
	t0 := time.Now()
	if err := s.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	t.Logf("Close took %v", time.Since(t0).Round(time.Millisecond))
	// The rest of the body may flow now: the server has cut the upload, so it goes nowhere. Held
	// back, it kept the client's transport waiting on its writer when the cut closed the connection
	// before the 503 was read (the test hung under load).
	close(gate)
	if code := <-cut; code != http.StatusServiceUnavailable && code != -1 {
		t.Errorf("upload cut by Close: %d, want 503 or a closed connection", code)
	}
	es, _ := os.ReadDir(filepath.Join(dir, uploadsSubdir))
	for _, e := range es {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("left after Close: %s", e.Name())
		}
	}
	s2, err := NewServer(Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if n := len(s2.images()); n != 1 {
		t.Errorf("after restart: %d images, want the fast upload", n)
	}
}
