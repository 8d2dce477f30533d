package web

import (
	"net/http"
	"net/url"
	"testing"
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
	q := url.Values{"path": {"/cases/holes.bin"}, FieldBefore: {"punch /cases/holes.bin 0 4096"}}
	var e struct{ Error string }
	if code := ts.get(t, "/api/images/demo/run?"+q.Encode(), &e); code != http.StatusBadRequest {
		t.Errorf("an unknown operation: %d %s", code, e.Error)
	}
}
