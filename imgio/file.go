package imgio

import (
	"encoding/binary"
	"fmt"
	"io/fs"
)

// File is one inode of an image. Its methods read node blocks on demand and are safe for concurrent
// use; the inode block itself is read once, when the File is made.
type File struct {
	img   *Image
	path  string
	inode Inode
	blk   []byte // the inode block, never modified
}

// File returns the inode ino.
func (img *Image) File(ino uint32) (*File, error) {
	if ino == 0 || ino >= img.maxNid {
		return nil, fmt.Errorf("imgio: inode %d: %w", ino, fs.ErrNotExist)
	}
	blk, addr, err := img.readNode(ino, ino, 0, "inode")
	if err != nil {
		return nil, err
	}
	in, err := img.decodeInode(ino, blk, addr)
	if err != nil {
		return nil, err
	}
	return &File{img: img, inode: in, blk: blk}, nil
}

// Inode returns the decoded inode.
func (f *File) Inode() Inode { return f.inode }

// Path is the path the File was looked up by ("" when made by [Image.File]).
func (f *File) Path() string { return f.path }

// hasInline reports whether the inode's i_addr holds inline data or dentries instead of addresses.
func (f *File) hasInline() bool { return f.inode.Inline&(inlineData|inlineDentry) != 0 }

// inodeSlots copies the inode's data slots (all NULL for inline inodes, whose i_addr is data).
func (f *File) inodeSlots() []uint32 {
	s := make([]uint32, f.inode.AddrsPerInode)
	if f.hasInline() {
		return s
	}
	base := inodeAddrOff + int(f.inode.ExtraISize)
	for i := range s {
		s[i] = binary.LittleEndian.Uint32(f.blk[base+4*i:])
	}
	return s
}

// Dnode describes the node that holds a run of a file's data slots: the inode itself or a direct node.
type Dnode struct {
	Start   uint64   `json:"start"`             // file block index of Slots[0]
	Len     int      `json:"len"`               // slot capacity of the node
	Slots   []uint32 `json:"slots,omitempty"`   // the slots (nil from [File.Dnodes])
	Kind    string   `json:"kind"`              // "inode" or "direct"
	Nid     uint32   `json:"nid"`               // 0 when the node does not exist
	Offset  uint32   `json:"offset"`            // node offset (footer flag >> 3)
	Blkaddr uint32   `json:"blkaddr"`           // block holding the node, 0 when it does not exist
	Path    string   `json:"path"`              // "inode", "i_nid[0]", "i_nid[2]/3", "i_nid[4]/1/7"
	Parents []uint32 `json:"parents,omitempty"` // nids of the indirect nodes above it, top first
	Missing int      `json:"missing"`           // nodes on the path that do not exist
}

// nodeStep is one level of the path from the inode to a dnode.
type nodeStep struct {
	slot int   // index into the parent's nid array (i_nid for the first step)
	ofs  int64 // node offset of the node at this level
}

// dnodePath computes where index lives (get_node_path): start of the dnode, its capacity, the steps
// below the inode and a display path. ok is false when index is beyond the largest possible file.
func (f *File) dnodePath(index uint64) (start uint64, capacity int, steps []nodeStep, path string, ok bool) {
	n := uint64(f.inode.AddrsPerInode)
	d := uint64(f.inode.AddrsPerBlock)
	const p = nidsPerBlock
	if index < n {
		return 0, int(n), nil, "inode", true
	}
	b := index - n
	if b < d {
		return n, int(d), []nodeStep{{0, 1}}, "i_nid[0]", true
	}
	b -= d
	if b < d {
		return n + d, int(d), []nodeStep{{1, 2}}, "i_nid[1]", true
	}
	b -= d
	base := n + 2*d
	for k := range 2 {
		if b < d*p {
			j := b / d
			indOfs := int64(3 + k*(p+1))
			return base + j*d, int(d), []nodeStep{{2 + k, indOfs}, {int(j), indOfs + 1 + int64(j)}},
				fmt.Sprintf("i_nid[%d]/%d", 2+k, j), true
		}
		b -= d * p
		base += d * p
	}
	if b < d*p*p {
		i := b / (d * p)
		j := (b / d) % p
		top := int64(5 + 2*p)
		mid := top + 1 + int64(i)*(p+1)
		return base + (b/d)*d, int(d), []nodeStep{{4, top}, {int(i), mid}, {int(j), mid + 1 + int64(j)}},
			fmt.Sprintf("i_nid[4]/%d/%d", i, j), true
	}
	return 0, 0, nil, "", false
}

// Dnode returns the dnode holding file block index, with a copy of its slots. A dnode that does not
// exist comes back with Nid 0, all slots NULL_ADDR and Missing > 0.
func (f *File) Dnode(index uint64) (Dnode, error) {
	start, capacity, steps, path, ok := f.dnodePath(index)
	if !ok {
		return Dnode{}, fmt.Errorf("imgio: inode %d: block index %d beyond the largest file: %w", f.inode.Ino, index, fs.ErrInvalid)
	}
	d := Dnode{Start: start, Len: capacity, Path: path, Kind: "inode"}
	if len(steps) == 0 {
		d.Nid, d.Blkaddr, d.Slots = f.inode.Ino, f.inode.Blkaddr, f.inodeSlots()
		return d, nil
	}
	d.Kind = "direct"
	// Walk down: the inode's i_nid, then each indirect node's nid array.
	nids := f.inode.Nids[:]
	for lvl, st := range steps {
		nid := uint32(0)
		if st.slot < len(nids) {
			nid = nids[st.slot]
		}
		if nid == 0 {
			d.Missing = len(steps) - lvl
			d.Slots = make([]uint32, capacity)
			d.Offset = uint32(steps[len(steps)-1].ofs)
			return d, nil
		}
		blk, addr, err := f.img.readNode(nid, f.inode.Ino, st.ofs, path)
		if err != nil {
			return Dnode{}, err
		}
		if lvl == len(steps)-1 {
			d.Nid, d.Blkaddr, d.Offset = nid, addr, uint32(st.ofs)
			d.Slots = make([]uint32, capacity)
			for i := range d.Slots {
				d.Slots[i] = binary.LittleEndian.Uint32(blk[4*i:])
			}
			return d, nil
		}
		d.Parents = append(d.Parents, nid)
		nids = readNids(blk)
	}
	return d, nil
}

// dnodeNid is Dnode(index).Nid without copying the slots or the nid arrays on the way: the same
// nodes read (from the shared cache), the same errors; 0 when a node on the path does not exist.
func (f *File) dnodeNid(index uint64) (uint32, error) {
	_, _, steps, path, ok := f.dnodePath(index)
	if !ok {
		return 0, fmt.Errorf("imgio: inode %d: block index %d beyond the largest file: %w", f.inode.Ino, index, fs.ErrInvalid)
	}
	if len(steps) == 0 {
		return f.inode.Ino, nil
	}
	nid, _, err := f.nodeAt(steps, len(steps)-1, path)
	return nid, err
}

// NodeAddr returns the block address the NAT gives the node at level (0 = the node i_nid points
// at, 1 its child, 2 its grandchild) on the path from the inode to file block index; ok is false
// when that node does not exist. It lets a *File serve as core's node address source (truncate
// frees nodes by their block address).
func (f *File) NodeAddr(index uint64, level int) (blkaddr uint32, ok bool, err error) {
	_, _, steps, path, found := f.dnodePath(index)
	if !found {
		return 0, false, fmt.Errorf("imgio: inode %d: block index %d beyond the largest file: %w", f.inode.Ino, index, fs.ErrInvalid)
	}
	if level < 0 || level >= len(steps) {
		return 0, false, fmt.Errorf("imgio: inode %d: block index %d has no node at level %d (%s): %w", f.inode.Ino, index, level, path, fs.ErrInvalid)
	}
	nid, addr, err := f.nodeAt(steps, level, path)
	return addr, nid != 0, err
}

// nodeAt walks steps (a dnodePath) from the inode down to the node at level: its nid and block
// address, nid 0 when a node on the way does not exist. Each indirect node's nid is read in place.
func (f *File) nodeAt(steps []nodeStep, level int, path string) (nid, addr uint32, err error) {
	var parent []byte // the indirect node above, nil at the inode
	for lvl, st := range steps[:level+1] {
		nid = 0
		switch {
		case parent == nil && st.slot < len(f.inode.Nids):
			nid = f.inode.Nids[st.slot]
		case parent != nil && st.slot < nidsPerBlock:
			nid = binary.LittleEndian.Uint32(parent[4*st.slot:])
		}
		if nid == 0 {
			return 0, 0, nil
		}
		blk, a, err := f.img.readNode(nid, f.inode.Ino, st.ofs, path)
		if err != nil {
			return 0, 0, err
		}
		if lvl == level {
			return nid, a, nil
		}
		parent = blk
	}
	return 0, 0, nil
}

func readNids(blk []byte) []uint32 {
	out := make([]uint32, nidsPerBlock)
	for i := range out {
		out[i] = binary.LittleEndian.Uint32(blk[4*i:])
	}
	return out
}

// DnodeSlots returns the data slots of the dnode (the inode or a direct node) that holds file block
// index: start is the file block index of slots[0]; slots has the node's full capacity (all NULL_ADDR
// when the node does not exist); missing counts the nodes on the path (direct, indirect,
// double-indirect) that do not exist and ALLOC_NODE would create. It lets a *File serve as core's
// dnode source. An inline inode's slots read as NULL_ADDR: its i_addr holds data, not addresses.
func (f *File) DnodeSlots(index uint64) (start uint64, slots []uint32, missing int, err error) {
	d, err := f.Dnode(index)
	if err != nil {
		return 0, nil, 0, err
	}
	return d.Start, d.Slots, d.Missing, nil
}

// Dnodes returns every existing dnode of the file in file order, the inode first. Slots are left nil;
// use [File.Dnode] for them.
func (f *File) Dnodes() ([]Dnode, error) {
	var out []Dnode
	err := f.walk(func(d Dnode, _ []byte) error {
		out = append(out, d)
		return nil
	})
	return out, err
}

// walk calls fn for every existing dnode in file order, with the node block (nil for the inode, whose
// slots come from inodeSlots). Subtrees under a zero nid are skipped without reading anything.
func (f *File) walk(fn func(d Dnode, blk []byte) error) error {
	in := &f.inode
	n := uint64(in.AddrsPerInode)
	dd := uint64(in.AddrsPerBlock)
	const p = nidsPerBlock
	if err := fn(Dnode{Start: 0, Len: int(n), Kind: "inode", Nid: in.Ino, Blkaddr: in.Blkaddr, Path: "inode"}, nil); err != nil {
		return err
	}
	direct := func(nid uint32, ofs int64, start uint64, path string, parents []uint32) error {
		blk, addr, err := f.img.readNode(nid, in.Ino, ofs, path)
		if err != nil {
			return err
		}
		return fn(Dnode{Start: start, Len: int(dd), Kind: "direct", Nid: nid, Offset: uint32(ofs), Blkaddr: addr,
			Path: path, Parents: parents}, blk)
	}
	for k := range 2 {
		if nid := in.Nids[k]; nid != 0 {
			if err := direct(nid, int64(1+k), n+uint64(k)*dd, fmt.Sprintf("i_nid[%d]", k), nil); err != nil {
				return err
			}
		}
	}
	base := n + 2*dd
	for k := range 2 {
		indOfs := int64(3 + k*(p+1))
		if nid := in.Nids[2+k]; nid != 0 {
			blk, _, err := f.img.readNode(nid, in.Ino, indOfs, fmt.Sprintf("i_nid[%d]", 2+k))
			if err != nil {
				return err
			}
			for j, c := range readNids(blk) {
				if c == 0 {
					continue
				}
				if err := direct(c, indOfs+1+int64(j), base+uint64(j)*dd, fmt.Sprintf("i_nid[%d]/%d", 2+k, j), []uint32{nid}); err != nil {
					return err
				}
			}
		}
		base += dd * p
	}
	if nid := in.Nids[4]; nid != 0 {
		top := int64(5 + 2*p)
		blk, _, err := f.img.readNode(nid, in.Ino, top, "i_nid[4]")
		if err != nil {
			return err
		}
		for i, c := range readNids(blk) {
			if c == 0 {
				continue
			}
			mid := top + 1 + int64(i)*(p+1)
			mblk, _, err := f.img.readNode(c, in.Ino, mid, fmt.Sprintf("i_nid[4]/%d", i))
			if err != nil {
				return err
			}
			for j, g := range readNids(mblk) {
				if g == 0 {
					continue
				}
				start := base + uint64(i)*dd*p + uint64(j)*dd
				if err := direct(g, mid+1+int64(j), start, fmt.Sprintf("i_nid[4]/%d/%d", i, j), []uint32{nid, c}); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// Extent is a run of file block indexes in one state. Consecutive "addr" slots merge only when their
// addresses are physically contiguous.
type Extent struct {
	Index uint64 `json:"index"`
	Count uint64 `json:"count"`
	State string `json:"state"` // "addr", "null", "new" or "compress"
	Addr  uint32 `json:"addr,omitempty"`
}

// Extent states.
const (
	StateAddr     = "addr"
	StateNull     = "null"
	StateNew      = "new"
	StateCompress = "compress"
)

// Extents returns the file's slot map as runs covering every index from 0 to the last one inside
// i_size or holding a non-NULL slot (slots preallocated past EOF included). Inline inodes have no
// slots and return no extents. Addresses outside the main area are a *FormatError.
func (f *File) Extents() ([]Extent, error) {
	if f.hasInline() {
		return []Extent{}, nil
	}
	bs := uint64(f.img.bs)
	end := (uint64(f.inode.Size) + bs - 1) / bs
	var out []Extent
	var next uint64 // first index not yet covered
	add := func(idx uint64, state string, addr uint32) {
		if idx > next {
			addRun(&out, next, idx-next, StateNull, 0)
		}
		addRun(&out, idx, 1, state, addr)
		next = idx + 1
	}
	err := f.walk(func(d Dnode, blk []byte) error {
		var slots []uint32
		if blk == nil {
			slots = f.inodeSlots()
		}
		for i := range d.Len {
			var a uint32
			if blk == nil {
				a = slots[i]
			} else {
				a = binary.LittleEndian.Uint32(blk[4*i:])
			}
			if a == NullAddr {
				continue
			}
			idx := d.Start + uint64(i)
			switch a {
			case NewAddr:
				add(idx, StateNew, 0)
			case CompressAddr:
				add(idx, StateCompress, 0)
			default:
				if !f.img.validMain(a) {
					off := f.img.blockOff(d.Blkaddr) + 4*int64(i)
					if blk == nil {
						off += inodeAddrOff + int64(f.inode.ExtraISize)
					}
					return formatErr(off, "data slot", fmt.Sprintf("inode %d index %d: address out of the main area", f.inode.Ino, idx), a)
				}
				add(idx, StateAddr, a)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if end > next {
		addRun(&out, next, end-next, StateNull, 0)
	}
	if out == nil {
		out = []Extent{}
	}
	return out, nil
}

// addRun appends a run, merging it into the last one when the state matches and, for addresses, the
// blocks are contiguous.
func addRun(out *[]Extent, idx, count uint64, state string, addr uint32) {
	if n := len(*out); n > 0 {
		last := &(*out)[n-1]
		if last.State == state && last.Index+last.Count == idx &&
			(state != StateAddr || uint64(last.Addr)+last.Count == uint64(addr)) {
			last.Count += count
			return
		}
	}
	*out = append(*out, Extent{Index: idx, Count: count, State: state, Addr: addr})
}

// ReadInline returns the inline data of an inode with INLINE_DATA (all zeros when DATA_EXIST is clear).
func (f *File) ReadInline() ([]byte, error) {
	if f.inode.Inline&inlineData == 0 {
		return nil, fmt.Errorf("imgio: inode %d has no inline data: %w", f.inode.Ino, fs.ErrInvalid)
	}
	if f.inode.Advise&adviseEncrypt != 0 {
		return nil, &UnsupportedError{Feature: "encrypted inline data", Off: f.img.blockOff(f.inode.Blkaddr)}
	}
	out := make([]byte, f.inode.Size) // bounded by MAX_INLINE_DATA in decodeInode
	if f.inode.Inline&inlineDataExist != 0 {
		o := inlineOff(f.inode)
		copy(out, f.blk[o:o+len(out)])
	}
	return out, nil
}
