package request

import (
	"errors"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/zrviz/zrviz/core"
)

func TestParse(t *testing.T) {
	for _, c := range []struct {
		query string
		want  Run
	}{
		{"path=/a", Run{Path: "/a", Modes: Both()}},
		{"path=/a&offset=0x1000&length=1MiB&keepSize=on&mode=batched",
			Run{Path: "/a", Offset: 4096, Length: 1 << 20, HasLength: true, KeepSize: true, Modes: []core.Mode{core.Batched}}},
		{"path=/a&offset=9223372036854775807&mode=per-block",
			Run{Path: "/a", Offset: math.MaxInt64, Modes: []core.Mode{core.PerBlock}}},
		{"path=/a&offset=-1&length=0&keepSize=false&mode=both", Run{Path: "/a", Offset: -1, HasLength: true, Modes: Both()}},
		{"path=/a&mode=stock", Run{Path: "/a", Modes: []core.Mode{core.PerBlock}}},
	} {
		q, _ := url.ParseQuery(c.query)
		got, err := Parse(q.Get)
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("Parse(%s) = %+v, %v; want %+v", c.query, got, err, c.want)
		}
	}
}

func TestParseErrorsNameTheField(t *testing.T) {
	for _, c := range []struct{ query, field string }{
		{"", FieldPath}, {"path=a", FieldPath}, {"path=/a&offset=x", FieldOffset}, {"path=/a&length=1.5", FieldLength},
		{"path=/a&keepSize=maybe", FieldKeepSize}, {"path=/a&mode=fast", FieldMode},
		{"path=/" + strings.Repeat("a", 4096), FieldPath},
	} {
		q, _ := url.ParseQuery(c.query)
		_, err := Parse(q.Get)
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != c.field {
			t.Errorf("Parse(%.40s): %v; want a *FieldError on %s", c.query, err, c.field)
		}
	}
}

// TestRequestDefaultLength: one default, to the end of the file; never negative, never invented.
func TestRequestDefaultLength(t *testing.T) {
	for _, c := range []struct {
		r          Run
		size, want int64
	}{
		{Run{}, 10000, 10000},
		{Run{Offset: 4096}, 10000, 5904},
		{Run{Offset: 10000}, 10000, 0},
		{Run{Offset: 20000}, 10000, 0},
		{Run{Offset: -5}, 10000, 0},
		{Run{}, 0, 0},
		{Run{Offset: 1, Length: 7, HasLength: true}, 10000, 7},
		{Run{Offset: 1, Length: -7, HasLength: true}, 10000, -7},
	} {
		if got := c.r.Request(c.size).Length; got != c.want {
			t.Errorf("%+v.Request(%d).Length = %d, want %d", c.r, c.size, got, c.want)
		}
	}
}

// values is the query that describes r, the length left out when it defaults; numbers are decimal
// strings, as a permalink carries them.
func values(r Run) url.Values {
	q := url.Values{FieldPath: {r.Path}, FieldOffset: {strconv.FormatInt(r.Offset, 10)}, FieldMode: {r.ModeName()}}
	if r.HasLength {
		q.Set(FieldLength, strconv.FormatInt(r.Length, 10))
	}
	if r.KeepSize {
		q.Set(FieldKeepSize, "true")
	}
	return q
}

func TestValuesRoundTrip(t *testing.T) {
	for _, r := range []Run{
		{Path: "/seed/bench64.bin", Modes: Both()},
		{Path: "/a b", Offset: math.MaxInt64, Length: 5, HasLength: true, KeepSize: true, Modes: []core.Mode{core.Batched}},
	} {
		got, err := Parse(values(r).Get)
		if err != nil || !reflect.DeepEqual(got, r) {
			t.Errorf("round trip of %+v via %s = %+v, %v", r, values(r).Encode(), got, err)
		}
	}
}

func TestParseOps(t *testing.T) {
	in := "# setup\n\nzero /cases/a.bin 0 4096\n  zero /cases/b.bin 0x1000 1MiB keep_size  \n"
	got, err := ParseOps(strings.NewReader(in))
	want := []Op{
		{Kind: OpZero, Run: Run{Path: "/cases/a.bin", Length: 4096, HasLength: true, Modes: Both()}},
		{Kind: OpZero, Run: Run{Path: "/cases/b.bin", Offset: 4096, Length: 1 << 20, HasLength: true, KeepSize: true, Modes: Both()}},
	}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("ParseOps = %+v, %v", got, err)
	}
	if s := want[1].OpLine(0); s != "zero /cases/b.bin 4096 1048576 keep_size" {
		t.Errorf("OpLine = %q", s)
	}
	for _, bad := range []string{"", "# only\n", "punch /a 0\n", "truncate /a\n", "truncate /a 1 2\n", "zero /a 0\n", "zero a 0 1\n", "zero /a 0 1 keep\n",
		"sync now\n", "fsync\n", "fsync a\n", "write /a 0\n", "write /a 0 1 keep_size\n", "tune ipu_policy\n",
		"tune min_ipu_util 5\n", "tune reserved_blocks\n", "tune ipu_policy x\n",
		"zero /a x 1\n", "zero /a 0 1\n" + strings.Repeat("zero /a 0 1\n", MaxOps)} {
		if _, err := ParseOps(strings.NewReader(bad)); err == nil {
			t.Errorf("ParseOps(%.30q) accepted", bad)
		}
	}
	_, err = ParseOps(strings.NewReader("zero /a 0 1\nzero /a 0 zz\n"))
	var le *LineError
	if !errors.As(err, &le) || le.Line != 2 {
		t.Errorf("bad second line: %v; want a *LineError on line 2", err)
	}
}

// TestParseOpsKinds: the operations besides zero, and OpLine writing each back.
func TestParseOpsKinds(t *testing.T) {
	in := "zero /h.bin 67584 195560   # partial pages\nsync\t# then\nwrite /h.bin 4096 0x2000\nfsync /h.bin\ntune ipu_policy 16\nzero /h.bin 0 512KiB keep_size\n"
	got, err := ParseOps(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []Op{
		{Kind: OpZero, Run: Run{Path: "/h.bin", Offset: 67584, Length: 195560, HasLength: true, Modes: Both()}},
		{Kind: OpSync},
		{Kind: OpWrite, Run: Run{Path: "/h.bin", Offset: 4096, Length: 8192, HasLength: true}},
		{Kind: OpFsync, Run: Run{Path: "/h.bin"}},
		{Kind: OpTune, Name: "ipu_policy", Value: 16},
		{Kind: OpZero, Run: Run{Path: "/h.bin", Length: 512 << 10, HasLength: true, KeepSize: true, Modes: Both()}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("ParseOps = %+v\nwant %+v", got, want)
	}
	lines := []string{"zero /h.bin 67584 195560", "sync", "write /h.bin 4096 8192", "fsync /h.bin", "tune ipu_policy 16",
		"zero /h.bin 0 524288 keep_size"}
	for i, op := range got {
		if s := op.OpLine(0); s != lines[i] {
			t.Errorf("OpLine %d = %q, want %q", i, s, lines[i])
		}
		if op.IsZero() != (op.Kind == OpZero) {
			t.Errorf("IsZero of %s", op.Kind)
		}
	}
}

// TestParseOpsGC: checkpoint, gc 1, gc 0 and now SECONDS, and their refusals.
func TestParseOpsGC(t *testing.T) {
	got, err := ParseOps(strings.NewReader("checkpoint\ngc 1 # foreground\ngc 0\nnow 30\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := []Op{{Kind: OpCheckpoint}, {Kind: OpGC, Value: 1}, {Kind: OpGC}, {Kind: OpNow, Value: 30}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("ParseOps = %+v\nwant %+v", got, want)
	}
	for i, l := range []string{"checkpoint", "gc 1", "gc 0", "now 30"} {
		if s := got[i].OpLine(0); s != l {
			t.Errorf("OpLine %d = %q, want %q", i, s, l)
		}
	}
	for _, bad := range []string{"gc", "gc 2", "gc 1 1", "checkpoint now", "now", "now -1", "now 1.5", "now 4294967296"} {
		if _, err := ParseOp(bad); err == nil {
			t.Errorf("ParseOp(%q) succeeded", bad)
		}
	}
}

// TestOpsFixtures parses every kernel case's ops file.
func TestOpsFixtures(t *testing.T) {
	files, _ := filepath.Glob("../core/testdata/kernel-cases/*.ops")
	if len(files) < 12 {
		t.Fatalf("found %d ops files", len(files))
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		ops, err := ParseOps(strings.NewReader(string(b)))
		if err != nil || len(ops) == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
}
