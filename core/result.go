package core

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"iter"
	"math/bits"
	"strconv"
)

// Call is one f2fs_invalidate_blocks(Start, Len) call and why it was made.
type Call struct {
	Start  uint32 `json:"start"`
	Len    uint32 `json:"len"`
	Reason Action `json:"reason"`
}

// callRun compresses n calls (start, len), (start+len, len), … with one reason.
type callRun struct {
	start, len, n uint32
	reason        Action
}

// CallList holds the calls of a run in call order, compressed so a
// per-block run over millions of contiguous blocks stays small. Its JSON
// form is the expanded list [[start,len],...].
type CallList struct {
	runs  []callRun
	total uint64
	// limit, when > 0, keeps only the runs holding the latest limit calls or more (a player's
	// call log), so memory does not grow with a run of a million discontiguous calls.
	limit int
}

func (c *CallList) add(start, length uint32, reason Action) {
	c.total++
	if k := len(c.runs) - 1; k >= 0 {
		r := &c.runs[k]
		if r.len == length && r.reason == reason && uint64(r.start)+uint64(r.n)*uint64(r.len) == uint64(start) {
			r.n++
			return
		}
	}
	c.runs = append(c.runs, callRun{start: start, len: length, n: 1, reason: reason})
	if c.limit > 0 && len(c.runs) > 2*c.limit {
		// Every run holds at least one call: the last limit runs hold the last limit calls.
		c.runs = append(c.runs[:0], c.runs[len(c.runs)-c.limit:]...)
	}
}

// Len returns the number of calls.
func (c *CallList) Len() uint64 { return c.total }

// All yields the calls in order.
func (c *CallList) All() iter.Seq[Call] {
	return func(yield func(Call) bool) {
		for _, r := range c.runs {
			for k := uint32(0); k < r.n; k++ {
				if !yield(Call{Start: r.start + k*r.len, Len: r.len, Reason: r.reason}) {
					return
				}
			}
		}
	}
}

// Last returns up to k of the most recent calls, oldest first.
func (c *CallList) Last(k int) []Call {
	var out []Call
	for i := len(c.runs) - 1; i >= 0 && len(out) < k; i-- {
		r := c.runs[i]
		for j := int64(r.n) - 1; j >= 0 && len(out) < k; j-- {
			out = append(out, Call{Start: r.start + uint32(j)*r.len, Len: r.len, Reason: r.reason})
		}
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

// MarshalJSON writes [[start,len],...] in call order.
func (c CallList) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.Grow(int(min(c.total, 1<<20))*14 + 2)
	err := c.WriteJSON(&b)
	return b.Bytes(), err
}

// WriteJSON writes what MarshalJSON returns to w, a piece at a time: the expanded list of a
// million per-block calls is never held whole.
func (c *CallList) WriteJSON(w io.Writer) error {
	buf := make([]byte, 0, 32<<10)
	buf = append(buf, '[')
	first := true
	for call := range c.All() {
		if !first {
			buf = append(buf, ',')
		}
		first = false
		buf = append(buf, '[')
		buf = strconv.AppendUint(buf, uint64(call.Start), 10)
		buf = append(buf, ',')
		buf = strconv.AppendUint(buf, uint64(call.Len), 10)
		buf = append(buf, ']')
		if len(buf) > 31<<10 {
			if _, err := w.Write(buf); err != nil {
				return err
			}
			buf = buf[:0]
		}
	}
	buf = append(buf, ']')
	_, err := w.Write(buf)
	return err
}

// Histogram counts runs by length: bucket i holds lengths in [2^i, 2^(i+1)).
type Histogram [33]uint64

func (h *Histogram) add(length uint32) {
	if length > 0 {
		h[bits.Len32(length)-1]++
	}
}

// MarshalJSON writes the non-empty buckets as {"1":n,"2-3":n,"4-7":n,...}.
func (h Histogram) MarshalJSON() ([]byte, error) {
	m := map[string]uint64{}
	for i, v := range h {
		if v == 0 {
			continue
		}
		lo := uint64(1) << i
		hi := lo<<1 - 1
		k := strconv.FormatUint(lo, 10)
		if hi != lo {
			k += "-" + strconv.FormatUint(hi, 10)
		}
		m[k] = v
	}
	return json.Marshal(m)
}

// Stats are a run's counters.
type Stats struct {
	Steps               int64  `json:"steps"`
	Calls               uint64 `json:"calls"`
	SITLockAcquisitions uint64 `json:"sitLockAcquisitions"`
	SITPieces           uint64 `json:"sitPieces"` // update_sit_entry calls (one per segment per call)
	BlocksInvalidated   uint64 `json:"blocksInvalidated"`
	WronglyCleared      uint64 `json:"wronglyCleared"`
	DiscardBlocks       uint64 `json:"discardBlocks"` // discard-map bits cleared (discard_blks)
	DnodeChunks         uint64 `json:"dnodeChunks"`
	// Slot states met in the chunks' ranges before pass 1.
	SlotsAddr     uint64 `json:"slotsAddr"`
	SlotsNew      uint64 `json:"slotsNew"`
	SlotsNull     uint64 `json:"slotsNull"`
	SlotsCompress uint64 `json:"slotsCompress"`
	Reserved      uint64 `json:"reserved"` // NULL→NEW (pass 1, fill_zero, inline conversion)
	NodesAlloc    uint64 `json:"nodesAllocated"`
	// NodesFreed counts truncate_node calls (truncate); SlotsSkipped the addresses
	// f2fs_truncate_data_blocks_range cleared without freeing (they failed validation).
	NodesFreed    uint64 `json:"nodesFreed,omitempty"`
	SlotsSkipped  uint64 `json:"slotsSkipped,omitempty"`
	FillZeroPages uint64 `json:"fillZeroPages"`
	// Runs are the physical runs of the invalidated blocks (see [RunStarts]: contiguous
	// addresses in file order, across dnode chunks), in both modes. The batched mode issues one
	// call per run per chunk it crosses, more where a block fails validation.
	Runs            uint64    `json:"runs"`
	RunLengths      Histogram `json:"runLengths"`
	SegmentsTouched uint64    `json:"segmentsTouched"`
	SegmentsPrefree uint64    `json:"segmentsPrefree"` // became prefree
}

// Extent is a stretch of slots, in imgio's Extent JSON form: state is
// "addr" (Addr, Addr+1, …), "null", "new" or "compress".
type Extent struct {
	Index uint64 `json:"index"`
	Count uint64 `json:"count"`
	State string `json:"state"`
	Addr  uint32 `json:"addr,omitempty"`
}

// extentBuilder appends slots to a list of extents.
type extentBuilder struct{ ext []Extent }

func (b *extentBuilder) add(index uint64, a uint32) {
	st := stateOf(a)
	if k := len(b.ext) - 1; k >= 0 {
		e := &b.ext[k]
		if e.Index+e.Count == index && e.State == slotStateNames[st] &&
			(st != StateAddr || uint64(e.Addr)+e.Count == uint64(a)) {
			e.Count++
			return
		}
	}
	x := Extent{Index: index, Count: 1, State: slotStateNames[st]}
	if st == StateAddr {
		x.Addr = a
	}
	b.ext = append(b.ext, x)
}

// addSame appends cnt copies of a (a special value) starting at index.
func (b *extentBuilder) addSame(index uint64, a uint32, cnt uint64) {
	if cnt == 0 {
		return
	}
	b.add(index, a)
	b.ext[len(b.ext)-1].Count += cnt - 1
}

// addInc appends cnt slots holding a, a+1, … starting at index.
func (b *extentBuilder) addInc(index uint64, a uint32, cnt uint64) {
	if cnt == 0 {
		return
	}
	if !isBlock(a) {
		for k := uint64(0); k < cnt; k++ {
			b.add(index+k, a+uint32(k))
		}
		return
	}
	b.add(index, a)
	b.ext[len(b.ext)-1].Count += cnt - 1
}

// SegmentState is a touched segment before and after.
type SegmentState struct {
	Segno       uint32   `json:"segno"`
	ValidBefore uint32   `json:"validBefore"`
	Valid       int32    `json:"valid"`
	MapBefore   string   `json:"mapBefore"` // 128 hex digits, on-disk bit order (bit k = byte k/8, mask 0x80>>(k%8))
	Map         string   `json:"map"`
	ClassBefore SegClass `json:"classBefore"`
	Class       SegClass `json:"class"`
}

// FillZero is a partial page fill_zero touched.
type FillZero struct {
	Index  uint64    `json:"index"`
	Start  uint32    `json:"start"` // byte offset in the page
	Len    uint32    `json:"len"`
	Before SlotState `json:"before"` // slot state before (null → reserved as new)
	Addr   uint32    `json:"addr,omitempty"`
}

// After is the file's slot map after the run.
type After struct {
	Extents []Extent `json:"extents"`
}

// Result is the outcome of a run. Its JSON is what `zrviz run` and the
// HTTP API print per mode.
type Result struct {
	Mode    Mode     `json:"mode"`
	Errno   string   `json:"errno"`
	Message string   `json:"message,omitempty"` // kernel log line of the error, if any
	Calls   CallList `json:"calls"`

	SizeBefore   int64          `json:"sizeBefore"`
	SizeAfter    int64          `json:"sizeAfter"`
	BlocksBefore uint64         `json:"blocksBefore"` // i_blocks
	BlocksAfter  uint64         `json:"blocksAfter"`
	ValidBlocks  uint64         `json:"validBlockCount"`
	ValidNodes   uint32         `json:"validNodeCount"`
	Advise       uint8          `json:"advise"`
	Inline       uint8          `json:"inline"`
	NeedFsck     bool           `json:"needFsck"` // SBI_NEED_FSCK (and s_errors bit ERROR_INVALID_BLKADDR)
	Stats        Stats          `json:"stats"`
	FillZero     []FillZero     `json:"fillZero"`
	Segments     []SegmentState `json:"segments"`
	After        After          `json:"after"`

	nextFn func() Input
	next   *Input
}

// NextInput returns the state after this run as an Input, so a further
// request continues from it (several operations on one mount). It is built
// on first use.
func (r *Result) NextInput() Input {
	if r.next == nil {
		in := r.nextFn()
		r.next = &in
		r.nextFn = nil
	}
	return *r.next
}

// WriteJSON writes r as json.Marshal would, its call list streamed a piece at a time
// ([CallList.WriteJSON]: a per-block run over millions of slots is never held as JSON whole),
// then extra — further members, each `,"name":value`, already encoded, or nil — before the
// closing brace. It is the one encoder of a result: the run API, `zrviz run` (its writeback,
// balanceGC and trace members are extra) and `zrviz sandbox` write results with it.
func (r *Result) WriteJSON(w io.Writer, extra []byte) error {
	// The result with no calls: its first "calls":[] is the list's place (it follows mode, errno
	// and message, and a string cannot hold the sequence unescaped).
	rc := *r
	rc.Calls = CallList{}
	b, err := json.Marshal(&rc)
	if err != nil {
		return err
	}
	before, after, ok := bytes.Cut(b, []byte(`"calls":[]`))
	if !ok || len(after) == 0 {
		return errors.New("core: a result's JSON without its calls")
	}
	if _, err := w.Write(append(before, `"calls":`...)); err != nil {
		return err
	}
	if err := r.Calls.WriteJSON(w); err != nil {
		return err
	}
	if _, err := w.Write(after[:len(after)-1]); err != nil { // up to the closing brace
		return err
	}
	if _, err := w.Write(extra); err != nil {
		return err
	}
	_, err = w.Write(after[len(after)-1:])
	return err
}

// Members is v's JSON object without its braces, each member led by a comma (",\"a\":1,\"b\":2"),
// or nil for an empty object: the extra members of [Result.WriteJSON].
func Members(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	if len(b) < 2 || b[0] != '{' || b[len(b)-1] != '}' {
		return nil, errors.New("core: Members of a value that is not a JSON object")
	}
	if len(b) == 2 {
		return nil, nil
	}
	b[0] = ','
	return b[:len(b)-1], nil
}
