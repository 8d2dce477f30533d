package gc

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"strconv"
	"strings"
)

// An Op is one line of the GC ops language, the part of zrviz's ops language this package runs:
//
//	checkpoint   F2FS_IOC_WRITE_CHECKPOINT
//	gc 1         F2FS_IOC_GARBAGE_COLLECT, sync = 1: foreground, greedy
//	gc 0         F2FS_IOC_GARBAGE_COLLECT, sync = 0: background, cost-benefit
//	sync         sync(2): background-marked data written, then a checkpoint
//	now SECONDS  set the clock: the seconds since mount from here on
//	tune max_victim_search N   sysfs max_victim_search: how many dirty sections a background
//	             call looks at (default 4096)
//
// These are the oracle's guest helper's words (zrhelper), so a fixture's ops file runs as is.
type Op struct {
	Verb string `json:"op"`             // "checkpoint", "gc", "sync", "now", "tune"
	Sync int    `json:"sync"`           // gc: 1 foreground, 0 background
	Secs uint64 `json:"secs,omitempty"` // now; tune: the value
}

// String returns the op as a line of the language.
func (o Op) String() string {
	switch o.Verb {
	case "gc":
		return "gc " + strconv.Itoa(o.Sync)
	case "now":
		return "now " + strconv.FormatUint(o.Secs, 10)
	case "tune":
		return "tune max_victim_search " + strconv.FormatUint(o.Secs, 10)
	}
	return o.Verb
}

// ErrOp reports a line that is not an op of the language.
var ErrOp = errors.New("gc: not an op (want checkpoint, gc 1, gc 0, sync, now SECONDS or tune max_victim_search N)")

// ParseOp reads one op from its fields.
func ParseOp(f []string) (Op, error) {
	switch {
	case len(f) == 1 && (f[0] == "checkpoint" || f[0] == "sync"):
		return Op{Verb: f[0]}, nil
	case len(f) == 2 && f[0] == "gc" && (f[1] == "0" || f[1] == "1"):
		return Op{Verb: "gc", Sync: int(f[1][0] - '0')}, nil
	case len(f) == 2 && f[0] == "now":
		v, err := strconv.ParseUint(f[1], 10, 64)
		if err != nil {
			return Op{}, fmt.Errorf("%w: %q: %v", ErrOp, strings.Join(f, " "), err)
		}
		return Op{Verb: "now", Secs: v}, nil
	case len(f) == 3 && f[0] == "tune" && f[1] == "max_victim_search":
		v, err := strconv.ParseUint(f[2], 10, 32)
		if err != nil || v == 0 {
			return Op{}, fmt.Errorf("%w: %q: want a count of at least 1", ErrOp, strings.Join(f, " "))
		}
		return Op{Verb: "tune", Secs: v}, nil
	}
	return Op{}, fmt.Errorf("%w: %q", ErrOp, strings.Join(f, " "))
}

// ParseArgs reads ops from command-line words: "gc 1 gc 0 checkpoint".
func ParseArgs(args []string) ([]Op, error) {
	var out []Op
	for i := 0; i < len(args); {
		n := 1
		switch args[i] {
		case "gc", "now":
			n = 2
		case "tune":
			n = 3
		}
		if i+n > len(args) {
			return nil, fmt.Errorf("%w: %q", ErrOp, strings.Join(args[i:], " "))
		}
		op, err := ParseOp(args[i : i+n])
		if err != nil {
			return nil, err
		}
		out = append(out, op)
		i += n
	}
	return out, nil
}

// ParseOps reads an ops file: one op per line, # comments. Lines with other verbs are returned
// in skipped (1-based line numbers) when lenient, an error otherwise; the oracle's "snap", "show", "sysctl" and
// "sleep" are always skipped (sleep moves the clock, which the model takes from "now").
func ParseOps(r io.Reader, lenient bool) (ops []Op, skipped []int, err error) {
	sc := bufio.NewScanner(r)
	line := 0
	for sc.Scan() {
		line++
		text := sc.Text()
		if i := strings.IndexByte(text, '#'); i >= 0 {
			text = text[:i]
		}
		f := strings.Fields(text)
		if len(f) == 0 {
			continue
		}
		op, err := ParseOp(f)
		if err != nil {
			if lenient || f[0] == "snap" || f[0] == "sleep" || f[0] == "sysctl" || f[0] == "show" {
				skipped = append(skipped, line)
				continue
			}
			return nil, nil, fmt.Errorf("line %d: %w", line, err)
		}
		ops = append(ops, op)
	}
	return ops, skipped, sc.Err()
}

// CheckpointStep is what a checkpoint or sync op did.
type CheckpointStep struct {
	Op    string   `json:"op"` // "checkpoint" or "sync"
	Freed []uint32 `json:"freed"`
	Moved int      `json:"moved"`
	Moves []Move   `json:"-"`
}

// Apply runs one op and returns its JSON value: a *Pick, a *CheckpointStep or, for now, a
// map holding the clock.
func (s *State) Apply(op Op) any {
	switch op.Verb {
	case "gc":
		k := Background
		if op.Sync == 1 {
			k = Foreground
		}
		p := s.GC(k)
		return &p
	case "checkpoint", "sync":
		var c CheckpointStep
		if op.Verb == "sync" {
			c.Freed, c.Moves = s.Sync()
		} else {
			c.Freed, c.Moves = s.Checkpoint()
		}
		c.Op, c.Moved = op.Verb, len(c.Moves)
		if c.Freed == nil {
			c.Freed = []uint32{}
		}
		return &c
	case "now":
		s.Now = op.Secs
		return map[string]any{"op": "now", "secs": op.Secs}
	case "tune":
		s.MaxVictimSearch = uint32(op.Secs)
		return map[string]any{"op": "tune", "max_victim_search": op.Secs}
	}
	return nil
}

// Invalidate is f2fs_invalidate_blocks (segment.c:2544) on main-area block blkoff of segment
// segno: update_segment_mtime, the SIT bit and count, locate_dirty_segment. It is how a zero
// range run before the GC ops (the core engine's calls) reaches this model.
func (s *State) Invalidate(segno, blkoff uint32) error {
	if segno >= s.mainSegs || blkoff >= BlocksPerSeg {
		return fmt.Errorf("gc: invalidate segment %d block %d: outside the main area", segno, blkoff)
	}
	se := &s.segs[segno]
	if !testMap(&se.Map, blkoff) {
		return fmt.Errorf("gc: invalidate segment %d block %d: not valid", segno, blkoff)
	}
	s.updateSegmentMtime(segno)
	clearMap(&se.Map, blkoff)
	se.Valid--
	s.locateDirtySegment(segno)
	return nil
}

// InvalidateRange is one segment piece of f2fs_invalidate_blocks (segment.c:2544, with a length
// as the batched mode's patch gives it): update_segment_mtime once with the valid count before,
// the n bits from blkoff cleared (update_sit_entry gives a bit already clear back, "Bitmap was
// wrongly cleared"), locate_dirty_segment. Per-block calls are pieces of one block.
func (s *State) InvalidateRange(segno, blkoff, n uint32) error {
	if segno >= s.mainSegs || blkoff >= BlocksPerSeg || n == 0 || n > BlocksPerSeg-blkoff {
		return fmt.Errorf("gc: invalidate segment %d blocks %d+%d: outside the main area", segno, blkoff, n)
	}
	s.updateSegmentMtime(segno)
	se := &s.segs[segno]
	for k := blkoff; k < blkoff+n; k++ {
		if testMap(&se.Map, k) {
			clearMap(&se.Map, k)
			se.Valid--
		}
	}
	s.locateDirtySegment(segno)
	return nil
}

// Write is f2fs_allocate_data_block (segment.c:3675) for a page written out of place to block to,
// which the caller's allocator chose (core's writeback): update_segment_mtime on the old address
// (if any) and the new one, update_sit_entry +1 there and −1 at old, locate_dirty_segment on both.
func (s *State) Write(to Block, old *Block) error {
	if to.Segno >= s.mainSegs || to.Blkoff >= BlocksPerSeg || (old != nil && (old.Segno >= s.mainSegs || old.Blkoff >= BlocksPerSeg)) {
		return fmt.Errorf("gc: write to segment %d block %d: outside the main area", to.Segno, to.Blkoff)
	}
	if old != nil {
		s.updateSegmentMtime(old.Segno)
	}
	s.updateSegmentMtime(to.Segno)
	ns := &s.segs[to.Segno]
	if !testMap(&ns.Map, to.Blkoff) {
		setMap(&ns.Map, to.Blkoff)
		ns.Valid++
	}
	s.setInuse(to.Segno)
	if old != nil {
		os := &s.segs[old.Segno]
		if testMap(&os.Map, old.Blkoff) {
			clearMap(&os.Map, old.Blkoff)
			os.Valid--
		}
		s.locateDirtySegment(old.Segno)
	}
	s.locateDirtySegment(to.Segno)
	return nil
}

// SetCurrent makes c the current segment and next block of log, as the caller's allocator left
// it (new_curseg opened a segment): the new segment is in use and of the log's type and leaves
// the dirty lists, the old one is placed by locate_dirty_segment.
func (s *State) SetCurrent(log int, c CurSeg) error {
	if log < 0 || log >= NumLogs || c.Segno >= s.mainSegs || c.Blkoff > BlocksPerSeg {
		return fmt.Errorf("gc: log %d at segment %d block %d: outside the main area", log, c.Segno, c.Blkoff)
	}
	old := s.cur[log]
	s.cur[log] = c
	if old.Segno == c.Segno {
		return nil
	}
	s.setInuse(c.Segno)
	s.prefree.clear(c.Segno)
	s.dirty.clear(c.Segno)
	if s.large() {
		s.dirtySec.clear(c.Segno / s.segsPerSec)
	}
	s.segs[c.Segno].Type = log
	s.locateDirtySegment(old.Segno)
	return nil
}

// SetSegment replaces segment segno's valid map (and count) by what the caller's model holds,
// for a change the caller made that no other method describes (an inline conversion's block);
// the mtime is left alone.
func (s *State) SetSegment(segno uint32, bitmap [64]byte) error {
	if segno >= s.mainSegs {
		return fmt.Errorf("gc: segment %d: outside the main area", segno)
	}
	se := &s.segs[segno]
	se.Map = bitmap
	n := uint32(0)
	for _, b := range bitmap {
		n += uint32(bits.OnesCount8(b))
	}
	se.Valid = n
	if n > 0 {
		s.setInuse(segno)
	}
	s.locateDirtySegment(segno)
	return nil
}

// PrefreeSegments lists the prefree segments (dirty_segmap[PRE]) in order.
func (s *State) PrefreeSegments() []uint32 {
	var out []uint32
	for segno := range s.mainSegs {
		if s.prefree.test(segno) {
			out = append(out, segno)
		}
	}
	return out
}
