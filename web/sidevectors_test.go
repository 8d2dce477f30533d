package web

import (
	"encoding/json"
	"flag"
	"net/http"
	"net/url"
	"path/filepath"
	"testing"

	"github.com/zrviz/zrviz/internal/imgedit"
)

var writeSideVectors = flag.Bool("side-vectors", false, "write static/jstest/testdata/side.json (the node tests of aftercheck.js, writeback.js and opsform.js read it)")

// TestSideVectors: static/jstest/testdata/side.json holds what the server answers for the player's
// side panels — the ops language's forms (the page's data-forms), a kernel sequence's writeback, an
// after-image check that agrees and one that differs — so the node tests word what the server
// really sends. It fails when the file is stale; -side-vectors rewrites it.
func TestSideVectors(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: copies of a 256 MiB image")
	}
	ts := mustOpenServer(t, Config{})
	stock := filepath.Join(kernelCasesDir, "6.after.img.zst")
	addKernelImage(t, ts, "k6", stock, nil)
	addKernelImage(t, ts, "k6doc", stock, func(e imgedit.Editor) {
		if err := e.SetBlockValid(5634, true); err != nil {
			t.Fatal(err)
		}
		if err := e.SetSlot(30, 5, 5634); err != nil {
			t.Fatal(err)
		}
	})
	raw := func(path string) json.RawMessage {
		res, err := http.Get(ts.ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var v any
		if err := json.NewDecoder(res.Body).Decode(&v); err != nil || res.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d %v", path, res.StatusCode, err)
		}
		b, _ := json.Marshal(v)
		return b
	}
	six := seqQuery(t, filepath.Join(kernelCasesDir, "6.ops"), "both")
	check := func(id string) json.RawMessage {
		q := cloneValues(six)
		q.Set(FieldAfter, id)
		return raw("/api/images/demo/aftercheck?" + q.Encode())
	}
	seq := seqQuery(t, filepath.Join(kernelSeqDir, "b-holes-partial-sync", "ops"), "both")
	overlap := seqQuery(t, filepath.Join(kernelSeqDir, "a-holes-partial", "ops"), "both")
	out := map[string]any{
		"comment":   "written by go test ./web -run TestSideVectors -side-vectors",
		"forms":     json.RawMessage(opFormsJSON()),
		"writeback": raw("/api/images/demo/writeback?" + seq.Encode()),
		"overlap":   raw("/api/images/demo/writeback?" + overlap.Encode()),
		"agree":     check("k6"),
		"differs":   check("k6doc"),
		"run6":      url.Values(six).Encode(),
	}
	checkVectors(t, "../static/jstest/testdata/side.json", out, *writeSideVectors, "go test ./web -run TestSideVectors -side-vectors")
}
