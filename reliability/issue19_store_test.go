package reliability

import (
	"bytes"
	"context"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/zrviz/zrviz/imgio"
)

// fullVolumeZstd is a zstd upload of a real 2 GiB F2FS volume (mkfs.f2fs of a sparse file) whose
// every free block of the main area holds a non-zero pattern, so that it expands to 2 GiB that a
// store cannot keep as holes: a small upload (about 160 KB) that writes 2 GiB.
func fullVolumeZstd(t *testing.T) []byte {
	t.Helper()
	raw := mkfsImage(t, t.TempDir(), 2<<10, "")
	img, err := imgio.OpenFileContext(context.Background(), raw, nil)
	if err != nil {
		t.Fatal(err)
	}
	mainAt := int64(img.Volume().MainBlkaddr) * 4096
	img.Close()
	f, err := os.Open(raw)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out bytes.Buffer
	enc, err := zstd.NewWriter(&out, zstd.WithEncoderLevel(zstd.SpeedBestCompression), zstd.WithWindowSize(8<<20))
	if err != nil {
		t.Fatal(err)
	}
	pattern := bytes.Repeat([]byte("zrviz-store-fill"), 4096/16)
	zero := make([]byte, 4096)
	buf := make([]byte, 1<<20)
	for off := int64(0); ; {
		n, err := io.ReadFull(f, buf)
		for b := 0; b+4096 <= n; b += 4096 {
			blk := buf[b : b+4096]
			if off+int64(b) >= mainAt && bytes.Equal(blk, zero) {
				blk = pattern
			}
			if _, err := enc.Write(blk); err != nil {
				t.Fatal(err)
			}
		}
		off += int64(n)
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// diskUsage is the space the files under dirs take on disk (st_blocks), holes not counted.
func diskUsage(dirs ...string) int64 {
	var n int64
	for _, d := range dirs {
		filepath.WalkDir(d, func(_ string, e fs.DirEntry, err error) error {
			if err != nil || e.IsDir() {
				return nil
			}
			if fi, err := e.Info(); err == nil {
				if st, ok := fi.Sys().(*syscall.Stat_t); ok {
					n += st.Blocks * 512
				}
			}
			return nil
		})
	}
	return n
}

// TestStoreDuringUploadsBinary (issue 19): under --max-store 256MiB, 4 concurrent uploads of about
// 160 KB that each expand to 2 GiB of non-zero blocks. The data directory and the server's TMPDIR are
// polled (du, every 20 ms) while they stream: they must never grow past the store limit + 32 MiB
// (the uploads' 8 MiB write steps), and every upload is refused. Before: all refused at the end,
// with the data directory 836 MB larger while they streamed.
func TestStoreDuringUploadsBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: compresses and expands 2 GiB volumes")
	}
	// In parallel with the others of its kind, after the serial tests: it waits on a server
	// (a deadline, a grace period, slow clients) more than it computes, and measures only that
	// server.
	t.Parallel()
	body := fullVolumeZstd(t)
	t.Logf("upload: %d bytes, expanding to 2 GiB", len(body))
	const store = 256 << 20
	s := startBinServer(t, "-max-store", "256MiB")
	base := diskUsage(s.dataDir, s.tmpDir)
	var peak atomic.Int64
	stop := make(chan struct{})
	polled := make(chan struct{})
	go func() {
		defer close(polled)
		for {
			if v := diskUsage(s.dataDir, s.tmpDir) - base; v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	var wg sync.WaitGroup
	codes := make([]int, 4)
	for i := range codes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, _ := http.NewRequest(http.MethodPost, s.base+"/api/images?name=full.img.zst", bytes.NewReader(body))
			r.Header.Set("Origin", s.base)
			res, err := http.DefaultClient.Do(r)
			if err != nil {
				t.Errorf("upload %d: %v", i, err)
				return
			}
			io.Copy(io.Discard, res.Body)
			res.Body.Close()
			codes[i] = res.StatusCode
		}()
	}
	wg.Wait()
	close(stop)
	<-polled
	after := diskUsage(s.dataDir, s.tmpDir) - base
	t.Logf("statuses %v; data dir + TMPDIR grew by at most %d MB while they streamed (%d MB after); load average %s",
		codes, peak.Load()/1e6, after/1e6, LoadAverage())
	for i, c := range codes {
		if c != http.StatusRequestEntityTooLarge && c != http.StatusInsufficientStorage {
			t.Errorf("upload %d: %d, want 413 or 507 (2 GiB past a 256 MiB store)", i, c)
		}
	}
	if p := peak.Load(); p > store+32<<20 {
		t.Errorf("the data dir grew by %d MB while the uploads streamed, past the 256 MiB store + 32 MiB", p/1e6)
	}
	if after > 1<<20 {
		t.Errorf("%d bytes left after every upload was refused", after)
	}
}
