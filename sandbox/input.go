package sandbox

import (
	"cmp"
	"fmt"
	"slices"
	"sort"

	"github.com/zrviz/zrviz/core"
	"github.com/zrviz/zrviz/internal/f2fs"
)

// Geometry of the synthetic file and volume (see the package documentation).
const (
	// AddrsPerInode is the data slots in the inode, inline xattrs on: 923 minus 50, 873.
	AddrsPerInode   = core.DefAddrsPerInode - core.DefaultInlineXattrAddrs
	AddrsPerBlock   = core.AddrsPerBlock // data slots in a direct node
	BlocksPerSeg    = core.BlocksPerSeg
	Segment0Blkaddr = 512
	MainBlkaddr     = 4096
	// MaxMainEnd is the highest MAX_BLKADDR the synthetic main area can have: the end of the last
	// whole segment below COMPRESS_ADDR. Addresses at or above it are outside the main area.
	MaxMainEnd = MainBlkaddr + (uint64(core.CompressAddr)-MainBlkaddr)/BlocksPerSeg*BlocksPerSeg
	// Ino is the synthetic file's inode number (the first file mkfs.f2fs would create after the root).
	Ino = 4
	// Path is the synthetic file's name in results.
	Path = "/sandbox"

	blockSize   = core.BlockSize
	currentSegs = 6
	// spareSegs are free segments left after the highest listed address besides the current ones.
	spareSegs = 2
)

// Group is where one `|`-separated group of a list sits in the synthetic file.
type Group struct {
	Index uint64 `json:"index"` // file block of its first slot
	Len   uint64 `json:"len"`   // slots the list gives it
	Pad   uint64 `json:"pad"`   // NEW_ADDR padding slots after it, up to the next group's dnode
}

// boundaryAtOrAfter is the first dnode start at or after file block x: 0, 873, 1891, ….
func boundaryAtOrAfter(x uint64) uint64 {
	if x == 0 {
		return 0
	}
	start, n := dnodeOf(x - 1)
	return start + n
}

// dnodeOf is the first file block and the slot count of the dnode holding file block x.
func dnodeOf(x uint64) (start, n uint64) {
	start, slots := core.DnodeOf(x, AddrsPerInode)
	return start, uint64(slots)
}

// Layout returns where each group sits in the synthetic file, in list order.
func (l *List) Layout() []Group {
	out := make([]Group, len(l.groups))
	pos := uint64(0)
	if len(l.groups) > 1 {
		n0 := l.groups[0].slots
		pos = boundaryAtOrAfter(n0) - n0
	}
	for i, g := range l.groups {
		out[i] = Group{Index: pos, Len: g.slots}
		pos += g.slots
		if i+1 < len(l.groups) {
			next := boundaryAtOrAfter(pos)
			out[i].Pad = next - pos
			pos = next
		}
	}
	return out
}

// Start returns the file block of the list's first slot; End one past the last.
func (l *List) Start() uint64 { return l.Layout()[0].Index }

// End returns one past the file block of the list's last slot.
func (l *List) End() uint64 {
	lay := l.Layout()
	g := lay[len(lay)-1]
	return g.Index + g.Len
}

// ListSlot returns the list slot at file block idx, or false for a padding slot or one outside
// the list.
func (l *List) ListSlot(idx uint64) (uint64, bool) {
	k := uint64(0)
	for _, g := range l.Layout() {
		if idx >= g.Index && idx < g.Index+g.Len {
			return k + idx - g.Index, true
		}
		k += g.Len
	}
	return 0, false
}

// Request returns the zero-range request over exactly the list's slots: from the first slot's file
// block to one past the last, in bytes, without KEEP_SIZE.
func (l *List) Request() core.Request {
	return core.Request{Offset: int64(l.Start()) * blockSize, Length: int64(l.End()-l.Start()) * blockSize}
}

// Input returns the engine's input for the list: the synthetic file and volume of the package
// documentation, with room in user_block_count for every NULL slot to be reserved.
func (l *List) Input() core.Input { return l.input(-1) }

func (l *List) input(free int64) core.Input {
	src := newSource(l)
	end := src.end
	nodes := nodeCount(end)
	news := l.count[New] + src.pad
	vol := core.Volume{
		BlockSize: blockSize, BlocksPerSeg: BlocksPerSeg,
		Segment0Blkaddr: Segment0Blkaddr, MainBlkaddr: MainBlkaddr,
		MaxBlkaddr: MainBlkaddr + src.mainSegs*BlocksPerSeg, MainSegments: src.mainSegs, SegsPerSec: 1,
		ValidBlockCount: src.distinct + news + nodes,
		ValidNodeCount:  uint32(nodes),
		CurrentSegments: src.current,
		HotDataSegno:    src.current[0],
		ColdDataSegno:   src.current[2],
	}
	vol.UserBlockCount = uint64(src.mainSegs) * BlocksPerSeg
	if free >= 0 {
		vol.UserBlockCount = vol.ValidBlockCount + uint64(free)
	}
	ino := core.Inode{
		Ino: Ino, Type: "file", Size: int64(end) * blockSize,
		Blocks:        nodes + l.count[Addr] + news,
		AddrsPerInode: AddrsPerInode, AddrsPerBlock: AddrsPerBlock,
		SlotsEnd: src.slotsEnd,
	}
	return core.Input{Path: Path, Volume: vol, Inode: ino, Slots: src, SIT: src}
}

// nodeCount is the number of node blocks of a file whose every node from the inode to the dnode
// holding block end-1 exists: the inode, the direct nodes and the indirect nodes above them.
func nodeCount(end uint64) uint64 { return core.NodeBlocks(end, AddrsPerInode) }

// fileRun is a stretch of the synthetic file's slots: n slots from file block at.
type fileRun struct {
	at, n uint64
	kind  Kind
	addr  uint32
}

// interval is a stretch [lo, lo+n) of distinct listed addresses in the main area.
type interval struct{ lo, n uint32 }

// source is the synthetic file (a core.DnodeSource) and SIT (a core.SITSource). It is immutable.
type source struct {
	runs     []fileRun  // in file order, padding included, holes omitted
	addrs    []interval // sorted, merged
	distinct uint64
	pad      uint64
	end      uint64 // one past the last slot of the list
	slotsEnd uint64 // one past the last non-NULL slot
	mainSegs uint32
	current  []uint32
}

func newSource(l *List) *source {
	s := &source{}
	lay := l.Layout()
	for gi, g := range l.groups {
		at := lay[gi].Index
		end := len(l.runs)
		if gi+1 < len(l.groups) {
			end = l.groups[gi+1].first
		}
		for _, r := range l.runs[g.first:end] {
			s.runs = append(s.runs, fileRun{at: at, n: uint64(r.N), kind: r.Kind, addr: r.Addr})
			at += uint64(r.N)
		}
		if p := lay[gi].Pad; p > 0 {
			s.runs = append(s.runs, fileRun{at: at, n: p, kind: New})
			s.pad += p
		}
	}
	last := lay[len(lay)-1]
	s.end = last.Index + last.Len
	for i := len(s.runs) - 1; i >= 0; i-- {
		if s.runs[i].kind != Null {
			s.slotsEnd = s.runs[i].at + s.runs[i].n
			break
		}
	}

	// Distinct addresses in the main area, as sorted merged intervals.
	var iv []interval
	for _, r := range l.runs {
		if r.Kind != Addr {
			continue
		}
		lo, hi := uint64(r.Addr), uint64(r.Addr)+uint64(r.N) // [lo, hi)
		lo, hi = max(lo, MainBlkaddr), min(hi, MaxMainEnd)
		if lo < hi {
			iv = append(iv, interval{uint32(lo), uint32(hi - lo)})
		}
	}
	slices.SortFunc(iv, func(a, b interval) int { return cmp.Compare(a.lo, b.lo) })
	for _, x := range iv {
		if k := len(s.addrs) - 1; k >= 0 && uint64(s.addrs[k].lo)+uint64(s.addrs[k].n) >= uint64(x.lo) {
			s.addrs[k].n = uint32(max(uint64(s.addrs[k].lo)+uint64(s.addrs[k].n), uint64(x.lo)+uint64(x.n)) - uint64(s.addrs[k].lo))
			continue
		}
		s.addrs = append(s.addrs, x)
	}
	for _, x := range s.addrs {
		s.distinct += uint64(x.n)
	}

	// Main area: past the highest listed address and big enough for every slot the file may
	// hold, plus the current segments and a little spare.
	used := uint64(0)
	if k := len(s.addrs) - 1; k >= 0 {
		used = f2fs.SegNo(uint64(s.addrs[k].lo)+uint64(s.addrs[k].n)-1, MainBlkaddr) + 1
	}
	need := (s.distinct + l.count[New] + l.count[Null] + s.pad + nodeCount(s.end) + BlocksPerSeg - 1) / BlocksPerSeg
	segs := max(used, need) + currentSegs + spareSegs
	segs = min(segs, f2fs.SegNo(MaxMainEnd, MainBlkaddr))
	s.mainSegs = uint32(segs)
	// The current segments: the highest segments without a listed address.
	for no := s.mainSegs; no > 0 && len(s.current) < currentSegs; no-- {
		if !s.segmentUsed(no - 1) {
			s.current = append(s.current, no-1)
		}
	}
	slices.Sort(s.current)
	for len(s.current) < currentSegs {
		// Every segment holds a listed address (a full 4 GiB main area): reuse the last.
		s.current = append(s.current, s.mainSegs-1)
	}
	return s
}

// segmentUsed reports whether a listed address falls in segment no.
func (s *source) segmentUsed(no uint32) bool {
	lo := uint64(MainBlkaddr) + uint64(no)*BlocksPerSeg
	i := s.firstAddr(lo)
	return i < len(s.addrs) && uint64(s.addrs[i].lo) < lo+BlocksPerSeg
}

// firstAddr is the index of the first interval that ends after address lo.
func (s *source) firstAddr(lo uint64) int {
	return sort.Search(len(s.addrs), func(i int) bool { return uint64(s.addrs[i].lo)+uint64(s.addrs[i].n) > lo })
}

// DnodeSlots gives the slots of the dnode holding file block index (core.DnodeSource). Every node
// exists, so missing is 0.
func (s *source) DnodeSlots(index uint64) (uint64, []uint32, int, error) {
	if index >= core.MaxFileBlocks {
		return 0, nil, 0, fmt.Errorf("sandbox: file block %d is beyond the largest file", index)
	}
	start, n := dnodeOf(index)
	out := make([]uint32, n)
	i := sort.Search(len(s.runs), func(i int) bool { return s.runs[i].at+s.runs[i].n > start })
	for ; i < len(s.runs) && s.runs[i].at < start+n; i++ {
		r := s.runs[i]
		lo, hi := max(r.at, start), min(r.at+r.n, start+n)
		for x := lo; x < hi; x++ {
			switch r.kind {
			case Addr:
				out[x-start] = r.addr + uint32(x-r.at)
			case New:
				out[x-start] = core.NewAddr
			}
		}
	}
	return start, out, 0, nil
}

// SegmentValidMap gives segment segno's valid count and map (core.SITSource): a bit for every
// distinct listed address in it.
func (s *source) SegmentValidMap(segno uint32) (uint32, [64]byte, error) {
	var m [64]byte
	if segno >= s.mainSegs {
		return 0, m, fmt.Errorf("sandbox: segment %d is past the main area (%d segments)", segno, s.mainSegs)
	}
	lo := uint64(MainBlkaddr) + uint64(segno)*BlocksPerSeg
	hi := lo + BlocksPerSeg
	valid := uint32(0)
	for i := s.firstAddr(lo); i < len(s.addrs) && uint64(s.addrs[i].lo) < hi; i++ {
		a, b := max(uint64(s.addrs[i].lo), lo), min(uint64(s.addrs[i].lo)+uint64(s.addrs[i].n), hi)
		for x := a; x < b; x++ {
			core.SetValidBit(&m, uint32(x-lo))
			valid++
		}
	}
	return valid, m, nil
}
