package core

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"testing"
)

// TestContextStopsTheLoops: SimulateContext and WalkContext give up with the context's error, at
// once for a context already done and soon after one cancelled mid-run (well before the run's end:
// they look at it every ctxEvery turns, a turn being an event or a chunk's pass 2), and a context
// that is never done changes nothing.
func TestContextStopsTheLoops(t *testing.T) {
	const n = 1 << 20 // 4 GiB contiguous: ~1,030 dnode chunks
	in := contiguousInput(n)
	req := Request{Length: n * 4096}
	for _, mode := range []Mode{PerBlock, Batched} {
		done, cancel := context.WithCancel(context.Background())
		cancel()
		if res, err := SimulateContext(done, in, req, mode); !errors.Is(err, context.Canceled) || res != nil {
			t.Errorf("%s: SimulateContext on a cancelled context = %v, %v; want context.Canceled", mode, res, err)
		}
		if res, err := WalkContext(done, in, req, mode, func(*Event) bool { return true }); !errors.Is(err, context.Canceled) || res != nil {
			t.Errorf("%s: WalkContext on a cancelled context = %v, %v; want context.Canceled", mode, res, err)
		}

		var total int64
		want, err := Walk(in, req, mode, func(*Event) bool { total++; return true })
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		var seen int64
		_, err = WalkContext(ctx, in, req, mode, func(*Event) bool {
			if seen++; seen == total/10 {
				cancel()
			}
			return true
		})
		cancel()
		if !errors.Is(err, context.Canceled) || seen >= total/2 {
			t.Errorf("%s: cancelled after %d of %d events: %v after %d; want context.Canceled well before the end", mode, total/10, total, err, seen)
		}

		got, err := SimulateContext(context.Background(), in, req, mode)
		if err != nil || got.Stats != want.Stats {
			t.Errorf("%s: SimulateContext = %+v, %v; Walk gave %+v", mode, got.Stats, err, want.Stats)
		}
	}
}

// TestSeqContext: a mount whose context is done stops a zero, a write, an fsync and a sync with
// the context's error; with a live context the same operations run (the result does not depend on
// it otherwise).
func TestSeqContext(t *testing.T) {
	const n = 1 << 16 // 256 MiB contiguous
	in := contiguousInput(n)
	done, cancel := context.WithCancel(context.Background())
	cancel()
	q := NewSeq(PerBlock)
	q.SetContext(done)
	if _, _, _, err := q.Zero(in, Request{Length: n * 4096}); !errors.Is(err, context.Canceled) {
		t.Errorf("zero: %v", err)
	}
	if _, err := q.Write(in, 0, 64<<20); !errors.Is(err, context.Canceled) {
		t.Errorf("write: %v", err)
	}
	live := NewSeq(PerBlock)
	if _, err := live.Write(in, 0, 64<<20); err != nil {
		t.Fatal(err)
	}
	live.SetContext(done)
	if _, err := live.Fsync(in); !errors.Is(err, context.Canceled) {
		t.Errorf("fsync of 16,384 dirty pages: %v", err)
	}
	if _, err := live.Sync(); !errors.Is(err, context.Canceled) {
		t.Errorf("sync: %v", err)
	}
	live.SetContext(context.Background())
	if r, err := live.Fsync(in); err != nil || len(r.Pages) != 16384 {
		t.Errorf("fsync with a live context: %v, %v", r, err)
	}
}

// TestResultWriteJSON: the one encoder of a result writes what json.Marshal does, byte for byte,
// with its calls streamed; extra members go before the closing brace.
func TestResultWriteJSON(t *testing.T) {
	in := contiguousInput(3000)
	for _, mode := range []Mode{PerBlock, Batched} {
		for _, req := range []Request{{Length: 3000 * 4096}, {Offset: 4096, Length: 5}, {Offset: -1, Length: 1}} {
			r, err := Simulate(in, req, mode)
			if err != nil {
				t.Fatal(err)
			}
			want, err := json.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			var b bytes.Buffer
			if err := r.WriteJSON(&b, nil); err != nil || b.String() != string(want) {
				t.Errorf("%s %+v: WriteJSON = %.120q…, %v; want json.Marshal's %.120q…", mode, req, b.String(), err, want)
			}
			extra, err := Members(struct {
				A int    `json:"a"`
				B string `json:"b,omitempty"`
			}{A: 7})
			if err != nil || string(extra) != `,"a":7` {
				t.Fatalf("Members = %q, %v", extra, err)
			}
			b.Reset()
			if err := r.WriteJSON(&b, extra); err != nil || b.String() != string(want[:len(want)-1])+`,"a":7}` {
				t.Errorf("%s %+v: with extra %.80q…", mode, req, b.String())
			}
		}
	}
	if m, err := Members(struct{}{}); m != nil || err != nil {
		t.Errorf("Members of an empty object = %q, %v", m, err)
	}
}
