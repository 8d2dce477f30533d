package web

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/zrviz/zrviz/internal/testutil"

	"github.com/zrviz/zrviz/core"
	"github.com/zrviz/zrviz/imgio"
	"github.com/zrviz/zrviz/request"
	"github.com/zrviz/zrviz/source"
)

// TestRunBeforeSequence: before= lines may be any operation of the ops language. After
// `zero /cases/holes.bin 67584 195560` (fill_zero dirties pages 16 and 64) the zero over both writes
// them back first, so it makes 18 calls (17 + the fresh block of page 64) where the walk alone would
// make 17; with a sync between, the same. An unknown operation is a 400.
func TestRunBeforeSequence(t *testing.T) {
	ts := mustOpenServer(t, Config{})
	for _, before := range [][]string{
		{"zero /cases/holes.bin 67584 195560"},
		{"zero /cases/holes.bin 67584 195560", "sync"},
		{"tune ipu_policy 16", "zero /cases/holes.bin 67584 195560", "fsync /cases/holes.bin"},
	} {
		q := url.Values{"path": {"/cases/holes.bin"}, "offset": {"0"}, "length": {"524288"}, "mode": {"per-block"}}
		q[FieldBefore] = before
		var got struct {
			Results []struct {
				Stats struct {
					Calls uint64 `json:"calls"`
				} `json:"stats"`
			} `json:"results"`
			Error string `json:"error"`
		}
		if code := ts.get(t, "/api/images/demo/run?"+q.Encode(), &got); code != http.StatusOK {
			t.Fatalf("%q: %d %s", before, code, got.Error)
		}
		if len(got.Results) != 1 || got.Results[0].Stats.Calls != 18 {
			t.Errorf("%q: %+v, want 18 calls", before, got.Results)
		}
	}
	q := url.Values{"path": {"/cases/holes.bin"}, FieldBefore: {"collapse /cases/holes.bin 0 4096"}}
	var e struct{ Error string }
	if code := ts.get(t, "/api/images/demo/run?"+q.Encode(), &e); code != http.StatusBadRequest {
		t.Errorf("an unknown operation: %d %s", code, e.Error)
	}
}

// TestRunBeforeGC: before= takes checkpoint, gc 1, gc 0 and now lines too, each on the state the
// previous left; the played zero's calls are those of a fresh source.NewSeq over the same
// operations (foreground gc on the demo moves the greedy victim's blocks, holes.bin's among them
// when its segment is the cheapest).
func TestRunBeforeGC(t *testing.T) {
	ts := mustOpenServer(t, Config{})
	img, err := imgio.OpenFileContext(context.Background(), testutil.DemoImage(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer img.Close()
	for _, before := range [][]string{
		{"zero /cases/holes.bin 0 65536", "checkpoint", "gc 1"},
		{"zero /cases/holes.bin 67584 195560", "gc 0", "now 30", "gc 0", "sync", "gc 1", "checkpoint"},
	} {
		ops, err := request.ParseOps(strings.NewReader(strings.Join(append(slices.Clone(before), "zero /cases/holes.bin 0 524288"), "\n")))
		if err != nil {
			t.Fatal(err)
		}
		q, err := source.NewSeq(context.Background(), img, core.PerBlock)
		if err != nil {
			t.Fatal(err)
		}
		f, err := source.Input(img, "/cases/holes.bin")
		if err != nil {
			t.Fatal(err)
		}
		var want uint64
		for i, op := range ops {
			if op.IsZero() {
				r, _, _, err := q.Zero(f, op.Request(q.File(f).Inode.Size))
				if err != nil {
					t.Fatal(err)
				}
				if i == len(ops)-1 {
					want = r.Calls.Len()
				}
			} else if _, err := op.ApplyOther(q, f); err != nil {
				t.Fatal(err)
			}
		}
		v := url.Values{"path": {"/cases/holes.bin"}, "offset": {"0"}, "length": {"524288"}, "mode": {"per-block"}}
		v[FieldBefore] = before
		var got struct {
			Results []struct {
				Stats struct {
					Calls uint64 `json:"calls"`
				} `json:"stats"`
			} `json:"results"`
			Error string `json:"error"`
		}
		if code := ts.get(t, "/api/images/demo/run?"+v.Encode(), &got); code != http.StatusOK {
			t.Fatalf("%q: %d %s", before, code, got.Error)
		}
		if len(got.Results) != 1 || got.Results[0].Stats.Calls != want || want == 0 {
			t.Errorf("%q: %+v, want %d calls", before, got.Results, want)
		}
	}
}
