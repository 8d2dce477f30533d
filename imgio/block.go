package imgio

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/zrviz/zrviz/internal/f2fs"
)

// Areas a block address can fall in ([BlockInfo].Area).
const (
	AreaSuperblock = "superblock" // blocks before cp_blkaddr: the two superblocks and padding
	AreaCheckpoint = "checkpoint"
	AreaSIT        = "sit"
	AreaNAT        = "nat"
	AreaSSA        = "ssa"
	AreaMain       = "main"
	AreaOutside    = "outside" // at or past MAX_BLKADDR (segment0_blkaddr + segment_count·512)
)

// Kinds of block ([BlockInfo].Kind).
const (
	KindSuperblock = "superblock"
	KindCheckpoint = "checkpoint"
	KindSIT        = "sit"
	KindNAT        = "nat"
	KindSSA        = "ssa"
	KindInode      = "inode"
	KindDirect     = "direct"   // direct node: 1018 data addresses
	KindIndirect   = "indirect" // indirect or double-indirect node: 1018 nids
	KindXattr      = "xattr"    // an inode's xattr node (i_xattr_nid)
	KindDentry     = "dentry"   // data block of a directory
	KindData       = "data"     // data block of a file or symlink
	KindFree       = "free"     // main-area block whose SIT bit is clear
	KindUnknown    = "unknown"
)

// BlockInfo says what one block of an image is, who owns it and what its bytes mean. Its JSON form
// is the block inspector's: {"addr","area","kind","segno","valid","owner","ssa","fields","links",
// "problems"}.
type BlockInfo struct {
	Addr uint32 `json:"addr"`
	Area string `json:"area"` // Area* constants
	Kind string `json:"kind"` // Kind* constants
	// Segno and Valid (the block's bit in its segment's SIT valid map) are set for main-area blocks
	// only (JSON null elsewhere).
	Segno *uint32 `json:"segno"`
	Valid *bool   `json:"valid"`
	// Owner is the file a data block belongs to, or the inode a node block belongs to, set only when
	// confirmed: a data block's owner slot holds this address, a node's NAT entry points at it.
	Owner *BlockOwner `json:"owner"`
	// SSA is the block's live summary entry (main area only).
	SSA      *SummaryEntry `json:"ssa"`
	Fields   []Field       `json:"fields"`   // the decoded structure, in block order
	Links    []BlockLink   `json:"links"`    // blocks this one points to or is pointed from
	Problems []Problem     `json:"problems"` // disagreements met on the way
	// Data is the block's bytes; nil when the block lies past the end of the image.
	Data []byte `json:"-"`
}

// BlockOwner names who owns a block: {"ino","path","index"} for a data block, {"ino","path","nid"}
// for a node block.
type BlockOwner struct {
	Ino uint32 `json:"ino"`
	// Path is the owner's path, built from the i_pino/i_name chain with every step confirmed by
	// looking the name up in the parent directory; "" when it could not be confirmed (Problems says
	// why).
	Path  string  `json:"path"`
	Index *uint64 `json:"index,omitempty"` // data block: the file block index whose slot holds it
	Nid   *uint32 `json:"nid,omitempty"`   // node block: its node id
}

// DisplayPath returns Path, or "(path not confirmed)" when the chain to the root could not be
// confirmed: the words every view of an owner shows.
func (o *BlockOwner) DisplayPath() string {
	if o.Path == "" {
		return "(path not confirmed)"
	}
	return o.Path
}

// Field is one decoded field of a block: Offset and Size are bytes within the block. A field of
// size 0 describes the block as a whole (name "role").
type Field struct {
	Name   string `json:"name"`
	Offset int    `json:"offset"`
	Size   int    `json:"size"`
	Value  string `json:"value"`
}

// BlockLink is another block related to this one. When a field has the same name, the link is what
// that field points to.
type BlockLink struct {
	Name string `json:"name"`
	Addr uint32 `json:"addr"`
}

// Problem is a disagreement between structures, in words. Offsets are the byte offsets in the image
// of the fields involved.
type Problem struct {
	Message string  `json:"message"`
	Offsets []int64 `json:"offsets"`
}

// maxInspectReads bounds the blocks one [Image.Block] call reads, so a web request on a corrupt or
// huge image stays cheap: path confirmation stops with a problem when it runs out.
const maxInspectReads = 4096

// maxPathDepth bounds the i_pino chain: PATH_MAX (4096) allows at most 2048 levels of one-byte names.
const maxPathDepth = 2048

var errBudget = errors.New("imgio: block inspection stopped: read budget exhausted")

// Block says what block addr of the image is: its area and kind, for main-area blocks its segment,
// SIT bit, live summary entry and owner, the decoded fields of metadata and node blocks, the blocks it
// links to or from, and every disagreement met on the way. Nothing read from the image is trusted:
// corrupt structures become Problems (with their byte offsets), not errors. The error is non-nil only
// when ctx ends or the image cannot be read (an I/O error). The work is bounded (a few thousand
// block reads at most), so it is fit for a web request.
func (img *Image) Block(ctx context.Context, addr uint32) (BlockInfo, error) {
	in := &inspector{img: img, ctx: ctx, files: map[uint32]*File{}}
	b := &in.b
	b.Addr = addr
	b.Fields, b.Links, b.Problems = []Field{}, []BlockLink{}, []Problem{}
	if err := ctx.Err(); err != nil {
		return BlockInfo{}, err
	}
	if int64(addr) < img.size/int64(img.bs) {
		data, err := img.readBlock(addr, "block")
		if err != nil {
			return BlockInfo{}, err
		}
		b.Data = data
	}
	sb := &img.sb.raw
	var err error
	switch {
	case addr < sb.CPBlkaddr:
		b.Area, b.Kind = AreaSuperblock, KindUnknown
		if addr < 2 && b.Data != nil {
			b.Kind = KindSuperblock
			in.superblockFields()
		} else {
			in.role("padding before segment 0 (segment0_blkaddr %d): unused", sb.Segment0Blkaddr)
		}
	case addr < sb.SITBlkaddr:
		b.Area, b.Kind = AreaCheckpoint, KindCheckpoint
		err = in.checkpointBlock()
	case addr < sb.NATBlkaddr:
		b.Area, b.Kind = AreaSIT, KindSIT
		err = in.sitBlock()
	case addr < sb.SSABlkaddr:
		b.Area, b.Kind = AreaNAT, KindNAT
		err = in.natBlock()
	case addr < sb.MainBlkaddr:
		b.Area, b.Kind = AreaSSA, KindSSA
		err = in.ssaBlock()
	case addr < img.sb.maxBlk:
		b.Area = AreaMain
		err = in.mainBlock()
	default:
		b.Area, b.Kind = AreaOutside, KindUnknown
		if b.Data != nil {
			in.role("past MAX_BLKADDR %d (segment0_blkaddr + segment_count·512): not part of any segment", img.sb.maxBlk)
		} else {
			in.role("past the end of the image (%d blocks)", img.size/int64(img.bs))
		}
	}
	if err != nil {
		return BlockInfo{}, err
	}
	if err := ctx.Err(); err != nil {
		return BlockInfo{}, err
	}
	return in.b, nil
}

// DataOwner returns the inode and file block index whose slot holds main-area block addr, by the
// same checks as [Image.Block] (a valid SIT bit, the summary entry, the slot holding addr, the
// inode's tree reaching that dnode): ok false exactly when Block's answer has no Owner.Index. It
// reads only what those checks need (a few blocks), so the segment manager's look-ups during a gc
// or a writeback cost a fraction of a Block call.
func (img *Image) DataOwner(ctx context.Context, addr uint32) (ino uint32, index uint64, ok bool, err error) {
	if err := ctx.Err(); err != nil {
		return 0, 0, false, err
	}
	sb := &img.sb.raw
	if addr < sb.MainBlkaddr || addr >= img.sb.maxBlk {
		return 0, 0, false, nil
	}
	in := &inspector{img: img, ctx: ctx, files: map[uint32]*File{}, ownerOnly: true}
	in.b.Addr, in.b.Area = addr, AreaMain
	if err := in.mainBlock(); err != nil {
		return 0, 0, false, err
	}
	if err := ctx.Err(); err != nil {
		return 0, 0, false, err
	}
	if o := in.b.Owner; o != nil && o.Index != nil {
		return o.Ino, *o.Index, true, nil
	}
	return 0, 0, false, nil
}

// inspector carries one Block call: the answer being built, the read budget and the inodes read.
type inspector struct {
	img   *Image
	ctx   context.Context
	b     BlockInfo
	reads int
	files map[uint32]*File
	// ownerOnly stops at what decides a data block's owner (Image.DataOwner): no block bytes,
	// fields, links, path or stale checks.
	ownerOnly bool
}

// spend charges n block reads to the budget.
func (in *inspector) spend(n int) error {
	if err := in.ctx.Err(); err != nil {
		return err
	}
	in.reads += n
	if in.reads > maxInspectReads {
		return errBudget
	}
	return nil
}

// problem records a disagreement.
func (in *inspector) problem(offs []int64, format string, args ...any) {
	o := slices.DeleteFunc(slices.Clone(offs), func(x int64) bool { return x < 0 })
	if o == nil {
		o = []int64{}
	}
	in.b.Problems = append(in.b.Problems, Problem{Message: fmt.Sprintf(format, args...), Offsets: o})
}

// note turns what the image got wrong (a *FormatError, an *UnsupportedError, the budget) into a
// problem prefixed with what was being done, and returns nil; anything else (ctx, I/O) is returned.
func (in *inspector) note(what string, err error) error {
	if err == nil {
		return nil
	}
	var fe *FormatError
	var ue *UnsupportedError
	switch {
	case errors.As(err, &fe):
		in.problem([]int64{fe.Off}, "%s: %v", what, err)
	case errors.As(err, &ue):
		in.problem([]int64{ue.Off}, "%s: %v", what, err)
	case errors.Is(err, errBudget):
		in.problem(nil, "%s: %v (%d blocks)", what, err, maxInspectReads)
	default:
		return err
	}
	return nil
}

// file returns inode ino, read once per call.
func (in *inspector) file(ino uint32) (*File, error) {
	if f, ok := in.files[ino]; ok {
		return f, nil
	}
	if err := in.spend(1); err != nil {
		return nil, err
	}
	f, err := in.img.File(ino)
	if err != nil {
		return nil, err
	}
	in.files[ino] = f
	return f, nil
}

func (in *inspector) role(format string, args ...any) {
	in.b.Fields = append(in.b.Fields, Field{Name: "role", Value: fmt.Sprintf(format, args...)})
}

func (in *inspector) field(name string, off, size int, value string) {
	in.b.Fields = append(in.b.Fields, Field{Name: name, Offset: off, Size: size, Value: value})
}

// link records a related block when addr is a real block of the image.
func (in *inspector) link(name string, addr uint32) {
	if addr == NullAddr || addr == NewAddr || addr == CompressAddr || addr >= in.img.sb.maxBlk {
		return
	}
	in.b.Links = append(in.b.Links, BlockLink{Name: name, Addr: addr})
}

// abs is the image byte offset of byte off of block addr.
func (in *inspector) abs(addr uint32, off int) int64 { return in.img.blockOff(addr) + int64(off) }

// nodeBlockOf returns the block holding node nid (its live NAT entry), 0 when it has none.
func (in *inspector) nodeBlockOf(nid uint32) uint32 {
	if nid == 0 || nid >= in.img.maxNid {
		return 0
	}
	e, err := in.img.natEntry(nid)
	if err != nil || !in.img.validMain(e.BlockAddr) {
		return 0
	}
	return e.BlockAddr
}

// mainBlock classifies a main-area block and finds its owner.
func (in *inspector) mainBlock() error {
	img, b := in.img, &in.b
	segno, blkoff := f2fs.SegNo(b.Addr, img.sb.raw.MainBlkaddr), f2fs.SegOff(b.Addr, img.sb.raw.MainBlkaddr)
	b.Segno = &segno
	b.Kind = KindUnknown
	// The SIT bit, read raw so a corrupt count still shows the bit.
	sloc, err := img.sitLoc(segno)
	if err != nil {
		return in.note("SIT entry", err)
	}
	sblk, err := img.sharedBlock(sloc.blk, "SIT entry")
	if err != nil {
		return in.note("SIT entry", err)
	}
	in.link("SIT entry", sloc.blk)
	sitOff := in.abs(sloc.blk, sloc.off)
	vblocks := binary.LittleEndian.Uint16(sblk[sloc.off:])
	valid := testBitMSB(sblk[sloc.off+2:sloc.off+2+64], blkoff)
	b.Valid = &valid
	segType := f2fs.SITType(vblocks)
	bitOff := sitOff + 2 + int64(blkoff/8)

	sum, err := img.summaryEntry(segno, blkoff)
	if err := in.note("summary entry", err); err != nil {
		return err
	}
	sumOff := int64(-1)
	if err == nil {
		b.SSA = &sum
		if sum.Blkaddr != 0 {
			in.link("summary entry", sum.Blkaddr)
			sumOff = in.abs(sum.Blkaddr, sum.Offset)
		}
	}
	// Node or data: the SIT segment type first, the summary footer when the type is not a log type.
	isNode, known := segType >= 3 && segType <= 5, segType <= 5
	if !known && b.SSA != nil && b.SSA.Type != "" {
		isNode, known = b.SSA.Type == "node", true
	}
	if valid && b.SSA != nil && b.SSA.Type != "" && segType <= 5 && (b.SSA.Type == "node") != isNode {
		in.problem([]int64{sitOff, in.abs(b.SSA.Blkaddr, sumFooterOff)},
			"the SIT says segment %d is a %s segment (type %d), its summary block's footer says %s", segno,
			map[bool]string{true: "node", false: "data"}[isNode], segType, b.SSA.Type)
	}
	if !valid {
		b.Kind = KindFree
		if known && !in.ownerOnly {
			return in.staleCheck(isNode, sitOff, bitOff)
		}
		return nil
	}
	if !known {
		in.problem([]int64{sitOff}, "valid SIT bit, but segment %d has type %d, not a log type, and no summary footer says node or data", segno, segType)
		return nil
	}
	if isNode {
		if in.ownerOnly {
			return nil
		}
		return in.nodeBlock(sumOff, bitOff)
	}
	return in.dataBlock(sumOff, bitOff)
}

// footer decodes the node footer at the end of blk.
func footerOf(blk []byte) rawFooter {
	o := len(blk) - footerSize
	le := binary.LittleEndian
	return rawFooter{Nid: le.Uint32(blk[o:]), Ino: le.Uint32(blk[o+4:]), Flag: le.Uint32(blk[o+8:]),
		CPVer: le.Uint64(blk[o+12:]), NextBlkaddr: le.Uint32(blk[o+20:])}
}

// staleCheck looks at a block whose SIT bit is clear: nothing may still point at it.
func (in *inspector) staleCheck(isNode bool, sitOff, bitOff int64) error {
	img, b := in.img, &in.b
	if b.Data == nil {
		return nil
	}
	if isNode {
		f := footerOf(b.Data)
		if f.Nid == 0 || f.Nid >= img.maxNid {
			return nil
		}
		e, err := img.natEntry(f.Nid)
		if err != nil {
			return in.note("NAT entry", err)
		}
		if e.BlockAddr == b.Addr {
			loc, _ := img.natLoc(f.Nid)
			in.problem([]int64{in.abs(loc.blk, loc.off), bitOff},
				"the NAT entry of nid %d points at this block, but its SIT bit is clear", f.Nid)
		}
		return nil
	}
	if b.SSA == nil || b.SSA.Nid == 0 || b.SSA.Source == "none" {
		return nil
	}
	s, err := in.slot(b.SSA.Nid, b.SSA.OfsInNode)
	if err != nil {
		// The old owner may be long gone: a free block's summary is history, not a claim.
		var fe *FormatError
		if errors.As(err, &fe) || errors.Is(err, errBudget) {
			return nil
		}
		return err
	}
	if s.value == b.Addr {
		in.problem([]int64{s.off, bitOff}, "slot %d of nid %d (inode %d, file block %d) holds this block, but its SIT bit is clear",
			b.SSA.OfsInNode, b.SSA.Nid, s.ino, s.index)
	}
	return nil
}

// slotRef is one data slot of a dnode, as named by a summary entry.
type slotRef struct {
	nid, ino uint32
	nodeAddr uint32 // block holding the dnode
	value    uint32 // the address in the slot
	off      int64  // image byte offset of the slot
	index    uint64 // file block index of the slot
	file     *File
}

// slot reads slot ofs of dnode nid through its NAT entry, checking the node is a dnode with that many
// slots. Errors are *FormatErrors naming what disagrees.
func (in *inspector) slot(nid uint32, ofs uint16) (slotRef, error) {
	img := in.img
	r := slotRef{nid: nid}
	if nid >= img.maxNid {
		return r, formatErr(-1, "summary entry", fmt.Sprintf("nid %d beyond the NAT (%d nids)", nid, img.maxNid), nid)
	}
	e, err := img.natEntry(nid)
	if err != nil {
		return r, err
	}
	loc, _ := img.natLoc(nid)
	natOff := in.abs(loc.blk, loc.off)
	if !img.validMain(e.BlockAddr) {
		return r, formatErr(natOff, "NAT entry", fmt.Sprintf("nid %d has block address %d, not a main-area block", nid, e.BlockAddr), e.BlockAddr)
	}
	r.nodeAddr = e.BlockAddr
	if err := in.spend(1); err != nil {
		return r, err
	}
	blk, err := img.sharedBlock(e.BlockAddr, "node")
	if err != nil {
		return r, err
	}
	f := footerOf(blk)
	footOff := in.abs(e.BlockAddr, int(img.bs)-footerSize)
	if f.Nid != nid {
		return r, formatErr(footOff, "node footer", fmt.Sprintf("NAT entry of nid %d points at block %d, whose footer says nid %d", nid, e.BlockAddr, f.Nid), f.Nid)
	}
	if f.Ino != e.Ino {
		return r, formatErr(footOff+4, "node footer", fmt.Sprintf("node %d: footer says inode %d, NAT entry says %d", nid, f.Ino, e.Ino), f.Ino)
	}
	r.ino = f.Ino
	file, err := in.file(f.Ino)
	if err != nil {
		return r, err
	}
	r.file = file
	ino := &file.inode
	nofs := f.Flag >> 3
	var start uint64
	var capacity, base int
	switch {
	case nid == f.Ino:
		if file.hasInline() {
			return r, formatErr(in.abs(e.BlockAddr, 3), "inode", fmt.Sprintf("inode %d holds inline data or dentries, not block addresses", nid), ino.Inline)
		}
		capacity, base = ino.AddrsPerInode, inodeAddrOff+int(ino.ExtraISize)
	case isDnodeOffset(nofs) && nofs != xattrNodeOfs:
		start = startBidx(nofs, ino)
		capacity = ino.AddrsPerBlock
	default:
		return r, formatErr(footOff+8, "node footer", fmt.Sprintf("nid %d is not a direct node (node offset %d)", nid, nofs), nofs)
	}
	if int(ofs) >= capacity {
		return r, formatErr(-1, "summary entry", fmt.Sprintf("ofs_in_node %d is beyond the %d slots of node %d", ofs, capacity, nid), ofs)
	}
	so := base + 4*int(ofs)
	r.value = binary.LittleEndian.Uint32(blk[so:])
	r.off = in.abs(e.BlockAddr, so)
	r.index = start + uint64(ofs)
	return r, nil
}

// dataBlock finds and confirms the owner of a valid data block through its summary entry.
func (in *inspector) dataBlock(sumOff, bitOff int64) error {
	img, b := in.img, &in.b
	b.Kind = KindData
	sum := b.SSA
	switch {
	case sum == nil:
		in.problem([]int64{bitOff}, "valid SIT bit, but no summary entry could be read: owner unknown")
		return nil
	case sum.Source == "none":
		in.problem([]int64{bitOff}, "valid SIT bit, but the block lies past its current segment's next free block: the checkpoint keeps no summary entry for it")
		return nil
	case sum.Nid == 0:
		in.problem([]int64{sumOff, bitOff}, "valid SIT bit with no owner: the summary entry names nid 0")
		return nil
	}
	s, err := in.slot(sum.Nid, sum.OfsInNode)
	if err != nil {
		var fe *FormatError
		if errors.As(err, &fe) {
			in.problem([]int64{fe.Off, sumOff}, "the summary entry names slot %d of nid %d, but %s: owner unconfirmed", sum.OfsInNode, sum.Nid, fe.Msg)
			return nil
		}
		return in.note("owner", err)
	}
	in.link("owner node", s.nodeAddr)
	if s.nid != s.ino {
		in.link("owner inode", s.file.inode.Blkaddr)
	}
	if s.file.inode.Type == TypeDir {
		b.Kind = KindDentry
	}
	if s.value != b.Addr {
		in.problem([]int64{s.off, sumOff}, "the summary entry names slot %d of nid %d (inode %d, file block %d), but that slot holds %s, not this block",
			sum.OfsInNode, sum.Nid, s.ino, s.index, addrWord(s.value))
		return nil
	}
	// The slot holds this block; the node must also be the one the inode's tree reaches for that index.
	if err := in.spend(3); err != nil {
		return in.note("owner", err)
	}
	dnid, err := s.file.dnodeNid(s.index)
	if err != nil {
		if err := in.note(fmt.Sprintf("inode %d file block %d", s.ino, s.index), err); err != nil {
			return err
		}
	} else if dnid != s.nid {
		in.problem([]int64{s.off}, "nid %d's slot %d holds this block, but inode %d reaches file block %d through nid %d, not through it",
			s.nid, sum.OfsInNode, s.ino, s.index, dnid)
		return nil
	}
	if e, err := img.natEntry(s.nid); err == nil && e.Version != sum.Version {
		loc, _ := img.natLoc(s.nid)
		in.problem([]int64{sumOff + 4, in.abs(loc.blk, loc.off)}, "the summary entry's version %d differs from nid %d's NAT version %d", sum.Version, s.nid, e.Version)
	}
	idx := s.index
	b.Owner = &BlockOwner{Ino: s.ino, Index: &idx}
	if in.ownerOnly {
		return nil
	}
	b.Owner.Path = in.path(s.ino)
	if b.Kind == KindDentry {
		in.dentryFields(s.file)
	}
	return nil
}

// addrWord names a slot value.
func addrWord(a uint32) string {
	switch a {
	case NullAddr:
		return "NULL_ADDR"
	case NewAddr:
		return "NEW_ADDR"
	case CompressAddr:
		return "COMPRESS_ADDR"
	}
	return fmt.Sprintf("block %d", a)
}

// nodeBlock classifies a valid node block from its footer and confirms it through its NAT entry.
func (in *inspector) nodeBlock(sumOff, bitOff int64) error {
	img, b := in.img, &in.b
	if b.Data == nil {
		return nil
	}
	f := footerOf(b.Data)
	footOff := in.abs(b.Addr, int(img.bs)-footerSize)
	nofs := f.Flag >> 3
	switch {
	case f.Nid == 0 || f.Nid >= img.maxNid:
		in.problem([]int64{footOff, bitOff}, "valid SIT bit in a node segment, but the footer's nid %d is not a node id", f.Nid)
		// Still show what the node offset says the block would hold.
		switch {
		case nofs == 0 || nofs == xattrNodeOfs:
		case isDnodeOffset(nofs):
			in.directFields(nil, nofs)
		default:
			in.indirectFields()
		}
		in.nodeFooterFields(f)
		return nil
	case f.Nid == f.Ino:
		b.Kind = KindInode
		if nofs != 0 {
			in.problem([]int64{footOff + 8}, "inode %d: footer node offset %d, an inode's is 0", f.Nid, nofs)
		}
	case nofs == xattrNodeOfs:
		b.Kind = KindXattr
	case isDnodeOffset(nofs):
		b.Kind = KindDirect
	default:
		b.Kind = KindIndirect
	}
	if b.SSA != nil && b.SSA.Source != "none" && b.SSA.Nid != f.Nid {
		in.problem([]int64{sumOff, footOff}, "the summary entry says nid %d, the node footer says nid %d", b.SSA.Nid, f.Nid)
	}
	confirmed := false
	e, err := img.natEntry(f.Nid)
	if err != nil {
		if err := in.note("NAT entry", err); err != nil {
			return err
		}
	} else {
		loc, _ := img.natLoc(f.Nid)
		natOff := in.abs(loc.blk, loc.off)
		in.link("NAT entry", loc.blk)
		switch {
		case e.BlockAddr != b.Addr:
			in.problem([]int64{natOff, footOff, bitOff}, "valid SIT bit, but the NAT entry of nid %d (the footer's) points at %s, not this block",
				f.Nid, addrWord(e.BlockAddr))
		case e.Ino != f.Ino:
			in.problem([]int64{natOff, footOff + 4}, "the NAT entry of nid %d says inode %d, the footer says inode %d", f.Nid, e.Ino, f.Ino)
		default:
			confirmed = true
		}
	}
	var owner *File
	if f.Ino != 0 && f.Ino < img.maxNid {
		if f.Nid == f.Ino && confirmed {
			of, err := in.file(f.Ino)
			if err := in.note("inode", err); err != nil {
				return err
			}
			owner = of
		} else if f.Nid != f.Ino {
			of, err := in.file(f.Ino)
			if err := in.note(fmt.Sprintf("owner inode %d", f.Ino), err); err != nil {
				return err
			}
			owner = of
		}
	}
	if owner != nil && f.Nid != f.Ino {
		in.link("owner inode", owner.inode.Blkaddr)
		if confirmed {
			if err := in.reachable(owner, f.Nid, nofs, footOff); err != nil {
				return err
			}
		}
	}
	if confirmed {
		nid := f.Nid
		b.Owner = &BlockOwner{Ino: f.Ino, Nid: &nid}
		b.Owner.Path = in.path(f.Ino)
	}
	switch b.Kind {
	case KindInode:
		in.inodeFields(f)
	case KindDirect:
		in.directFields(owner, nofs)
	case KindIndirect:
		in.indirectFields()
	case KindXattr:
		in.field("xattr entries", 0, int(img.bs)-footerSize, "xattr header and entries (not decoded)")
	}
	in.nodeFooterFields(f)
	return nil
}

// isDnodeOffset is IS_DNODE: node offsets 3, 4+P and 5+2P and the double-indirect children are
// indirect nodes; every other offset (and the xattr node's) holds data addresses.
func isDnodeOffset(ofs uint32) bool {
	const p = nidsPerBlock
	if ofs == xattrNodeOfs {
		return true
	}
	if ofs == 3 || ofs == 4+p || ofs == 5+2*p {
		return false
	}
	if ofs >= 6+2*p {
		return (ofs-(6+2*p))%(p+1) != 0
	}
	return true
}

// startBidx is start_bidx_of_node: the file block index of slot 0 of the direct node at ofs.
func startBidx(ofs uint32, in *Inode) uint64 {
	const p = nidsPerBlock
	if ofs == 0 {
		return 0
	}
	var bidx uint64
	switch {
	case ofs <= 2:
		bidx = uint64(ofs - 1)
	case ofs <= 2*p+4:
		dec := (ofs - 4) / (p + 1)
		bidx = uint64(ofs - 2 - dec)
	default:
		dec := (ofs - (2*p + 4) - 3) / (p + 1)
		bidx = uint64(ofs - 5 - dec)
	}
	return bidx*uint64(in.AddrsPerBlock) + uint64(in.AddrsPerInode)
}

// nodeSteps turns a node offset into the path from the inode: the i_nid index, then the index in
// each indirect node. ok is false for offsets no node of a file can have.
func nodeSteps(ofs uint32) (steps []nodeStep, ok bool) {
	const p = nidsPerBlock
	switch {
	case ofs == 0:
		return nil, true
	case ofs <= 2:
		return []nodeStep{{int(ofs - 1), int64(ofs)}}, true
	case ofs == 3:
		return []nodeStep{{2, 3}}, true
	case ofs <= 3+p:
		return []nodeStep{{2, 3}, {int(ofs - 4), int64(ofs)}}, true
	case ofs == 4+p:
		return []nodeStep{{3, 4 + p}}, true
	case ofs <= 4+2*p:
		return []nodeStep{{3, 4 + p}, {int(ofs - 5 - p), int64(ofs)}}, true
	case ofs == 5+2*p:
		return []nodeStep{{4, 5 + 2*p}}, true
	}
	r := uint64(ofs) - (6 + 2*p)
	i, j := r/(p+1), r%(p+1)
	if i >= p {
		return nil, false
	}
	mid := int64(6+2*p) + int64(i)*(p+1)
	if j == 0 {
		return []nodeStep{{4, 5 + 2*p}, {int(i), mid}}, true
	}
	return []nodeStep{{4, 5 + 2*p}, {int(i), mid}, {int(j - 1), int64(ofs)}}, true
}

// reachable checks that the inode's node tree reaches nid at node offset ofs, and links the parent.
func (in *inspector) reachable(owner *File, nid, ofs uint32, footOff int64) error {
	img := in.img
	ino := owner.inode.Ino
	inoOff := img.blockOff(owner.inode.Blkaddr)
	if ofs == xattrNodeOfs {
		if x := binary.LittleEndian.Uint32(owner.blk[0x4C:]); x != nid {
			in.problem([]int64{inoOff + 0x4C, footOff + 8}, "an xattr node of inode %d, but the inode's i_xattr_nid is %d", ino, x)
		} else {
			in.link("parent", owner.inode.Blkaddr)
		}
		return nil
	}
	steps, ok := nodeSteps(ofs)
	if !ok {
		in.problem([]int64{footOff + 8}, "node offset %d is beyond the largest file", ofs)
		return nil
	}
	nids := owner.inode.Nids[:]
	parent, parentOff := owner.inode.Blkaddr, inoOff+inodeNidOff
	where := "i_nid"
	for lvl, st := range steps {
		slotOff := parentOff + 4*int64(st.slot)
		n := nids[st.slot]
		if lvl == len(steps)-1 {
			if n != nid {
				in.problem([]int64{slotOff, footOff + 8}, "inode %d's tree holds nid %d at node offset %d (%s[%d]), not this node %d: unreachable",
					ino, n, ofs, where, st.slot, nid)
				return nil
			}
			in.link("parent", parent)
			return nil
		}
		if n == 0 {
			in.problem([]int64{slotOff, footOff + 8}, "unreachable: inode %d has no node at %s[%d] on the way to node offset %d", ino, where, st.slot, ofs)
			return nil
		}
		if err := in.spend(1); err != nil {
			return in.note("parent nodes", err)
		}
		blk, a, err := img.readNode(n, ino, st.ofs, "indirect node")
		if err != nil {
			return in.note(fmt.Sprintf("parent node %d", n), err)
		}
		nids, parent, parentOff, where = readNids(blk), a, img.blockOff(a), fmt.Sprintf("nid %d nid", n)
	}
	return nil
}

// path returns the confirmed path of inode ino, or "" with a problem saying which step failed.
func (in *inspector) path(ino uint32) string {
	img := in.img
	root := img.sb.raw.RootIno
	var parts []string
	seen := map[uint32]bool{}
	for cur := ino; cur != root; {
		if what := in.systemInode(cur); what != "" {
			if cur == ino {
				in.b.Fields = slices.Insert(in.b.Fields, 0, Field{Name: "role",
					Value: fmt.Sprintf("inode %d is the %s: a system file, reached from the superblock, not from a directory", ino, what)})
			} else {
				in.problem(nil, "cannot confirm the path of inode %d: its i_pino chain reaches inode %d, the %s", ino, cur, what)
			}
			return ""
		}
		if seen[cur] || len(parts) > maxPathDepth {
			in.problem(nil, "cannot confirm the path of inode %d: the i_pino chain loops at inode %d", ino, cur)
			return ""
		}
		seen[cur] = true
		f, err := in.file(cur)
		if err != nil {
			in.pathProblem(ino, err, "inode %d", cur)
			return ""
		}
		off := img.blockOff(f.inode.Blkaddr)
		pino := f.inode.Pino
		nameLen := min(binary.LittleEndian.Uint32(f.blk[0x58:]), maxNameLen)
		name := f.blk[0x5C : 0x5C+nameLen]
		lost := ""
		if f.inode.Advise&adviseLostPino != 0 {
			lost = " (its i_advise has FADVISE_LOST_PINO: the parent is not recorded)"
		}
		if pino == 0 || nameLen == 0 || pino >= img.maxNid {
			in.problem([]int64{off + 0x54, off + 0x58}, "cannot confirm the path of inode %d: inode %d has i_pino %d and i_namelen %d%s",
				ino, cur, pino, nameLen, lost)
			return ""
		}
		dir, err := in.file(pino)
		if err != nil {
			in.pathProblem(ino, err, "inode %d's i_pino %d", cur, pino)
			return ""
		}
		if dir.inode.Type != TypeDir {
			in.problem([]int64{off + 0x54}, "cannot confirm the path of inode %d: inode %d's i_pino %d is not a directory", ino, cur, pino)
			return ""
		}
		res, found, err := img.lookupName(dir, name, in.spend)
		if err != nil {
			in.pathProblem(ino, err, "looking up %q in directory inode %d", name, pino)
			return ""
		}
		if !found {
			in.problem([]int64{off + 0x54, off + 0x5C}, "cannot confirm the path of inode %d: directory inode %d (the i_pino of inode %d) has no entry %q%s",
				ino, pino, cur, name, lost)
			return ""
		}
		if res.ino != cur {
			in.problem([]int64{in.abs(res.blkaddr, res.off) + 4, off + 0x5C}, "cannot confirm the path of inode %d: the entry %q in directory inode %d names inode %d, not %d",
				ino, name, pino, res.ino, cur)
			return ""
		}
		if !res.hashed {
			in.problem([]int64{in.abs(res.blkaddr, res.off)}, "the entry %q of directory inode %d is not in its hash bucket: the kernel would not find it", name, pino)
		}
		s := string(name)
		if dir.inode.Advise&adviseEncrypt != 0 {
			s = "~" + hex.EncodeToString(name)
		}
		parts = append(parts, s)
		cur = pino
	}
	slices.Reverse(parts)
	return "/" + strings.Join(parts, "/")
}

// systemInode names the inodes the superblock points at directly (node_ino, meta_ino, qf_ino[]),
// which have no path; "" for any other inode.
func (in *inspector) systemInode(ino uint32) string {
	sb := &in.img.sb.raw
	switch ino {
	case sb.NodeIno:
		return "node inode (node_ino)"
	case sb.MetaIno:
		return "meta inode (meta_ino)"
	}
	for i, q := range sb.QfIno {
		if q != 0 && q == ino {
			return [3]string{"user", "group", "project"}[i] + fmt.Sprintf(" quota file (qf_ino[%d])", i)
		}
	}
	return ""
}

func (in *inspector) pathProblem(ino uint32, err error, format string, args ...any) {
	var fe *FormatError
	var offs []int64
	if errors.As(err, &fe) {
		offs = []int64{fe.Off}
	}
	in.problem(offs, "cannot confirm the path of inode %d: %s: %v", ino, fmt.Sprintf(format, args...), err)
}
