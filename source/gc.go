package source

import (
	"fmt"

	"github.com/zrviz/zrviz/gc"
	"github.com/zrviz/zrviz/imgio"
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
