package web

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"net/url"
	"testing"

	"github.com/zrviz/zrviz/core"
	"github.com/zrviz/zrviz/gc"
	"github.com/zrviz/zrviz/imgio"
	"github.com/zrviz/zrviz/internal/testutil"
	"github.com/zrviz/zrviz/request"
	"github.com/zrviz/zrviz/source"
)

var writeContract = flag.Bool("contract-vectors", false, "write static/jstest/testdata/contract.json (the node tests install the contract from it, and check contract.js's segment formula against it)")

// segmentVector is an address and the segment the engine charged it to, on the demo image.
type segmentVector struct {
	Addr  uint32 `json:"addr"`
	Segno uint32 `json:"segno"`
}

// TestContract: every page carries the contract (contract.go) as built from Go's constants, and
// static/jstest/testdata/contract.json is that copy as the pages render it, with the SIT updates
// of real runs on the demo image (an address, the segment the engine charged it to) for
// contract.js's segment formula. It fails when the file is stale; -contract-vectors rewrites it.
func TestContract(t *testing.T) {
	want := newPageContract()
	// What the contract claims, against the constants it is built from.
	if got := want.Modes.Order; len(got) != 2 || got[0] != want.Modes.PerBlock || got[1] != want.Modes.Batched {
		t.Errorf("modes %v: want per-block first (the protocol's order)", want.Modes)
	}
	if ms, err := request.ParseModes(want.Modes.Both); err != nil || len(ms) != len(core.Modes) {
		t.Errorf("the contract's both %q reads as %v, %v", want.Modes.Both, ms, err)
	}
	var classes []string
	if err := json.Unmarshal(mustJSON(t, []any{want.SegmentClasses.Free, want.SegmentClasses.Dirty, want.SegmentClasses.Full,
		want.SegmentClasses.Prefree, want.SegmentClasses.Current}), &classes); err != nil {
		t.Fatal(err)
	}
	named := map[string]bool{}
	for i, n := range classes {
		if n != core.SegClass(i).String() {
			t.Errorf("segment class %d is %q in the contract, %q in core", i, n, core.SegClass(i))
		}
		named[n] = true
	}
	letterOf := map[string]string{}
	for l, n := range want.ClassLetters {
		if len(l) != 1 || !named[n] || letterOf[n] != "" {
			t.Errorf("class letter %q names %q: want one byte per class", l, n)
		}
		letterOf[n] = l
	}
	if len(letterOf) != len(classes) {
		t.Errorf("class letters %v: want one for each of %v", want.ClassLetters, classes)
	}
	if want.Segment.Base == "" || want.Segment.PerSegment == "" {
		t.Errorf("the segment formula names geometry fields that are not in the hello's geometry: %+v", want.Segment)
	}
	geo := map[string]any{}
	if err := json.Unmarshal(mustJSON(t, geometry{}), &geo); err != nil {
		t.Fatal(err)
	}
	if _, ok := geo[want.Segment.Base]; !ok {
		t.Errorf("the hello's geometry has no %q", want.Segment.Base)
	}
	for _, n := range want.LogTypes {
		if n == "" {
			t.Errorf("a log type without a name: %q", want.LogTypes)
		}
	}

	// Every page renders the same contract, once.
	ts := mustOpenServer(t, Config{})
	run := "/images/demo/run?" + url.Values{"path": {"/seed/bench64.bin"}}.Encode()
	var rendered []byte
	for _, page := range []string{"/", "/images/demo", "/images/demo/file?path=/seed/bench64.bin", run, "/sandbox", "/glossary", "/images/nosuch"} {
		doc, _ := ts.getPage(t, page)
		s := doc.Find("script#zrviz-contract")
		if s.Length() != 1 {
			t.Errorf("%s: %d contracts, want 1", page, s.Length())
			continue
		}
		if typ, _ := s.Attr("type"); typ != "application/json" {
			t.Errorf("%s: the contract's type is %q", page, typ)
		}
		var got pageContract
		if err := json.Unmarshal([]byte(s.Text()), &got); err != nil {
			t.Fatalf("%s: %v", page, err)
		}
		if g, w := mustJSON(t, got), mustJSON(t, want); !bytes.Equal(g, w) {
			t.Errorf("%s: the contract is\n%s\nwant\n%s", page, g, w)
		}
		if page == run {
			rendered = []byte(s.Text())
		}
	}

	var raw any
	if err := json.Unmarshal(rendered, &raw); err != nil {
		t.Fatal(err)
	}
	vols, vecs := segmentVectors(t)
	checkVectors(t, "../static/jstest/testdata/contract.json", map[string]any{
		"comment":  "written by go test ./web -run TestContract -contract-vectors: the contract as the run page renders it, and the segment each SIT update of real runs on the demo image charged (geometry: the demo's)",
		"contract": raw,
		"geometry": vols,
		"segments": vecs,
	}, *writeContract, "go test ./web -run TestContract -contract-vectors")
}

// segmentVectors runs both modes on files of the demo image whose blocks lie in many segments and
// returns the demo's geometry (as the hello sends it) and each SIT update's first and last block
// with the segment the engine charged.
func segmentVectors(t *testing.T) (geometry, []segmentVector) {
	t.Helper()
	img, err := imgio.OpenFileContext(context.Background(), testutil.DemoImage(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { img.Close() })
	var g geometry
	var out []segmentVector
	seen := map[segmentVector]bool{}
	for _, path := range []string{"/seed/bench64.bin", "/cases/fragmented.bin"} {
		in, err := source.Input(img, path)
		if err != nil {
			t.Fatal(err)
		}
		v := in.Volume
		g = geometry{BlockSize: v.BlockSize, BlocksPerSeg: v.BlocksPerSeg, Segment0Blkaddr: v.Segment0Blkaddr,
			MainBlkaddr: v.MainBlkaddr, MaxBlkaddr: v.MaxBlkaddr, SegsPerSec: v.SegsPerSec}
		if _, err := core.Walk(in, core.Request{Length: 1 << 40, KeepSize: true}, core.Batched, func(ev *core.Event) bool {
			if ev.Kind == core.EvSITUpdate {
				for _, a := range []uint32{ev.Addr, ev.Addr + ev.Len - 1} {
					if k := (segmentVector{a, ev.Segno}); !seen[k] {
						seen[k] = true
						out = append(out, k)
					}
				}
			}
			return true
		}); err != nil {
			t.Fatal(err)
		}
	}
	segs := map[uint32]bool{}
	for _, v := range out {
		segs[v.Segno] = true
	}
	if len(segs) < 10 {
		t.Fatalf("the runs updated %d segments: too few to hold the formula to", len(segs))
	}
	return g, out
}

// TestClassLetters: segmentClassLetters pairs each class with the letter gc's timeline sends for
// it: on the demo, mounted, with a full segment emptied (prefree) and another halved (dirty), each
// segment's letter in gc's snapshot is the contract's letter for the class gc names — and every
// class gc names is core's.
func TestClassLetters(t *testing.T) {
	img, err := imgio.OpenFileContext(context.Background(), testutil.DemoImage(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { img.Close() })
	v, err := source.GCVolume(img)
	if err != nil {
		t.Fatal(err)
	}
	st, err := gc.Mount(v)
	if err != nil {
		t.Fatal(err)
	}
	var full []uint32
	for segno := range st.Segments() {
		if st.Class(segno) == core.SegFull.String() {
			full = append(full, segno)
		}
	}
	if len(full) < 2 {
		t.Fatalf("the demo has %d full segments, want 2 to empty and halve", len(full))
	}
	if err := st.InvalidateRange(full[0], 0, 512); err != nil {
		t.Fatal(err)
	}
	if err := st.InvalidateRange(full[1], 0, 256); err != nil {
		t.Fatal(err)
	}
	letterOf := map[string]byte{}
	for _, c := range segmentClassLetters() {
		letterOf[c.class.String()] = c.letter
	}
	snap := st.Snap()
	seen := map[string]bool{}
	for segno := range st.Segments() {
		name := st.Class(segno)
		l, ok := letterOf[name]
		if !ok || snap.Classes[segno] != l {
			t.Fatalf("segment %d: gc calls it %q, sends %q; the contract's letter is %q (%v)", segno, name, snap.Classes[segno], l, ok)
		}
		seen[name] = true
	}
	if len(seen) != len(letterOf) {
		t.Errorf("the demo's segments cover the classes %v of %d", seen, len(letterOf))
	}
}
