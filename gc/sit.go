package gc

import "math/bits"

// The SIT entry, once (issue 36 "two SIT models"). Every valid count, valid map, checkpointed map,
// discard map, mtime and segment type zrviz holds — the segment manager's ([State], garbage
// collection's moves, a checkpoint) and core's zero-range walks and write-backs (core's lazily read
// SIT overlay, which keeps one Entry per segment it touched) — is an [Entry], and only the methods
// in this file write one: its fields are unexported, and TestSITOneWriter (sit_guard_test.go) fails
// if any other file of package gc or core assigns one of them or flips a map bit.

// Entry is one main-area segment's seg_entry (segment.h:203) as the model holds it: valid_blocks,
// cur_valid_map, ckpt_valid_map, discard_map, mtime and type. The zero Entry is a free segment of
// type 0 (hot data) with mtime 0.
type Entry struct {
	// valid is valid_blocks. A lazily read entry of a corrupt image may hold a count its map does
	// not back, and the walk's releases may then take it below zero (core's "Bitmap was wrongly
	// cleared" accounting keeps the two apart); [Entry.Valid] reads it as 0 there.
	valid   int32
	curMap  [64]byte // cur_valid_map: bit k = byte k/8, mask 0x80>>(k%8), as f2fs_test_bit reads it
	ckptMap [64]byte // ckpt_valid_map: valid at the last checkpoint, or written since
	discMap [64]byte // discard_map: set = not discardable
	mtime   uint64
	typ     int8 // CURSEG_*
}

// ReadEntry is the entry build_sit_entries makes of a segment's SIT record (seg_info_from_raw_sit,
// segment.h:368): the valid count and map as read, the checkpointed map the same, and the discard
// map the valid map — or all set on a volume whose free space was trimmed at mount (trimmed: no
// block is discardable).
func ReadEntry(valid uint32, m [64]byte, trimmed bool) Entry {
	e := Entry{valid: int32(valid), curMap: m, ckptMap: m, discMap: m}
	if trimmed {
		for i := range e.discMap {
			e.discMap[i] = 0xFF
		}
	}
	return e
}

// entryOf is the entry Mount makes of a segment the volume gives whole.
func entryOf(sg Segment) Entry {
	return Entry{valid: int32(sg.Valid), curMap: sg.Map, ckptMap: sg.Map, discMap: sg.Map, mtime: sg.Mtime, typ: int8(sg.Type)}
}

// Segment is the entry as a [Segment] (a copy).
func (e *Entry) Segment() Segment {
	return Segment{Valid: e.Valid(), Map: e.curMap, Mtime: e.mtime, Type: int(e.typ)}
}

// Valid is valid_blocks, 0 where a corrupt count went below it.
func (e *Entry) Valid() uint32 { return uint32(max(e.valid, 0)) }

// Count is valid_blocks as held, below 0 where a corrupt image's count was (see [Entry]).
func (e *Entry) Count() int32 { return e.valid }

// Map is cur_valid_map.
func (e *Entry) Map() [64]byte { return e.curMap }

// Test reports whether block k's bit is set in cur_valid_map.
func (e *Entry) Test(k uint32) bool { return e.curMap[k>>3]&(0x80>>(k&7)) != 0 }

// TestCkpt reports whether block k's bit is set in ckpt_valid_map.
func (e *Entry) TestCkpt(k uint32) bool { return e.ckptMap[k>>3]&(0x80>>(k&7)) != 0 }

// CkptValid is ckpt_valid_blocks: the bits of ckpt_valid_map.
func (e *Entry) CkptValid() uint32 {
	n := 0
	for _, b := range e.ckptMap {
		n += bits.OnesCount8(b)
	}
	return uint32(n)
}

// Mtime is the entry's mtime.
func (e *Entry) Mtime() uint64 { return e.mtime }

// Type is the entry's log type (CURSEG_*).
func (e *Entry) Type() int { return int(e.typ) }

// Invalidate is update_sit_entry(−1) for the n blocks from off of the segment, as one piece of
// f2fs_invalidate_blocks or an out-of-place write's release of the old block: each bit still set
// is cleared and counted off valid_blocks; a bit already clear is "Bitmap was wrongly cleared"
// (the kernel gives the block back to the count and goes on): wrong counts them and first is the
// offset of the first. A block's discard bit is cleared too (discarded counts those that were
// set: __set_sit_entry's discard_map). The caller keeps off+n within the segment.
func (e *Entry) Invalidate(off, n uint32) (wrong, first, discarded uint32) {
	for k := off; k < off+n; k++ {
		m, b := &e.curMap[k>>3], byte(0x80>>(k&7))
		if *m&b != 0 {
			*m &^= b
		} else {
			if wrong == 0 {
				first = k
			}
			wrong++
		}
		if d := &e.discMap[k>>3]; *d&b != 0 {
			*d &^= b
			discarded++
		}
	}
	e.valid -= int32(n - wrong)
	return wrong, first, discarded
}

// SetValid is update_sit_entry(+1) for block k: its bit set in cur_valid_map and counted (once),
// set in ckpt_valid_map ("SSR should never reuse block which is checkpointed or newly
// invalidated", segment.c:2490) and in discard_map.
func (e *Entry) SetValid(k uint32) {
	m, b := &e.curMap[k>>3], byte(0x80>>(k&7))
	if *m&b == 0 {
		*m |= b
		e.valid++
	}
	e.ckptMap[k>>3] |= b
	e.discMap[k>>3] |= b
}

// SetMap replaces cur_valid_map by m and valid_blocks by its bits; the blocks it sets are
// checkpointed for SSR's sake (a block written since the checkpoint). The mtime is left alone.
func (e *Entry) SetMap(m [64]byte) {
	e.curMap = m
	n := 0
	for i, b := range m {
		e.ckptMap[i] |= b
		n += bits.OnesCount8(b)
	}
	e.valid = int32(n)
}

// Checkpointed is seg_info_to_raw_sit (segment.h:410) at a checkpoint: ckpt_valid_map becomes
// cur_valid_map.
func (e *Entry) Checkpointed() { e.ckptMap = e.curMap }

// UpdateMtime is update_segment_mtime's entry part (segment.c:2419) at time ctime: the first
// mtime is ctime, later ones the mean weighted by the valid blocks before.
func (e *Entry) UpdateMtime(ctime uint64) { e.mtimeAt(ctime, e.Valid()) }

// mtimeAt is update_segment_mtime at ctime over valid blocks (the weight): [State.AtClock] redoes a
// recorded update with the valid blocks the segment had then.
func (e *Entry) mtimeAt(ctime uint64, valid uint32) {
	if e.mtime == 0 {
		e.mtime = ctime
		return
	}
	v := uint64(valid)
	e.mtime = (e.mtime*v + ctime) / (v + 1)
}

// restoreMtime puts back the mtime an entry had before a recorded update ([State.AtClock]).
func (e *Entry) restoreMtime(before uint64) { e.mtime = before }

// SetType is __set_sit_entry_type: the segment is now log's (reset_curseg).
func (e *Entry) SetType(log int) { e.typ = int8(log) }

// Reload is the entry as a new walk reads it from the one before: a count below 0 (a corrupt
// image's) read as 0, as a SIT source gives it, and the discard map rebuilt from the valid map, or
// all set on a trimmed volume (trimmed), as build_sit_entries would.
func (e *Entry) Reload(trimmed bool) {
	e.valid = max(e.valid, 0)
	e.discMap = e.curMap
	if trimmed {
		for i := range e.discMap {
			e.discMap[i] = 0xFF
		}
	}
}

// take is what the segment manager takes of an entry a walk or a write changed on its behalf
// ([State.Adopt]): the valid count, the valid map (its blocks checkpointed for SSR, as
// [Entry.SetValid] marks them) and the mtime. The type and the checkpointed map stay the
// manager's.
func (e *Entry) take(o *Entry) {
	e.valid, e.curMap, e.mtime = o.valid, o.curMap, o.mtime
	for i, b := range o.curMap {
		e.ckptMap[i] |= b
	}
}
