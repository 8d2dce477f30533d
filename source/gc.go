package source

import (
	"fmt"

	"github.com/zrviz/zrviz/gc"
	"github.com/zrviz/zrviz/imgio"
)

// cpAllocType is alloc_type's offset in struct f2fs_checkpoint (f2fs_fs.h), allocSSR its SSR value.
const (
	cpAllocType = 0xB0
	allocSSR    = 1
)

// GCVolume reads what a mount's segment manager reads for package gc: every main-area segment's
// SIT entry (valid count, map, mtime, type), the six current segments, secs_per_zone and the
// checkpoint's elapsed_time.
func GCVolume(img *imgio.Image) (gc.Volume, error) {
	vol := img.Volume()
	segs, err := img.Segments()
	if err != nil {
		return gc.Volume{}, err
	}
	v := gc.Volume{SegsPerSec: vol.SegsPerSec, SecsPerZone: vol.SecsPerZone, ElapsedTime: vol.ElapsedTime, ReservedSegments: vol.RsvdSegmentCount, Segments: make([]gc.Segment, len(segs))}
	// Files whose blocks background gc moves at once (f2fs_post_read_required) need one of these.
	for _, f := range vol.Features {
		if f == "compression" || f == "encrypt" || f == "verity" {
			v.PostReadFiles = true
		}
	}
	for i, s := range segs {
		v.Segments[i] = gc.Segment{Valid: s.ValidBlocks, Map: s.Map, Mtime: s.Mtime, Type: s.Type}
	}
	// The checkpoint's alloc_type[] (struct f2fs_checkpoint at 0xB0, in the live pack's first
	// block): a log the kernel left in SSR allocation stays so after the mount
	// (read_compacted_summaries / read_normal_summaries, seg_i->alloc_type).
	if vol.CheckpointPack == 1 || vol.CheckpointPack == 2 {
		cp, err := img.ReadBlock(vol.CPBlkaddr + uint32(vol.CheckpointPack-1)*gc.BlocksPerSeg)
		if err != nil {
			return gc.Volume{}, fmt.Errorf("source: checkpoint block: %w", err)
		}
		if len(cp) < cpAllocType+gc.NumLogs {
			return gc.Volume{}, fmt.Errorf("source: checkpoint block of %d bytes", len(cp))
		}
		for t := range gc.NumLogs {
			v.AllocSSR[t] = cp[cpAllocType+t] == allocSSR
		}
	}
	if len(vol.CurrentSegments) != gc.NumLogs {
		return gc.Volume{}, fmt.Errorf("source: %d current segments, want %d", len(vol.CurrentSegments), gc.NumLogs)
	}
	for _, c := range vol.CurrentSegments {
		if c.Log < 0 || c.Log >= gc.NumLogs {
			return gc.Volume{}, fmt.Errorf("source: current segment of log %d", c.Log)
		}
		v.Current[c.Log] = gc.CurSeg{Segno: c.Segno, Blkoff: uint32(c.Blkoff)}
	}
	return v, nil
}
