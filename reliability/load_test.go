package reliability

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/zrviz/zrviz/web"
)

// bench64 is the demo's benchmark file and what zeroing all of it costs:
// 16,384 per-block calls, 19 batched (imgio/demo/README.md).
const (
	bench64          = "/seed/bench64.bin"
	bench64PerBlock  = 16384
	bench64Batched   = 19
	loadUploadBudget = 30 * time.Minute // the soak's uploads on a busy machine
)

// sparseF2FS makes n distinct sparse raw F2FS images of sizeMiB with
// mkfs.f2fs (each has its own UUID, so each upload gets its own id).
func sparseF2FS(t *testing.T, n int, sizeMiB int64) []string {
	t.Helper()
	var out []string
	for i := 0; i < n; i++ {
		dir := t.TempDir()
		p := mkfsImage(t, dir, sizeMiB, "", "-l", fmt.Sprintf("load%d", i))
		q := filepath.Join(dir, fmt.Sprintf("load%d.img", i))
		if err := os.Rename(p, q); err != nil {
			t.Fatal(err)
		}
		out = append(out, q)
	}
	return out
}

// TestLoad: many viewers play bench64 to the end in both modes while
// sparse F2FS images are uploaded; every viewer sees the right counters,
// memory stays bounded, and no goroutine outlives the server.
// ZRVIZ_SOAK=1 runs the full size: 200 viewers and 4 × 1 GiB uploads.
func TestLoad(t *testing.T) {
	viewers, uploads, sizeMiB := 40, 4, int64(64)
	if os.Getenv("ZRVIZ_SOAK") != "" {
		viewers, uploads, sizeMiB = 200, 4, 1024
	}
	images := sparseF2FS(t, uploads, sizeMiB)

	runtime.GC()
	before := runtime.NumGoroutine()
	var ms0 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	mem := startMemSampler()
	ls := startServer(t, web.Config{MaxUpload: 2 << 30})

	ctx, cancel := context.WithTimeout(context.Background(), loadUploadBudget)
	defer cancel()
	start := time.Now()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failures []string
	var finish []time.Duration
	fail := func(format string, a ...any) {
		mu.Lock()
		failures = append(failures, fmt.Sprintf(format, a...))
		mu.Unlock()
	}
	for i := 0; i < uploads; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			code, body, err := upload(ctx, ls.url, images[i])
			if err != nil || code != http.StatusCreated {
				fail("upload %d: %d %s %v", i, code, body, err)
			}
		}()
	}
	q := url.Values{"image": {web.DemoID}, "path": {bench64}}
	for i := 0; i < viewers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v, _, err := dialViewer(ctx, ls.wsURL(q), nil)
			if err != nil {
				fail("viewer %d: dial: %v", i, err)
				return
			}
			defer v.c.CloseNow()
			got, err := v.playToEnd(ctx)
			if err != nil {
				fail("viewer %d: after %v: %v", i, time.Since(start).Round(time.Millisecond), err)
				return
			}
			if got["per-block"] != bench64PerBlock || got["batched"] != bench64Batched {
				fail("viewer %d: calls %v, want per-block %d batched %d", i, got, bench64PerBlock, bench64Batched)
			}
			mu.Lock()
			finish = append(finish, time.Since(start))
			mu.Unlock()
			v.c.Close(1000, "done")
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	ids := ls.imageIDs(t)
	ls.close(t)
	inuse, sys, hwm := mem.finish()
	after := settleGoroutines(before+2, 15*time.Second)

	for _, f := range failures {
		t.Error(f)
	}
	if len(ids) != 1+uploads {
		t.Errorf("%d images listed, want %d", len(ids), 1+uploads)
	}
	sort.Slice(finish, func(i, j int) bool { return finish[i] < finish[j] })
	if len(finish) > 0 {
		t.Logf("%d viewers reached the end (first %v, median %v, last %v); %d uploads of %d MiB; all in %v",
			len(finish), finish[0].Round(time.Millisecond), finish[len(finish)/2].Round(time.Millisecond),
			finish[len(finish)-1].Round(time.Millisecond), uploads, sizeMiB, elapsed.Round(time.Millisecond))
	}
	t.Logf("peak HeapInuse %.1f MiB (%.1f MiB over the %.1f MiB in use before the server), peak Sys %.1f MiB, VmHWM %.1f MiB (whole test process, clients and earlier tests' data included)",
		mb(inuse), mb(inuse-min(inuse, ms0.HeapInuse)), mb(ms0.HeapInuse), mb(sys), mb(hwm))
	t.Logf("goroutines: %d before the server, %d after Close", before, after)
	if after > before+2 {
		buf := make([]byte, 1<<20)
		n := runtime.Stack(buf, true)
		t.Errorf("goroutine leak: %d before, %d after\n%s", before, after, buf[:n])
	}
	// The bound: viewers share the image; each run holds an engine pair
	// and a frame buffer, uploads stream to disk.
	if limit := uint64(512 << 20); inuse-min(inuse, ms0.HeapInuse) > limit {
		t.Errorf("peak HeapInuse grew by %.1f MiB, bound %.0f MiB", mb(inuse-ms0.HeapInuse), mb(limit))
	}
}

func mb(b uint64) float64 { return float64(b) / (1 << 20) }
