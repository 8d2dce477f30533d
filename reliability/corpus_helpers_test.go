package reliability

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"github.com/zrviz/zrviz/internal/f2fscrc"
	"math/rand/v2"
)

// Case is one corrupt image: the base's bytes with Patches over them, cut
// at Size. Name says what was done; Seed reproduces the case
// (Generate(base, Seed) lists it under the same index).
type Case struct {
	Name    string
	Index   int
	Seed    uint64
	Size    int64
	Patches []Patch
	CRC     string // "broken", "fixed" or "" (no CRC involved)
}

// Overlay returns the case as a reader over base.
func (c *Case) Overlay(base []byte) *Overlay {
	return &Overlay{Base: bytes.NewReader(base), Size: c.Size, Patches: c.Patches}
}

// field is a fixed-size little-endian field of an on-disk struct.
type field struct {
	name string
	off  int64
	size int // 1, 2, 4 or 8
}

// sbFields lists struct f2fs_super_block's scalar fields (imgio/raw.go rawSuperblock).
var sbFields = []field{
	{"magic", 0, 4}, {"major_ver", 4, 2}, {"minor_ver", 6, 2}, {"log_sectorsize", 8, 4},
	{"log_sectors_per_block", 12, 4}, {"log_blocksize", 16, 4}, {"log_blocks_per_seg", 20, 4},
	{"segs_per_sec", 24, 4}, {"secs_per_zone", 28, 4}, {"checksum_offset", 32, 4},
	{"block_count", 36, 8}, {"section_count", 44, 4}, {"segment_count", 48, 4},
	{"segment_count_ckpt", 52, 4}, {"segment_count_sit", 56, 4}, {"segment_count_nat", 60, 4},
	{"segment_count_ssa", 64, 4}, {"segment_count_main", 68, 4}, {"segment0_blkaddr", 72, 4},
	{"cp_blkaddr", 76, 4}, {"sit_blkaddr", 80, 4}, {"nat_blkaddr", 84, 4}, {"ssa_blkaddr", 88, 4},
	{"main_blkaddr", 92, 4}, {"root_ino", 96, 4}, {"node_ino", 100, 4}, {"meta_ino", 104, 4},
	{"extension_count", 1148, 4}, {"cp_payload", 1664, 4}, {"feature", 2180, 4},
	{"encryption_level", 2184, 1}, {"qf_ino[0]", 2745, 4}, {"hot_ext_count", 2757, 1},
	{"s_encoding", 2758, 2}, {"s_encoding_flags", 2760, 2}, {"s_errors[0]", 2794, 1}, {"crc", 3068, 4},
}

// cpFields lists struct f2fs_checkpoint's fixed fields (imgio/raw.go rawCheckpoint).
var cpFields = func() []field {
	f := []field{
		{"checkpoint_ver", 0, 8}, {"user_block_count", 8, 8}, {"valid_block_count", 16, 8},
		{"rsvd_segment_count", 24, 4}, {"overprov_segment_count", 28, 4}, {"free_segment_count", 32, 4},
		{"ckpt_flags", 132, 4}, {"cp_pack_total_block_count", 136, 4}, {"cp_pack_start_sum", 140, 4},
		{"valid_node_count", 144, 4}, {"valid_inode_count", 148, 4}, {"next_free_nid", 152, 4},
		{"sit_ver_bitmap_bytesize", 156, 4}, {"nat_ver_bitmap_bytesize", 160, 4},
		{"checksum_offset", 164, 4}, {"elapsed_time", 168, 8},
	}
	for i := int64(0); i < 8; i++ {
		f = append(f, field{fmt.Sprintf("cur_node_segno[%d]", i), 36 + 4*i, 4},
			field{fmt.Sprintf("cur_node_blkoff[%d]", i), 68 + 2*i, 2},
			field{fmt.Sprintf("cur_data_segno[%d]", i), 84 + 4*i, 4},
			field{fmt.Sprintf("cur_data_blkoff[%d]", i), 116 + 2*i, 2})
	}
	for i := int64(0); i < 6; i++ {
		f = append(f, field{fmt.Sprintf("alloc_type[%d]", i), 176 + i, 1})
	}
	return f
}()

// inodeFields lists struct f2fs_inode fields worth lying about (imgio/raw.go rawInode).
var inodeFields = []field{
	{"i_mode", 0, 2}, {"i_advise", 2, 1}, {"i_inline", 3, 1}, {"i_links", 12, 4}, {"i_size", 16, 8},
	{"i_blocks", 24, 8}, {"i_current_depth", 72, 4}, {"i_xattr_nid", 76, 4}, {"i_flags", 80, 4},
	{"i_pino", 84, 4}, {"i_namelen", 88, 4}, {"i_dir_level", 347, 1}, {"i_ext.fofs", 348, 4},
	{"i_ext.blk_addr", 352, 4}, {"i_ext.len", 356, 4}, {"i_extra_isize", 360, 2},
	{"i_inline_xattr_size", 362, 2},
}

func le(size int, v uint64) []byte {
	b := make([]byte, 8)
	binary.LittleEndian.PutUint64(b, v)
	return b[:size]
}

func (b *Base) get(off int64, size int) uint64 {
	var x [8]byte
	copy(x[:], b.Data[off:off+int64(size)])
	return binary.LittleEndian.Uint64(x[:])
}

// edgeValues are 0, the maximum, and one off either side of the original.
func edgeValues(orig uint64, size int) []uint64 {
	maxv := uint64(1)<<(8*size) - 1
	if size == 8 {
		maxv = ^uint64(0)
	}
	return []uint64{0, maxv, (orig + 1) & maxv, (orig - 1) & maxv}
}

// gen accumulates cases.
type gen struct {
	b     *Base
	seed  uint64
	cases []Case
}

func (g *gen) add(name, crc string, size int64, p ...Patch) {
	g.cases = append(g.cases, Case{Name: g.b.Name + "/" + name, Index: len(g.cases), Seed: g.seed,
		Size: size, Patches: p, CRC: crc})
}

func (g *gen) full() int64 { return int64(len(g.b.Data)) }

// blockWith returns the 4 KiB block at off with data written at rel.
func (g *gen) blockWith(off int64, rel int64, data []byte) []byte {
	blk := append([]byte(nil), g.b.Data[off:off+blockSize]...)
	copy(blk[rel:], data)
	return blk
}

// Generate lists the corrupt variants of b. It is deterministic: the same
// base and seed give the same cases in the same order. The structural part
// does not depend on the seed; randomCount further seeded random byte
// mutations of metadata blocks follow.
func Generate(b *Base, seed uint64, randomCount int) []Case {
	g := &gen{b: b, seed: seed}
	g.superblock()
	g.checkpoint()
	g.journals()
	g.nat()
	g.nodes()
	g.inodes()
	g.dentries()
	g.slots()
	g.truncations()
	g.random(randomCount)
	return g.cases
}

func (g *gen) superblock() {
	sum := g.b.Vol.FeatureBits&0x800 != 0 // sb_checksum
	for _, f := range sbFields {
		orig := g.b.get(sbOff+f.off, f.size)
		for _, v := range edgeValues(orig, f.size) {
			if v == orig {
				continue
			}
			name := fmt.Sprintf("sb/%s=%#x", f.name, v)
			p0 := Patch{sbOff + f.off, le(f.size, v)}
			p1 := Patch{blockSize + sbOff + f.off, le(f.size, v)}
			g.add(name+"/copy0", "", g.full(), p0)
			g.add(name+"/both", "", g.full(), p0, p1)
			if sum && f.name != "crc" {
				// Recompute the superblock CRC so the reader trusts the lie.
				var ps []Patch
				for _, base := range []int64{sbOff, blockSize + sbOff} {
					sb := append([]byte(nil), g.b.Data[base:base+sbLen]...)
					copy(sb[f.off:], le(f.size, v))
					if co := binary.LittleEndian.Uint32(sb[32:]); co <= sbLen-4 {
						binary.LittleEndian.PutUint32(sb[co:], f2fscrc.Checksum(f2fsMagic, sb[:co]))
					}
					ps = append(ps, Patch{base, sb})
				}
				g.add(name+"/both/crc-fixed", "fixed", g.full(), ps...)
			}
		}
	}
}

func (g *gen) checkpoint() {
	b := g.b
	for _, f := range cpFields {
		orig := b.get(b.CPOff+f.off, f.size)
		for _, v := range edgeValues(orig, f.size) {
			if v == orig {
				continue
			}
			name := fmt.Sprintf("cp/%s=%#x", f.name, v)
			g.add(name+"/crc-broken", "broken", g.full(), Patch{b.CPOff + f.off, le(f.size, v)})
			head := g.blockWith(b.CPOff, f.off, le(f.size, v))
			fixCPCRC(head)
			ps := []Patch{{b.CPOff, head}}
			if f.name == "checkpoint_ver" || f.name == "checksum_offset" {
				// The trailing copy must agree for the pack to stay valid.
				tail := g.blockWith(b.CPTailOff, f.off, le(f.size, v))
				fixCPCRC(tail)
				ps = append(ps, Patch{b.CPTailOff, tail})
			}
			g.add(name+"/crc-fixed", "fixed", g.full(), ps...)
			// The same lie in both packs: no valid fallback.
			other := g.blockWith(b.CPOtherOff, f.off, le(f.size, v))
			fixCPCRC(other)
			g.add(name+"/both-packs/crc-fixed", "fixed", g.full(), append(ps, Patch{b.CPOtherOff, other})...)
		}
	}
	// Every byte of the NAT/SIT version bitmaps, flipped, CRC fixed.
	sitSz := int64(b.u32(b.CPOff + 156))
	natSz := int64(b.u32(b.CPOff + 160))
	for i := int64(0); i < sitSz+natSz && i < 4096-192-4; i++ {
		head := append([]byte(nil), b.Data[b.CPOff:b.CPOff+blockSize]...)
		head[192+i] ^= 0xFF
		fixCPCRC(head)
		g.add(fmt.Sprintf("cp/version-bitmap[%d]^=0xff", i), "fixed", g.full(), Patch{b.CPOff, head})
	}
	// Broken CRCs: each CP block of either pack, and the SB CRC.
	for _, off := range []int64{b.CPOff, b.CPTailOff, b.CPOtherOff} {
		co := int64(b.u32(off + 164))
		if co+4 <= blockSize {
			g.add(fmt.Sprintf("crc/cp@%#x", off), "broken", g.full(), Patch{off + co, le(4, uint64(b.u32(off+co))^0x1)})
		}
	}
	g.add("crc/cp-both-packs", "broken", g.full(),
		Patch{b.CPOff + int64(b.u32(b.CPOff+164)), []byte{0xde, 0xad, 0xbe, 0xef}},
		Patch{b.CPOtherOff + int64(b.u32(b.CPOtherOff+164))%(blockSize-4), []byte{0xde, 0xad, 0xbe, 0xef}})
	g.add("crc/sb", "broken", g.full(), Patch{sbOff + 3068, []byte{1, 2, 3, 4}})
}

func (g *gen) journals() {
	b := g.b
	if b.NATJournal >= 0 {
		for _, n := range []uint64{0, 38, 39, 0xFFFF} {
			g.add(fmt.Sprintf("journal/n_nats=%d", n), "", g.full(), Patch{b.NATJournal, le(2, n)})
		}
		cnt := int64(min(b.u16(b.NATJournal), 38))
		for i := int64(0); i < cnt; i++ {
			e := b.NATJournal + 2 + 13*i
			for _, nid := range []uint64{0, 1, 0xFFFFFFFF, uint64(b.u32(b.NATJournal + 2))} {
				g.add(fmt.Sprintf("journal/nat[%d].nid=%#x", i, nid), "", g.full(), Patch{e, le(4, nid)})
			}
			for _, blk := range g.badAddrs() {
				g.add(fmt.Sprintf("journal/nat[%d].block_addr=%#x", i, blk), "", g.full(), Patch{e + 9, le(4, uint64(blk))})
			}
		}
	}
	if b.SITJournal >= 0 {
		for _, n := range []uint64{0, 6, 7, 0xFFFF} {
			g.add(fmt.Sprintf("journal/n_sits=%d", n), "", g.full(), Patch{b.SITJournal, le(2, n)})
		}
		cnt := int64(min(b.u16(b.SITJournal), 6))
		for i := int64(0); i < cnt; i++ {
			e := b.SITJournal + 2 + 78*i
			for _, s := range []uint64{uint64(b.Vol.MainSegmentCount), uint64(b.Vol.MainSegmentCount) - 1, 0xFFFFFFFF} {
				g.add(fmt.Sprintf("journal/sit[%d].segno=%#x", i, s), "", g.full(), Patch{e, le(4, s)})
			}
			for _, vb := range []uint64{0, 513, 0x3FF, 0xFFFF, 6<<10 | 512} {
				g.add(fmt.Sprintf("journal/sit[%d].vblocks=%#x", i, vb), "", g.full(), Patch{e + 4, le(2, vb)})
			}
			ones := make([]byte, 64)
			for k := range ones {
				ones[k] = 0xFF
			}
			g.add(fmt.Sprintf("journal/sit[%d].map=ones", i), "", g.full(), Patch{e + 6, ones})
			g.add(fmt.Sprintf("journal/sit[%d].map=zeros", i), "", g.full(), Patch{e + 6, make([]byte, 64)})
		}
	}
}

// badAddrs are block addresses a hostile image points at: nothing, the
// metadata areas, one past the end, the reserved markers.
func (g *gen) badAddrs() []uint32 {
	v := g.b.Vol
	return []uint32{0, 1, v.CPBlkaddr, v.SITBlkaddr, v.NATBlkaddr, v.SSABlkaddr, v.MainBlkaddr - 1,
		v.MaxBlkaddr, v.MaxBlkaddr - 1, 0xFFFFFFFF, 0xFFFFFFFE, 0x80000000}
}

func (g *gen) nat() {
	b := g.b
	nodes := b.Nodes
	for i, n := range nodes {
		off, ok := b.NAT[n.Nid]
		if !ok {
			continue
		}
		targets := g.badAddrs()
		// At another node (a different inode's, or the next one's).
		o := nodes[(i+1)%len(nodes)]
		targets = append(targets, uint32(o.Off/blockSize), uint32(nodes[0].Off/blockSize))
		if i > 8 && i%4 != 0 {
			targets = targets[:6] // enough variety; keep the count sane on big bases
		}
		for _, a := range targets {
			g.add(fmt.Sprintf("nat/nid%d.block_addr=%#x", n.Nid, a), "", g.full(), Patch{off + 5, le(4, uint64(a))})
		}
		g.add(fmt.Sprintf("nat/nid%d.ino=%d", n.Nid, o.Ino), "", g.full(), Patch{off + 1, le(4, uint64(o.Ino))})
		g.add(fmt.Sprintf("nat/nid%d.ino=0", n.Nid), "", g.full(), Patch{off + 1, le(4, 0)})
	}
}

func (g *gen) nodes() {
	b := g.b
	for i, n := range b.Nodes {
		o := b.Nodes[(i+1)%len(b.Nodes)]
		f := n.Off + footerOff
		g.add(fmt.Sprintf("footer/nid%d.nid=%d", n.Nid, o.Nid), "", g.full(), Patch{f, le(4, uint64(o.Nid))})
		g.add(fmt.Sprintf("footer/nid%d.ino=%d", n.Nid, o.Ino+1), "", g.full(), Patch{f + 4, le(4, uint64(o.Ino+1))})
		g.add(fmt.Sprintf("footer/nid%d.ino=0", n.Nid), "", g.full(), Patch{f + 4, le(4, 0)})
		g.add(fmt.Sprintf("footer/nid%d.flag=max", n.Nid), "", g.full(), Patch{f + 8, le(4, 0xFFFFFFF8)})
		flag := uint64(b.u32(f + 8))
		g.add(fmt.Sprintf("footer/nid%d.offset+1", n.Nid), "", g.full(), Patch{f + 8, le(4, flag+8)})
		// Loops: every child nid replaced by the node itself, by the
		// inode, and by a sibling of another kind.
		for k, c := range n.Children {
			if k > 3 && k%64 != 0 {
				continue
			}
			g.add(fmt.Sprintf("loop/nid%d.child%d=self", n.Nid, k), "", g.full(), Patch{c, le(4, uint64(n.Nid))})
			g.add(fmt.Sprintf("loop/nid%d.child%d=inode", n.Nid, k), "", g.full(), Patch{c, le(4, uint64(n.Ino))})
			g.add(fmt.Sprintf("loop/nid%d.child%d=nid%d", n.Nid, k, o.Nid), "", g.full(), Patch{c, le(4, uint64(o.Nid))})
			g.add(fmt.Sprintf("loop/nid%d.child%d=max", n.Nid, k), "", g.full(), Patch{c, le(4, 0xFFFFFFFF)})
		}
		if n.Kind == "inode" && len(n.Children) > 0 {
			// Every i_nid slot pointing at the first child: direct nodes
			// used as indirect and double indirect ones.
			first := b.u32(n.Children[0])
			var ps []Patch
			for k := int64(0); k < 5; k++ {
				ps = append(ps, Patch{n.Off + inodeNid + 4*k, le(4, uint64(first))})
			}
			g.add(fmt.Sprintf("loop/nid%d.i_nid[*]=%d", n.Nid, first), "", g.full(), ps...)
		}
	}
}

func (g *gen) inodes() {
	b := g.b
	for i, f := range b.Files {
		if i > 40 && i%5 != 0 {
			continue
		}
		for _, fl := range inodeFields {
			off := f.InodeOff + fl.off
			orig := b.get(off, fl.size)
			vals := edgeValues(orig, fl.size)
			switch fl.name {
			case "i_mode":
				vals = append(vals, 0o100644, 0o40755, 0o120777, 0o20644)
			case "i_inline":
				vals = append(vals, orig|0x02, orig|0x04, orig|0x08, orig|0x20, orig|0x80, orig&^0x01)
			case "i_flags":
				vals = append(vals, 0x4, 0x10, 0x20, 0x40000000)
			case "i_size":
				vals = append(vals, 1<<62, 1<<43, uint64(orig)+blockSize)
			case "i_extra_isize":
				vals = append(vals, 36, 2, 4096)
			case "i_advise":
				vals = append(vals, 0x04, 0x08, 0x10)
			}
			for _, v := range vals {
				if v == orig {
					continue
				}
				g.add(fmt.Sprintf("inode/%s.%s=%#x", f.Entry.Path, fl.name, v), "", g.full(), Patch{off, le(fl.size, v)})
			}
		}
		// extra_attr turned on with a hostile i_extra_isize.
		in := uint64(b.Data[f.InodeOff+3])
		for _, ex := range []uint64{0, 4, 36, 3692, 0xFFFC} {
			g.add(fmt.Sprintf("inode/%s.extra_attr,extra_isize=%d", f.Entry.Path, ex), "", g.full(),
				Patch{f.InodeOff + 3, []byte{byte(in | 0x20)}}, Patch{f.InodeOff + 360, le(2, ex)})
		}
	}
}

func (g *gen) dentries() {
	b := g.b
	for _, f := range b.Files {
		for bi, area := range f.Dentries {
			nr, dent, names := int64(dentryNR), int64(30), int64(30+dentryNR*11)
			if f.Inline {
				nr, dent, names = 182, 30, 30+182*11
			}
			// Every bitmap bit set.
			bm := make([]byte, (nr+7)/8)
			for k := range bm {
				bm[k] = 0xFF
			}
			g.add(fmt.Sprintf("dentry/%s[%d].bitmap=ones", f.Entry.Path, bi), "", g.full(), Patch{area, bm})
			for i := int64(0); i < nr; i++ {
				if b.Data[area+i/8]&(1<<(i%8)) == 0 {
					continue
				}
				e := area + dent + 11*i
				nm := fmt.Sprintf("dentry/%s[%d].e%d", f.Entry.Path, bi, i)
				for _, l := range []uint64{0, 9, 255, 256, 0xFFFF, uint64(8 * (nr - i))} {
					g.add(fmt.Sprintf("%s.name_len=%d", nm, l), "", g.full(), Patch{e + 8, le(2, l)})
				}
				for _, ino := range []uint64{0, 0xFFFFFFFF, uint64(f.Entry.Ino), uint64(b.Vol.RootIno), uint64(f.Parent)} {
					// The entry naming its own directory, the root or the
					// parent with type directory: a cycle.
					g.add(fmt.Sprintf("%s.ino=%d,dir", nm, ino), "", g.full(), Patch{e + 4, le(4, ino)}, Patch{e + 10, []byte{2}})
				}
				g.add(nm+".file_type=0xff", "", g.full(), Patch{e + 10, []byte{0xFF}})
				g.add(nm+".hash=max", "", g.full(), Patch{e, le(4, 0xFFFFFFFF)})
				// Names a host path would not like.
				for _, n := range []string{"/", "..", "../../etc/x", "a/b", "\x00"} {
					g.add(fmt.Sprintf("%s.name=%q", nm, n), "", g.full(),
						Patch{e + 8, le(2, uint64(len(n)))}, Patch{area + names + 8*i, []byte(n)})
				}
			}
		}
		if f.Entry.Type == "dir" {
			for _, d := range []uint64{31, 32, 64, 0xFFFFFFFF} {
				g.add(fmt.Sprintf("dentry/%s.i_current_depth=%d", f.Entry.Path, d), "", g.full(), Patch{f.InodeOff + 72, le(4, d)})
			}
			for _, d := range []uint64{30, 31, 255} {
				g.add(fmt.Sprintf("dentry/%s.i_dir_level=%d", f.Entry.Path, d), "", g.full(), Patch{f.InodeOff + 347, []byte{byte(d)}})
			}
		}
	}
}

func (g *gen) slots() {
	b := g.b
	var all []struct {
		off  int64
		addr uint32
	}
	for _, f := range b.Files {
		for k := range f.Slots {
			all = append(all, struct {
				off  int64
				addr uint32
			}{f.Slots[k], f.SlotAddr[k]})
		}
	}
	for i, s := range all {
		for _, a := range append(g.badAddrs(), b.Vol.MaxBlkaddr-1) {
			g.add(fmt.Sprintf("slot@%#x=%#x", s.off, a), "", g.full(), Patch{s.off, le(4, uint64(a))})
		}
		// Duplicates: the previous slot's address (inside one file or
		// across files), and the next slot made equal to this one.
		p := all[(i+len(all)-1)%len(all)]
		g.add(fmt.Sprintf("dup/slot@%#x=%#x", s.off, p.addr), "", g.full(), Patch{s.off, le(4, uint64(p.addr))})
		g.add(fmt.Sprintf("dup/slot@%#x=%#x", s.off+4, s.addr), "", g.full(), Patch{s.off + 4, le(4, uint64(s.addr))})
		// A backwards neighbour: contiguous runs that fold onto each other.
		g.add(fmt.Sprintf("dup/slot@%#x=%#x", s.off+4, s.addr-1), "", g.full(), Patch{s.off + 4, le(4, uint64(s.addr-1))})
	}
}

func (g *gen) truncations() {
	b := g.b
	size := g.full()
	// Every metadata block boundary, and one byte either side of a few.
	for k := int64(0); k <= int64(b.Vol.MainBlkaddr) && k*blockSize < size; k++ {
		g.add(fmt.Sprintf("trunc/%d", k*blockSize), "", k*blockSize)
		if k%64 == 1 {
			g.add(fmt.Sprintf("trunc/%d", k*blockSize+1), "", k*blockSize+1)
			g.add(fmt.Sprintf("trunc/%d", k*blockSize-1), "", k*blockSize-1)
		}
	}
	for _, off := range []int64{sbOff, sbOff + 1, sbOff + sbLen - 1, blockSize + sbOff + 100} {
		g.add(fmt.Sprintf("trunc/%d", off), "", off)
	}
	// Just before and after every node block.
	for _, n := range b.Nodes {
		for _, s := range []int64{n.Off, n.Off + blockSize - 1} {
			if s > int64(b.Vol.MainBlkaddr)*blockSize {
				g.add(fmt.Sprintf("trunc/%d(node %d)", s, n.Nid), "", s)
			}
		}
	}
}

// random adds n seeded mutations: 1 to 8 random bytes in a random
// metadata or node block; in the CP block the CRC is recomputed half the
// time so the lie reaches the deeper code.
func (g *gen) random(n int) {
	b := g.b
	r := rand.New(rand.NewPCG(g.seed, uint64(len(b.Data))))
	var blocks []int64
	for k := int64(0); k < 2; k++ {
		blocks = append(blocks, k*blockSize)
	}
	blocks = append(blocks, b.CPOff, b.CPTailOff, b.CPOtherOff)
	if b.NATJournal >= 0 {
		blocks = append(blocks, b.NATJournal&^(blockSize-1), b.SITJournal&^(blockSize-1))
	}
	for _, off := range b.NAT {
		blocks = append(blocks, off&^(blockSize-1))
	}
	for _, nd := range b.Nodes {
		blocks = append(blocks, nd.Off)
	}
	for _, f := range b.Files {
		for _, d := range f.Dentries {
			blocks = append(blocks, d&^(blockSize-1))
		}
	}
	sitBlocks := int64(b.Vol.NATBlkaddr - b.Vol.SITBlkaddr)
	for i := 0; i < n; i++ {
		var blk int64
		if r.IntN(8) == 0 && sitBlocks > 0 {
			blk = (int64(b.Vol.SITBlkaddr) + r.Int64N(sitBlocks)) * blockSize
		} else {
			blk = blocks[r.IntN(len(blocks))]
		}
		data := append([]byte(nil), b.Data[blk:blk+blockSize]...)
		k := 1 + r.IntN(8)
		var at []int
		for j := 0; j < k; j++ {
			o := r.IntN(blockSize)
			at = append(at, o)
			switch r.IntN(4) {
			case 0:
				data[o] = 0
			case 1:
				data[o] = 0xFF
			case 2:
				data[o] ^= 1 << r.IntN(8)
			default:
				data[o] = byte(r.Uint32())
			}
		}
		crc := ""
		if (blk == b.CPOff || blk == b.CPTailOff) && r.IntN(2) == 0 {
			fixCPCRC(data)
			crc = "fixed"
		}
		g.add(fmt.Sprintf("random/%d/block%d@%v", i, blk/blockSize, at), crc, g.full(), Patch{blk, data})
	}
}
