package reliability

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/zrviz/zrviz/imgio"
)

// Layout constants of the on-disk format (the kernel's include/linux/f2fs_fs.h).
const (
	blockSize   = 4096
	sbOff       = 1024 // superblock inside blocks 0 and 1
	sbLen       = 3072
	natEntrySz  = 9
	natPerBlock = blockSize / natEntrySz // 455
	footerOff   = blockSize - 24         // node footer
	inodeAddr   = 360                    // i_addr[0]
	inodeNid    = 4052                   // i_nid[5]
	directAddrs = 1018
	sitJournal  = 507 // compact summary: SIT journal after the NAT journal
	sumJournal  = 3584
	dentryNR    = 214
)

// Base is a real, valid F2FS image held in memory together with where its
// structures are, found by reading it with imgio and the on-disk format.
// The corpus generator patches these locations.
type Base struct {
	Name string
	Data []byte
	Vol  imgio.Volume

	CPOff      int64 // live checkpoint block
	CPOtherOff int64 // the other pack's first block
	CPTotal    uint32
	CPTailOff  int64 // the live pack's trailing CP copy
	NATJournal int64 // offset of n_nats (u16), -1 when unknown
	SITJournal int64 // offset of n_sits (u16), -1 when unknown

	Files []BaseFile
	Nodes []BaseNode       // every node block reached (inodes, direct, indirect)
	NAT   map[uint32]int64 // nid → offset of its live 9-byte NAT entry
}

// BaseFile is one inode of a base image.
type BaseFile struct {
	Entry    imgio.Entry
	Inode    imgio.Inode
	InodeOff int64   // byte offset of the inode block
	Dentries []int64 // dentry blocks (dirs) or the inline dentry area
	Inline   bool    // Dentries[0] is an inline dentry area (NR 182 with no extras)
	Slots    []int64 // byte offsets of a few non-NULL data slots (files)
	SlotAddr []uint32
	Parent   uint32 // ino of the directory holding it
}

// BaseNode is one node block.
type BaseNode struct {
	Nid, Ino uint32
	Off      int64
	Kind     string  // "inode", "direct", "indirect"
	Children []int64 // for inode/indirect: offsets of nid slots that are set
}

// NewBase analyses data, a valid image, with imgio.
func NewBase(name string, data []byte) (*Base, error) {
	img, err := imgio.NewImage(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, fmt.Errorf("base %s: %w", name, err)
	}
	defer img.Close()
	b := &Base{Name: name, Data: data, Vol: img.Volume(), NAT: map[uint32]int64{}, NATJournal: -1, SITJournal: -1}
	v := b.Vol
	cp := int64(v.CPBlkaddr) * blockSize
	other := cp + 512*blockSize
	if v.CheckpointPack == 2 {
		cp, other = other, cp
	}
	b.CPOff, b.CPOtherOff = cp, other
	b.CPTotal = b.u32(cp + 136)
	b.CPTailOff = cp + int64(b.CPTotal-1)*blockSize
	b.findJournals()

	ents, err := img.Files()
	if err != nil {
		return nil, fmt.Errorf("base %s: files: %w", name, err)
	}
	parents := map[string]uint32{}
	seenNode := map[uint32]bool{}
	for _, e := range ents {
		f, err := img.File(e.Ino)
		if err != nil {
			return nil, fmt.Errorf("base %s: %s: %w", name, e.Path, err)
		}
		in := f.Inode()
		bf := BaseFile{Entry: e, Inode: in, InodeOff: int64(in.Blkaddr) * blockSize}
		if e.Path != "/" {
			dir := e.Path[:lastSlash(e.Path)]
			if dir == "" {
				dir = "/"
			}
			bf.Parent = parents[dir]
		}
		if e.Type == imgio.TypeDir {
			parents[e.Path] = e.Ino
			if in.Inline&0x04 != 0 {
				bf.Dentries = []int64{bf.InodeOff + inodeAddr + int64(in.ExtraISize) + 4}
				bf.Inline = true
			} else if exts, err := f.Extents(); err == nil {
				for _, x := range exts {
					for k := uint64(0); x.State == imgio.StateAddr && k < x.Count && len(bf.Dentries) < 8; k++ {
						bf.Dentries = append(bf.Dentries, int64(x.Addr+uint32(k))*blockSize)
					}
				}
			}
		}
		if !seenNode[e.Ino] {
			seenNode[e.Ino] = true
			b.addNode(e.Ino, e.Ino, bf.InodeOff, "inode")
		}
		if e.Type == imgio.TypeFile && in.Inline&0x02 == 0 {
			ds, err := f.Dnodes()
			if err != nil {
				return nil, fmt.Errorf("base %s: %s dnodes: %w", name, e.Path, err)
			}
			for _, d := range ds {
				for _, p := range d.Parents {
					if !seenNode[p] {
						seenNode[p] = true
						if off, ok := b.natOff(p, e.Ino); ok {
							b.addNode(p, e.Ino, int64(b.u32(off+5))*blockSize, "indirect")
						}
					}
				}
				off := bf.InodeOff + inodeAddr + int64(in.ExtraISize)
				if d.Kind == "direct" {
					if !seenNode[d.Nid] {
						seenNode[d.Nid] = true
						b.addNode(d.Nid, e.Ino, int64(d.Blkaddr)*blockSize, "direct")
					}
					off = int64(d.Blkaddr) * blockSize
				}
				// A few non-NULL slots of the first dnodes: enough to aim at.
				dn, err := f.Dnode(d.Start)
				if err != nil {
					continue
				}
				for k, a := range dn.Slots {
					if a != imgio.NullAddr && a != imgio.NewAddr && len(bf.Slots) < 6 {
						bf.Slots = append(bf.Slots, off+int64(4*k))
						bf.SlotAddr = append(bf.SlotAddr, a)
					}
				}
			}
		}
		b.Files = append(b.Files, bf)
	}
	for _, n := range b.Nodes {
		if off, ok := b.natOff(n.Nid, n.Ino); ok {
			b.NAT[n.Nid] = off
		}
	}
	return b, nil
}

func lastSlash(p string) int {
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] == '/' {
			return i
		}
	}
	return 0
}

func (b *Base) u32(off int64) uint32 { return binary.LittleEndian.Uint32(b.Data[off:]) }
func (b *Base) u16(off int64) uint16 { return binary.LittleEndian.Uint16(b.Data[off:]) }

// addNode records a node block and the offsets of its set child nids.
func (b *Base) addNode(nid, ino uint32, off int64, kind string) {
	if off <= 0 || off+blockSize > int64(len(b.Data)) {
		return
	}
	n := BaseNode{Nid: nid, Ino: ino, Off: off, Kind: kind}
	switch kind {
	case "inode":
		for k := int64(0); k < 5; k++ {
			if b.u32(off+inodeNid+4*k) != 0 {
				n.Children = append(n.Children, off+inodeNid+4*k)
			}
		}
	case "indirect":
		for k := int64(0); k < directAddrs; k++ {
			if b.u32(off+4*k) != 0 {
				n.Children = append(n.Children, off+4*k)
			}
		}
	}
	b.Nodes = append(b.Nodes, n)
}

// natOff finds the live NAT entry of nid: the NAT journal first, then
// either copy of its NAT block, whichever names ino and the node's block.
func (b *Base) natOff(nid, ino uint32) (int64, bool) {
	if b.NATJournal >= 0 {
		n := int64(b.u16(b.NATJournal))
		for i := int64(0); i < n && i < 38; i++ {
			e := b.NATJournal + 2 + 13*i
			if b.u32(e) == nid {
				return e + 4, true
			}
		}
	}
	bi := int64(nid / natPerBlock)
	blk := int64(b.Vol.NATBlkaddr) + 2*(bi-bi%512) + bi%512
	for _, c := range []int64{blk, blk + 512} {
		off := c*blockSize + int64(nid%natPerBlock)*natEntrySz
		if off+natEntrySz <= int64(len(b.Data)) && b.u32(off+1) == ino && b.u32(off+5) != 0 {
			return off, true
		}
	}
	return 0, false
}

// findJournals locates the NAT and SIT journals of the live pack
// (compact or normal summaries, imgio/ssa.go layoutOf).
func (b *Base) findJournals() {
	flags := b.u32(b.CPOff + 132)
	startSum := int64(b.u32(b.CPOff + 140))
	if flags&0x4 != 0 { // CP_COMPACT_SUM_FLAG
		s := b.CPOff + startSum*blockSize
		b.NATJournal, b.SITJournal = s, s+sitJournal
		return
	}
	base := int64(3)
	if flags&(0x1|0x20) != 0 {
		base = 6
	}
	hot := b.CPOff + (int64(b.CPTotal)-(base+1))*blockSize
	b.NATJournal = hot + sumJournal
	b.SITJournal = hot + 2*blockSize + sumJournal
}
