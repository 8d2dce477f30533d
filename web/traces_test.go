package web

import (
	"bytes"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/zrviz/zrviz/ktrace"
)

const kernelCasesDir = "../core/testdata/kernel-cases"

// traceAnswer is POST /api/images/{id}/traces's answer.
type traceAnswer struct {
	ID      string `json:"id"`
	Format  string `json:"format"`
	Outside int    `json:"outside"`
	Sized   bool   `json:"sized"`
	Ops     []struct {
		Calls int `json:"calls"`
	} `json:"ops"`
	Error string `json:"error"`
}

// tracedBody is GET /api/images/{id}/traces/{tid}.
type tracedBody struct {
	ID     string `json:"id"`
	Image  string `json:"image"`
	Format string `json:"format"`
	Ops    []struct {
		Line  int         `json:"line"`
		Calls [][2]uint32 `json:"calls"`
	} `json:"ops"`
}

// postTrace uploads body as a trace for image id (as a multipart form when multipart is set).
func (ts *testServer) postTrace(tb testing.TB, id string, body []byte, multi bool, v any) int {
	tb.Helper()
	ct := "text/plain"
	if multi {
		var b bytes.Buffer
		mw := multipart.NewWriter(&b)
		mw.WriteField("note", "ignored")
		fw, err := mw.CreateFormFile("trace", "trace.txt")
		if err != nil {
			tb.Fatal(err)
		}
		fw.Write(body)
		mw.Close()
		body, ct = b.Bytes(), mw.FormDataContentType()
	}
	res, err := http.Post(ts.ts.URL+"/api/images/"+id+"/traces", ct, bytes.NewReader(body))
	if err != nil {
		tb.Fatal(err)
	}
	defer res.Body.Close()
	return decode(tb, res, v)
}

func readCase(tb testing.TB, name string) []byte {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join(kernelCasesDir, name))
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// traceCalls reads N.trace or N.trace.batched ("ADDR" or "START LEN" lines).
func traceCalls(tb testing.TB, name string) [][2]uint32 {
	tb.Helper()
	var out [][2]uint32
	for _, line := range strings.Fields(strings.ReplaceAll(string(readCase(tb, name)), " ", ",")) {
		c := [2]uint32{0, 1}
		for i, f := range strings.Split(line, ",") {
			v, err := strconv.ParseUint(f, 10, 32)
			if err != nil {
				tb.Fatalf("%s: %q", name, line)
			}
			c[i] = uint32(v)
		}
		out = append(out, c)
	}
	return out
}

// TestTraceUploadKernelCases uploads every kernel case's raw ftrace logs (raw body, and as a
// multipart form) and reads them back: the last operation's calls are N.trace / N.trace.batched.
func TestTraceUploadKernelCases(t *testing.T) {
	ts := mustOpenServer(t, Config{})
	files, err := filepath.Glob(filepath.Join(kernelCasesDir, "*.ops"))
	if err != nil || len(files) < 12 {
		t.Fatalf("%v %d", err, len(files))
	}
	for _, f := range files {
		n := strings.TrimSuffix(filepath.Base(f), ".ops")
		ops := len(strings.Split(strings.TrimSpace(string(readCase(t, n+".ops"))), "\n"))
		for _, x := range []struct{ log, calls string }{{n + ".ftrace", n + ".trace"}, {n + ".ftrace.batched", n + ".trace.batched"}} {
			want := traceCalls(t, x.calls)
			for _, multi := range []bool{false, true} {
				var ans traceAnswer
				if code := ts.postTrace(t, DemoID, readCase(t, x.log), multi, &ans); code != http.StatusCreated {
					t.Fatalf("%s (multipart %v): %d %s", x.log, multi, code, ans.Error)
				}
				if ans.ID == "" || ans.Format != "ftrace" || len(ans.Ops) != ops || ans.Ops[ops-1].Calls != len(want) || ans.Outside != 0 {
					t.Errorf("%s: %+v, want %d ops, %d calls in the last", x.log, ans, ops, len(want))
				}
				var got tracedBody
				if code := ts.get(t, "/api/images/demo/traces/"+ans.ID, &got); code != http.StatusOK {
					t.Fatalf("%s: GET %d", x.log, code)
				}
				last := got.Ops[len(got.Ops)-1]
				if got.ID != ans.ID || got.Image != DemoID || len(got.Ops) != ops || last.Line == 0 ||
					!slices.Equal(last.Calls, want) && len(want)+len(last.Calls) > 0 {
					t.Errorf("%s: GET: %d ops, last %d calls at line %d; want %d", x.log, len(got.Ops), len(last.Calls), last.Line, len(want))
				}
			}
		}
	}
}

// TestTraceUploadRefused: garbage and empty traces are 400 naming the line and what was expected;
// too large ones 413; unknown images and traces 404, and a trace is only found under its image.
func TestTraceUploadRefused(t *testing.T) {
	ts := mustOpenServer(t, Config{})
	garbage := make([]byte, 2048)
	for i := range garbage {
		garbage[i] = byte(i*7919 + 13)
	}
	for _, x := range []struct {
		name string
		body string
		code int
		says string
	}{
		{"garbage", string(garbage), 400, "line 1"},
		{"prose after calls", "100 2\n101\nthe end\n", 400, "line 3"},
		{"empty", "", 400, "empty trace"},
		{"header only", "# tracer: nop\n#\n", 400, "empty trace"},
		{"lost events", "# tracer: nop\n# entries-in-buffer/entries-written: 10/99   #P:1\n", 400, "lost 89 events"},
		{"line too long", strings.Repeat("7", 5000), 413, "line 1"},
	} {
		var ans traceAnswer
		if code := ts.postTrace(t, DemoID, []byte(x.body), false, &ans); code != x.code || !strings.Contains(ans.Error, x.says) {
			t.Errorf("%s: %d %q, want %d saying %q", x.name, code, ans.Error, x.code, x.says)
		}
	}
	var ans traceAnswer
	if code := ts.postTrace(t, "nosuchimage", []byte("1 1\n"), false, &ans); code != http.StatusNotFound {
		t.Errorf("unknown image: %d", code)
	}
	if code := ts.get(t, "/api/images/demo/traces/0123456789abcdef01", nil); code != http.StatusNotFound {
		t.Errorf("unknown trace: %d", code)
	}
	// A multipart body without the field.
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	mw.WriteField("other", "1 1")
	mw.Close()
	res, err := http.Post(ts.ts.URL+"/api/images/demo/traces", mw.FormDataContentType(), &b)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusBadRequest {
		t.Errorf("multipart without a trace field: %d", res.StatusCode)
	}
	// Over MaxTraceBody: by its declared length, and streamed without one.
	h := ts.Server.Handler()
	req := httptest.NewRequest(http.MethodPost, ts.ts.URL+"/api/images/demo/traces", strings.NewReader("1\n"))
	req.ContentLength = MaxTraceBody + 1
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusRequestEntityTooLarge {
		t.Errorf("declared over the limit: %d %s", rec.Code, rec.Body)
	}
	line := "# " + strings.Repeat("x", 4000) + "\n"
	big := io.LimitReader(&repeatReader{s: line}, MaxTraceBody+int64(len(line)))
	req = httptest.NewRequest(http.MethodPost, ts.ts.URL+"/api/images/demo/traces", big)
	req.ContentLength = -1
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusRequestEntityTooLarge {
		t.Errorf("streamed over the limit: %d %s", rec.Code, rec.Body)
	}
}

type repeatReader struct {
	s   string
	off int
}

func (r *repeatReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		k := copy(p[n:], r.s[r.off:])
		n += k
		r.off = (r.off + k) % len(r.s)
	}
	return n, nil
}

// TestTraceStoreBounds: past maxTraces or maxTraceMem the least recently used traces go; using one
// keeps it.
func TestTraceStoreBounds(t *testing.T) {
	var st traceStore
	tr := &ktrace.Trace{Format: ktrace.FormatPlain, Ops: []ktrace.Op{{}}}
	for i := range maxTraces {
		st.add(&storedTrace{id: fmt.Sprint(i), imageID: "img", trace: tr, size: 100})
	}
	if _, ok := st.get("img", "0"); !ok { // 0 is now the most recently used
		t.Fatal("trace 0 missing before the bound")
	}
	if _, ok := st.get("other", "0"); ok {
		t.Error("a trace is found under another image")
	}
	st.add(&storedTrace{id: "new", imageID: "img", trace: tr, size: 100})
	if _, ok := st.get("img", "1"); ok {
		t.Error("trace 1, the least recently used, survived the count bound")
	}
	for _, id := range []string{"0", "2", "new"} {
		if _, ok := st.get("img", id); !ok {
			t.Errorf("trace %s evicted", id)
		}
	}
	st.add(&storedTrace{id: "huge", imageID: "img", trace: tr, size: maxTraceMem - 100})
	if st.lru.Len() != 2 || st.bytes != maxTraceMem {
		t.Errorf("after a huge trace: %d traces, %d bytes", st.lru.Len(), st.bytes)
	}
	st.add(&storedTrace{id: "huger", imageID: "img", trace: tr, size: 2 * maxTraceMem})
	if _, ok := st.get("img", "huger"); !ok || st.lru.Len() != 1 {
		t.Errorf("a trace over the memory bound alone is kept alone: %d traces", st.lru.Len())
	}
}

// BenchmarkTraceAttach uploads kernel case 1's raw log (16,384 calls, 16,398 lines, 1.7 MB) through
// the handler: read, parsed, stored, answered.
func BenchmarkTraceAttach(b *testing.B) {
	ts := mustOpenServer(b, Config{})
	h := ts.Server.Handler()
	raw := readCase(b, "1.ftrace")
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		req := httptest.NewRequest(http.MethodPost, ts.ts.URL+"/api/images/demo/traces", bytes.NewReader(raw))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusCreated {
			b.Fatalf("%d %s", rec.Code, rec.Body)
		}
	}
}
