package web

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/zrviz/zrviz/imgio"
	"github.com/zrviz/zrviz/internal/imgedit"
	"github.com/zrviz/zrviz/internal/testutil"
	"github.com/zrviz/zrviz/request"
)

// kernelSeqDir holds the kernel-written sequences (kernelCasesDir, traces_test.go, the 12 single
// cases).
const kernelSeqDir = "../core/testdata/kernel-seq"

// seqQuery is the player's query for an ops file: every operation but the last as before=, the
// last (a zero) played.
func seqQuery(t *testing.T, opsFile, mode string) url.Values {
	t.Helper()
	b, err := os.ReadFile(opsFile)
	if err != nil {
		t.Fatal(err)
	}
	ops, err := request.ParseOps(strings.NewReader(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	last := ops[len(ops)-1]
	if !last.IsZero() {
		t.Fatalf("%s: the last operation is %s, not a zero the player plays", opsFile, last.Kind)
	}
	q := url.Values{"path": {last.Path}, "offset": {strconv.FormatInt(last.Offset, 10)},
		"length": {strconv.FormatInt(last.Length, 10)}, "mode": {mode}}
	if last.KeepSize {
		q.Set("keepSize", "true")
	}
	for _, op := range ops[:len(ops)-1] {
		q.Add(FieldBefore, op.OpLine(0))
	}
	return q
}

// addKernelImage stores a zstd image (a kernel's after-image) as id, optionally edited first.
func addKernelImage(t testing.TB, ts *testServer, id, zst string, edit func(e imgedit.Editor)) {
	t.Helper()
	b := imgedit.Copy(t, zst)
	if edit != nil {
		imgedit.Edit(t, b, edit)
	}
	img, err := imgio.OpenFileContext(context.Background(), b, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { img.Close() })
	if _, err := ts.AddImage(id, filepath.Base(zst), img); err != nil {
		t.Fatal(err)
	}
}

// afterCheck asks the server to hold image after against the run q names on the demo.
func afterCheck(t *testing.T, ts *testServer, after string, q url.Values) (int, afterCheckBody, string) {
	t.Helper()
	q = cloneValues(q)
	q.Set(FieldAfter, after)
	var body struct {
		afterCheckBody
		Error string `json:"error"`
	}
	code := ts.get(t, "/api/images/demo/aftercheck?"+q.Encode(), &body)
	return code, body.afterCheckBody, body.Error
}

func cloneValues(q url.Values) url.Values {
	c := url.Values{}
	for k, v := range q {
		c[k] = append([]string(nil), v...)
	}
	return c
}

// TestAfterCheckKernelImages: the kernel's own after-images agree with the model of the run the
// player's query names, in both modes — single zeros (plain, partial pages written back, keep_size,
// a second zero over the first) and sequences with fsync, sync and tune before the played zero.
func TestAfterCheckKernelImages(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: a copy of a 256 MiB image per after-image")
	}
	ts := mustOpenServer(t, Config{})
	type fixture struct{ name, ops, stock, batched string }
	var fx []fixture
	for _, n := range []string{"3", "4", "6", "9"} {
		fx = append(fx, fixture{"case" + n, filepath.Join(kernelCasesDir, n+".ops"),
			filepath.Join(kernelCasesDir, n+".after.img.zst"), filepath.Join(kernelCasesDir, n+".after.batched.img.zst")})
	}
	for _, d := range []string{"b-holes-partial-sync", "c2-data-partial-fsync", "d-ipu16-holes-partial"} {
		dir := filepath.Join(kernelSeqDir, d)
		fx = append(fx, fixture{d, filepath.Join(dir, "ops"), filepath.Join(dir, "after.img.zst"), filepath.Join(dir, "after.batched.img.zst")})
	}
	for _, f := range fx {
		for _, m := range []struct{ mode, img string }{{"per-block", f.stock}, {"batched", f.batched}} {
			t.Run(f.name+"/"+m.mode, func(t *testing.T) {
				id := f.name + "-" + m.mode
				addKernelImage(t, ts, id, m.img, nil)
				q := seqQuery(t, f.ops, m.mode)
				code, body, msg := afterCheck(t, ts, id, q)
				if code != http.StatusOK {
					t.Fatalf("status %d: %s", code, msg)
				}
				if len(body.Modes) != 1 || body.Modes[0].Mode != m.mode {
					t.Fatalf("modes %+v, want one report for %s", body.Modes, m.mode)
				}
				rep := body.Modes[0]
				if !rep.Agree || rep.Total != 0 || len(rep.Differences) != 0 {
					t.Errorf("%d differences, first %+v", rep.Total, rep.Differences[:min(3, len(rep.Differences))])
				}
				// The unmount rewrote the zeroed file's inode: explained, with its function.
				cow := false
				for _, x := range rep.Explained {
					if x.Func == "" || x.Text == "" {
						t.Errorf("an explanation without its function or words: %+v", x)
					}
					cow = cow || x.Kind == "node-cow"
				}
				if !cow {
					t.Errorf("no node-cow explained: %+v", rep.Explained)
				}
				if want := len(q[FieldBefore]) + 1; len(body.Ops) != want {
					t.Errorf("ops %q, want %d", body.Ops, want)
				}
			})
		}
	}
}

// TestAfterCheckDoctored: case 6's stock after-image (/cases/fragmented.bin, inode 30, 256 blocks
// from 5634 zeroed), doctored, is reported with the segment and bit, the slot, the field.
func TestAfterCheckDoctored(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: copies of a 256 MiB image")
	}
	ts := mustOpenServer(t, Config{})
	q := seqQuery(t, filepath.Join(kernelCasesDir, "6.ops"), "both")
	zst := filepath.Join(kernelCasesDir, "6.after.img.zst")
	// Block 5634, file block 0, freed by the zero: segment 3, bit 2 (the main area starts at 4096).
	const main = 4096
	const freed = 5634
	addKernelImage(t, ts, "bit", zst, func(e imgedit.Editor) {
		if err := e.SetBlockValid(freed, true); err != nil {
			t.Fatal(err)
		}
	})
	addKernelImage(t, ts, "slot", zst, func(e imgedit.Editor) {
		if err := e.SetSlot(30, 5, freed); err != nil {
			t.Fatal(err)
		}
	})
	addKernelImage(t, ts, "size", zst, func(e imgedit.Editor) {
		if err := e.SetInode(30, imgedit.ISize, 4096); err != nil {
			t.Fatal(err)
		}
	})
	for _, c := range []struct {
		id, what string
		check    func(afterDifference) bool
	}{
		{"bit", "sit-bit", func(d afterDifference) bool {
			return *d.Segno == (freed-main)/512 && *d.Bit == (freed-main)%512 && d.Model == "clear" && d.Image == "set"
		}},
		{"slot", "slot", func(d afterDifference) bool {
			return d.Ino == 30 && *d.Index == 5 && d.Model == "NEW" && d.Image == "5634" && strings.HasPrefix(d.Field, "i_addr[")
		}},
		{"size", "i_size", func(d afterDifference) bool { return d.Model != "4096" && d.Image == "4096" }},
	} {
		t.Run(c.id, func(t *testing.T) {
			code, body, msg := afterCheck(t, ts, c.id, q)
			if code != http.StatusOK {
				t.Fatalf("status %d: %s", code, msg)
			}
			if len(body.Modes) != 2 {
				t.Fatalf("%d reports, want one per mode of a run in both", len(body.Modes))
			}
			for _, rep := range body.Modes {
				found := false
				for _, d := range rep.Differences {
					if d.What == c.what && c.check(d) {
						found = true
					}
				}
				if rep.Agree || !found {
					t.Errorf("%s: agree %v, differences %+v: want the %s named", rep.Mode, rep.Agree, rep.Differences, c.what)
				}
			}
		})
	}
	// The before-image itself: every zeroed slot and freed bit differs.
	code, body, _ := afterCheck(t, ts, "demo", q)
	if code != http.StatusOK || body.Modes[0].Agree || body.Modes[0].Total != 512 {
		t.Errorf("the before-image as after-image: status %d, %+v", code, body.Modes)
	}
}

// afterDifference is afterck.Difference as the API sends it.
type afterDifference = struct {
	What  string  `json:"what"`
	File  string  `json:"file,omitempty"`
	Ino   uint32  `json:"ino,omitempty"`
	Index *uint64 `json:"index,omitempty"`
	Field string  `json:"field,omitempty"`
	Segno *uint32 `json:"segno,omitempty"`
	Bit   *int    `json:"bit,omitempty"`
	Addr  *uint32 `json:"addr,omitempty"`
	Nid   *uint32 `json:"nid,omitempty"`
	Model string  `json:"model"`
	Image string  `json:"image"`
}

// TestAfterCheckRefusals: what the check refuses, with a status and a message that says why.
func TestAfterCheckRefusals(t *testing.T) {
	ts := mustOpenServer(t, Config{})
	mkfs := testutil.NeedTool(t, "mkfs.f2fs")
	other := filepath.Join(t.TempDir(), "other.img")
	if err := os.WriteFile(other, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(other, 64<<20); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(mkfs, "-q", "-f", other).CombinedOutput(); err != nil {
		t.Fatalf("mkfs.f2fs: %v\n%s", err, out)
	}
	img, err := imgio.OpenFileContext(context.Background(), other, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { img.Close() })
	if _, err := ts.AddImage("other", "other.img", img); err != nil {
		t.Fatal(err)
	}
	run := url.Values{"path": {"/cases/fragmented.bin"}, "offset": {"0"}, "length": {"1048576"}}
	for _, c := range []struct {
		name  string
		after string
		q     url.Values
		code  int
		msg   string
	}{
		{"another filesystem", "other", run, http.StatusUnprocessableEntity, "not an after-image of this image"},
		{"no after", "", run, http.StatusBadRequest, "after"},
		{"unknown after", "nothere", run, http.StatusNotFound, "nothere"},
		{"sandbox", "demo", url.Values{"sandbox": {"1,2,3"}}, http.StatusBadRequest, "sandbox"},
		{"bad before", "demo", url.Values{"path": {"/cases/fragmented.bin"}, FieldBefore: {"frobnicate"}}, http.StatusBadRequest, "before"},
		{"unknown path", "demo", url.Values{"path": {"/nothere"}}, http.StatusNotFound, "/nothere"},
	} {
		t.Run(c.name, func(t *testing.T) {
			q := cloneValues(c.q)
			if c.after != "" {
				q.Set(FieldAfter, c.after)
			}
			var e errorBody
			code := ts.get(t, "/api/images/demo/aftercheck?"+q.Encode(), &e)
			if code != c.code || !strings.Contains(e.Error, c.msg) {
				t.Errorf("status %d %q, want %d and %q", code, e.Error, c.code, c.msg)
			}
		})
	}
}

// BenchmarkAfterCheck measures one check of the player's run on the demo (case 6, both modes)
// against the kernel's after-image: the model's sequence and unmount per mode, the NAT and SIT
// compared.
func BenchmarkAfterCheck(b *testing.B) {
	ts := mustOpenServer(b, Config{Logger: slog.New(slog.DiscardHandler)})
	addKernelImage(b, ts, "k6", filepath.Join(kernelCasesDir, "6.after.img.zst"), nil)
	q := url.Values{"path": {"/cases/fragmented.bin"}, "offset": {"0"}, "length": {"1048576"}, "mode": {"both"}, FieldAfter: {"k6"}}
	h := ts.Handler()
	b.ReportAllocs()
	for b.Loop() {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", "http://127.0.0.1/api/images/demo/aftercheck?"+q.Encode(), nil))
		if w.Code != http.StatusOK {
			b.Fatalf("status %d: %s", w.Code, w.Body)
		}
	}
}

// BenchmarkWriteback measures the writeback events of kernel sequence d (tune ipu_policy 16, a zero
// that dirties two pages, the played zero over them).
func BenchmarkWriteback(b *testing.B) {
	ts := mustOpenServer(b, Config{Logger: slog.New(slog.DiscardHandler)})
	q := url.Values{"path": {"/cases/holes.bin"}, "offset": {"0"}, "length": {"524288"},
		FieldBefore: {"tune ipu_policy 16", "zero /cases/holes.bin 67584 195560"}}
	h := ts.Handler()
	b.ReportAllocs()
	for b.Loop() {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", "http://127.0.0.1/api/images/demo/writeback?"+q.Encode(), nil))
		if w.Code != http.StatusOK {
			b.Fatalf("status %d: %s", w.Code, w.Body)
		}
	}
}
