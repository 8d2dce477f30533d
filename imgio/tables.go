package imgio

import (
	"encoding/binary"
	"fmt"
	"io/fs"
	"math/bits"

	"github.com/zrviz/zrviz/internal/f2fs"
)

// natEntry returns the NAT entry of nid: from the NAT journal if it is there, else from the current
// copy of its NAT block (the version bitmap picks the copy).
func (img *Image) natEntry(nid uint32) (rawNATEntry, error) {
	if nid == 0 || nid >= img.maxNid {
		return rawNATEntry{}, formatErr(img.blockOff(img.sb.raw.NATBlkaddr), "NAT", "nid out of range", nid)
	}
	if e, ok := img.cp.natJournal[nid]; ok {
		return e, nil
	}
	perBlock := uint32(f2fs.NATEntryPerBlock)
	b := nid / perBlock
	addr, _ := img.natAddr(b)
	blk, err := img.natBlock(addr)
	if err != nil {
		return rawNATEntry{}, err
	}
	var e rawNATEntry
	off := (nid % perBlock) * natEntrySize
	if _, err := binary.Decode(blk[off:off+natEntrySize], binary.LittleEndian, &e); err != nil {
		return rawNATEntry{}, formatErr(img.blockOff(addr)+int64(off), "NAT entry", "short", nil)
	}
	return e, nil
}

// natBlock returns the NAT block at addr, from the cache when it is there. Cached blocks are never
// modified, so they are handed out without copying.
func (img *Image) natBlock(addr uint32) ([]byte, error) {
	img.natMu.Lock()
	b, ok := img.natCache[addr]
	img.natMu.Unlock()
	if ok {
		return b, nil
	}
	b, err := img.readBlock(addr, "NAT block")
	if err != nil {
		return nil, err
	}
	img.natMu.Lock()
	if len(img.natCache) < natCacheMax {
		img.natCache[addr] = b
	}
	img.natMu.Unlock()
	return b, nil
}

// Segment is one main-area segment's SIT entry.
type Segment struct {
	Segno       uint32   `json:"segno"`
	ValidBlocks uint32   `json:"validBlocks"`
	Type        int      `json:"type"` // log type 0..5 (hot/warm/cold data, hot/warm/cold node); free segments may hold other values
	Map         [64]byte `json:"map"`  // valid_map: bit k (MSB-first) = block k of the segment
	Mtime       uint64   `json:"mtime"`
	Current     bool     `json:"current"` // one of the checkpoint's active logs
	Source      string   `json:"source"`  // "journal", "sit1" or "sit2"
}

// Segment returns the SIT entry of main-area segment segno, from the SIT journal if it is there, else
// from the current copy of its SIT block.
func (img *Image) Segment(segno uint32) (Segment, error) {
	if segno >= img.sb.raw.SegmentCountMain {
		return Segment{}, fmt.Errorf("imgio: segment %d: %w (main area has %d)", segno, fs.ErrInvalid, img.sb.raw.SegmentCountMain)
	}
	return img.segment(segno, &sitCursor{})
}

// sitCursor remembers the last SIT block read, so a scan over all segments reads each block once.
type sitCursor struct {
	addr uint32
	blk  []byte
}

// segment decodes segno's entry, reading its SIT block through cur.
func (img *Image) segment(segno uint32, cur *sitCursor) (Segment, error) {
	s := Segment{Segno: segno, Current: img.isCurrent(segno)}
	var raw rawSITEntry
	var off int64
	if e, ok := img.cp.sitJournal[segno]; ok {
		raw, s.Source = e, "journal"
		off = -1
	} else {
		perBlock := uint32(f2fs.SITEntryPerBlock)
		b := segno / perBlock
		addr, second := img.sitAddr(b)
		s.Source = "sit1"
		if second {
			s.Source = "sit2"
		}
		off = img.blockOff(addr)
		if cur.blk == nil || cur.addr != addr {
			blk, err := img.readBlock(addr, "SIT block")
			if err != nil {
				return Segment{}, err
			}
			cur.addr, cur.blk = addr, blk
		}
		eo := (segno % perBlock) * sitEntrySize
		off += int64(eo)
		// An offset decode rather than binary.Decode: a 4 TiB volume has two million entries.
		e := cur.blk[eo : eo+sitEntrySize]
		raw.VBlocks = binary.LittleEndian.Uint16(e)
		copy(raw.ValidMap[:], e[2:66])
		raw.Mtime = binary.LittleEndian.Uint64(e[66:])
	}
	s.ValidBlocks = f2fs.SITValid(raw.VBlocks)
	s.Type = f2fs.SITType(raw.VBlocks)
	s.Map, s.Mtime = raw.ValidMap, raw.Mtime
	// check_block_count: the count must match the bitmap, and a segment holds at most 512 blocks.
	pop := 0
	for i := 0; i < len(raw.ValidMap); i += 8 {
		pop += bits.OnesCount64(binary.LittleEndian.Uint64(raw.ValidMap[i:]))
	}
	// The type is only reported: free segments may carry any value, and the kernel does not check it.
	if s.ValidBlocks > blocksPerSeg || uint32(pop) != s.ValidBlocks {
		where := off
		if off < 0 {
			where = img.blockOff(img.cp.start)
		}
		return Segment{}, formatErr(where, "SIT entry", fmt.Sprintf("segment %d: valid count %d, bitmap has %d, type %d", segno, s.ValidBlocks, pop, s.Type), raw.VBlocks)
	}
	return s, nil
}

func (img *Image) isCurrent(segno uint32) bool {
	for _, c := range img.vol.CurrentSegments {
		if c.Segno == segno {
			return true
		}
	}
	return false
}

// SegmentValidMap returns the valid-block count and bitmap of segment segno. It lets an *Image serve
// as core's SIT source.
func (img *Image) SegmentValidMap(segno uint32) (valid uint32, bitmap [64]byte, err error) {
	s, err := img.Segment(segno)
	if err != nil {
		return 0, bitmap, err
	}
	return s.ValidBlocks, s.Map, nil
}

// Segments returns every main-area segment in segno order.
func (img *Image) Segments() ([]Segment, error) {
	n := img.sb.raw.SegmentCountMain
	out := make([]Segment, 0, n)
	cur := &sitCursor{}
	for segno := range n {
		s, err := img.segment(segno, cur)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}
