package ktrace

import (
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"math"
	"strconv"
)

// Format is how a trace was written.
type Format string

// Trace formats.
const (
	FormatFtrace Format = "ftrace" // /sys/kernel/tracing/trace text of a kprobe on f2fs_invalidate_blocks
	FormatPlain  Format = "plain"  // lines ADDR [LEN]
)

// Call is one f2fs_invalidate_blocks(Start, Len) call. Its JSON form is [start,len].
type Call struct {
	Start uint32
	Len   uint32
}

// MarshalJSON writes [start,len].
func (c Call) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, 24)
	b = append(b, '[')
	b = strconv.AppendUint(b, uint64(c.Start), 10)
	b = append(b, ',')
	b = strconv.AppendUint(b, uint64(c.Len), 10)
	return append(b, ']'), nil
}

// UnmarshalJSON reads [start,len].
func (c *Call) UnmarshalJSON(b []byte) error {
	var v [2]uint32
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	c.Start, c.Len = v[0], v[1]
	return nil
}

// callRun is n calls (start, len), (start+len, len), …: a per-block trace of contiguous blocks, or
// a batched one of equal runs, is a handful of these.
type callRun struct{ start, len, n uint32 }

// Calls is a list of calls in call order, stored compressed. Its JSON form is [[start,len],...].
// The zero value is an empty list.
type Calls struct {
	runs []callRun
	n    int
}

// Append adds a call at the end.
func (c *Calls) Append(x Call) {
	c.n++
	if k := len(c.runs) - 1; k >= 0 {
		r := &c.runs[k]
		if r.len == x.Len && r.n < math.MaxUint32 && uint64(r.start)+uint64(r.n)*uint64(r.len) == uint64(x.Start) {
			r.n++
			return
		}
	}
	c.runs = append(c.runs, callRun{start: x.Start, len: x.Len, n: 1})
}

// Len returns the number of calls.
func (c *Calls) Len() int { return c.n }

// All yields the calls in order.
func (c *Calls) All() iter.Seq[Call] {
	return func(yield func(Call) bool) {
		for _, r := range c.runs {
			for k := uint32(0); k < r.n; k++ {
				if !yield(Call{Start: r.start + k*r.len, Len: r.len}) {
					return
				}
			}
		}
	}
}

// Slice returns the calls as a slice.
func (c *Calls) Slice() []Call {
	out := make([]Call, 0, c.n)
	for x := range c.All() {
		out = append(out, x)
	}
	return out
}

// MemSize is about how many bytes the list holds, for callers that bound what they keep.
func (c *Calls) MemSize() int { return cap(c.runs) * 12 }

// MarshalJSON writes [[start,len],...] in call order.
func (c Calls) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, 2+c.n*14)
	b = append(b, '[')
	for x := range c.All() {
		if len(b) > 1 {
			b = append(b, ',')
		}
		b = append(b, '[')
		b = strconv.AppendUint(b, uint64(x.Start), 10)
		b = append(b, ',')
		b = strconv.AppendUint(b, uint64(x.Len), 10)
		b = append(b, ']')
	}
	return append(b, ']'), nil
}

// Op is the calls the kernel made during one operation.
type Op struct {
	// Line is the 1-based line of the op's "zr_op K" marker; 0 when the trace has no markers (then it
	// is one operation).
	Line  int   `json:"line"`
	Calls Calls `json:"calls"`
	// Victims are the op's f2fs_get_victim events (garbage collection: a gc op, or f2fs_balance_fs
	// inside another op), in order; GCEnds the ret of each f2fs_gc_end.
	Victims []Victim `json:"victims,omitempty"`
	GCEnds  []int    `json:"gcEnds,omitempty"`
	// SSR are the op's f2fs_get_victim events in SSR mode (need_new_seg → get_ssr_segment: the
	// partly valid segment a full log moved into), in order; Mode and Log are set on these.
	SSR []Victim `json:"ssr,omitempty"`
}

// Victim is one f2fs_get_victim event: "policy = (Foreground GC, LFS-mode, Greedy), victim = 11,
// cost = 448".
type Victim struct {
	Type   string `json:"type"`   // "FG" or "BG"
	Policy string `json:"policy"` // "greedy" or "cost-benefit" (the tracepoint's Greedy, Cost-Benefit)
	Segno  uint32 `json:"victim"`
	Cost   uint32 `json:"cost"`
	// Mode is "SSR" (or "AT_SSR") for a search get_ssr_segment made, "" for garbage collection's.
	Mode string `json:"mode,omitempty"`
	// Log is the type an SSR search looked at, as the tracepoint prints it ("Warm DATA").
	Log string `json:"log,omitempty"`
}

// Trace is a parsed kernel trace.
type Trace struct {
	Format Format `json:"format"`
	Ops    []Op   `json:"ops"` // at least one
	Lines  int    `json:"lines"`
	// Outside counts calls that were recorded outside every operation: before the first zr_op
	// marker or after "zr_op end". They are not compared.
	Outside int `json:"outside"`
	// Sized reports whether the calls carry their length (len= or a LEN column): a trace without it
	// comes from a kernel whose f2fs_invalidate_blocks takes one block (before 6.14).
	Sized bool `json:"sized"`
}

// Calls returns the number of calls over all operations.
func (t *Trace) Calls() int {
	n := 0
	for i := range t.Ops {
		n += t.Ops[i].Calls.Len()
	}
	return n
}

// MemSize is about how many bytes the trace holds.
func (t *Trace) MemSize() int {
	n := 64
	for i := range t.Ops {
		n += 48 + t.Ops[i].Calls.MemSize()
	}
	return n
}

// Default limits of [Parse]. A per-block trace of a 64 GiB range is 16,777,216 calls.
const (
	DefaultMaxLines   = 1 << 25 // lines of input, blank and ignored ones included
	DefaultMaxLineLen = 4096    // bytes in one line
	DefaultMaxCalls   = 1 << 24 // calls over all operations
	DefaultMaxOps     = 64      // operations (zr_op markers); request.MaxOps
)

// Limits bound what [Parse] reads: a trace may be an upload. Zero fields take the defaults.
type Limits struct {
	MaxLines   int
	MaxLineLen int
	MaxCalls   int
	MaxOps     int
}

func (l Limits) withDefaults() Limits {
	if l.MaxLines <= 0 {
		l.MaxLines = DefaultMaxLines
	}
	if l.MaxLineLen <= 0 {
		l.MaxLineLen = DefaultMaxLineLen
	}
	if l.MaxCalls <= 0 {
		l.MaxCalls = DefaultMaxCalls
	}
	if l.MaxOps <= 0 {
		l.MaxOps = DefaultMaxOps
	}
	return l
}

// ErrEmpty is matched by the error of a trace that records nothing: no call, no zr_op marker.
var ErrEmpty = errors.New("ktrace: empty trace")

// ErrLimit is matched by every [LimitError].
var ErrLimit = errors.New("ktrace: trace too large")

// want is what a trace is made of, for error messages.
const want = "ftrace text from a kprobe on f2fs_invalidate_blocks (lines with addr=N [len=N], " +
	"zr_op markers from trace_marker) or plain lines ADDR [LEN]"

// SyntaxError is a line that cannot be read.
type SyntaxError struct {
	Line int    // 1-based
	Text string // the line, shortened
	Want string // what was expected there
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("ktrace: line %d (%s): want %s", e.Line, e.Text, e.Want)
}

// BinaryError is a trace that is not text: a compressed file, an image, a perf.data. It says where
// the first byte no text trace holds is, never the bytes themselves.
type BinaryError struct {
	Off    int64  // byte offset from the start of the trace
	Byte   byte   // the byte there
	Format string // "gzip", "zstd" or "xz" when the trace starts as such a file, else ""
}

func (e *BinaryError) Error() string {
	s := fmt.Sprintf("ktrace: not a text trace: binary data at byte %d (0x%02x)", e.Off, e.Byte)
	if e.Format != "" {
		s += fmt.Sprintf("; it is a %s file: unpack it first", e.Format)
	}
	return s
}

// LimitError is a trace over one of its [Limits].
type LimitError struct {
	Line  int    // 1-based line where the limit was passed
	What  string // "lines", "bytes in a line", "calls", "operations"
	Limit int
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("ktrace: line %d: more than %d %s", e.Line, e.Limit, e.What)
}

// Is reports whether target is ErrLimit.
func (e *LimitError) Is(target error) bool { return target == ErrLimit }

// quoteLine shows a line in an error: quoted, at most 80 bytes of it.
func quoteLine(b []byte) string {
	const max = 80
	if len(b) > max {
		return strconv.Quote(string(b[:max])) + "…"
	}
	return strconv.Quote(string(b))
}
