package web

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zrviz/zrviz/core"
	"github.com/zrviz/zrviz/imgio"
	"github.com/zrviz/zrviz/internal/imgedit"
	"github.com/zrviz/zrviz/internal/testutil"
)

// The tests of this file hold what each kind of work reserves (web/reservations.go) against the
// heap the same work grows by, for the worst input of its kind built in code: the heap in use is
// sampled every millisecond from a collected start, and so is the budget; the reservation's peak
// must be at least the heap's. The handlers run in this process on a discarding writer, as a client
// that reads everything would see them.

// reservedAndHeap runs f and returns the peaks of heap in use and of the budget reserved, each above
// where it was when f started (after a collection).
func reservedAndHeap(s *Server, f func()) (heap, reserved int64) {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base, rbase := int64(ms.HeapInuse), s.budget.inUse()
	var stop atomic.Bool
	var ph, pr atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		var m runtime.MemStats
		for !stop.Load() {
			runtime.ReadMemStats(&m)
			if v := int64(m.HeapInuse) - base; v > ph.Load() {
				ph.Store(v)
			}
			if v := s.budget.inUse() - rbase; v > pr.Load() {
				pr.Store(v)
			}
			time.Sleep(time.Millisecond) // the peak meter's sampling interval, not synchronisation
		}
	}()
	f()
	stop.Store(true)
	<-done
	return ph.Load(), pr.Load()
}

// discardWriter is a client that reads the whole answer and keeps only its size and status.
type discardWriter struct {
	h    http.Header
	code int
	n    int64
}

func (d *discardWriter) Header() http.Header {
	if d.h == nil {
		d.h = http.Header{}
	}
	return d.h
}
func (d *discardWriter) Write(b []byte) (int, error) { d.n += int64(len(b)); return len(b), nil }
func (d *discardWriter) WriteHeader(c int)           { d.code = c }

// serveDiscard runs a request through s's routes into a discardWriter.
func serveDiscard(s *Server, method, target string, body []byte) *discardWriter {
	var r *http.Request
	if body != nil {
		r = httptest.NewRequest(method, target, bytes.NewReader(body))
		r.Header.Set("Origin", "http://127.0.0.1")
	} else {
		r = httptest.NewRequest(method, target, nil)
	}
	r.Host = "127.0.0.1"
	d := &discardWriter{}
	s.Handler().ServeHTTP(d, r)
	return d
}

// checkReservation fails unless the heap stayed within the reservation.
func checkReservation(t *testing.T, what string, heap, reserved int64) {
	t.Helper()
	t.Logf("%s: heap +%.1f MiB, reserved %.1f MiB", what, float64(heap)/(1<<20), float64(reserved)/(1<<20))
	if reserved <= 0 {
		t.Errorf("%s: nothing reserved", what)
	}
	if heap > reserved {
		t.Errorf("%s: the heap grew by %.1f MiB, past the %.1f MiB reserved", what, float64(heap)/(1<<20), float64(reserved)/(1<<20))
	}
}

// emptyVolume makes a mkfs.f2fs volume of mib MiB (a sparse file) holding one 4 KiB file /f, and
// adds it to s as id.
func emptyVolume(t *testing.T, s *Server, id string, mib int64) {
	t.Helper()
	mkfs := testutil.NeedTool(t, "mkfs.f2fs")
	sload := testutil.NeedTool(t, "sload.f2fs")
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	if err := os.Mkdir(src, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "f"), bytes.Repeat([]byte{7}, 4096), 0o644); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "v.img")
	if err := os.WriteFile(p, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(p, mib<<20); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(mkfs, "-q", "-f", p).CombinedOutput(); err != nil {
		t.Fatalf("mkfs.f2fs: %v\n%s", err, out)
	}
	if out, err := exec.Command(sload, "-f", src, p).CombinedOutput(); err != nil {
		t.Fatalf("sload.f2fs: %v\n%s", err, out)
	}
	img, err := imgio.OpenFileContext(context.Background(), p, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddImage(id, id+".img", img); err != nil {
		t.Fatal(err)
	}
}

// TestBeforeReservation: the costliest `before=` sequences we know write the whole free space of a
// volume and write it back (every block allocated, remapped and its SIT bit set), once or over and
// over with zeros between (each a walk of the file the writes made); a sequence of zeros alone over
// a 9 GiB file walks it 63 times.
func TestBeforeReservation(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: writes back a 1 GiB volume's every block")
	}
	s := mustOpenServer(t, Config{MaxMemory: -1}).Server
	emptyVolume(t, s, "v", 1<<10)
	for _, c := range worstBefore() {
		s.resolved.drop()
		q := url.Values{"image": {c.image}, "path": {c.path}, "offset": {"0"}, "length": {"4096"}, FieldBefore: c.before}
		var err error
		heap, res := reservedAndHeap(s, func() { _, err = s.resolveRun(context.Background(), q) })
		// The churn runs out of space (ENOSPC) or into SSR's territory (refused): what ran of it
		// is held to the reservation.
		if err != nil && !strings.Contains(err.Error(), "ENOSPC") && !errors.Is(err, core.ErrUnmodelled) {
			t.Fatalf("%s: %v", c.name, err)
		}
		checkReservation(t, c.name, heap, res)
	}
}

// beforeCase is a `before=` sequence on a run's file.
type beforeCase struct {
	name, image, path string
	before            []string
}

// worstBefore is the costliest `before=` sequences we know, on the 1 GiB volume "v" emptyVolume
// makes and on the demo.
func worstBefore() []beforeCase {
	// The free space short of f2fs_need_SSR's threshold: past it (the 1 GiB volume has 39 reserved
	// sections, so 80 free ones), with sload's partly valid first data segment there for
	// get_ssr_segment, the kernel may reuse it by SSR and the model refuses (gc/ssr.go); the
	// figures are per block, so the most the model runs is the worst case that counts.
	whole := fmt.Sprint(int64(768) << 20)
	var churn, zeros, holes []string
	for i := range request63 {
		// A punch and a truncate walk what the writes mapped (truncate's node walk included).
		holes = append(holes, []string{"write /f 0 " + whole, "punch /f 4096 " + whole, "truncate /f 0"}[i%3])
		switch i % 3 {
		case 0:
			churn = append(churn, "write /f 0 "+whole)
		case 1:
			churn = append(churn, "fsync /f")
		default:
			churn = append(churn, "zero /f 1 "+whole)
		}
		zeros = append(zeros, "zero /cases/sparse-9g.bin 0 9664729088")
	}
	return []beforeCase{
		{"write + fsync of 768 MiB, the free space short of SSR (1 GiB volume)", "v", "/f", []string{"write /f 0 " + whole, "fsync /f"}},
		{"63 of write, fsync, zero (1 GiB volume)", "v", "/f", churn},
		{"63 zeros of the demo's 9 GiB sparse file", DemoID, "/cases/sparse-9g.bin", zeros},
		{"63 of write, punch, truncate (1 GiB volume)", "v", "/f", holes},
	}
}

// request63 is the most operations a before= sequence may carry (request.MaxOps − 1).
const request63 = 63

// worstTrace is the trace whose calls never merge into a run (each starts two blocks past the last,
// one block long), at the upload's call limit.
func worstTrace() []byte {
	var b bytes.Buffer
	for k := range traceLimits.MaxCalls {
		fmt.Fprintf(&b, "%d 1\n", 2*k)
	}
	return b.Bytes()
}

// TestTraceReservation: parsing the worst trace (4,194,304 calls in 31 MB, none merging), and
// answering GET of it (about 60 MB of JSON) to a reader of everything.
func TestTraceReservation(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: parses 4 M calls")
	}
	s := mustOpenServer(t, Config{MaxMemory: -1}).Server
	body := worstTrace()
	var d *discardWriter
	heap, res := reservedAndHeap(s, func() { d = serveDiscard(s, "POST", "/api/images/demo/traces", body) })
	if d.code != http.StatusCreated {
		t.Fatalf("upload: %d", d.code)
	}
	checkReservation(t, fmt.Sprintf("parse of a %d-byte trace of %d unmerged calls", len(body), traceLimits.MaxCalls), heap, res)
	loc := d.h.Get("Location")
	heap, res = reservedAndHeap(s, func() { d = serveDiscard(s, "GET", loc, nil) })
	if d.code != http.StatusOK || d.n < int64(traceLimits.MaxCalls)*6 {
		t.Fatalf("GET %s: %d, %d bytes", loc, d.code, d.n)
	}
	checkReservation(t, fmt.Sprintf("answer of %d bytes", d.n), heap, res)
}

// releasedDemo adds, as "released", the demo with every data slot of every file released (NULL_ADDR,
// SIT bit cleared): the diff with the most changes the demo has.
func releasedDemo(t *testing.T, s *Server) int {
	t.Helper()
	b := imgedit.Copy(t, demoZst)
	n := 0
	imgedit.Edit(t, b, func(e imgedit.Editor) {
		files, err := e.Img.Files()
		if err != nil {
			t.Fatal(err)
		}
		for _, fi := range files {
			if fi.Type != imgio.TypeFile {
				continue
			}
			f, err := e.Img.File(fi.Ino)
			if err != nil {
				t.Fatal(err)
			}
			ext, err := f.Extents()
			if err != nil {
				t.Fatal(err)
			}
			for _, x := range ext {
				if x.State != imgio.StateAddr {
					continue
				}
				for k := x.Index; k < x.Index+x.Count; k++ {
					if err := e.SetSlot(fi.Ino, k, imgio.NullAddr); err != nil {
						t.Fatal(err)
					}
					if err := e.SetBlockValid(x.Addr+uint32(k-x.Index), false); err != nil {
						t.Fatal(err)
					}
					n++
				}
			}
		}
	})
	img, err := imgio.OpenFileContext(context.Background(), b, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddImage("released", "released.img", img); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestDiffReservation: the diff page of the demo against a copy with every data slot released, and
// the same page checked against the model of the costliest operations on the demo (write and fsync
// of its whole free space, then a zero of the file).
func TestDiffReservation(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: edits every slot of the demo")
	}
	s := mustOpenServer(t, Config{MaxMemory: -1}).Server
	n := releasedDemo(t, s)
	for _, c := range []struct{ name, ops string }{
		{fmt.Sprintf("%d slots released", n), ""},
		{"with the model of write + fsync of 256 MiB, zero", "write /seed/bench64.bin 0 268435456\nfsync /seed/bench64.bin\nzero /seed/bench64.bin 1 268435456"},
	} {
		target := "/diff?a=demo&b=released"
		if c.ops != "" {
			target += "&ops=" + url.QueryEscape(c.ops)
		}
		var d *discardWriter
		heap, res := reservedAndHeap(s, func() { d = serveDiscard(s, "GET", target, nil) })
		if d.code != http.StatusOK {
			t.Fatalf("%s: %d", c.name, d.code)
		}
		checkReservation(t, fmt.Sprintf("diff page, %s (%d bytes)", c.name, d.n), heap, res)
	}
}

// TestRunRefusedBeforeOperations: a run API answer too large for the budget is refused before the
// `before=` operations it names are simulated (the resolved-input cache counts every simulation of
// them), with 413 and no Retry-After (it needs more than the whole budget: no wait makes it fit,
// issue 37); one that fits runs them once.
func TestRunRefusedBeforeOperations(t *testing.T) {
	s := mustOpenServer(t, Config{MaxMemory: 256 << 20}).Server
	q := url.Values{"path": {"/cases/sparse-9g.bin"}, "mode": {"both"}}
	for range 63 {
		q.Add(FieldBefore, "zero /cases/sparse-9g.bin 0 9664729088")
	}
	d := serveDiscard(s, "GET", "/api/images/demo/run?"+q.Encode(), nil)
	if d.code != http.StatusRequestEntityTooLarge || d.h.Get("Retry-After") != "" {
		t.Fatalf("both modes of the 9 GiB file after 63 zeros: %d (Retry-After %q), want 413 without Retry-After", d.code, d.h.Get("Retry-After"))
	}
	if m := s.resolved.misses; m != 0 {
		t.Fatalf("the refused request simulated its operations (%d simulations)", m)
	}
	q = url.Values{"path": {"/cases/holes.bin"}, "mode": {"both"}, FieldBefore: {"zero /cases/holes.bin 67584 195560"}}
	if d := serveDiscard(s, "GET", "/api/images/demo/run?"+q.Encode(), nil); d.code != http.StatusOK || s.resolved.misses != 1 {
		t.Fatalf("a run that fits: %d, %d simulations of its operations; want 200 and 1", d.code, s.resolved.misses)
	}
	if u, c := s.budget.inUse(), s.resolved.charged; u != c {
		t.Fatalf("%d bytes still reserved after the requests, %d of them the kept input's", u, c)
	}
}
