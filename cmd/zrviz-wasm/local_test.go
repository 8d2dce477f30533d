//go:build js && wasm

package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"runtime"
	"strings"
	"syscall/js"
	"testing"

	"github.com/zrviz/zrviz/imgio"
	"github.com/zrviz/zrviz/internal/testutil"
	"github.com/zrviz/zrviz/web"
)

// Run with GOOS=js GOARCH=wasm go test ./cmd/zrviz-wasm and $(go env GOROOT)/lib/wasm on PATH
// (go_js_wasm_exec runs the test binary under Node, whose global Blob and File stand in for the
// browser's). scripts/test runs it.

// newBlob makes a JavaScript Blob (a File named name when name is not "") holding b.
func newBlob(b []byte, name string) js.Value {
	u := js.Global().Get("Uint8Array").New(len(b))
	js.CopyBytesToJS(u, b)
	parts := js.Global().Get("Array").New(u)
	if name != "" {
		return js.Global().Get("File").New(parts, name)
	}
	return js.Global().Get("Blob").New(parts)
}

// fixture returns the expanded bytes of one of imgio's committed test images.
func fixture(t *testing.T, name string) []byte {
	t.Helper()
	return testutil.Gunzip(t, "../../imgio/testdata/"+name)
}

// TestBlobReaderAt reads a Blob at random offsets and lengths (small ones through the cache, large
// ones fetched directly, reads across chunk edges and past the end) and compares each with the bytes.
func TestBlobReaderAt(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 1))
	b := make([]byte, 3*blobChunk+12345)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	// Two readers of two Blobs share one cache of two chunks, read in turns.
	b2 := append([]byte(nil), b...)
	for i := range b2 {
		b2[i] ^= 0x5a
	}
	cache := newChunkCache(2)
	readers := []*blobReaderAt{newBlobReaderAt(newBlob(b, ""), int64(len(b)), cache), newBlobReaderAt(newBlob(b2, ""), int64(len(b2)), cache)}
	contents := [][]byte{b, b2}
	size := int64(len(b))
	for i := range 400 {
		off := rng.Int64N(size + 10)
		n := rng.IntN(9000)
		if i%10 == 0 {
			n = blobChunk + rng.IntN(blobChunk)
		}
		p := make([]byte, n)
		got, err := readers[i%2].ReadAt(p, off)
		lo, hi := min(off, size), min(off+int64(n), size)
		want := contents[i%2][lo:hi]
		if got != len(want) || !bytes.Equal(p[:got], want) {
			t.Fatalf("ReadAt(%d bytes at %d) = %d bytes (equal %v), want %d", n, off, got, bytes.Equal(p[:got], want), len(want))
		}
		switch {
		case got < n && err != io.EOF:
			t.Fatalf("ReadAt(%d bytes at %d): short read with %v, want io.EOF", n, off, err)
		case got == n && err != nil:
			t.Fatalf("ReadAt(%d bytes at %d): %v", n, off, err)
		}
	}
	if n := cache.len(); n != 2 {
		t.Errorf("cache holds %d chunks, bound 2", n)
	}
	if _, err := readers[0].ReadAt(make([]byte, 1), -1); err == nil {
		t.Error("negative offset: no error")
	}
}

// TestBlobReaderAtCaches checks that many small neighbouring reads cost one round trip per chunk.
func TestBlobReaderAtCaches(t *testing.T) {
	b := bytes.Repeat([]byte("0123456789abcdef"), blobChunk/8) // two chunks
	r := newBlobReaderAt(newBlob(b, ""), int64(len(b)), newChunkCache(blobCacheChunks))
	p := make([]byte, 4096)
	for off := int64(0); off+4096 <= int64(len(b)); off += 4096 {
		if _, err := r.ReadAt(p, off); err != nil || !bytes.Equal(p, b[off:off+4096]) {
			t.Fatalf("ReadAt at %d: %v", off, err)
		}
	}
	if r.fetches != 2 {
		t.Errorf("%d round trips for 128 block reads over 2 chunks, want 2", r.fetches)
	}
}

// awaitTest waits for a Promise from the test's goroutine.
func awaitTest(t *testing.T, p js.Value) (js.Value, error) {
	t.Helper()
	if p.Type() != js.TypeObject || p.Get("then").Type() != js.TypeFunction {
		t.Fatalf("openLocal returned %v, not a Promise", p.Type())
	}
	return await(p)
}

// TestOpenLocal opens small real images as Files through zrviz.openLocal, as the service worker
// does: raw and gzip give the image the reader gives, under the id of its fingerprint, in the
// server; opening the same content again returns the same id without a second image; a file that is
// not F2FS rejects with the reader's reason.
func TestOpenLocal(t *testing.T) {
	srv, err := web.NewServer(web.Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	zrviz := js.Global().Get("Object").New()
	registerLocal(srv, zrviz)

	raw := fixture(t, "basic.img.gz")
	gz, err := os.ReadFile("../../imgio/testdata/basic.img.gz")
	if err != nil {
		t.Fatal(err)
	}
	fp, err := imgio.Fingerprint(bytes.NewReader(raw), int64(len(raw)))
	if err != nil {
		t.Fatal(err)
	}
	want, err := imgio.NewImage(bytes.NewReader(raw), int64(len(raw)))
	if err != nil {
		t.Fatal(err)
	}
	wantFiles, err := want.Files()
	if err != nil || len(wantFiles) == 0 {
		t.Fatalf("reference files: %d, %v", len(wantFiles), err)
	}

	v, err := awaitTest(t, zrviz.Call("openLocal", newBlob(raw, "basic.img")))
	if err != nil {
		t.Fatalf("openLocal(raw): %v", err)
	}
	id, name := v.Get("id").String(), v.Get("name").String()
	if id != "local-"+fp[:16] || name != "basic.img" {
		t.Fatalf("openLocal(raw) = {%s, %s}, want {local-%s, basic.img}", id, name, fp[:16])
	}
	if n, ok := srv.LocalImage(id); !ok || n != "basic.img" {
		t.Fatalf("server has %q, %v under %s", n, ok, id)
	}
	before := srv.ImageCount()

	// The same bytes again, even under another name: the image already open.
	v, err = awaitTest(t, zrviz.Call("openLocal", newBlob(raw, "copy.img")))
	if err != nil || v.Get("id").String() != id || v.Get("name").String() != "basic.img" {
		t.Fatalf("second open = %v, %v; want {%s, basic.img}", v, err, id)
	}
	if srv.ImageCount() != before {
		t.Errorf("%d images after opening the same file twice, want %d", srv.ImageCount(), before)
	}

	// gzip: another content, so another id; expanded in memory to the same image.
	v, err = awaitTest(t, zrviz.Call("openLocal", newBlob(gz, "basic.img.gz")))
	if err != nil {
		t.Fatalf("openLocal(gzip): %v", err)
	}
	gzID := v.Get("id").String()
	if gzID == id || !strings.HasPrefix(gzID, "local-") || len(gzID) != len("local-")+16 {
		t.Fatalf("gzip id %q (raw's %q)", gzID, id)
	}
	r := newBlobReaderAt(newBlob(gz, ""), int64(len(gz)), newChunkCache(blobCacheChunks))
	img, err := imgio.OpenAt(context.Background(), r, int64(len(gz)), "basic.img.gz", nil)
	if err != nil {
		t.Fatal(err)
	}
	files, err := img.Files()
	if err != nil || len(files) != len(wantFiles) {
		t.Fatalf("gzip through a Blob: %d files (%v), want %d", len(files), err, len(wantFiles))
	}
	for i := range files {
		if files[i].Path != wantFiles[i].Path || files[i].Size != wantFiles[i].Size {
			t.Fatalf("file %d: %s (%d bytes), want %s (%d)", i, files[i].Path, files[i].Size, wantFiles[i].Path, wantFiles[i].Size)
		}
	}

	// Not an image: the Promise rejects with the reader's own reason, word for word (only its text
	// crosses into JavaScript).
	zeros := bytes.Repeat([]byte{0}, 64<<10)
	_, wantErr := imgio.OpenAt(context.Background(), bytes.NewReader(zeros), int64(len(zeros)), "zeros.bin", nil)
	if !errors.Is(wantErr, imgio.ErrNotF2FS) {
		t.Fatalf("reference: %v, want ErrNotF2FS", wantErr)
	}
	_, err = awaitTest(t, zrviz.Call("openLocal", newBlob(zeros, "zeros.bin")))
	if err == nil || err.Error() != wantErr.Error() {
		t.Fatalf("openLocal(zeros) = %v; want the rejection %q", err, wantErr)
	}
	// Not a file at all.
	if _, err := awaitTest(t, zrviz.Call("openLocal", "a string")); err == nil {
		t.Fatal("openLocal(string) resolved")
	}
}

// BenchmarkOpenLocal opens an image file as the static site's worker does, through a Blob-like
// object over the file (slice(a, b).arrayBuffer() reads those bytes with fs.read: Node 20's own
// fs.openAsBlob stops at 2 GiB, a browser's File does not): fingerprint, OpenAt, the tree's listing.
// The image is the committed basic fixture, or the file ZRVIZ_LOCAL_IMAGE names (the figures in
// docs/performance.md are of an 8 GiB raw image and its Android sparse form). It reports the
// JavaScript round trips and the high-water mark of the Go heap's memory (WebAssembly memory only
// grows).
func BenchmarkOpenLocal(b *testing.B) {
	name := os.Getenv("ZRVIZ_LOCAL_IMAGE")
	if name == "" {
		name = b.TempDir() + "/basic.img"
		if err := gunzipTo(name, "../../imgio/testdata/basic.img.gz"); err != nil {
			b.Fatal(err)
		}
	}
	st, err := os.Stat(name)
	if err != nil {
		b.Fatal(err)
	}
	size := st.Size()
	fileBlob := js.Global().Get("Function").New("name", "size", `
		const fs = require('fs');
		const fd = fs.openSync(name, 'r');
		return {size, slice: (a, e) => ({arrayBuffer: () => new Promise((ok, ko) => {
			const buf = Buffer.alloc(e - a);
			fs.read(fd, buf, 0, e - a, a, (err, n) => err ? ko(err) : ok(buf.buffer.slice(buf.byteOffset, buf.byteOffset + n)));
		})})};`)
	blob := fileBlob.Invoke(name, size)
	var fetches, files int
	var m runtime.MemStats
	for b.Loop() {
		r := newBlobReaderAt(blob, size, newChunkCache(blobCacheChunks))
		if _, err := imgio.Fingerprint(r, size); err != nil {
			b.Fatal(err)
		}
		img, err := imgio.OpenAt(context.Background(), r, size, "bench", nil)
		if err != nil {
			b.Fatal(err)
		}
		list, err := img.Files()
		if err != nil {
			b.Fatal(err)
		}
		files, fetches = len(list), r.fetches
		runtime.ReadMemStats(&m)
	}
	b.ReportMetric(float64(fetches), "roundtrips/op")
	b.ReportMetric(float64(files), "files")
	b.ReportMetric(float64(m.Sys)/(1<<20), "goSysMiB")
	b.ReportMetric(float64(size)/(1<<30), "fileGiB")
}

// gunzipTo expands the gzip file src into dst, streaming.
func gunzipTo(dst, src string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	zr, err := gzip.NewReader(in)
	if err != nil {
		return err
	}
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, zr); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// TestUnpackedBound: compressed images share one bound; a reservation is taken at once (two opens
// cannot both have all of it), settled to what the image holds, and past the bound an open is
// refused saying why.
func TestUnpackedBound(t *testing.T) {
	var u unpacked
	a, err := u.reserve()
	if err != nil || a != min(maxUnpacked, imgio.DefaultMaxMemory) {
		t.Fatalf("first reservation %d, %v", a, err)
	}
	b, err := u.reserve()
	if err != nil || a+b > maxUnpacked {
		t.Fatalf("second reservation %d (first %d), %v: over the bound %d", b, a, err, maxUnpacked)
	}
	if _, err := u.reserve(); err == nil || !strings.Contains(err.Error(), "raw or Android sparse") {
		t.Fatalf("third reservation with nothing left: %v", err)
	}
	u.settle(a, 10<<20) // the first image holds 10 MiB
	u.settle(b, 0)      // the second failed
	if u.held != 10<<20 {
		t.Fatalf("held %d after settling, want %d", u.held, 10<<20)
	}
	if c, err := u.reserve(); err != nil || c != min(maxUnpacked-10<<20, imgio.DefaultMaxMemory) {
		t.Fatalf("reservation after settling %d, %v", c, err)
	}
}
