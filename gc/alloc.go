package gc

import (
	"errors"
	"fmt"

	"github.com/zrviz/zrviz/internal/f2fs"
)

// The segment allocator, once (issue 27 "one allocator", issue 29). When a log's current segment is
// full and need_new_seg says to open a new one (not SSR: see ssr.go), f2fs_allocate_data_block
// calls new_curseg(sbi, type, false) (fs/f2fs/segment.c:2889 in Linux 6.12.117), which asks
// __get_next_segno (segment.c:2838) for a hint and get_new_segment (segment.c:2693) for the
// segment. [NewSegment] is that choice, written once for both of zrviz's allocators: the segment
// manager's ([State], garbage collection's moves, a checkpoint's node writes) over its own
// free_segmap/free_secmap, and core's write-back (fsync, sync, a zero's write-back, unmount) over a
// view of its SIT overlay. Neither caller decides where a log goes on its own.

// smallVolumeSegments is SMALL_VOLUME_SEGMENTS (segment.h:712): default_options (super.c:2168–2170)
// mounts a volume of at most this many main segments with alloc_mode=reuse.
const smallVolumeSegments = f2fs.SmallVolumeSegments

// Geometry is what __get_next_segno and get_new_segment read of a volume.
type Geometry struct {
	MainSegs   uint32 // MAIN_SEGS
	SegsPerSec uint32 // SEGS_PER_SEC; more than 1 is __is_large_section
	// SecsPerZone is sbi->secs_per_zone (the superblock's secs_per_zone); 0 is taken as 1, which
	// mkfs.f2fs writes unless given -z.
	SecsPerZone uint32
}

// FreeMap is the allocator's view of free_i: whether a main-area segment is free (its bit clear in
// free_segmap: no valid block, not a current segment, not prefree) and whether a section is
// (free_secmap: set by __set_inuse as soon as one of its segments is in use, cleared by __set_free
// and __set_test_and_free only when none is).
type FreeMap interface {
	SegFree(segno uint32) bool
	SecFree(secno uint32) bool
}

// ErrNoSpace is get_new_segment's -ENOSPC (segment.c:2758): no free section anywhere. The kernel then
// stops checkpoints (f2fs_stop_checkpoint, STOP_CP_REASON_NO_SEGMENT, segment.c:2806) and new_curseg
// leaves the log with no segment (reset_curseg_fields, segment.c:2903).
var ErrNoSpace = errors.New("gc: no free section (ENOSPC in get_new_segment)")

// reuseAlloc reports alloc_mode=reuse, default_options' choice for a volume of at most
// SMALL_VOLUME_SEGMENTS main segments (super.c:2168): __get_next_segno then hints segment 0 for every
// log, so freed segments near the start are reused first.
func reuseAlloc(g Geometry) bool { return g.MainSegs <= smallVolumeSegments }

// NextSegHint is __get_next_segno (segment.c:2838) for a log whose current segment is cur, on a
// mount with default options: a large section hints the current segment (its section is searched
// first); otherwise hot data and the node logs hint 0, and so does any log of an alloc_mode=reuse
// volume ([Geometry] of at most SMALL_VOLUME_SEGMENTS main segments); the warm and cold data logs of a
// larger volume hint their current segment. last_victim[ALLOC_NEXT] (segment.c:2868) is taken as 0: in
// 6.12.117 only f2fs_build_gc_manager sets it (gc.c:2097, a multi-device volume without large
// sections) and f2fs_gc resets it at its end (gc.c:2038); SSR's victim search uses GC_GREEDY's slot
// (select_policy, gc.c:280), not ALLOC_NEXT. Not modelled: mode=fragment:segment (random hints),
// checkpoint=disable (hint 0), logs not yet inited (in-memory logs).
func NextSegHint(g Geometry, log int, cur uint32) uint32 {
	if g.SegsPerSec > 1 {
		return cur
	}
	if log == HotData || isNodeType(log) || reuseAlloc(g) {
		return 0
	}
	return cur
}

// NewSegment is the segment new_curseg(sbi, log, false) opens for a log whose current segment is cur
// (full): get_new_segment (segment.c:2693) from [NextSegHint]'s hint, new_sec false, not pinning.
//
//  1. Unless the hint is its section's last segment, the first free segment after the hint in the
//     hint's section (lines 2712–2717).
//  2. Else the first free section at or after the hint's (find_next_zero_bit on free_secmap, line
//     2735), wrapping to the first free section of the volume (lines 2754–2762); none is
//     [ErrNoSpace]. The segment is the section's first.
//  3. With more than one section a zone (line 2769), a section in a zone where any log's current
//     segment is (current lists every log's segment, cur included) is given up once for the first
//     free section from the next zone, wrapping to 0 (lines 2771–2785).
//
// The caller marks the segment in use (__set_inuse, line 2800) and makes it the log's
// (reset_curseg). Zoned block devices (CONFIG_BLK_DEV_ZONED) are not modelled.
func NewSegment(g Geometry, log int, cur uint32, current []uint32, free FreeMap) (uint32, error) {
	per := max(g.SegsPerSec, 1)
	perZone := max(g.SecsPerZone, 1)
	mainSecs := g.MainSegs / per
	if cur >= g.MainSegs || g.MainSegs%per != 0 {
		return 0, fmt.Errorf("%w: log %d at segment %d of %d main segments, %d per section", ErrVolume, log, cur, g.MainSegs, per)
	}
	hint := NextSegHint(g, log, cur)
	if (hint+1)%per != 0 {
		end := (hint/per + 1) * per
		for segno := hint + 1; segno < end; segno++ {
			if free.SegFree(segno) {
				return segno, nil
			}
		}
	}
	secHint := hint / per
	oldZone := hint / per / perZone
	totalZones := mainSecs / perZone
	init := true
	for {
		secno := nextFreeSec(free, secHint, mainSecs)
		if secno >= mainSecs {
			secno = nextFreeSec(free, 0, mainSecs)
			if secno >= mainSecs {
				return 0, ErrNoSpace
			}
		}
		zone := secno / perZone
		if !init || perZone == 1 || zone == oldZone || !zoneInUse(zone, per*perZone, current) {
			return secno * per, nil
		}
		// "zone is in user, try another"
		if zone+1 >= totalZones {
			secHint = 0
		} else {
			secHint = (zone + 1) * perZone
		}
		init = false
	}
}

// nextFreeSec is find_next_zero_bit(free_secmap, n, from).
func nextFreeSec(free FreeMap, from, n uint32) uint32 {
	for secno := from; secno < n; secno++ {
		if free.SecFree(secno) {
			return secno
		}
	}
	return n
}

// zoneInUse reports whether a log's current segment lies in zone (CURSEG_I(sbi, i)->zone == zoneno).
func zoneInUse(zone, segsPerZone uint32, current []uint32) bool {
	for _, c := range current {
		if c != NullSegno && c/segsPerZone == zone {
			return true
		}
	}
	return false
}

// SegFree reports whether segno's bit is clear in the segment manager's free_segmap.
func (s *State) SegFree(segno uint32) bool { return !s.inuse.test(segno) }

// SecFree reports whether secno's bit is clear in the segment manager's free_secmap.
func (s *State) SecFree(secno uint32) bool { return !s.inuseSec.test(secno) }

// Geometry returns the volume's geometry as the allocator reads it.
func (s *State) Geometry() Geometry {
	return Geometry{MainSegs: s.mainSegs, SegsPerSec: s.segsPerSec, SecsPerZone: s.secsPerZone}
}
