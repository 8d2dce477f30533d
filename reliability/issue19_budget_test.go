package reliability

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

// The crafted cases of issue 19 that used to grow the server past --max-memory, each sent as a
// burst of concurrent requests to the built binary under a 256 MiB budget. Every answer must be
// the work's own status or 503 with Retry-After; the process's peak RSS (VmHWM, reset before each
// burst) must stay within its RSS before the burst + the budget + budgetSlack: the reservations
// count the heap in use each piece of work was measured to grow by (web/reservations.go), and the
// slack is for what they do not count — the garbage the collector lets pile up and the requests'
// buffers: serve sets the runtime's soft memory limit to the budget + 256 MiB
// (debug.SetMemoryLimit in cmd/zrviz/serve.go), so that is the headroom the collector is given.
const (
	budgetMiB   = 256
	budgetSlack = 256 << 20
)

// burstResult counts a burst's answers by status.
type burstResult struct {
	mu       sync.Mutex
	statuses map[int]int
	noRetry  int    // 503s without Retry-After
	other    string // the body of the last answer that was neither 2xx nor 503
}

func (b *burstResult) add(res *http.Response) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.statuses[res.StatusCode]++
	if res.StatusCode == http.StatusServiceUnavailable && res.Header.Get("Retry-After") == "" {
		b.noRetry++
	}
}

// burst sends n requests at once (make builds request i) and reads every answer to its end.
func burst(t *testing.T, n int, make func(i int) *http.Request) *burstResult {
	t.Helper()
	br := &burstResult{statuses: map[int]int{}}
	var wg sync.WaitGroup
	client := &http.Client{Timeout: 3 * time.Minute}
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := client.Do(make(i))
			if err != nil {
				t.Errorf("request %d: %v", i, err)
				return
			}
			var head bytes.Buffer
			io.Copy(&head, io.LimitReader(res.Body, 512))
			io.Copy(io.Discard, res.Body)
			res.Body.Close()
			br.add(res)
			if res.StatusCode >= 300 && res.StatusCode != http.StatusServiceUnavailable {
				br.mu.Lock()
				br.other = head.String()
				br.mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return br
}

// checkBurst: every status is one of ok or a 503 with Retry-After; want503 asks for at least one
// refusal (the burst asks for more than the budget holds).
func checkBurst(t *testing.T, name string, br *burstResult, want503 bool, ok ...int) {
	t.Helper()
	t.Logf("%s: statuses %v", name, br.statuses)
	if br.other != "" {
		t.Logf("%s: %s", name, br.other)
	}
	for code, n := range br.statuses {
		if code != http.StatusServiceUnavailable && !containsInt(ok, code) {
			t.Errorf("%s: %d answers with status %d", name, n, code)
		}
	}
	if br.noRetry > 0 {
		t.Errorf("%s: %d 503s without Retry-After", name, br.noRetry)
	}
	if want503 && br.statuses[http.StatusServiceUnavailable] == 0 {
		t.Errorf("%s: no 503: the burst asks for more than the %d MiB budget", name, budgetMiB)
	}
}

func containsInt(xs []int, x int) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// peakWithin resets the process's VmHWM, runs f, and fails unless the peak stayed within the RSS
// the server started with (start) + the budget + budgetSlack. (Its RSS before f is logged: the
// runtime gives freed memory back to the system minutes later, so it may still hold an earlier
// burst's peak.)
func peakWithin(t *testing.T, pid int, start int64, name string, f func()) {
	t.Helper()
	m0, err := ReadProcMem(pid)
	if err != nil {
		t.Fatal(err)
	}
	if err := ResetHWM(pid); err != nil {
		t.Fatal(err)
	}
	f()
	m1, err := ReadProcMem(pid)
	if err != nil {
		t.Fatal(err)
	}
	limit := start + budgetMiB<<20 + budgetSlack
	t.Logf("%s: RSS %d MB before, peak %d MB (bound %d MB); load average %s", name, m0.RSS/1e6, m1.HWM/1e6, limit/1e6, LoadAverage())
	if m1.HWM > limit {
		t.Errorf("%s: peak RSS %d MB, past %d MB at start + the %d MiB budget + %d MiB slack", name, m1.HWM/1e6, start/1e6, budgetMiB, budgetSlack>>20)
	}
}

func getReq(base, path string) *http.Request {
	r, _ := http.NewRequest(http.MethodGet, base+path, nil)
	return r
}

func postReq(base, path, ctype string, body []byte, length bool) *http.Request {
	var rd io.Reader = bytes.NewReader(body)
	if !length {
		rd = io.MultiReader(rd) // no Content-Length: sent chunked
	}
	r, _ := http.NewRequest(http.MethodPost, base+path, rd)
	r.Header.Set("Content-Type", ctype)
	r.Header.Set("Origin", base)
	return r
}

// worstTraceBody is the trace whose calls never merge (each two blocks past the last), at the
// server's call limit of 4,194,304: 41 MB.
func worstTraceBody() []byte {
	var b bytes.Buffer
	for k := range 1 << 22 {
		fmt.Fprintf(&b, "%d 1\n", 2*k)
	}
	return b.Bytes()
}

// TestBudgetBinary (issue 19): the bursts of the issue against `zrviz serve --max-memory 256MiB`,
// each within the budget plus slack, answered 200/201 or 503 with Retry-After; then requests that
// are refused for their size cost almost no CPU.
func TestBudgetBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: builds zrviz and sends it bursts of heavy work")
	}
	s := startBinServer(t, "-max-memory", fmt.Sprintf("%dMiB", budgetMiB))
	pid := s.cmd.Process.Pid
	base := s.base
	m, err := ReadProcMem(pid)
	if err != nil {
		t.Fatal(err)
	}
	start := m.RSS

	// before= sequences: 63 operations in a URL, 20 at once (issue: 878 MB under 256 MiB).
	var zeros, churn url.Values = url.Values{}, url.Values{}
	for i := range 63 {
		zeros.Add("before", "zero /cases/sparse-9g.bin 0 9664729088")
		switch i % 3 {
		case 0:
			churn.Add("before", "write /seed/bench64.bin 0 268435456")
		case 1:
			churn.Add("before", "fsync /seed/bench64.bin")
		default:
			churn.Add("before", "zero /seed/bench64.bin 1 268435456")
		}
	}
	peakWithin(t, pid, start, "20 before= sequences", func() {
		br := burst(t, 20, func(i int) *http.Request {
			if i%2 == 0 {
				return getReq(base, "/api/images/demo/run?path=/cases/sparse-9g.bin&length=4096&mode=per-block&"+zeros.Encode()+fmt.Sprintf("&offset=%d", 4096*i))
			}
			return getReq(base, "/api/images/demo/run?path=/seed/bench64.bin&length=4096&mode=per-block&"+churn.Encode()+fmt.Sprintf("&offset=%d", 4096*i))
		})
		checkBurst(t, "before= burst", br, true, http.StatusOK, http.StatusUnprocessableEntity)
	})

	// Trace uploads: 12 of the worst trace at once, half of them chunked (issue: +981 MB).
	trace := worstTraceBody()
	var traceLoc string
	peakWithin(t, pid, start, "12 trace uploads", func() {
		br := burst(t, 12, func(i int) *http.Request {
			return postReq(base, "/api/images/demo/traces", "text/plain", trace, i%2 == 0)
		})
		checkBurst(t, "trace uploads", br, true, http.StatusCreated)
	})
	res, err := http.DefaultClient.Do(postReq(base, "/api/images/demo/traces", "text/plain", trace, true))
	if err != nil || res.StatusCode != http.StatusCreated {
		t.Fatalf("trace upload alone: %v %v", res, err)
	}
	traceLoc = res.Header.Get("Location")
	res.Body.Close()

	// Stalled GETs of the trace's 50 MB answer: 30 clients that read the status line only
	// (issue: 2.9 GB). Each holds its connection; the server holds a 64 KiB buffer for each.
	peakWithin(t, pid, start, "30 stalled trace answers", func() {
		var conns []net.Conn
		for range 30 {
			c, status := statusLineOnly(t, base, traceLoc)
			if status != http.StatusOK {
				t.Errorf("stalled GET: %d", status)
			}
			conns = append(conns, c)
		}
		time.Sleep(2 * time.Second) // not synchronisation: lets the handlers fill their sockets, as stalled readers do
		// With them stalled, budgeted work is still admitted: the stalled answers hold little.
		if r, err := http.DefaultClient.Do(postReq(base, "/api/images/demo/traces", "text/plain", trace, false)); err != nil || r.StatusCode != http.StatusCreated {
			t.Errorf("a trace upload beside 30 stalled answers: %v %v", r, err)
		} else {
			r.Body.Close()
		}
		for _, c := range conns {
			c.Close()
		}
	})

	// Sandbox lists: 16 of 1 MiB of short ranges at once (issue: 2.4 GB under 512 MiB).
	var list strings.Builder
	for a := 34304; list.Len() < 1<<20-32; a += 200 {
		fmt.Fprintf(&list, "%d-%d ", a, a+99)
	}
	sandboxBody := []byte(fmt.Sprintf(`{"slots":%q,"mode":"both"}`, strings.TrimSpace(list.String())))
	peakWithin(t, pid, start, "16 sandbox lists", func() {
		br := burst(t, 16, func(int) *http.Request {
			return postReq(base, "/api/sandbox", "application/json", sandboxBody, true)
		})
		checkBurst(t, "sandbox lists", br, true, http.StatusOK)
	})

	// The diff page with the after-image check of the costliest operations, 12 at once.
	ops := url.QueryEscape("write /seed/bench64.bin 0 268435456\nfsync /seed/bench64.bin\nzero /seed/bench64.bin 1 268435456")
	peakWithin(t, pid, start, "12 diff pages", func() {
		br := burst(t, 12, func(int) *http.Request { return getReq(base, "/diff?a=demo&b=demo&ops="+ops) })
		checkBurst(t, "diff pages", br, false, http.StatusOK)
	})

	// Refused for their size: a run API answer of the 9 GiB file in both modes reserves
	// 2 × (1 MiB + 64 B × 2,359,553 slots) = 290 MiB, past the whole budget. 40 of them, half
	// with the 63 zeros before it (which used to be simulated first: 22 CPU-s in the issue).
	cpu0, err := ReadProcCPU(pid)
	if err != nil {
		t.Fatal(err)
	}
	br := burst(t, 40, func(i int) *http.Request {
		if i%2 == 0 {
			return getReq(base, "/api/images/demo/run?path=/cases/sparse-9g.bin&mode=both&"+zeros.Encode())
		}
		return getReq(base, "/api/images/demo/run?path=/cases/sparse-9g.bin&mode=both")
	})
	cpu1, err := ReadProcCPU(pid)
	if err != nil {
		t.Fatal(err)
	}
	// Past the whole budget: 413, no wait would make them fit (issue 37; they were 503s).
	if br.statuses[http.StatusRequestEntityTooLarge] != 40 {
		t.Errorf("run API answers past the whole budget: %v, want 40 × 413", br.statuses)
	}
	t.Logf("40 refused run API requests: %v of server CPU", cpu1-cpu0)
	if cpu1-cpu0 > 500*time.Millisecond {
		t.Errorf("40 refused requests cost %v of CPU, want ≤ 0.5 s", cpu1-cpu0)
	}
}

// statusLineOnly sends GET path on a connection with a 4 KiB receive buffer and reads only the
// status line; the connection is left open, unread.
func statusLineOnly(t *testing.T, base, path string) (net.Conn, int) {
	t.Helper()
	addr := strings.TrimPrefix(base, "http://")
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetReadBuffer(4096)
	}
	fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s\r\n\r\n", path, addr)
	line, err := bufio.NewReaderSize(c, 64).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	var code int
	fmt.Sscanf(line, "HTTP/1.1 %d", &code)
	return c, code
}
