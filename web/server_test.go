package web

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/zrviz/zrviz/internal/testutil"

	"github.com/zrviz/zrviz/imgio"
)

// demoZst is the embedded demo image as shipped (zstd).
const demoZst = "../imgio/demo/demo.img.zst"

// demoSize is the expanded demo image's size.
const demoSize = 268435456

// testServer is a server with the demo image, behind an httptest server.
type testServer struct {
	*Server
	ts *httptest.Server
}

// mustOpenServer starts a server holding the embedded demo as "demo". It is
// closed when the test ends.
func mustOpenServer(tb testing.TB, cfg Config) *testServer {
	tb.Helper()
	if cfg.DataDir == "" {
		cfg.DataDir = tb.TempDir()
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(tlogWriter{tb}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	s, err := NewServer(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	img, err := imgio.OpenFileContext(context.Background(), testutil.DemoImage(tb), nil)
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := s.AddImage(DemoID, "demo.img", img); err != nil {
		tb.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	tb.Cleanup(func() {
		// Server.Close first: it ends the websocket runs, which
		// httptest.Server.Close would otherwise wait for.
		if err := s.Close(); err != nil {
			tb.Error(err)
		}
		ts.Close()
	})
	return &testServer{Server: s, ts: ts}
}

// tlogWriter sends server logs to the test log (logf = t.Logf).
type tlogWriter struct{ tb testing.TB }

func (w tlogWriter) Write(p []byte) (int, error) {
	w.tb.Logf("%s", bytes.TrimRight(p, "\n"))
	return len(p), nil
}

// get fetches path and decodes the JSON body into v (when non-nil); it
// returns the status.
func (ts *testServer) get(tb testing.TB, path string, v any) int {
	tb.Helper()
	res, err := http.Get(ts.ts.URL + path)
	if err != nil {
		tb.Fatal(err)
	}
	defer res.Body.Close()
	return decode(tb, res, v)
}

// decode checks that res is JSON and decodes it into v (when non-nil).
func decode(tb testing.TB, res *http.Response, v any) int {
	tb.Helper()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		tb.Fatal(err)
	}
	if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		tb.Fatalf("%s %s: status %d, Content-Type %q, body %.200s", res.Request.Method, res.Request.URL, res.StatusCode, ct, b)
	}
	if v != nil {
		if err := json.Unmarshal(b, v); err != nil {
			tb.Fatalf("%s: %v in %.300s", res.Request.URL, err, b)
		}
	}
	return res.StatusCode
}

// demoRaw streams the expanded demo image (the raw copy the tests share, testutil.DemoImage).
func demoRaw(tb testing.TB) io.Reader {
	tb.Helper()
	f, err := os.Open(testutil.DemoImage(tb))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { f.Close() })
	return f
}

// post sends body to the upload endpoint (query appended) and decodes the answer.
func (ts *testServer) post(tb testing.TB, query string, body io.Reader, size int64, contentType string, v any) int {
	tb.Helper()
	req, err := http.NewRequest(http.MethodPost, ts.ts.URL+"/api/images"+query, body)
	if err != nil {
		tb.Fatal(err)
	}
	req.ContentLength = size
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer res.Body.Close()
	return decode(tb, res, v)
}

// dirFiles lists the names in dir.
func dirFiles(tb testing.TB, dir string) []string {
	tb.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		tb.Fatal(err)
	}
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out
}

func TestListAndInspect(t *testing.T) {
	t.Parallel()
	ts := mustOpenServer(t, Config{})
	var list []imageInfo
	if code := ts.get(t, "/api/images", &list); code != 200 || len(list) != 1 || list[0].ID != DemoID || list[0].Size != demoSize {
		t.Fatalf("GET /api/images = %d %+v", code, list)
	}
	var in struct {
		ID     string       `json:"id"`
		Volume imgio.Volume `json:"volume"`
		Files  []imgio.Entry
	}
	if code := ts.get(t, "/api/images/demo", &in); code != 200 {
		t.Fatalf("inspect: %d", code)
	}
	if in.Volume.BlockSize != 4096 || in.Volume.MainBlkaddr != 4096 || in.Volume.MainSegmentCount != 120 {
		t.Errorf("volume = %+v", in.Volume)
	}
	found := false
	for _, e := range in.Files {
		if e.Path == "/seed/bench64.bin" {
			found = e.Ino == 10 && e.Size == 67108864 && e.Type == "file"
		}
	}
	if !found || in.Files[0].Path != "/" {
		t.Errorf("files: /seed/bench64.bin (ino 10) missing or wrong, or / not first: %d entries", len(in.Files))
	}
}

func TestErrors(t *testing.T) {
	t.Parallel()
	ts := mustOpenServer(t, Config{})
	tests := []struct {
		path string
		code int
		msg  string // substring of the error message
	}{
		{"/api/images/nope", 404, `image "nope" not found`},
		{"/api/images/nope/map?path=/seed/bench64.bin", 404, "not found"},
		{"/api/images/demo/map", 400, "path"},
		{"/api/images/demo/map?path=seed/bench64.bin", 400, "absolute"},
		{"/api/images/demo/map?path=/nope.bin", 404, `"/nope.bin" not found`},
		{"/api/images/demo/dnodes?path=/seed/missing", 404, "not found"},
		{"/api/images/demo/segments/abc", 400, "segno"},
		{"/api/images/demo/segments/120", 404, "segment"},
		{"/api/images/demo/segments/-1", 400, "segno"},
		{"/api/images/demo/run?path=/seed/bench64.bin&offset=x", 400, "offset"},
		{"/api/images/demo/run?path=/seed/bench64.bin&length=1.5", 400, "length"},
		{"/api/images/demo/run?path=/seed/bench64.bin&mode=sideways", 400, "mode"},
		{"/api/images/demo/run?path=/seed/bench64.bin&keepSize=maybe", 400, "keepSize"},
		{"/api/images/demo/run?path=/nope", 404, "not found"},
		{"/api/uploads/nope", 404, "upload"},
		{"/api/nothing", 404, "not found"},
		{"/ws/run?image=demo&path=/seed/bench64.bin", 426, "websocket"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			var body errorBody
			code := ts.get(t, tt.path, &body)
			if code != tt.code || codes[body.Code] != tt.code || !strings.Contains(body.Error, tt.msg) {
				t.Fatalf("GET %s = %d %s %q; want %d containing %q", tt.path, code, body.Code, body.Error, tt.code, tt.msg)
			}
		})
	}
}

func TestMapDnodesSegments(t *testing.T) {
	t.Parallel()
	ts := mustOpenServer(t, Config{})
	var m mapBody
	if code := ts.get(t, "/api/images/demo/map?path=/seed/bench64.bin", &m); code != 200 {
		t.Fatalf("map: %d", code)
	}
	want := []imgio.Extent{
		{Index: 0, Count: 512, State: "addr", Addr: 34304},
		{Index: 512, Count: 12800, State: "addr", Addr: 6144},
		{Index: 13312, Count: 3072, State: "addr", Addr: 19456},
	}
	if m.Ino != 10 || m.Size != 67108864 || fmt.Sprint(m.Extents) != fmt.Sprint(want) {
		t.Errorf("map = ino %d size %d %+v; want ino 10, %+v", m.Ino, m.Size, m.Extents, want)
	}

	var d dnodesBody
	if code := ts.get(t, "/api/images/demo/dnodes?path=/seed/bench64.bin", &d); code != 200 {
		t.Fatalf("dnodes: %d", code)
	}
	if len(d.Dnodes) != 17 || d.AddrsPerInode != 873 || d.Dnodes[0].Kind != "inode" || d.Dnodes[1].Path != "i_nid[0]" {
		t.Errorf("dnodes: %d nodes, addrsPerInode %d, first %+v", len(d.Dnodes), d.AddrsPerInode, d.Dnodes[:min(2, len(d.Dnodes))])
	}

	var segs segmentsBody
	if code := ts.get(t, "/api/images/demo/segments", &segs); code != 200 {
		t.Fatalf("segments: %d", code)
	}
	if len(segs.Segments) != 120 || segs.BlocksPerSeg != 512 {
		t.Fatalf("segments: %d, %d blocks each", len(segs.Segments), segs.BlocksPerSeg)
	}
	// bench64's first run, 34304..34815, fills segment (34304-4096)/512 = 59.
	if sg := segs.Segments[59]; sg.Segno != 59 || sg.Valid != 512 {
		t.Errorf("segment 59 = %+v, want 512 valid", sg)
	}
	var one segmentBody
	if code := ts.get(t, "/api/images/demo/segments/59", &one); code != 200 {
		t.Fatalf("segment 59: %d", code)
	}
	if one.Valid != 512 || one.Bits != strings.Repeat("1", 512) || one.Map != strings.Repeat("f", 128) || one.StartAddr != 34304 {
		t.Errorf("segment 59 = valid %d start %d map %s", one.Valid, one.StartAddr, one.Map)
	}
}

func TestUploadRawMultipartSameID(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: two raw uploads of the 128 MiB demo")
	}
	t.Parallel()
	ts := mustOpenServer(t, Config{})

	// Multipart, field "image": its file name (base only) names the image.
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	go func() {
		err := mw.WriteField("comment", "a field before the image is skipped")
		var w io.Writer
		if err == nil {
			w, err = mw.CreateFormFile("image", `C:\images\mine.img`)
		}
		if err == nil {
			_, err = io.Copy(w, demoRaw(t))
		}
		if err == nil {
			err = mw.Close()
		}
		pw.CloseWithError(err)
	}()
	var up1 uploadBody
	if code := ts.post(t, "?token=tok-mp", pr, -1, mw.FormDataContentType(), &up1); code != 201 {
		t.Fatalf("multipart upload: %d %+v", code, up1)
	}
	if len(up1.ID) != 12 || up1.Name != "mine.img" || up1.Size != demoSize || up1.Format != imgio.FormatRaw {
		t.Fatalf("multipart upload = %+v", up1)
	}
	var prog progressBody
	if code := ts.get(t, "/api/uploads/tok-mp", &prog); code != 200 || prog.Phase != phaseDone || prog.Read != demoSize || prog.ID != up1.ID {
		t.Fatalf("progress = %d %+v", code, prog)
	}

	// The same bytes as a raw body: the same id, 200 not 201.
	var up2 uploadBody
	if code := ts.post(t, "?name=again.img", demoRaw(t), demoSize, "application/octet-stream", &up2); code != 200 {
		t.Fatalf("raw upload of the same image: %d %+v", code, up2)
	}
	if up2.ID != up1.ID {
		t.Fatalf("same content, ids %s and %s", up1.ID, up2.ID)
	}

	var list []imageInfo
	ts.get(t, "/api/images", &list)
	if len(list) != 2 || list[0].ID != DemoID || list[1].ID != up1.ID {
		t.Fatalf("list after uploads = %+v", list)
	}
	// The uploaded image answers like the demo.
	var m mapBody
	if code := ts.get(t, "/api/images/"+up1.ID+"/map?path=/cases/contiguous.bin", &m); code != 200 || len(m.Extents) != 1 || m.Extents[0].Addr != 22528 {
		t.Fatalf("map on the upload = %d %+v", code, m)
	}
}

func TestUploadCompressed(t *testing.T) {
	t.Parallel()
	ts := mustOpenServer(t, Config{})
	tests := []struct {
		name   string
		format imgio.Format
		body   func(t *testing.T) io.Reader
	}{
		{"zstd", imgio.FormatZstd, func(t *testing.T) io.Reader {
			f, err := os.Open(demoZst)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { f.Close() })
			return f
		}},
		{"gzip", imgio.FormatGzip, func(t *testing.T) io.Reader {
			pr, pw := io.Pipe()
			go func() {
				zw, _ := gzip.NewWriterLevel(pw, gzip.BestSpeed)
				_, err := io.Copy(zw, demoRaw(t))
				if err == nil {
					err = zw.Close()
				}
				pw.CloseWithError(err)
			}()
			return pr
		}},
		{"android-sparse", imgio.FormatAndroidSparse, func(t *testing.T) io.Reader {
			tool := testutil.NeedTool(t, "img2simg") // android-sdk-libsparse-utils
			dir := t.TempDir()
			// The shared raw demo is a sparse file; img2simg reads it in place.
			raw, simg := testutil.DemoImage(t), filepath.Join(dir, "demo.simg")
			if out, err := exec.Command(tool, raw, simg).CombinedOutput(); err != nil {
				t.Fatalf("img2simg: %v\n%s", err, out)
			}
			g, err := os.Open(simg)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { g.Close() })
			return g
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var up uploadBody
			if code := ts.post(t, "?name=demo."+tt.name, tt.body(t), -1, "", &up); code != 201 {
				t.Fatalf("upload: %d %+v", code, up)
			}
			if up.Format != tt.format || up.Size != demoSize {
				t.Fatalf("upload = %+v, want format %s, size %d", up, tt.format, demoSize)
			}
			var m mapBody
			if code := ts.get(t, "/api/images/"+up.ID+"/map?path=/seed/bench64.bin", &m); code != 200 || len(m.Extents) != 3 {
				t.Fatalf("map on the upload = %d %+v", code, m)
			}
		})
	}
}

func TestUploadRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ts := mustOpenServer(t, Config{MaxUpload: 1 << 20, DataDir: dir})
	before := dirFiles(t, dir)

	// Declared too large: refused before reading.
	var body errorBody
	if code := ts.post(t, "", demoRaw(t), demoSize, "", &body); code != 413 || !strings.Contains(body.Error, "1 MiB") {
		t.Fatalf("declared too large: %d %q", code, body.Error)
	}
	// Streamed (no length) past the limit.
	if code := ts.post(t, "?token=big", io.LimitReader(demoRaw(t), 3<<20), -1, "", &body); code != 413 || !strings.Contains(body.Error, "1 MiB") {
		t.Fatalf("streamed too large: %d %q", code, body.Error)
	}
	var prog progressBody
	if code := ts.get(t, "/api/uploads/big", &prog); code != 200 || prog.Phase != phaseError || prog.Error == "" {
		t.Fatalf("progress of a refused upload = %d %+v", code, prog)
	}
	// Not F2FS at all.
	if code := ts.post(t, "", bytes.NewReader(bytes.Repeat([]byte("zrviz"), 100000)), -1, "", &body); code != 400 || !strings.Contains(body.Error, "not an F2FS image") {
		t.Fatalf("not F2FS: %d %q", code, body.Error)
	}
	// Empty: said so, not where a superblock was looked for.
	if code := ts.post(t, "", bytes.NewReader(nil), 0, "", &body); code != 400 || body.Error != "the upload is empty (0 bytes)" {
		t.Fatalf("empty upload: %d %q, want 400 %q", code, body.Error, "the upload is empty (0 bytes)")
	}
	// A raw image cut short: where it ends, what is cut and where the volume ends, in words.
	want := "bad image: upload.img: imgio: truncated image: it ends at byte 524,288, inside the superblock area (bytes 0 to 2,097,152); " +
		"the superblock's block_count (65,536 blocks of 4,096 bytes) needs bytes up to 268,435,456"
	if code := ts.post(t, "", io.LimitReader(demoRaw(t), 512<<10), -1, "", &body); code != 400 || body.Error != want {
		t.Fatalf("truncated image: %d %q, want 400 %q", code, body.Error, want)
	}
	// A truncated gzip stream.
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	io.Copy(zw, io.LimitReader(demoRaw(t), 1<<20))
	zw.Close()
	if code := ts.post(t, "", bytes.NewReader(gz.Bytes()[:gz.Len()/2]), -1, "", &body); code != 400 || body.Error == "" {
		t.Fatalf("truncated gzip: %d %q", code, body.Error)
	}
	// Multipart without the image field.
	var mp bytes.Buffer
	mw := multipart.NewWriter(&mp)
	mw.WriteField("other", "x")
	mw.Close()
	if code := ts.post(t, "", &mp, int64(mp.Len()), mw.FormDataContentType(), &body); code != 400 || !strings.Contains(body.Error, `"image"`) {
		t.Fatalf("multipart without image: %d %q", code, body.Error)
	}
	// A bad token.
	if code := ts.post(t, "?token=a/b", strings.NewReader("x"), 1, "", &body); code != 400 || !strings.Contains(body.Error, "token") {
		t.Fatalf("bad token: %d %q", code, body.Error)
	}

	var list []imageInfo
	ts.get(t, "/api/images", &list)
	if len(list) != 1 {
		t.Fatalf("refused uploads were listed: %+v", list)
	}
	if after := dirFiles(t, dir); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatalf("data dir before %v, after refused uploads %v: partial files left", before, after)
	}
}

func TestCloseRemovesData(t *testing.T) {
	t.Parallel()
	s, err := NewServer(Config{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Open(); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(s.URL(), "http://127.0.0.1:") {
		t.Fatalf("URL = %q", s.URL())
	}
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, s.URL()+"/api/images", demoRaw(t))
	req.ContentLength = demoSize
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 201 {
		t.Fatalf("upload: %d", res.StatusCode)
	}
	dir := s.dataDir
	if len(dirFiles(t, dir)) == 0 {
		t.Fatal("upload left nothing in the data dir")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("data dir %s after Close: %v", dir, err)
	}
	if _, err := http.Get(s.URL() + "/api/images"); err == nil {
		t.Fatal("server still answers after Close")
	}
	img, err := imgio.OpenDemo(&imgio.Options{TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer img.Close()
	if _, err := s.AddImage("late", "late.img", img); err == nil {
		t.Fatal("AddImage after Close succeeded")
	}
}

// gateReader serves r, but stops after n bytes until gate is closed.
type gateReader struct {
	r    io.Reader
	n    int64
	gate chan struct{}
}

func (g *gateReader) Read(p []byte) (int, error) {
	if g.n <= 0 {
		<-g.gate
		return g.r.Read(p)
	}
	if int64(len(p)) > g.n {
		p = p[:g.n]
	}
	k, err := g.r.Read(p)
	g.n -= int64(k)
	return k, err
}

// TestUploadProgress: while a zstd upload is half received, the progress
// endpoint reports it as expanding, with bytes read and written.
func TestUploadProgress(t *testing.T) {
	t.Parallel()
	ts := mustOpenServer(t, Config{})
	zst, err := os.ReadFile(demoZst)
	if err != nil {
		t.Fatal(err)
	}
	gate := make(chan struct{})
	body := &gateReader{r: bytes.NewReader(zst), n: int64(len(zst) / 2), gate: gate}
	done := make(chan int, 1)
	go func() {
		var up uploadBody
		req, _ := http.NewRequest(http.MethodPost, ts.ts.URL+"/api/images?token=half", body)
		req.ContentLength = int64(len(zst))
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			done <- -1
			return
		}
		defer res.Body.Close()
		json.NewDecoder(res.Body).Decode(&up)
		done <- res.StatusCode
	}()
	var prog progressBody
	eventually(t, 30*time.Second, "the progress shows the upload expanding", func() bool {
		return ts.get(t, "/api/uploads/half", &prog) == 200 && prog.Phase == phaseExpanding && prog.Written > 0
	})
	if prog.Total != int64(len(zst)) || prog.Read <= 0 || prog.Read > int64(len(zst))/2 {
		t.Fatalf("half-way progress = %+v (upload %d bytes)", prog, len(zst))
	}
	var list []imageInfo
	ts.get(t, "/api/images", &list)
	if len(list) != 1 {
		t.Fatalf("an image still uploading is listed: %+v", list)
	}
	close(gate)
	if code := <-done; code != 201 {
		t.Fatalf("upload finished with %d", code)
	}
	if code := ts.get(t, "/api/uploads/half", &prog); code != 200 || prog.Phase != phaseDone || prog.Written != demoSize || prog.ID == "" {
		t.Fatalf("final progress = %d %+v", code, prog)
	}
}

func TestMethodNotAllowed(t *testing.T) {
	t.Parallel()
	ts := mustOpenServer(t, Config{})
	for _, path := range []string{"/api/images/demo", "/api/images/demo/run"} {
		res, err := http.Post(ts.ts.URL+path, "application/json", strings.NewReader("{}"))
		if err != nil {
			t.Fatal(err)
		}
		var body errorBody
		code := decode(t, res, &body)
		res.Body.Close()
		if code != http.StatusMethodNotAllowed || body.Error == "" {
			t.Fatalf("POST %s = %d %q", path, code, body.Error)
		}
	}
}

// TestMapFollowsSymlinks: the map API finds a path as open(2) and the runs do, so a symbolic link's
// map is its target's (the fixture's /docs/contiguous.link → ../cases/contiguous.bin, one run at
// 22528).
func TestMapFollowsSymlinks(t *testing.T) {
	t.Parallel()
	ts := mustOpenServer(t, Config{})
	var m struct {
		Path    string `json:"path"`
		Extents []struct {
			Count uint64 `json:"count"`
			Addr  uint32 `json:"addr"`
		} `json:"extents"`
	}
	if code := ts.get(t, "/api/images/demo/map?path=/docs/contiguous.link", &m); code != 200 {
		t.Fatalf("map of a symlink: %d", code)
	}
	if m.Path != "/cases/contiguous.bin" || len(m.Extents) != 1 || m.Extents[0].Addr != 22528 || m.Extents[0].Count != 1024 {
		t.Fatalf("map of /docs/contiguous.link = %+v", m)
	}
}

// TestListingPages: GET /api/images/{id} pages through every path in walk order with ?after=&limit=,
// and /dir lists one directory a page at a time; together they give exactly the whole listing.
func TestListingPages(t *testing.T) {
	t.Parallel()
	ts := mustOpenServer(t, Config{})
	var whole inspectBody
	if code := ts.get(t, "/api/images/demo", &whole); code != 200 || len(whole.Files) < 40 || whole.Next != "" || len(whole.Problems) != 0 {
		t.Fatalf("whole listing: %d, %d files, next %q, problems %v", code, len(whole.Files), whole.Next, whole.Problems)
	}
	var paged []imgio.Entry
	after := ""
	for {
		var page inspectBody
		if code := ts.get(t, "/api/images/demo?limit=7&after="+url.QueryEscape(after), &page); code != 200 {
			t.Fatalf("page after %q: %d", after, code)
		}
		paged = append(paged, page.Files...)
		if page.Next == "" {
			break
		}
		if len(page.Files) != 7 || page.Next != page.Files[6].Path {
			t.Fatalf("page after %q: %d files, next %q", after, len(page.Files), page.Next)
		}
		after = page.Next
	}
	if !reflect.DeepEqual(paged, whole.Files) {
		t.Fatalf("pages give %d paths, the whole listing %d", len(paged), len(whole.Files))
	}
	var names []string
	after = ""
	for {
		var d dirBody
		if code := ts.get(t, "/api/images/demo/dir?path=/docs&limit=2&after="+url.QueryEscape(after), &d); code != 200 {
			t.Fatalf("dir page: %d", code)
		}
		for _, e := range d.Entries {
			names = append(names, e.Path)
		}
		if !d.More {
			break
		}
		after = d.Next
	}
	var want []string
	for _, e := range whole.Files {
		if path.Dir(e.Path) == "/docs" {
			want = append(want, e.Path)
		}
	}
	if !reflect.DeepEqual(names, want) {
		t.Fatalf("/docs by pages: %v, want %v", names, want)
	}
	for _, bad := range []string{"/api/images/demo?limit=0", "/api/images/demo?limit=100001", "/api/images/demo/dir?path=/docs&limit=1001"} {
		if code := ts.get(t, bad, nil); code != 400 {
			t.Errorf("%s: %d, want 400", bad, code)
		}
	}
	if code := ts.get(t, "/api/images/demo/dir?path=/nope", nil); code != 404 {
		t.Errorf("/dir of a missing path: %d", code)
	}
}
