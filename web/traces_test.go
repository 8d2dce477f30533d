package web

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/zrviz/zrviz/internal/testutil"
	"github.com/zrviz/zrviz/ktrace"
	"github.com/zrviz/zrviz/request"
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
		// Binary: where, in words and hex, never the bytes (the status line shows the message).
		{"garbage", string(garbage), 400, "bad trace: ktrace: not a text trace: binary data at byte 1 (0xfc)"},
		{"gzip", string(gzipped(t, "100 2\n")), 400, "bad trace: ktrace: not a text trace: binary data at byte 0 (0x1f); it is a gzip file: unpack it first"},
		{"NUL after text", "100 2\n101 1\n\x00\x00", 400, "bad trace: ktrace: not a text trace: binary data at byte 12 (0x00)"},
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
		for _, r := range ans.Error {
			if r < 0x20 || r == 0x7f || r == utf8.RuneError {
				t.Errorf("%s: the message %q carries a byte of the trace (%U)", x.name, ans.Error, r)
				break
			}
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

// gzipped is s compressed with gzip.
func gzipped(t *testing.T, s string) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	if _, err := zw.Write([]byte(s)); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
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

// runTraced is GET /api/images/{id}/run's answer with &trace=.
type runTraced struct {
	Results []struct {
		Mode  string      `json:"mode"`
		Calls [][2]uint32 `json:"calls"`
		Trace *struct {
			Format          string `json:"format"`
			Op              int    `json:"op"`
			Calls           int    `json:"calls"`
			ModelCalls      int    `json:"modelCalls"`
			Expanded        bool   `json:"expanded"`
			Agree           bool   `json:"agree"`
			FirstDivergence *struct {
				Index  int        `json:"index"`
				Kernel *[2]uint32 `json:"kernel"`
				Model  *[2]uint32 `json:"model"`
				Slot   *uint64    `json:"slot"`
				Chunk  *int32     `json:"chunk"`
				Dnode  string     `json:"dnode"`
			} `json:"firstDivergence"`
		} `json:"trace"`
	} `json:"results"`
	Error string `json:"error"`
}

// caseQuery is the run query of a kernel case's last operation, the earlier ones as "before".
func caseQuery(tb testing.TB, n string, mode string) url.Values {
	tb.Helper()
	ops, err := request.ParseOps(bytes.NewReader(readCase(tb, n+".ops")))
	if err != nil {
		tb.Fatal(err)
	}
	last := ops[len(ops)-1]
	last.Modes, err = request.ParseModes(mode)
	if err != nil {
		tb.Fatal(err)
	}
	q := url.Values{request.FieldPath: {last.Path}, request.FieldOffset: {strconv.FormatInt(last.Offset, 10)}, request.FieldMode: {last.ModeName()}}
	if last.HasLength {
		q.Set(request.FieldLength, strconv.FormatInt(last.Length, 10))
	}
	if last.KeepSize {
		q.Set(request.FieldKeepSize, "true")
	}
	for _, op := range ops[:len(ops)-1] {
		q.Add(FieldBefore, op.OpLine(0))
	}
	return q
}

// TestRunWithTrace: GET /api/images/{id}/run?...&trace=ID adds the comparison to each result: every
// kernel case's logs agree in their mode (case 9 with its first operation as "before", the trace's
// second compared); a trace with a call dropped diverges there, placed in a slot and dnode; errors.
func TestRunWithTrace(t *testing.T) {
	ts := mustOpenServer(t, Config{})
	upload := func(body []byte) string {
		var ans traceAnswer
		if code := ts.postTrace(t, DemoID, body, false, &ans); code != http.StatusCreated {
			t.Fatalf("upload: %d %s", code, ans.Error)
		}
		return ans.ID
	}
	files := testutil.NeedFixtures(t, filepath.Join(kernelCasesDir, "*.ops"))
	for _, f := range files {
		n := strings.TrimSuffix(filepath.Base(f), ".ops")
		for _, x := range []struct{ mode, log, calls string }{{"per-block", ".ftrace", ".trace"}, {"batched", ".ftrace.batched", ".trace.batched"}} {
			want := traceCalls(t, n+x.calls)
			q := caseQuery(t, n, x.mode)
			q.Set(FieldTrace, upload(readCase(t, n+x.log)))
			var got runTraced
			if code := ts.get(t, "/api/images/demo/run?"+q.Encode(), &got); code != http.StatusOK {
				t.Fatalf("case %s %s: %d %s", n, x.mode, code, got.Error)
			}
			r := got.Results[0]
			if len(got.Results) != 1 || r.Trace == nil || !r.Trace.Agree || r.Trace.FirstDivergence != nil ||
				r.Trace.Calls != len(want) || r.Trace.ModelCalls != len(want) || r.Trace.Op != len(q[FieldBefore])+1 || r.Trace.Format != "ftrace" {
				t.Errorf("case %s %s: %+v", n, x.mode, r.Trace)
			}
			if len(want) < 2 {
				continue
			}
			// The middle call dropped, in the plain form.
			mid := len(want) / 2
			var b strings.Builder
			for i, c := range want {
				if i != mid {
					fmt.Fprintf(&b, "%d %d\n", c[0], c[1])
				}
			}
			if len(q[FieldBefore]) > 0 {
				continue // a plain trace of one operation cannot stand for case 9's two
			}
			q.Set(FieldTrace, upload([]byte(b.String())))
			got = runTraced{}
			if code := ts.get(t, "/api/images/demo/run?"+q.Encode(), &got); code != http.StatusOK {
				t.Fatalf("case %s %s, call dropped: %d %s", n, x.mode, code, got.Error)
			}
			tr := got.Results[0].Trace
			if d := tr.FirstDivergence; tr.Agree || d == nil || d.Index != mid || d.Model == nil || *d.Model != want[mid] ||
				d.Slot == nil || d.Chunk == nil || d.Dnode == "" || tr.Calls != len(want)-1 {
				t.Errorf("case %s %s, call %d dropped: %+v %+v", n, x.mode, mid, tr, d)
			}
		}
	}

	// Both modes against a stock trace: per-block agrees, batched diverges at the first run.
	q := caseQuery(t, "9", "both")
	q.Set(FieldTrace, upload(readCase(t, "9.ftrace")))
	var got runTraced
	if code := ts.get(t, "/api/images/demo/run?"+q.Encode(), &got); code != http.StatusOK || len(got.Results) != 2 {
		t.Fatalf("both modes: %d %s", code, got.Error)
	}
	if pb, b := got.Results[0].Trace, got.Results[1].Trace; !pb.Agree || b.Agree || b.FirstDivergence.Index != 0 || *b.FirstDivergence.Model != [2]uint32{22656, 128} {
		t.Errorf("both modes: per-block %+v, batched %+v", pb, b.FirstDivergence)
	}
	// Case 9's first operation, named explicitly.
	op1 := url.Values{"path": {"/cases/contiguous.bin"}, "offset": {"1048576"}, "length": {"1048576"}, "mode": {"batched"},
		FieldTrace: {upload(readCase(t, "9.ftrace.batched"))}, FieldTraceOp: {"1"}}
	got = runTraced{}
	if code := ts.get(t, "/api/images/demo/run?"+op1.Encode(), &got); code != http.StatusOK || !got.Results[0].Trace.Agree || got.Results[0].Trace.Op != 1 {
		t.Errorf("traceOp=1: %d %s %+v", code, got.Error, got.Results)
	}
	// Without a trace nothing changes.
	res, err := http.Get(ts.ts.URL + "/api/images/demo/run?path=/cases/contiguous.bin&mode=batched")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK || bytes.Contains(body, []byte(`"trace"`)) {
		t.Errorf("run without a trace: %d, %.200s", res.StatusCode, body)
	}
	for _, x := range []struct {
		name string
		q    url.Values
		code int
	}{
		{"unknown trace", url.Values{"path": {"/cases/contiguous.bin"}, FieldTrace: {"00000000000000000000"}}, 404},
		{"traceOp out of range", url.Values{"path": {"/cases/contiguous.bin"}, FieldTrace: op1[FieldTrace], FieldTraceOp: {"3"}}, 400},
		{"two ops, one run, no traceOp", url.Values{"path": {"/cases/contiguous.bin"}, FieldTrace: op1[FieldTrace]}, 400},
	} {
		var e runTraced
		if code := ts.get(t, "/api/images/demo/run?"+x.q.Encode(), &e); code != x.code || e.Error == "" {
			t.Errorf("%s: %d %q, want %d", x.name, code, e.Error, x.code)
		}
	}
}

// TestWSTrace attaches every kernel case's traces to the player (&trace=ID, both modes): each agrees
// with the mode its kernel ran, and at the end the kernel's calls beside the model's are the same;
// a trace with its middle call dropped diverges, and the divergence's step is where the model makes
// that call.
func TestWSTrace(t *testing.T) {
	t.Parallel()
	ts := mustOpenServer(t, Config{})
	upload := func(body []byte) string {
		var ans traceAnswer
		if code := ts.postTrace(t, DemoID, body, false, &ans); code != http.StatusCreated {
			t.Fatalf("upload: %d %s", code, ans.Error)
		}
		return ans.ID
	}
	for _, n := range []string{"1", "2", "5", "6", "8", "9", "12"} {
		for _, log := range []string{n + ".ftrace", n + ".ftrace.batched"} {
			q := caseQuery(t, n, "both")
			q.Set("image", DemoID)
			q.Set(FieldTrace, upload(readCase(t, log)))
			w := ts.dialWS(t, q.Encode())
			h := w.readType("hello")
			var tr struct {
				Mode  string `json:"mode"`
				Agree bool   `json:"agree"`
				Calls int    `json:"calls"`
				Step  int64  `json:"step"`
			}
			raw, _ := json.Marshal(h.Trace)
			json.Unmarshal(raw, &tr)
			wantMode := "per-block"
			if strings.HasSuffix(log, "batched") && len(traceCalls(t, n+".trace.batched")) < len(traceCalls(t, n+".trace")) {
				wantMode = "batched"
			}
			if h.Trace == nil || !tr.Agree || tr.Step != -1 || (tr.Mode != wantMode && tr.Calls > 0) {
				t.Fatalf("case %s %s: trace %s", n, log, raw)
			}
			w.send(ctl{"type": "end"})
			f := w.readType("frame")
			st := f.mode(tr.Mode)
			if f.Kernel == nil || len(f.Kernel.Calls) != len(st.Calls) {
				t.Fatalf("case %s %s: kernel beside %+v, model %d calls", n, log, f.Kernel, len(st.Calls))
			}
			for i, c := range st.Calls {
				k := f.Kernel.Calls[i]
				if k == nil || k.Start != c.Start || k.Len != c.Len {
					t.Fatalf("case %s %s: call %d: kernel %+v, model %+v", n, log, f.Kernel.First+uint64(i), k, c)
				}
			}
		}
	}
	// Case 1 per-block with its middle call dropped: the divergence is marked at the step where
	// the model makes call 8192.
	calls := traceCalls(t, "1.trace")
	var b strings.Builder
	for i, c := range calls {
		if i != 8192 {
			fmt.Fprintf(&b, "%d\n", c[0])
		}
	}
	q := caseQuery(t, "1", "both")
	q.Set("image", DemoID)
	q.Set(FieldTrace, upload([]byte(b.String())))
	w := ts.dialWS(t, q.Encode())
	h := w.readType("hello")
	var tr struct {
		Agree bool  `json:"agree"`
		Step  int64 `json:"step"`
		First struct {
			Index int `json:"index"`
		} `json:"firstDivergence"`
	}
	raw, _ := json.Marshal(h.Trace)
	json.Unmarshal(raw, &tr)
	if tr.Agree || tr.First.Index != 8192 || tr.Step <= 0 {
		t.Fatalf("dropped call: %s", raw)
	}
	for _, step := range []int64{tr.Step - 1, tr.Step} {
		w.send(ctl{"type": "seek", "step": step})
		f := w.readType("frame")
		got := f.mode("per-block").Counters.Calls
		if want := uint64(8192 + step - tr.Step + 1); got != want {
			t.Fatalf("at step %d the per-block model has made %d calls, want %d", step, got, want)
		}
	}
}
