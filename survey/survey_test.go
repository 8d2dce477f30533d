package survey

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"math/bits"
	"os"
	"path/filepath"
	"testing"

	"github.com/zrviz/zrviz/core"
	"github.com/zrviz/zrviz/imgio"
	"github.com/zrviz/zrviz/internal/testutil"
	"github.com/zrviz/zrviz/source"
)

var update = flag.Bool("update", false, "rewrite static/jstest/testdata/survey.json")

func openDemo(t *testing.T) *imgio.Image {
	t.Helper()
	img, err := imgio.OpenFileContext(context.Background(), testutil.DemoImage(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { img.Close() })
	return img
}

// TestJSFixture: the page's unit tests read the demo's survey from static/jstest/testdata; it is
// the survey's JSON as Run makes it now (go test -run TestJSFixture -update rewrites it).
func TestJSFixture(t *testing.T) {
	s, err := Run(context.Background(), openDemo(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := json.NewEncoder(&b).Encode(s); err != nil {
		t.Fatal(err)
	}
	name := filepath.Join("..", "static", "jstest", "testdata", "survey.json")
	if *update {
		if err := os.WriteFile(name, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b.Bytes(), want) {
		t.Errorf("%s is not the demo's survey now: run go test ./survey -run TestJSFixture -update", name)
	}
	// WriteJSON streams the same bytes.
	var streamed bytes.Buffer
	if err := s.WriteJSON(&streamed); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(streamed.Bytes(), b.Bytes()) {
		t.Error("Survey.WriteJSON writes other bytes than json.Encoder")
	}
}

// TestHistogramIsTheEngines: a file's share of the histogram (its calls merged where contiguous)
// holds exactly the blocks the engine invalidated, in runs of the lengths the engine counted
// (Stats.RunLengths, bucket by bucket), for every file of the demo — the engine's own run count,
// not a second one.
func TestHistogramIsTheEngines(t *testing.T) {
	img := openDemo(t)
	ents, err := img.Files()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range ents {
		if e.Type != imgio.TypeFile {
			continue
		}
		in, err := source.Input(img, e.Path)
		if err != nil {
			t.Fatal(err)
		}
		res, err := core.Simulate(in, runs[0].Request(in.Inode.Size), core.PerBlock)
		if err != nil {
			t.Fatal(err)
		}
		blocks, counts := runBlocksCounts(res)
		var sum uint64
		for _, b := range blocks {
			sum += b
		}
		var want [NumBuckets]uint64
		for k, c := range res.Stats.RunLengths {
			want[min(k, NumBuckets-1)] += c
		}
		if sum != res.Stats.BlocksInvalidated || counts != want {
			t.Errorf("%s: runs %v holding %d blocks, the engine's %v and %d", e.Path, counts, sum, want, res.Stats.BlocksInvalidated)
		}
		n++
	}
	if n < 30 {
		t.Fatalf("only %d files", n)
	}
	if bucketOf(1) != 0 || bucketOf(3) != 1 || bucketOf(511) != 8 || bucketOf(512) != 9 || bucketOf(1<<40) != 9 {
		t.Error("bucketOf")
	}
	for i, want := range []string{"1", "2–3", "4–7", "8–15", "16–31", "32–63", "64–127", "128–255", "256–511", "512+"} {
		if l := BucketLabel(i); l != want {
			t.Errorf("bucket %d label %q, want %q", i, l, want)
		}
	}
}

// runBlocksCounts is runBlocks with the number of runs per bucket.
func runBlocksCounts(res *core.Result) (blocks, counts [NumBuckets]uint64) {
	blocks = runBlocks(res)
	var start, n uint64
	flush := func() {
		if n > 0 {
			counts[min(bits.Len64(n)-1, NumBuckets-1)]++
		}
	}
	for c := range res.Calls.All() {
		if c.Start == core.NewAddr || c.Start == core.CompressAddr || c.Start == core.NullAddr || c.Len == 0 {
			continue
		}
		if n > 0 && uint64(c.Start) == start+n {
			n += uint64(c.Len)
			continue
		}
		flush()
		start, n = uint64(c.Start), uint64(c.Len)
	}
	flush()
	return blocks, counts
}

// TestRunStops: a survey whose context ends stops with its error, and one refused by Reserve
// (a server's budget) or MaxFiles surveys nothing.
func TestRunStops(t *testing.T) {
	img := openDemo(t)
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	_, err := Run(ctx, img, Options{Workers: 1, Progress: func(done, total int) {
		calls++
		if done == 3 {
			cancel()
		}
	}})
	if !errors.Is(err, context.Canceled) || calls > 5 {
		t.Errorf("cancelled after 3 files: %v after %d progress calls", err, calls)
	}
	busy := errors.New("busy")
	if _, err := Run(context.Background(), img, Options{Reserve: func(int) error { return busy }}); !errors.Is(err, busy) {
		t.Errorf("Reserve refused: %v", err)
	}
	if _, err := Run(context.Background(), img, Options{MaxFiles: 5}); !errors.Is(err, ErrTooManyFiles) {
		t.Errorf("MaxFiles 5 of 40: %v", err)
	}
}

// TestPacked: a row's packed results read back as they were, counters and strings.
func TestPacked(t *testing.T) {
	r := Result{Errno: "ENOSPC", Message: "m", Stats: core.Stats{Steps: 1 << 40, Calls: 3, SlotsNull: 1 << 33, Runs: 2, SegmentsPrefree: 7}}
	r.RunLengths[0], r.RunLengths[32] = 5, 1<<50
	p := pack(&r)
	if got := p.unpack(); got != r {
		t.Errorf("packed %+v read back %+v", r, got)
	}
	e := Result{Error: "core: not modelled: x", Refused: true}
	p = pack(&e)
	if got := p.unpack(); got != e {
		t.Errorf("packed %+v read back %+v", e, got)
	}
}

// TestCosts: the default costs go through the seed's two measurements.
func TestCosts(t *testing.T) {
	c := DefaultCosts()
	for _, m := range []struct {
		calls uint64
		ms    float64
	}{{16384, 16.436}, {19, 10.011}} {
		if got := c.Ms(m.calls, 16384); got < m.ms-1e-9 || got > m.ms+1e-9 {
			t.Errorf("%d calls: %.6f ms, want %.3f", m.calls, got, m.ms)
		}
	}
}
