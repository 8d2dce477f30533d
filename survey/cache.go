package survey

import (
	"slices"

	"github.com/zrviz/zrviz/core"
	"github.com/zrviz/zrviz/imgio"
)

// sitCache is the image's SIT as the engine reads it (core.SITSource), read once for the whole
// survey: every walk of every file reads the segments it touches from here instead of the image.
// It holds what img.Segments decoded (the same decoding as img.SegmentValidMap: SIT block or
// checkpoint journal), so every answer is the image's; a segment past the main area is the image's
// error.
type sitCache struct {
	img   *imgio.Image
	valid []uint32
	maps  [][64]byte
}

func newSITCache(img *imgio.Image) (*sitCache, error) {
	segs, err := img.Segments()
	if err != nil {
		return nil, err
	}
	c := &sitCache{img: img, valid: make([]uint32, len(segs)), maps: make([][64]byte, len(segs))}
	for i, s := range segs {
		c.valid[i], c.maps[i] = s.ValidBlocks, s.Map
	}
	return c, nil
}

// SegmentValidMap is core.SITSource's.
func (c *sitCache) SegmentValidMap(segno uint32) (uint32, [64]byte, error) {
	if int(segno) < len(c.valid) {
		return c.valid[segno], c.maps[segno], nil
	}
	return c.img.SegmentValidMap(segno)
}

// maxCachedDnodes bounds the dnodes a file's slot cache keeps (4 KiB each): a file of up to 2.5 GiB
// is read from the image once for its six walks; a bigger one is read by each walk.
const maxCachedDnodes = 640

// slotCache is a file's dnode slots (core.DnodeSource, with the file's DnodeLister and
// NodeAddrSource), each dnode read from the image once and answered from memory after: the six
// walks of one file read the same dnodes. The engine copies what DnodeSlots returns
// (slotOverlay.read), so the cached slices are shared, never written.
type slotCache struct {
	base  slotSource
	dn    []cachedDnode // sorted by start
	limit int
}

// slotSource is what source.FileInput's slots are.
type slotSource interface {
	core.DnodeSource
	core.DnodeLister
	core.NodeAddrSource
}

type cachedDnode struct {
	start   uint64
	slots   []uint32
	missing int
	err     error
}

// DnodeSlots is core.DnodeSource's.
func (c *slotCache) DnodeSlots(index uint64) (uint64, []uint32, int, error) {
	i, found := slices.BinarySearchFunc(c.dn, index, func(d cachedDnode, idx uint64) int {
		switch {
		case d.start+uint64(len(d.slots)) <= idx && !(len(d.slots) == 0 && d.start == idx):
			return -1
		case d.start > idx:
			return 1
		}
		return 0
	})
	if found {
		d := c.dn[i]
		return d.start, d.slots, d.missing, d.err
	}
	start, slots, missing, err := c.base.DnodeSlots(index)
	if err == nil && len(slots) > 0 && len(c.dn) < c.limit && start <= index && index < start+uint64(len(slots)) {
		c.dn = slices.Insert(c.dn, i, cachedDnode{start: start, slots: slots, missing: missing})
	}
	return start, slots, missing, err
}

// DnodeStarts is core.DnodeLister's.
func (c *slotCache) DnodeStarts() ([]uint64, bool) { return c.base.DnodeStarts() }

// NodeAddr is core.NodeAddrSource's.
func (c *slotCache) NodeAddr(index uint64, level int) (uint32, bool, error) {
	return c.base.NodeAddr(index, level)
}
