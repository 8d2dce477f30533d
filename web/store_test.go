package web

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/zrviz/zrviz/imgio"
)

// fixtureVariant is the gzipped imgio fixture (basic, features, segs4) with variant written into
// its gzip header's FNAME field: new bytes, so a new upload id, for the same image.
func fixtureVariant(tb testing.TB, fixture, variant string) []byte {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join("..", "imgio", "testdata", fixture+".img.gz"))
	if err != nil {
		tb.Fatal(err)
	}
	if len(b) < 18 || b[3] != 0 {
		tb.Fatalf("%s: gzip header has flags %#x; the variant trick wants none", fixture, b[3])
	}
	out := append([]byte{}, b[:10]...)
	out[3] |= 0x08 // FNAME (RFC 1952 2.3.1)
	out = append(out, variant...)
	out = append(out, 0)
	return append(out, b[10:]...)
}

// logBuffer collects a server's log lines for assertions (and passes them to the test log).
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
	tb testing.TB
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.tb.Logf("%s", bytes.TrimRight(p, "\n"))
	return l.b.Write(p)
}

func (l *logBuffer) lines(substr string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, line := range strings.Split(l.b.String(), "\n") {
		if strings.Contains(line, substr) {
			out = append(out, line)
		}
	}
	return out
}

// openStoreServer starts a server on dir with a log buffer (no demo: only what the store holds).
func openStoreServer(tb testing.TB, cfg Config) (*testServer, *logBuffer) {
	tb.Helper()
	lb := &logBuffer{tb: tb}
	cfg.Logger = slog.New(slog.NewTextHandler(lb, &slog.HandlerOptions{Level: slog.LevelDebug}))
	s, err := NewServer(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	tb.Cleanup(func() {
		s.Close() // a second Close (after the test's own) does nothing
		ts.Close()
	})
	return &testServer{Server: s, ts: ts}, lb
}

// upload posts body as a raw upload named name and returns the status and answer.
func (ts *testServer) upload(tb testing.TB, name string, body []byte) (int, uploadBody) {
	tb.Helper()
	var up uploadBody
	code := ts.post(tb, "?name="+url.QueryEscape(name), bytes.NewReader(body), int64(len(body)), "application/octet-stream", &up)
	return code, up
}

func (ts *testServer) ids(tb testing.TB) []string {
	tb.Helper()
	var list []imageInfo
	if code := ts.get(tb, "/api/images", &list); code != 200 {
		tb.Fatalf("GET /api/images: %d", code)
	}
	var out []string
	for _, im := range list {
		out = append(out, im.ID)
	}
	sort.Strings(out)
	return out
}

func (ts *testServer) del(tb testing.TB, id string) int {
	tb.Helper()
	req, _ := http.NewRequest(http.MethodDelete, ts.ts.URL+"/api/images/"+id, nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer res.Body.Close()
	io.Copy(io.Discard, res.Body)
	return res.StatusCode
}

// TestStorePersistsAcrossRestart: uploads are listed after a restart on
// the same data dir with the same id, name, size, format and upload time; their permalinks answer;
// the layout is uploads/<id>/{image,meta.json} and nothing else.
func TestStorePersistsAcrossRestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ts, _ := openStoreServer(t, Config{DataDir: dir})
	var ups []uploadBody
	for i, fx := range []string{"basic", "features", "segs4"} {
		code, up := ts.upload(t, fmt.Sprintf("%s-%d.img.gz", fx, i), fixtureVariant(t, fx, "a"))
		if code != http.StatusCreated {
			t.Fatalf("upload %s: %d %+v", fx, code, up)
		}
		ups = append(ups, up)
	}
	var before []imageInfo
	ts.get(t, "/api/images", &before)
	if err := ts.Close(); err != nil {
		t.Fatal(err)
	}
	// The layout, and nothing partial.
	var got []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && p != dir {
			rel, _ := filepath.Rel(dir, p)
			got = append(got, rel)
		}
		return nil
	})
	want := []string{"tmp", "uploads"}
	for _, up := range ups {
		want = append(want, "uploads/"+up.ID, "uploads/"+up.ID+"/image", "uploads/"+up.ID+"/meta.json")
	}
	sort.Strings(got)
	sort.Strings(want)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("data dir after Close:\n got %v\nwant %v", got, want)
	}

	ts2, logs := openStoreServer(t, Config{DataDir: dir})
	var after []imageInfo
	ts2.get(t, "/api/images", &after)
	if fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("listing after restart:\n%+v\nwant\n%+v", after, before)
	}
	for _, up := range ups {
		if code := ts2.get(t, "/api/images/"+up.ID+"/segments", nil); code != 200 {
			t.Errorf("%s: segments after restart: %d", up.ID, code)
		}
		if code := ts2.get(t, "/api/images/"+up.ID, nil); code != 200 {
			t.Errorf("%s: inspect after restart: %d", up.ID, code)
		}
		if _, code := ts2.getPage(t, "/images/"+up.ID); code != 200 {
			t.Errorf("%s: image page after restart: %d", up.ID, code)
		}
	}
	if l := logs.lines("damaged"); len(l) != 0 {
		t.Errorf("a clean store logged damage: %v", l)
	}
}

// TestStoreStartCleansAndSkips: at start, a killed server's .partial- and .removing- directories
// and imgio temp files are removed; damaged entries are skipped with exactly one log line naming
// each and are left in place; anything not named by zrviz is left alone.
func TestStoreStartCleansAndSkips(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ts, _ := openStoreServer(t, Config{DataDir: dir})
	code, good := ts.upload(t, "good.img", fixtureVariant(t, "basic", "good"))
	if code != http.StatusCreated {
		t.Fatal(code)
	}
	ts.Close()

	up := filepath.Join(dir, uploadsSubdir)
	goodDir := filepath.Join(up, good.ID)
	meta, err := os.ReadFile(filepath.Join(goodDir, entryMeta))
	if err != nil {
		t.Fatal(err)
	}
	img, err := os.ReadFile(filepath.Join(goodDir, entryImage))
	if err != nil {
		t.Fatal(err)
	}
	write := func(rel string, b []byte) {
		t.Helper()
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	withID := func(id string) []byte { return bytes.Replace(meta, []byte(good.ID), []byte(id), 1) }
	// What a killed server leaves.
	write("uploads/.partial-123/image", img[:1<<20])
	write("uploads/.partial-456/image", img)
	write("uploads/.partial-456/meta.json", withID("aaaaaaaaaaa1"))
	write("uploads/.removing-789/meta.json", meta)
	write("tmp/zrviz-42.img", []byte("half a demo"))
	// Damaged entries: each skipped with one line.
	damaged := map[string][]byte{
		"aaaaaaaaaaa2": []byte("{not json"),              // garbage meta
		"aaaaaaaaaaa3": withID("aaaaaaaaaaa9"),           // id disagrees with the directory
		"aaaaaaaaaaa4": withID("aaaaaaaaaaa4"),           // image truncated (below)
		"aaaaaaaaaaa5": withID("aaaaaaaaaaa5"),           // image missing
		"aaaaaaaaaaa6": bytes.Repeat([]byte(" "), 1<<20), // meta far too large
		"aaaaaaaaaaa7": withID("aaaaaaaaaaa7"),           // image not F2FS (below)
	}
	for id, m := range damaged {
		write("uploads/"+id+"/meta.json", m)
	}
	// The images that are not read need not be whole; sparse files keep the test off the disk.
	sparse := func(rel string, head []byte, size int64) {
		t.Helper()
		write(rel, head)
		if err := os.Truncate(filepath.Join(dir, rel), size); err != nil {
			t.Fatal(err)
		}
	}
	sparse("uploads/aaaaaaaaaaa2/image", img[:8192], int64(len(img)))
	sparse("uploads/aaaaaaaaaaa3/image", img[:8192], int64(len(img)))
	sparse("uploads/aaaaaaaaaaa4/image", img[:8192], int64(len(img)/2))
	sparse("uploads/aaaaaaaaaaa7/image", bytes.Repeat([]byte("x"), 8192), int64(len(img)))
	// Files that are not regular: a FIFO meta.json (which hung start-up with no log line), a
	// meta.json and an image that are symbolic links (not followed). Each is skipped with one line.
	write("uploads/target.meta", withID("aaaaaaaaaab2"))
	write("uploads/aaaaaaaaaab3/meta.json", withID("aaaaaaaaaab3"))
	for _, mk := range []func() error{
		func() error {
			os.Mkdir(filepath.Join(up, "aaaaaaaaaab1"), 0o700)
			return syscall.Mkfifo(filepath.Join(up, "aaaaaaaaaab1", entryMeta), 0o600)
		},
		func() error {
			os.Mkdir(filepath.Join(up, "aaaaaaaaaab2"), 0o700)
			return os.Symlink(filepath.Join(up, "target.meta"), filepath.Join(up, "aaaaaaaaaab2", entryMeta))
		},
		func() error {
			return os.Symlink(filepath.Join(goodDir, entryImage), filepath.Join(up, "aaaaaaaaaab3", entryImage))
		},
	} {
		if err := mk(); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range []string{"aaaaaaaaaab1", "aaaaaaaaaab2", "aaaaaaaaaab3"} {
		damaged[id] = nil
	}
	// Not zrviz's: never touched.
	foreign := []string{"notes.txt", "uploads/README", "uploads/target.meta", "uploads/photos/cat.jpg", "tmp/keep.img", "uploads/.partial-x/extra",
		"uploads/aaaaaaaaaaa2/mine.txt"}
	for _, f := range foreign {
		write(f, []byte("mine"))
	}

	ts2, logs := openStoreServer(t, Config{DataDir: dir})
	if ids := ts2.ids(t); fmt.Sprint(ids) != fmt.Sprint([]string{good.ID}) {
		t.Errorf("listed after the crash: %v, want only %s", ids, good.ID)
	}
	for id := range damaged {
		p := filepath.Join(up, id)
		if l := logs.lines(p); len(l) != 1 || !strings.Contains(l[0], "damaged") {
			t.Errorf("damaged entry %s: log lines %q, want one naming it", id, l)
		}
		if _, err := os.Stat(filepath.Join(p, entryMeta)); err != nil {
			t.Errorf("damaged entry %s was touched: %v", id, err)
		}
	}
	for _, gone := range []string{"uploads/.partial-123", "uploads/.partial-456", "uploads/.removing-789", "tmp/zrviz-42.img"} {
		if _, err := os.Stat(filepath.Join(dir, gone)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s left after start: %v", gone, err)
		}
	}
	for _, f := range foreign {
		if b, err := os.ReadFile(filepath.Join(dir, f)); err != nil || string(b) != "mine" {
			t.Errorf("%s was touched: %q %v", f, b, err)
		}
	}
	// .partial-x held a foreign file: its image and meta (zrviz's names) would go, the directory stays.
	if _, err := os.Stat(filepath.Join(up, ".partial-x")); err != nil {
		t.Errorf(".partial-x with a foreign file in it: %v", err)
	}
	// The same bytes as a damaged entry's id arrive whole: they replace it.
	if code, _ := ts2.upload(t, "good.img", fixtureVariant(t, "basic", "good")); code != http.StatusOK {
		t.Errorf("re-upload of a stored image: %d, want 200", code)
	}
}

// TestDeleteImage: DELETE removes an upload from the listing and the data dir at once (204), is
// 409 for the demo, 404 for an unknown id, 403 from another origin; an image deleted while in use
// stays readable by its user and is closed by the last release.
func TestDeleteImage(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ts := mustOpenServer(t, Config{DataDir: dir})
	code, a := ts.upload(t, "a.img", fixtureVariant(t, "basic", "a"))
	if code != http.StatusCreated {
		t.Fatal(code)
	}
	_, b := ts.upload(t, "b.img", fixtureVariant(t, "basic", "b"))
	if code := ts.del(t, DemoID); code != http.StatusConflict {
		t.Errorf("DELETE demo: %d, want 409", code)
	}
	if code := ts.del(t, "000000000000"); code != http.StatusNotFound {
		t.Errorf("DELETE unknown: %d, want 404", code)
	}
	req, _ := http.NewRequest(http.MethodDelete, ts.ts.URL+"/api/images/"+a.ID, nil)
	req.Header.Set("Origin", "http://evil.example")
	if res, err := http.DefaultClient.Do(req); err != nil || res.StatusCode != http.StatusForbidden {
		t.Errorf("cross-origin DELETE: %v %v, want 403", res, err)
	} else {
		res.Body.Close()
	}
	if code := ts.del(t, a.ID); code != http.StatusNoContent {
		t.Errorf("DELETE %s: %d, want 204", a.ID, code)
	}
	if _, err := os.Stat(filepath.Join(dir, uploadsSubdir, a.ID)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("deleted entry still on disk: %v", err)
	}
	if code := ts.get(t, "/api/images/"+a.ID, nil); code != http.StatusNotFound {
		t.Errorf("GET a deleted image: %d", code)
	}
	if code := ts.del(t, a.ID); code != http.StatusNotFound {
		t.Errorf("DELETE twice: %d, want 404", code)
	}

	// In use (as a websocket holds it): deleted from the listing and disk, readable until released.
	si, release, err := ts.acquire(b.ID)
	if err != nil {
		t.Fatal(err)
	}
	if code := ts.del(t, b.ID); code != http.StatusNoContent {
		t.Fatalf("DELETE in use: %d", code)
	}
	if _, err := si.Acquire(); ErrorCode(err) != ENOTFOUND {
		t.Errorf("Acquire after DELETE: %v, want not found", err)
	}
	if _, err := si.Image.Files(); err != nil {
		t.Errorf("an image deleted while in use is no longer readable: %v", err)
	}
	release()
	release() // a second call does nothing
	if _, err := si.file.Stat(); !errors.Is(err, os.ErrClosed) {
		t.Errorf("after the last release the file is %v, want closed", err)
	}
	if ids := ts.ids(t); fmt.Sprint(ids) != "[demo]" {
		t.Errorf("listed: %v", ids)
	}
}

// TestEvictionLRU: under MaxStore, a new upload evicts the least recently used uploads, never one
// in use; when only images in use could make room it is refused (507), and an image larger than
// the whole store is 413.
func TestEvictionLRU(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ts := mustOpenServer(t, Config{DataDir: dir})
	// The store's clock is the wall clock plus a second more at each reading: every use is later
	// than the one before it and than the file time an upload is committed with (upload.go records
	// an upload's mtime), so recency is the order of the calls, not how far apart the clock put them.
	var ticks atomic.Int64
	ts.store.mu.Lock()
	ts.store.now = func() time.Time { return time.Now().Add(time.Duration(ticks.Add(1)) * time.Second) }
	ts.store.mu.Unlock()
	up := func(v string) string {
		t.Helper()
		code, u := ts.upload(t, v+".img", fixtureVariant(t, "basic", v))
		if code != http.StatusCreated {
			t.Fatalf("upload %s: %d", v, code)
		}
		return u.ID
	}
	a := up("a")
	si, _ := ts.image(a)
	// Room for two uploads and a half.
	ts.store.mu.Lock()
	ts.store.maxStore = 2*si.onDisk + si.onDisk/2
	ts.store.mu.Unlock()
	b := up("b")
	ts.get(t, "/api/images/"+a+"/segments", nil) // a is now more recent than b
	c := up("c")
	if ids, want := ts.ids(t), sorted(DemoID, a, c); fmt.Sprint(ids) != fmt.Sprint(want) {
		t.Errorf("after c: %v, want %v (b least recently used)", ids, want)
	}
	if _, err := os.Stat(filepath.Join(dir, uploadsSubdir, b)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("evicted b still on disk: %v", err)
	}
	// a is the least recently used now, but in use: c goes instead.
	_, release, err := ts.acquire(a)
	if err != nil {
		t.Fatal(err)
	}
	ts.get(t, "/api/images/"+c, nil)
	d := up("d")
	if ids, want := ts.ids(t), sorted(DemoID, a, d); fmt.Sprint(ids) != fmt.Sprint(want) {
		t.Errorf("after d with a in use: %v, want %v", ids, want)
	}
	// Both in use: nothing may go, the upload is refused and leaves nothing.
	_, release2, _ := ts.acquire(d)
	var body errorBody
	data := fixtureVariant(t, "basic", "e")
	if code := ts.post(t, "?name=e.img", bytes.NewReader(data), int64(len(data)), "", &body); code != http.StatusInsufficientStorage ||
		!strings.Contains(body.Error, "--max-store") {
		t.Errorf("upload with the store full of images in use: %d %q, want 507 naming --max-store", code, body.Error)
	}
	release()
	release2()
	if ids, want := ts.ids(t), sorted(DemoID, a, d); fmt.Sprint(ids) != fmt.Sprint(want) {
		t.Errorf("after the refusal: %v, want %v", ids, want)
	}
	// Larger than the whole store.
	ts.store.mu.Lock()
	ts.store.maxStore = si.onDisk / 2
	ts.store.mu.Unlock()
	if code := ts.post(t, "?name=f.img", bytes.NewReader(fixtureVariant(t, "basic", "f")), -1, "", &body); code != http.StatusRequestEntityTooLarge {
		t.Errorf("upload larger than the store: %d %q, want 413", code, body.Error)
	}
	es, _ := os.ReadDir(filepath.Join(dir, uploadsSubdir))
	for _, e := range es {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("left in the uploads dir: %s", e.Name())
		}
	}
}

func sorted(ids ...string) []string {
	sort.Strings(ids)
	return ids
}

// TestDataDirLocked: a second server on a data dir in use is refused; after Close it may start.
func TestDataDirLocked(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s, err := NewServer(Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if s2, err := NewServer(Config{DataDir: dir}); err == nil {
		s2.Close()
		t.Fatal("two servers on one data dir")
	} else if !strings.Contains(err.Error(), "in use") {
		t.Errorf("second server: %v", err)
	}
	s.Close()
	s3, err := NewServer(Config{DataDir: dir})
	if err != nil {
		t.Fatalf("after Close: %v", err)
	}
	s3.Close()
}

// TestAcquireAfterClose: Close closes every image; Acquire then fails.
func TestAcquireAfterClose(t *testing.T) {
	t.Parallel()
	s, err := NewServer(Config{})
	if err != nil {
		t.Fatal(err)
	}
	img, err := imgio.OpenDemo(&imgio.Options{TempDir: s.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	si, err := s.AddImage(DemoID, "demo.img", img)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := si.Acquire(); ErrorCode(err) != ENOTFOUND {
		t.Errorf("Acquire after Close: %v", err)
	}
}

// TestViewerHoldsImage: a websocket viewing an upload holds it: --max-store will not evict it (the
// upload that needed its room is refused with 507), and DELETE takes it out of the listing while the
// viewer goes on to the end of its run; the file is closed when the viewer leaves.
func TestViewerHoldsImage(t *testing.T) {
	t.Parallel()
	ts := mustOpenServer(t, Config{})
	code, a := ts.upload(t, "a.img.gz", fixtureVariant(t, "basic", "viewed"))
	if code != http.StatusCreated {
		t.Fatal(code)
	}
	si, _ := ts.image(a.ID)
	ts.store.mu.Lock()
	ts.store.maxStore = si.onDisk + si.onDisk/2 // room for one upload
	ts.store.mu.Unlock()

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	u := "ws" + strings.TrimPrefix(ts.ts.URL, "http") + "/ws/run?" + url.Values{"image": {a.ID}, "path": {"/data/big.bin"}}.Encode()
	c, _, err := websocket.Dial(ctx, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	c.SetReadLimit(64 << 20)
	read := func() map[string]any {
		t.Helper()
		_, b, err := c.Read(ctx)
		if err != nil {
			t.Fatalf("viewer: %v", err)
		}
		var m map[string]any
		json.Unmarshal(b, &m)
		return m
	}
	if m := read(); m["type"] != "hello" {
		t.Fatalf("first message %v", m["type"])
	}
	// The viewer holds a: the next upload cannot make room.
	data := fixtureVariant(t, "basic", "other")
	var e errorBody
	if code := ts.post(t, "?name=b.img.gz", bytes.NewReader(data), int64(len(data)), "", &e); code != http.StatusInsufficientStorage {
		t.Errorf("upload while the only other image is viewed: %d %q, want 507", code, e.Error)
	}
	if code := ts.del(t, a.ID); code != http.StatusNoContent {
		t.Fatalf("DELETE while viewed: %d", code)
	}
	// The viewer plays on to the end.
	if err := c.Write(ctx, websocket.MessageText, []byte(`{"type":"end"}`)); err != nil {
		t.Fatal(err)
	}
	for {
		m := read()
		if m["type"] == "error" {
			t.Fatalf("viewer of a deleted image: %v", m)
		}
		if m["type"] == "frame" {
			if st, _ := m["step"].(float64); st > 0 {
				break
			}
		}
	}
	if _, err := si.file.Stat(); err != nil {
		t.Errorf("the file of an image still viewed: %v", err)
	}
	c.Close(websocket.StatusNormalClosure, "")
	eventually(t, 10*time.Second, "the deleted image's file closed after its viewer left", func() bool {
		_, err := si.file.Stat()
		return errors.Is(err, os.ErrClosed)
	})
	// Now b fits.
	if code := ts.post(t, "?name=b.img.gz", bytes.NewReader(data), int64(len(data)), "", &e); code != http.StatusCreated {
		t.Errorf("upload after the viewer left: %d %q", code, e.Error)
	}
}
