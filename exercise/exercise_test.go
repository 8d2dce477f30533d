package exercise

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/zrviz/zrviz/internal/testutil"

	"github.com/zrviz/zrviz/core"
	"github.com/zrviz/zrviz/imgio"
	"github.com/zrviz/zrviz/sandbox"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

func demo(t testing.TB) *imgio.Image {
	t.Helper()
	img, err := imgio.OpenFileContext(context.Background(), testutil.DemoImage(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { img.Close() })
	return img
}

// render is everything an exercise prints: text with and without answers, and JSON.
func render(t *testing.T, e *Exercise) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := e.WriteText(&b, false); err != nil {
		t.Fatal(err)
	}
	if err := e.WriteText(&b, true); err != nil {
		t.Fatal(err)
	}
	j, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	b.Write(j)
	return b.Bytes()
}

func TestSameSeedSameExercise(t *testing.T) {
	img, img2 := demo(t), demo(t)
	for _, k := range []Kind{Slots, File} {
		for _, seed := range []uint64{0, 1, 42, 1 << 63} {
			a, err := New(seed, k, img, "")
			if err != nil {
				t.Fatal(err)
			}
			b, err := New(seed, k, img2, "")
			if err != nil {
				t.Fatal(err)
			}
			if ra, rb := render(t, a), render(t, b); !bytes.Equal(ra, rb) {
				t.Errorf("seed %d %s: two runs differ:\n%s\n---\n%s", seed, k, ra, rb)
			}
		}
	}
	// Different seeds give different exercises (not one fixed problem).
	seen := map[string]bool{}
	for seed := range uint64(8) {
		e, err := New(seed, Slots, nil, "")
		if err != nil {
			t.Fatal(err)
		}
		seen[e.Slots] = true
	}
	if len(seen) < 6 {
		t.Errorf("8 seeds gave only %d different slot lists", len(seen))
	}
}

// The golden files pin the exercises of a few seeds, so the same seed gives the same exercise on
// every machine and after every change that does not mean to alter them.
func TestGolden(t *testing.T) {
	img := demo(t)
	for _, tc := range []struct {
		seed uint64
		kind Kind
	}{{1, Slots}, {7, Slots}, {3, File}} {
		e, err := New(tc.seed, tc.kind, img, "")
		if err != nil {
			t.Fatal(err)
		}
		got := render(t, e)
		name := filepath.Join("testdata", string(tc.kind)+"-"+strconv.FormatUint(tc.seed, 10)+".golden")
		if *update {
			if err := os.WriteFile(name, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(name)
		if err != nil {
			t.Fatalf("%v (run go test ./exercise -update)", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s changed:\n%s", name, got)
		}
	}
}

// Every answer agrees with a separate engine run, for many seeds of both kinds.
func TestAnswersAgreeWithEngine(t *testing.T) {
	img := demo(t)
	seeds := 40
	if testing.Short() {
		seeds = 10
	}
	asked := map[string]int{}
	for _, k := range []Kind{Slots, File} {
		for seed := range uint64(seeds) {
			e, err := New(seed, k, img, "")
			if err != nil {
				t.Fatalf("seed %d %s: %v", seed, k, err)
			}
			if n := len(e.Questions); n < 3 || n > 5 {
				t.Errorf("seed %d %s: %d questions, want 3 to 5", seed, k, n)
			}
			// The problem as printed is what the questions are about.
			in, req := e.Input()
			if k == Slots {
				l, err := sandbox.Parse(e.Slots)
				if err != nil {
					t.Fatalf("seed %d: %q: %v", seed, e.Slots, err)
				}
				in, req = l.Input(), l.Request()
			} else if req.Offset != e.Offset || req.Length != e.Length || in.Path != e.Path {
				t.Fatalf("seed %d: request %+v for %s, text says %s %d %d", seed, req, in.Path, e.Path, e.Offset, e.Length)
			}
			for _, q := range e.Questions {
				asked[q.Ask]++
				if want := check(t, in, req, q); q.Answer != want {
					t.Errorf("seed %d %s: %q: answer %q, the engine says %q", seed, k, q.Text, q.Answer, want)
				}
				if q.Choices != nil && !slices.Contains(q.Choices, q.Answer) {
					t.Errorf("seed %d %s: answer %q is not among %v", seed, k, q.Answer, q.Choices)
				}
			}
		}
	}
	for _, a := range []string{AskCalls, AskFlush, AskPrefree, AskReserved, AskErrno, AskChunks, AskBlocks, AskLongest} {
		if asked[a] == 0 && !testing.Short() {
			t.Errorf("no seed asked a %q question", a)
		}
	}
}

// check answers q from its own engine run, reading the result rather than the events where it can.
func check(t *testing.T, in core.Input, req core.Request, q Question) string {
	t.Helper()
	mode := q.Mode
	if q.Ask == AskReserved || q.Ask == AskChunks || q.Ask == AskBlocks {
		// The same in both modes: the exercise asked the batched run, check against per-block.
		mode = core.PerBlock
	}
	var firstPrefree = "none"
	var flushed bool
	r, err := core.Walk(in, req, mode, func(ev *core.Event) bool {
		if ev.Kind == core.EvSITUpdate && ev.SegAfter == core.SegPrefree && ev.SegBefore != core.SegPrefree && firstPrefree == "none" {
			firstPrefree = strconv.FormatUint(uint64(ev.Segno), 10)
		}
		if ev.Kind == core.EvInvalidate && ev.Action == core.ActDiscontiguous && ev.Slot == q.Slot {
			flushed = true
		}
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	u := func(n uint64) string { return strconv.FormatUint(n, 10) }
	switch q.Ask {
	case AskCalls:
		return u(r.Calls.Len())
	case AskFlush:
		return map[bool]string{true: "yes", false: "no"}[flushed]
	case AskPrefree:
		return firstPrefree
	case AskReserved:
		return u(r.Stats.Reserved)
	case AskErrno:
		if r.Errno == "" {
			return "0"
		}
		return r.Errno
	case AskChunks:
		return u(r.Stats.DnodeChunks)
	case AskBlocks:
		// Every block of every call, less those whose bit was already clear. (Segment counts
		// would not do: an inline file's conversion first writes the block it then releases.)
		n := uint64(0)
		for c := range r.Calls.All() {
			n += uint64(c.Len)
		}
		return u(n - r.Stats.WronglyCleared)
	case AskLongest:
		longest := uint32(0)
		for c := range r.Calls.All() {
			longest = max(longest, c.Len)
		}
		return u(uint64(longest))
	}
	t.Fatalf("unknown question kind %q", q.Ask)
	return ""
}

func TestJSONShape(t *testing.T) {
	img := demo(t)
	for _, k := range []Kind{Slots, File} {
		e, err := New(5, k, img, "")
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		want := []string{"seed", "kind", "slots", "questions"}
		if k == File {
			want = []string{"seed", "kind", "path", "offset", "length", "questions"}
		}
		for _, key := range want {
			if _, ok := m[key]; !ok {
				t.Errorf("%s: JSON lacks %q: %s", k, key, b)
			}
		}
		if len(m) != len(want) {
			t.Errorf("%s: JSON has %d keys, want %v: %s", k, len(m), want, b)
		}
		for _, q := range m["questions"].([]any) {
			qm := q.(map[string]any)
			if len(qm) != 2 || qm["text"] == "" || qm["answer"] == "" {
				t.Errorf("%s: question %v, want {text, answer}", k, qm)
			}
		}
	}
}

func TestErrors(t *testing.T) {
	if _, err := New(1, File, nil, ""); err == nil {
		t.Error("kind file without an image: no error")
	}
	if _, err := New(1, "bogus", nil, ""); err == nil {
		t.Error("unknown kind: no error")
	}
	if _, err := ParseKind("files"); err == nil {
		t.Error("ParseKind(files): no error")
	}
	if k, err := ParseKind(""); err != nil || k != Slots {
		t.Errorf("ParseKind(\"\") = %v, %v", k, err)
	}
}
