package web

import (
	"context"
	"fmt"

	"github.com/zrviz/zrviz/imgio"
	"github.com/zrviz/zrviz/internal/f2fs"
)

// Pages of a file's slot map. A file may have a million extents (a crafted upload of a few hundred
// KB: issue 13 item 1), which as one JSON answer was 56 MB and as the file page 67 MB; the map API
// and the file page read one page at a time, whatever the file holds.
const (
	defaultMapPage = 16384 // extents in a map API page when ?limit= is not given
	maxMapPage     = 65536 // the most ?limit= may ask for (about 4 MB of JSON)
	fileMapExtents = 16384 // extents the file page embeds for its block map
	fileMapDnodes  = 1024  // dnodes the file page lists
)

// mapPage returns the slot map of f from file block index from, as [imgio.File.Extents] does (runs
// of one state, addresses merged only when contiguous, NULL runs up to i_size and between mapped
// slots), at most limit extents, and the index where the next page starts (0 when this is the last).
// Pages end at extent boundaries, so the pages from 0 put together are Extents' answer. It reads
// the node blocks of the dnodes it covers (and lists the file's dnodes once to know where they are),
// so a page costs its size, not the file's.
func mapPage(ctx context.Context, img *imgio.Image, f *imgio.File, from uint64, limit int) ([]imgio.Extent, uint64, error) {
	in := f.Inode()
	out := []imgio.Extent{}
	if in.Inline&0x06 != 0 { // INLINE_DATA or INLINE_DENTRY: i_addr is data, not slots
		return out, 0, nil
	}
	v := img.Volume()
	bs := uint64(v.BlockSize)
	end := (uint64(in.Size) + bs - 1) / bs
	dns, err := f.Dnodes()
	if err != nil {
		return nil, 0, err
	}
	next := from // first index not yet covered
	full := false
	add := func(idx, count uint64, state string, addr uint32) {
		if n := len(out); n > 0 {
			last := &out[n-1]
			if last.State == state && last.Index+last.Count == idx && (state != imgio.StateAddr || uint64(last.Addr)+last.Count == uint64(addr)) {
				last.Count += count
				next = idx + count
				return
			}
		}
		if len(out) == limit {
			full = true
			return
		}
		out = append(out, imgio.Extent{Index: idx, Count: count, State: state, Addr: addr})
		next = idx + count
	}
	slot := func(idx uint64, state string, addr uint32) {
		if idx > next {
			add(next, idx-next, imgio.StateNull, 0)
		}
		if !full {
			add(idx, 1, state, addr)
		}
	}
	for _, d := range dns {
		if d.Start+uint64(d.Len) <= from {
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, 0, err
		}
		dn, err := f.Dnode(d.Start)
		if err != nil {
			return nil, 0, err
		}
		for i, a := range dn.Slots {
			idx := dn.Start + uint64(i)
			if idx < from || a == imgio.NullAddr {
				continue
			}
			switch a {
			case imgio.NewAddr:
				slot(idx, imgio.StateNew, 0)
			case imgio.CompressAddr:
				slot(idx, imgio.StateCompress, 0)
			default:
				if a < v.MainBlkaddr || a >= v.MaxBlkaddr {
					off := int64(dn.Blkaddr)*int64(bs) + 4*int64(i)
					if dn.Kind == "inode" {
						off += f2fs.InodeAddrOffset + int64(in.ExtraISize) // i_addr, after the extra attributes
					}
					return nil, 0, &imgio.FormatError{Off: off, Struct: "data slot",
						Msg: fmt.Sprintf("inode %d index %d: address out of the main area", in.Ino, idx), Val: a}
				}
				slot(idx, imgio.StateAddr, a)
			}
			if full {
				return out, next, nil
			}
		}
	}
	if end > next {
		add(next, end-next, imgio.StateNull, 0)
		if full {
			return out, next, nil
		}
	}
	return out, 0, nil
}
