package imgdiff

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"slices"
	"strings"

	"github.com/zrviz/zrviz/imgio"
	"github.com/zrviz/zrviz/internal/f2fs"
)

// ErrUnrelated is matched by every [*UnrelatedError].
var ErrUnrelated = errors.New("imgdiff: the images are not of one filesystem")

// UnrelatedError says two images are not of one filesystem: Field ("uuid" or "block_count")
// differs.
type UnrelatedError struct {
	Field string
	A, B  string
}

func (e *UnrelatedError) Error() string {
	return fmt.Sprintf("imgdiff: the images are of different filesystems: %s %s against %s", e.Field, e.A, e.B)
}

// Is reports target == ErrUnrelated.
func (e *UnrelatedError) Is(target error) bool { return target == ErrUnrelated }

// Op is the kernel operation that explains a change.
type Op string

// Operations a change can be attributed to.
const (
	OpNone       Op = ""
	OpInvalidate Op = "invalidate" // f2fs_invalidate_blocks: a mapped slot released (zero range, punch hole)
	OpReserve    Op = "reserve"    // f2fs_reserve_new_blocks: a NULL slot made NEW_ADDR
	OpWrite      Op = "write"      // f2fs_outplace_write_data: a page written to a newly allocated block
	OpMove       Op = "move"       // an out-of-place rewrite: the slot moves, the old block is freed inside the allocator
	OpTruncate   Op = "truncate"   // f2fs_truncate_data_blocks_range: a slot back to NULL_ADDR
	OpNodeCOW    Op = "node-cow"   // f2fs_do_write_node_page: a node block written elsewhere, its NAT entry moved
	OpNodeAlloc  Op = "node-alloc" // f2fs_new_node_page: a new node
	OpNodeFree   Op = "node-free"  // f2fs_invalidate_blocks from truncate_node: a node released
	OpCheckpoint Op = "checkpoint" // f2fs_write_checkpoint
	OpDentry     Op = "dentry"     // f2fs_add_dentry / f2fs_delete_entry
)

// Func names the kernel function of the operation.
func (o Op) Func() string {
	return map[Op]string{OpInvalidate: "f2fs_invalidate_blocks", OpReserve: "f2fs_reserve_new_blocks",
		OpWrite: "f2fs_outplace_write_data", OpMove: "f2fs_outplace_write_data", OpTruncate: "f2fs_truncate_data_blocks_range",
		OpNodeCOW: "f2fs_do_write_node_page", OpNodeAlloc: "f2fs_new_node_page", OpNodeFree: "truncate_node",
		OpCheckpoint: "f2fs_write_checkpoint", OpDentry: "f2fs_add_dentry/f2fs_delete_entry"}[o]
}

// MarshalText writes the operation's name.
func (o Op) MarshalText() ([]byte, error) { return []byte(o), nil }

// Diff is what differs between image A and image B.
type Diff struct {
	A          Side            `json:"a"`
	B          Side            `json:"b"`
	Checkpoint []FieldChange   `json:"checkpoint"`
	Segments   []SegmentChange `json:"segments"`
	NAT        []NATChange     `json:"nat"`
	Nodes      []NodeChange    `json:"nodes"`
	Inodes     []InodeChange   `json:"inodes"`
	Dirents    []DirentChange  `json:"dirents"`
	Owners     []OwnerChange   `json:"owners"`
	// Problems are what could not be read on either side (an unreadable node, a directory whose
	// path was not confirmed); the rest of the diff stands.
	Problems []string `json:"problems"`
}

// Side names one image.
type Side struct {
	Name   string       `json:"name"`
	Format imgio.Format `json:"format"`
	Size   int64        `json:"size"`
	// CheckpointVersion and Pack are the live checkpoint's.
	CheckpointVersion uint64 `json:"checkpointVersion"`
	Pack              int    `json:"pack"`
	CheckpointBlock   uint32 `json:"checkpointBlock"`
}

// Empty reports whether nothing differs.
func (d *Diff) Empty() bool {
	return len(d.Checkpoint)+len(d.Segments)+len(d.NAT)+len(d.Nodes)+len(d.Inodes)+len(d.Dirents)+len(d.Owners) == 0
}

// FieldChange is one named field that differs, as the block inspector names and shows it.
type FieldChange struct {
	Name string `json:"name"`
	A    string `json:"a"`
	B    string `json:"b"`
	Op   Op     `json:"op,omitempty"`
}

// SegmentChange is one SIT entry that differs.
type SegmentChange struct {
	Segno      uint32 `json:"segno"`
	ValidA     uint32 `json:"validA"`
	ValidB     uint32 `json:"validB"`
	TypeA      int    `json:"typeA"` // SIT log type (vblocks >> 10)
	TypeB      int    `json:"typeB"`
	StateA     string `json:"stateA"` // free, dirty, full or current (the checkpoint's active logs)
	StateB     string `json:"stateB"`
	CurrentA   bool   `json:"currentA"`
	CurrentB   bool   `json:"currentB"`
	MtimeA     uint64 `json:"mtimeA"`
	MtimeB     uint64 `json:"mtimeB"`
	FirstBlock uint32 `json:"firstBlock"` // block address of bit 0
	// Set and Cleared are the bits (block offsets in the segment) set in B and not in A, and the
	// other way round; Ops says, bit for bit, what explains it (OpNone: nothing the diff found).
	Set        []uint16 `json:"set"`
	Cleared    []uint16 `json:"cleared"`
	SetOps     []Op     `json:"setOps"`
	ClearedOps []Op     `json:"clearedOps"`
	Op         Op       `json:"op,omitempty"` // the segment's own change: OpCheckpoint for a change of the current logs
}

// NATChange is one NAT entry that differs.
type NATChange struct {
	Nid   uint32 `json:"nid"`
	InoA  uint32 `json:"inoA"`
	InoB  uint32 `json:"inoB"`
	AddrA uint32 `json:"addrA"`
	AddrB uint32 `json:"addrB"`
	VerA  uint8  `json:"versionA"`
	VerB  uint8  `json:"versionB"`
	Op    Op     `json:"op,omitempty"`
}

// NodeChange is one node block whose NAT entry moved, and what differs inside it.
type NodeChange struct {
	Nid   uint32 `json:"nid"`
	Ino   uint32 `json:"ino"`
	File  string `json:"file"` // the owner's path, "" when not confirmed on either side
	Kind  string `json:"kind"` // inode, direct, indirect, xattr or node
	Path  string `json:"path"` // where in the file's tree: "inode", "i_nid[0]", "i_nid[2]/3"
	AddrA uint32 `json:"addrA"`
	AddrB uint32 `json:"addrB"`
	Op    Op     `json:"op"`
	// Slots are the data slots that differ (inode and direct nodes), Nids the nid slots (inodes'
	// i_nid, indirect nodes' nid).
	Slots []SlotChange `json:"slots"`
	Nids  []NidChange  `json:"nids"`
}

// SlotChange is one data slot that differs: file block Index, field i_addr[k] or addr[k].
type SlotChange struct {
	Index uint64 `json:"index"`
	Field string `json:"field"`
	A     uint32 `json:"a"`
	B     uint32 `json:"b"`
	Op    Op     `json:"op"`
}

// NidChange is one nid slot that differs.
type NidChange struct {
	Field string `json:"field"`
	A     uint32 `json:"a"`
	B     uint32 `json:"b"`
}

// InodeChange is one inode whose fields differ (slots aside: they are in [NodeChange]).
type InodeChange struct {
	Ino    uint32        `json:"ino"`
	File   string        `json:"file"`
	Fields []FieldChange `json:"fields"`
}

// DirentChange is a directory entry added (in B, not A) or removed.
type DirentChange struct {
	Dir   string `json:"dir"`
	Name  string `json:"name"`
	Ino   uint32 `json:"ino"`
	Added bool   `json:"added"`
}

// Owner is a data block's owner: file block Index of inode Ino.
type Owner struct {
	Ino   uint32 `json:"ino"`
	File  string `json:"file"`
	Index uint64 `json:"index"`
}

// OwnerChange is a data block whose owner differs: A or B nil when no changed slot of that side
// holds it.
type OwnerChange struct {
	Addr uint32 `json:"addr"`
	A    *Owner `json:"a"`
	B    *Owner `json:"b"`
}

// Related refuses two images that are not of one filesystem.
func Related(a, b *imgio.Image) error {
	va, vb := a.Volume(), b.Volume()
	if va.UUID != vb.UUID {
		return &UnrelatedError{Field: "uuid", A: va.UUID, B: vb.UUID}
	}
	if va.BlockCount != vb.BlockCount {
		return &UnrelatedError{Field: "block_count", A: fmt.Sprint(va.BlockCount), B: fmt.Sprint(vb.BlockCount)}
	}
	return nil
}

// Compare diffs image a against image b. The error is for images of different filesystems
// ([*UnrelatedError]), ctx, and what makes a whole table unreadable; anything narrower is a Problem.
func Compare(ctx context.Context, a, b *imgio.Image) (*Diff, error) {
	if err := Related(a, b); err != nil {
		return nil, err
	}
	d := &Diff{A: side(a), B: side(b)}
	c := &differ{ctx: ctx, a: a, b: b, d: d, slotOps: map[blockSide]Op{}, nodeOps: map[blockSide]Op{}}
	if err := c.checkpoint(); err != nil {
		return nil, err
	}
	if err := c.nat(); err != nil {
		return nil, err
	}
	if err := c.nodes(); err != nil {
		return nil, err
	}
	if err := c.segments(); err != nil {
		return nil, err
	}
	return d, nil
}

func side(img *imgio.Image) Side {
	v := img.Volume()
	head, _ := img.Offsets().Checkpoint()
	return Side{Name: img.Name(), Format: img.Format(), Size: img.Size(), CheckpointVersion: v.CheckpointVersion,
		Pack: v.CheckpointPack, CheckpointBlock: head}
}

// blockSide is a block address on one side (false A, true B).
type blockSide struct {
	addr uint32
	b    bool
}

type differ struct {
	ctx  context.Context
	a, b *imgio.Image
	d    *Diff
	// slotOps and nodeOps explain SIT bits: a block released or taken by a slot change or a node's move.
	slotOps, nodeOps map[blockSide]Op
	paths            map[uint32]string
	dirsDone         map[uint32]bool
	owners           map[uint32]int // block address → its index in d.Owners
}

func (c *differ) problem(format string, args ...any) {
	if len(c.d.Problems) < 100 {
		c.d.Problems = append(c.d.Problems, fmt.Sprintf(format, args...))
	}
}

// checkpoint diffs the live checkpoint blocks field by field (the block inspector's fields).
func (c *differ) checkpoint() error {
	fa, err := c.fields(c.a, c.d.A.CheckpointBlock)
	if err != nil {
		return err
	}
	fb, err := c.fields(c.b, c.d.B.CheckpointBlock)
	if err != nil {
		return err
	}
	c.d.Checkpoint = diffFields(fa, fb, func(string) bool { return true }, OpCheckpoint)
	return nil
}

func (c *differ) fields(img *imgio.Image, addr uint32) ([]imgio.Field, error) {
	bi, err := img.Block(c.ctx, addr)
	if err != nil {
		return nil, err
	}
	return bi.Fields, nil
}

// diffFields pairs fields by name (in A's order, then B's new names) and keeps those whose value
// differs.
func diffFields(fa, fb []imgio.Field, keep func(string) bool, op Op) []FieldChange {
	bv := map[string]string{}
	for _, f := range fb {
		bv[f.Name] = f.Value
	}
	seen := map[string]bool{}
	var out []FieldChange
	for _, f := range fa {
		if f.Name == "role" || !keep(f.Name) || seen[f.Name] {
			continue
		}
		seen[f.Name] = true
		v, ok := bv[f.Name]
		if !ok {
			v = "(absent)"
		}
		if v != f.Value {
			out = append(out, FieldChange{Name: f.Name, A: f.Value, B: v, Op: op})
		}
	}
	for _, f := range fb {
		if f.Name == "role" || !keep(f.Name) || seen[f.Name] {
			continue
		}
		seen[f.Name] = true
		out = append(out, FieldChange{Name: f.Name, A: "(absent)", B: f.Value, Op: op})
	}
	return out
}

// nat compares the NAT a block at a time; equal blocks with no journal entries are skipped unread
// beyond their bytes.
func (c *differ) nat() error {
	n := min(c.a.NATBlockCount(), c.b.NATBlockCount())
	for blk := range n {
		if blk%256 == 0 {
			if err := c.ctx.Err(); err != nil {
				return err
			}
		}
		na, err := c.a.NATBlock(blk)
		if err != nil {
			return err
		}
		nb, err := c.b.NATBlock(blk)
		if err != nil {
			return err
		}
		if len(na.Journal) == 0 && len(nb.Journal) == 0 && bytes.Equal(na.Raw, nb.Raw) {
			continue
		}
		for k := range imgio.NATEntriesPerBlock {
			ea, eb := na.Entry(k), nb.Entry(k)
			if ea.Ino == eb.Ino && ea.BlockAddr == eb.BlockAddr && ea.Version == eb.Version {
				continue
			}
			ch := NATChange{Nid: ea.Nid, InoA: ea.Ino, InoB: eb.Ino, AddrA: ea.BlockAddr, AddrB: eb.BlockAddr, VerA: ea.Version, VerB: eb.Version}
			switch {
			case ea.BlockAddr == imgio.NullAddr:
				ch.Op = OpNodeAlloc
			case eb.BlockAddr == imgio.NullAddr:
				ch.Op = OpNodeFree
			case ea.BlockAddr != eb.BlockAddr:
				ch.Op = OpNodeCOW
			}
			c.d.NAT = append(c.d.NAT, ch)
		}
	}
	return nil
}

// fileOf opens inode ino on img, nil when it is not there.
func fileOf(img *imgio.Image, ino uint32) *imgio.File {
	if ino == 0 {
		return nil
	}
	f, err := img.File(ino)
	if err != nil {
		return nil
	}
	return f
}

// where is a node's place in its file: kind, tree path and the file block index of slot 0.
type where struct {
	kind  string
	path  string
	start uint64
}

// tree maps the nids of f's node tree to their place in it.
func tree(f *imgio.File) (map[uint32]where, error) {
	m := map[uint32]where{}
	if f == nil {
		return m, nil
	}
	in := f.Inode()
	m[in.Ino] = where{kind: "inode", path: "inode"}
	ds, err := f.Dnodes()
	for _, dn := range ds {
		if dn.Kind == "direct" {
			m[dn.Nid] = where{kind: "direct", path: dn.Path, start: dn.Start}
		}
		for i, p := range dn.Parents {
			if _, ok := m[p]; !ok {
				parts := strings.Split(dn.Path, "/")
				m[p] = where{kind: "indirect", path: strings.Join(parts[:min(i+1, len(parts))], "/")}
			}
		}
	}
	return m, err
}

// nodes reads the node blocks whose NAT entry moved, on both sides, and diffs their slots; inodes
// also field by field.
func (c *differ) nodes() error {
	byIno := map[uint32][]int{}
	var inos []uint32
	for i, ch := range c.d.NAT {
		if ch.Op == OpNone {
			continue
		}
		ino := ch.InoB
		if ino == 0 {
			ino = ch.InoA
		}
		if _, ok := byIno[ino]; !ok {
			inos = append(inos, ino)
		}
		byIno[ino] = append(byIno[ino], i)
		c.nodeOps[blockSide{ch.AddrA, false}] = ch.Op
		c.nodeOps[blockSide{ch.AddrB, true}] = ch.Op
	}
	slices.Sort(inos)
	for _, ino := range inos {
		if err := c.ctx.Err(); err != nil {
			return err
		}
		fa, fb := fileOf(c.a, ino), fileOf(c.b, ino)
		ta, err := tree(fa)
		if err != nil {
			c.problem("A: inode %d: %v", ino, err)
		}
		tb, err := tree(fb)
		if err != nil {
			c.problem("B: inode %d: %v", ino, err)
		}
		file := c.path(ino, fa, fb)
		for _, i := range byIno[ino] {
			ch := c.d.NAT[i]
			w, ok := tb[ch.Nid]
			if !ok {
				w, ok = ta[ch.Nid]
			}
			if !ok {
				w = where{kind: "node", path: "?"}
			}
			nc := NodeChange{Nid: ch.Nid, Ino: ino, File: file, Kind: w.kind, Path: w.path, AddrA: ch.AddrA, AddrB: ch.AddrB, Op: ch.Op}
			c.nodeBody(&nc, fa, fb, w)
			c.d.Nodes = append(c.d.Nodes, nc)
			if w.kind == "inode" {
				c.inode(ino, file, ch.AddrA, ch.AddrB)
				if isDir(fa) || isDir(fb) {
					c.direntsOf(ino, fa, fb)
				}
				if fa == nil || fb == nil {
					// A new or removed inode: its parent gained or lost the entry, even when
					// the parent's node was written in place (f2fs-tools does so).
					c.parentOf(fa, fb)
				}
			}
		}
	}
	slices.SortFunc(c.d.Owners, func(x, y OwnerChange) int { return int(x.Addr) - int(y.Addr) })
	return nil
}

func isDir(f *imgio.File) bool { return f != nil && f.Inode().Type == imgio.TypeDir }

// path is the owner's path as the block inspector confirms it, B's first.
func (c *differ) path(ino uint32, fa, fb *imgio.File) string {
	if p, ok := c.paths[ino]; ok {
		return p
	}
	p := ""
	for _, s := range []struct {
		img *imgio.Image
		f   *imgio.File
	}{{c.b, fb}, {c.a, fa}} {
		if s.f == nil || p != "" {
			continue
		}
		bi, err := s.img.Block(c.ctx, s.f.Inode().Blkaddr)
		if err == nil && bi.Owner != nil {
			p = bi.Owner.Path
		}
	}
	if c.paths == nil {
		c.paths = map[uint32]string{}
	}
	c.paths[ino] = p
	return p
}

// readNode reads a node block at addr, nil when addr is not a block of the main area.
func readNode(img *imgio.Image, addr uint32) []byte {
	v := img.Volume()
	if addr < v.MainBlkaddr || addr >= v.MaxBlkaddr {
		return nil
	}
	b, err := img.ReadBlock(addr)
	if err != nil {
		return nil
	}
	return b
}

// nodeBody diffs the slots (or nids) of one node.
func (c *differ) nodeBody(nc *NodeChange, fa, fb *imgio.File, w where) {
	ba, bb := readNode(c.a, nc.AddrA), readNode(c.b, nc.AddrB)
	word := func(b []byte, off int) uint32 {
		if b == nil || off+4 > len(b) {
			return 0
		}
		return binary.LittleEndian.Uint32(b[off:])
	}
	switch w.kind {
	case "inode":
		var ia, ib imgio.Inode
		if fa != nil {
			ia = fa.Inode()
		}
		if fb != nil {
			ib = fb.Inode()
		}
		// An inline inode's i_addr holds data or dentries, not addresses: its slots are NULL (an
		// inline file converted by the call goes from no slot to slot 0).
		inline := func(in imgio.Inode) bool { return in.Inline&(0x02|0x04) != 0 }
		if !inline(ia) || !inline(ib) {
			n := max(ia.AddrsPerInode, ib.AddrsPerInode)
			extra := int(max(ia.ExtraISize, ib.ExtraISize))
			base := f2fs.InodeAddrOffset + extra
			for k := range n {
				var x, y uint32
				if !inline(ia) {
					x = word(ba, base+4*k)
				}
				if !inline(ib) {
					y = word(bb, base+4*k)
				}
				if x != y {
					c.slot(nc, uint64(k), fmt.Sprintf("i_addr[%d]", extra/4+k), x, y)
				}
			}
		}
		for k := range 5 {
			x, y := word(ba, f2fs.InodeNidOffset+4*k), word(bb, f2fs.InodeNidOffset+4*k)
			if x != y {
				nc.Nids = append(nc.Nids, NidChange{Field: fmt.Sprintf("i_nid[%d]", k), A: x, B: y})
			}
		}
	case "direct":
		for k := range f2fs.DefAddrsPerBlock {
			x, y := word(ba, 4*k), word(bb, 4*k)
			if x != y {
				c.slot(nc, w.start+uint64(k), fmt.Sprintf("addr[%d]", k), x, y)
			}
		}
	case "indirect":
		for k := range f2fs.NidsPerBlock {
			x, y := word(ba, 4*k), word(bb, 4*k)
			if x != y {
				nc.Nids = append(nc.Nids, NidChange{Field: fmt.Sprintf("nid[%d]", k), A: x, B: y})
			}
		}
	}
}

// isAddr reports whether a slot holds a block address (not NULL, NEW or COMPRESS).
func isAddr(a uint32) bool {
	return a != imgio.NullAddr && a != imgio.NewAddr && a != imgio.CompressAddr
}

// SlotOp is the operation that turns slot value a into b.
func SlotOp(a, b uint32) Op {
	switch {
	case isAddr(a) && b == imgio.NewAddr:
		return OpInvalidate
	case a == imgio.NullAddr && b == imgio.NewAddr:
		return OpReserve
	case isAddr(a) && isAddr(b):
		return OpMove
	case !isAddr(a) && isAddr(b):
		return OpWrite
	case b == imgio.NullAddr:
		return OpTruncate
	}
	return OpNone
}

func (c *differ) slot(nc *NodeChange, index uint64, field string, a, b uint32) {
	op := SlotOp(a, b)
	nc.Slots = append(nc.Slots, SlotChange{Index: index, Field: field, A: a, B: b, Op: op})
	if isAddr(a) {
		c.slotOps[blockSide{a, false}] = op
		c.owner(a, &Owner{Ino: nc.Ino, File: nc.File, Index: index}, nil)
	}
	if isAddr(b) {
		c.slotOps[blockSide{b, true}] = op
		c.owner(b, nil, &Owner{Ino: nc.Ino, File: nc.File, Index: index})
	}
}

func (c *differ) owner(addr uint32, a, b *Owner) {
	if i, ok := c.owners[addr]; ok {
		o := &c.d.Owners[i]
		if a != nil {
			o.A = a
		}
		if b != nil {
			o.B = b
		}
		return
	}
	if c.owners == nil {
		c.owners = map[uint32]int{}
	}
	c.owners[addr] = len(c.d.Owners)
	c.d.Owners = append(c.d.Owners, OwnerChange{Addr: addr, A: a, B: b})
}

// inode diffs an inode's fields as the block inspector names them, slots and footer aside.
func (c *differ) inode(ino uint32, file string, addrA, addrB uint32) {
	// The block inspector decodes the fields (its kind comes from the block's summary entry): a
	// side it does not read as an inode, or a new or removed inode, is left out rather than listed
	// field by field as absent.
	fields := func(img *imgio.Image, addr uint32, side string) []imgio.Field {
		if readNode(img, addr) == nil {
			return nil
		}
		bi, err := img.Block(c.ctx, addr)
		if err != nil || bi.Kind != imgio.KindInode {
			c.problem("%s: block %d of inode %d is not read as an inode by the block inspector: its fields are not compared", side, addr, ino)
			return nil
		}
		return bi.Fields
	}
	fa, fb := fields(c.a, addrA, "A"), fields(c.b, addrB, "B")
	if fa == nil && fb == nil {
		return
	}
	keep := func(n string) bool {
		return !strings.HasPrefix(n, "i_addr[") && !strings.HasPrefix(n, "footer.") && !strings.HasPrefix(n, "i_nid[")
	}
	if fs := diffFields(fa, fb, keep, OpNone); len(fs) > 0 {
		c.d.Inodes = append(c.d.Inodes, InodeChange{Ino: ino, File: file, Fields: fs})
	}
}

// parentOf diffs the entries of the directory that holds the inode on either side (i_pino).
func (c *differ) parentOf(fa, fb *imgio.File) {
	for _, f := range []*imgio.File{fb, fa} {
		if f != nil && f.Inode().Pino != 0 {
			p := f.Inode().Pino
			c.direntsOf(p, fileOf(c.a, p), fileOf(c.b, p))
			return
		}
	}
}

// direntsOf diffs directory ino's entries once.
func (c *differ) direntsOf(ino uint32, fa, fb *imgio.File) {
	if c.dirsDone == nil {
		c.dirsDone = map[uint32]bool{}
	}
	if c.dirsDone[ino] || (!isDir(fa) && !isDir(fb)) {
		return
	}
	c.dirsDone[ino] = true
	c.dirents(c.path(ino, fa, fb), fa, fb)
}

// dirents lists a changed directory on both sides and keeps the names added or removed.
func (c *differ) dirents(dir string, fa, fb *imgio.File) {
	if dir == "" {
		c.problem("a changed directory's path was not confirmed: its entries are not compared")
		return
	}
	list := func(img *imgio.Image, f *imgio.File) map[string]uint32 {
		m := map[string]uint32{}
		if f == nil {
			return m
		}
		after := ""
		for {
			p, err := img.ReadDir(c.ctx, dir, after, imgio.MaxDirPage)
			if err != nil {
				c.problem("%s: %v", dir, err)
				return m
			}
			for _, e := range p.Entries {
				m[e.Path[strings.LastIndexByte(e.Path, '/')+1:]] = e.Ino
			}
			if !p.More {
				return m
			}
			after = p.Next
		}
	}
	ma, mb := list(c.a, fa), list(c.b, fb)
	var out []DirentChange
	for n, ino := range ma {
		if mb[n] != ino {
			out = append(out, DirentChange{Dir: dir, Name: n, Ino: ino})
		}
	}
	for n, ino := range mb {
		if ma[n] != ino {
			out = append(out, DirentChange{Dir: dir, Name: n, Ino: ino, Added: true})
		}
	}
	slices.SortFunc(out, func(x, y DirentChange) int {
		if x.Name != y.Name {
			return strings.Compare(x.Name, y.Name)
		}
		return boolInt(x.Added) - boolInt(y.Added)
	})
	c.d.Dirents = append(c.d.Dirents, out...)
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// State is a segment's state as the two images can show it: "current" (an active log), "free" (no
// valid block), "full" or "dirty". Prefree is not on disk: a checkpoint makes it free.
func State(valid uint32, current bool) string {
	switch {
	case current:
		return "current"
	case valid == 0:
		return "free"
	case valid == f2fs.BlocksPerSeg:
		return "full"
	}
	return "dirty"
}

// segments compares every SIT entry.
func (c *differ) segments() error {
	sa, err := c.a.Segments()
	if err != nil {
		return err
	}
	sb, err := c.b.Segments()
	if err != nil {
		return err
	}
	main := c.a.Volume().MainBlkaddr
	for i := range min(len(sa), len(sb)) {
		x, y := sa[i], sb[i]
		if x.ValidBlocks == y.ValidBlocks && x.Map == y.Map && x.Type == y.Type && x.Current == y.Current && x.Mtime == y.Mtime {
			continue
		}
		sc := SegmentChange{Segno: x.Segno, ValidA: x.ValidBlocks, ValidB: y.ValidBlocks, TypeA: x.Type, TypeB: y.Type,
			StateA: State(x.ValidBlocks, x.Current), StateB: State(y.ValidBlocks, y.Current), CurrentA: x.Current, CurrentB: y.Current,
			MtimeA: x.Mtime, MtimeB: y.Mtime, FirstBlock: f2fs.SegBlock(main, x.Segno)}
		if x.Current != y.Current {
			sc.Op = OpCheckpoint
		}
		for w := 0; w < 64; w += 8 {
			ma, mb := binary.BigEndian.Uint64(x.Map[w:]), binary.BigEndian.Uint64(y.Map[w:])
			for set := mb &^ ma; set != 0; set &^= 1 << 63 >> bits.LeadingZeros64(set) {
				bit := uint16(w*8 + bits.LeadingZeros64(set))
				sc.Set = append(sc.Set, bit)
				sc.SetOps = append(sc.SetOps, c.bitOp(sc.FirstBlock+uint32(bit), true))
			}
			for clr := ma &^ mb; clr != 0; clr &^= 1 << 63 >> bits.LeadingZeros64(clr) {
				bit := uint16(w*8 + bits.LeadingZeros64(clr))
				sc.Cleared = append(sc.Cleared, bit)
				sc.ClearedOps = append(sc.ClearedOps, c.bitOp(sc.FirstBlock+uint32(bit), false))
			}
		}
		c.d.Segments = append(c.d.Segments, sc)
	}
	return nil
}

// bitOp explains a SIT bit set (in B) or cleared (in A's block).
func (c *differ) bitOp(addr uint32, set bool) Op {
	if op, ok := c.nodeOps[blockSide{addr, set}]; ok {
		return op
	}
	return c.slotOps[blockSide{addr, set}]
}
