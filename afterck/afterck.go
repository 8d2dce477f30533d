// Package afterck holds the model's after-state of a sequence of operations against an image the
// kernel left (an after-image): [ModelSeq] for the whole ops language (zero, write, fsync, sync,
// tune, then the unmount's writeback), held against the image by [CheckState]; [StateOf] gives the
// after-state of zero-range results alone. For every file
// the operations touched i_size, i_blocks and every slot;
// for every segment the SIT valid count and bit map; the checkpoint's valid block and node counts.
//
// What the kernel does after the call and before the image was taken is explained, not hidden: a
// partial page written back in place (f2fs_inplace_write_data) or out of place
// (f2fs_outplace_write_data: its slot moved, the old block's bit cleared, the new one's set), a
// reserved page written to a fresh block, the node blocks of a zeroed file rewritten elsewhere
// (f2fs_do_write_node_page: NAT entries and node segments change), a checkpoint (prefree segments
// become free). Each explanation names the kernel function; anything else is a difference.
package afterck

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"maps"
	"math/bits"
	"path"
	"slices"
	"strings"

	"github.com/zrviz/zrviz/core"
	"github.com/zrviz/zrviz/imgdiff"
	"github.com/zrviz/zrviz/imgio"
	"github.com/zrviz/zrviz/internal/f2fs"
	"github.com/zrviz/zrviz/request"
	"github.com/zrviz/zrviz/source"
)

// Op is one zero-range operation as the model ran it: the file (path and inode number) and the
// engine's result, in the order the operations ran on one mount.
type Op struct {
	Path   string
	Ino    uint32
	Result *core.Result
	// GC says garbage collection ran inside the operation (f2fs_balance_fs).
	GC bool
}

// MaxDifferences bounds the differences a report lists; Report.Total counts them all.
const MaxDifferences = 1000

// Report is the verdict: JSON {"agree","explained":[...],"explainedTotal","explainedFrom",
// "explainedSummary":[...],"differences":[...],"total"}.
type Report struct {
	Agree bool `json:"agree"`
	// Explained lists at most MaxExplained explanations, from the ExplainedFrom-th (0-based) on;
	// ExplainedTotal counts them all, ExplainedSummary by kind and segment.
	Explained        []Explanation    `json:"explained"`
	ExplainedTotal   int              `json:"explainedTotal"`
	ExplainedFrom    int              `json:"explainedFrom,omitempty"`
	ExplainedSummary []ExplainedCount `json:"explainedSummary"`
	Differences      []Difference     `json:"differences"`
	Total            int              `json:"total"` // differences found, listed or not
}

// Explanation is something the kernel did after the call that the model does not do, and which
// kernel function does it.
type Explanation struct {
	Kind  string  `json:"kind"` // writeback-in-place, writeback-out-of-place, writeback-new, node-cow, node-alloc, checkpoint
	Func  string  `json:"func"`
	Text  string  `json:"text"`
	File  string  `json:"file,omitempty"`
	Index *uint64 `json:"index,omitempty"`
	Nid   *uint32 `json:"nid,omitempty"`
	From  *uint32 `json:"from,omitempty"` // the block before
	To    *uint32 `json:"to,omitempty"`   // the block after
}

// Difference is one value the model and the image disagree on.
type Difference struct {
	// What: "slot", "i_size", "i_blocks", "i_inline", "file", "sit-bit", "valid_block_count",
	// "valid_node_count", "nat".
	What  string  `json:"what"`
	File  string  `json:"file,omitempty"`
	Ino   uint32  `json:"ino,omitempty"`
	Index *uint64 `json:"index,omitempty"` // slot: the file block index
	Field string  `json:"field,omitempty"` // slot: i_addr[k] or addr[k] of the dnode that holds it
	Segno *uint32 `json:"segno,omitempty"` // sit-bit
	Bit   *int    `json:"bit,omitempty"`   // sit-bit: block offset in the segment
	Addr  *uint32 `json:"addr,omitempty"`  // sit-bit: the block address
	Nid   *uint32 `json:"nid,omitempty"`
	Model string  `json:"model"`
	Image string  `json:"image"`
}

// String says the difference in one line.
func (d Difference) String() string {
	switch d.What {
	case "slot":
		return fmt.Sprintf("%s file block %d (%s): model %s, image %s", d.File, *d.Index, d.Field, d.Model, d.Image)
	case "sit-bit":
		return fmt.Sprintf("segment %d bit %d (block %d): model %s, image %s", *d.Segno, *d.Bit, *d.Addr, d.Model, d.Image)
	case "nat":
		return fmt.Sprintf("NAT nid %d (%s): model %s, image %s", *d.Nid, d.File, d.Model, d.Image)
	case "valid_block_count", "valid_node_count":
		return fmt.Sprintf("checkpoint %s: model %s, image %s", d.What, d.Model, d.Image)
	}
	return fmt.Sprintf("%s %s: model %s, image %s", d.File, d.What, d.Model, d.Image)
}

type checker struct {
	ctx           context.Context
	before, after *imgio.Image
	rep           *Report
	ex            *explainer
	// sit is the expected after-state of every segment: the before image's, with the model's
	// changes and the explained ones applied.
	sit map[uint32][64]byte
	// moved holds the blocks the explanations take or release (for SIT).
	main uint32
	gc   bool // the operations ran garbage collection (State.GC)
}

func (c *checker) differ(d Difference) {
	c.rep.Total++
	if len(c.rep.Differences) < MaxDifferences {
		c.rep.Differences = append(c.rep.Differences, d)
	}
}

func (c *checker) explain(e Explanation) { c.ex.add(e) }

func u64(v uint64) *uint64 { return &v }
func u32(v uint32) *uint32 { return &v }

// State is the model's after-state, what Check holds against the image: every file the operations
// touched as they left it, every segment they changed, the checkpoint's counts.
type State struct {
	Files []FileState
	// SIT holds the valid maps of the segments the model changed, as it left them; Prefree those
	// it made prefree.
	SIT         map[uint32][64]byte
	Prefree     []uint32
	ValidBlocks uint64
	ValidNodes  uint32
	NodesAlloc  uint64 // nodes the operations allocated (their NAT entries new in the image)
	// GC says the operations ran garbage collection (a gc op, or f2fs_balance_fs inside one): only
	// then may CheckState explain a block found elsewhere with its bytes unchanged as moved by it.
	GC bool
	// NodesFreed are the node blocks truncate freed (truncate_node), by file: NEW_ADDR for a node
	// allocated in the mount and freed before it was written.
	NodesFreed []FreedNode
	// InodeAt are the inode blocks the model placed (core.Seq.InodeBlocks), by inode number (an
	// inode's nid): a later copy-on-write of one moves it from there.
	InodeAt   map[uint32]uint32
	HasCounts bool // ValidBlocks and ValidNodes are known
	// Unlinked are the files an unlink removed (by inode): the after-image holds no inode there,
	// and their NAT entries go to NULL (truncate_node). Dirs are the directories whose inline
	// dentries an unlink changed (f2fs_delete_entry dirties the directory's inode, which the
	// unmount's checkpoint writes out of place).
	Unlinked map[uint32]string
	Dirs     map[uint32]string
	// explained is what the model itself did that the kernel does after the calls (the writeback
	// of dirty pages, by fsync, sync or the unmount), kept in bounded bytes (explainer);
	// CheckState reports it first. Nil: nothing explained, listed from the first.
	explained *explainer
}

// FreedNode is a node block truncate_node freed: its file's inode and the block the NAT gave it.
type FreedNode struct {
	Ino  uint32
	Addr uint32
}

// FileState is one file as the model left it.
type FileState struct {
	Path    string
	Ino     uint32
	Size    int64
	Blocks  uint64
	Inline  uint8
	Extents []core.Extent // the slot map, core.Result.After's form
	// Fills are the partial pages fill_zero dirtied (by any operation on the file), which the
	// kernel writes back by the unmount at the latest.
	Fills []core.FillZero
}

// StateOf is the after-state of zero-range operations run in order on one mount.
func StateOf(ops []Op) (*State, error) {
	st := &State{SIT: map[uint32][64]byte{}}
	prefree := map[uint32]bool{}
	at := map[uint32]int{}
	for _, op := range ops {
		r := op.Result
		for _, s := range r.Segments {
			m, err := hex.DecodeString(s.Map)
			if err != nil || len(m) != 64 {
				return nil, fmt.Errorf("afterck: segment %d: bad model map", s.Segno)
			}
			st.SIT[s.Segno] = [64]byte(m)
			prefree[s.Segno] = s.Class == core.SegPrefree
		}
		i, ok := at[op.Ino]
		if !ok {
			i = len(st.Files)
			at[op.Ino] = i
			st.Files = append(st.Files, FileState{Path: op.Path, Ino: op.Ino})
		}
		f := &st.Files[i]
		f.Size, f.Blocks, f.Inline, f.Extents = r.SizeAfter, r.BlocksAfter, r.Inline, r.After.Extents
		f.Fills = append(f.Fills, r.FillZero...)
		st.NodesAlloc += r.Stats.NodesAlloc
		st.GC = st.GC || op.GC
		st.ValidBlocks, st.ValidNodes, st.HasCounts = r.ValidBlocks, r.ValidNodes, true
	}
	for s, p := range prefree {
		if p {
			st.Prefree = append(st.Prefree, s)
		}
	}
	slices.Sort(st.Prefree)
	return st, nil
}

// CheckState holds a model after-state against after, the image the kernel left. The error wraps
// [imgdiff.ErrUnrelated] when after is not of before's filesystem; it is otherwise for ctx or an
// unreadable table.
func CheckState(ctx context.Context, before, after *imgio.Image, st *State) (*Report, error) {
	if err := imgdiff.Related(before, after); err != nil {
		return nil, err
	}
	c := &checker{ctx: ctx, before: before, after: after, rep: &Report{}, sit: map[uint32][64]byte{}, main: before.Volume().MainBlkaddr, gc: st.GC}
	if st.explained != nil {
		c.ex = st.explained.clone()
	} else {
		c.ex = newExplainer(0, c.main)
	}
	segs, err := before.Segments()
	if err != nil {
		return nil, err
	}
	for _, s := range segs {
		c.sit[s.Segno] = s.Map
	}
	for segno, m := range st.SIT {
		c.sit[segno] = m
	}
	for i := range st.Files {
		if err := c.file(&st.Files[i]); err != nil {
			return nil, err
		}
	}
	for _, ino := range slices.Sorted(maps.Keys(st.Unlinked)) {
		if _, err := c.after.File(ino); err == nil {
			c.differ(Difference{What: "file", File: st.Unlinked[ino], Ino: ino, Model: "unlinked (no inode)", Image: "an inode"})
		}
	}
	if err := c.nodes(st); err != nil {
		return nil, err
	}
	if pf := st.Prefree; len(pf) > 0 {
		c.explain(Explanation{Kind: "checkpoint", Func: "f2fs_write_checkpoint → f2fs_clear_prefree_segments",
			Text: fmt.Sprintf("%d segments the call made prefree (%v) are free after the checkpoint of the unmount: their SIT entries hold 0 valid blocks either way", len(pf), short(pf))})
	}
	if err := c.segments(); err != nil {
		return nil, err
	}
	if st.HasCounts {
		v := after.Volume()
		if st.ValidBlocks != v.ValidBlockCount {
			c.differ(Difference{What: "valid_block_count", Model: fmt.Sprint(st.ValidBlocks), Image: fmt.Sprint(v.ValidBlockCount)})
		}
		if st.ValidNodes != v.ValidNodeCount {
			c.differ(Difference{What: "valid_node_count", Model: fmt.Sprint(st.ValidNodes), Image: fmt.Sprint(v.ValidNodeCount)})
		}
	}
	c.rep.Agree = c.rep.Total == 0
	c.ex.fill(c.rep)
	return c.rep, nil
}

func short(s []uint32) any {
	if len(s) > 8 {
		return fmt.Sprintf("%v …", s[:8])
	}
	return s
}

// slotMap expands extents lazily: the value of index k.
type slotMap struct {
	ext []core.Extent
}

func (m slotMap) at(k uint64) uint32 {
	i, _ := slices.BinarySearchFunc(m.ext, k, func(e core.Extent, k uint64) int {
		switch {
		case e.Index+e.Count <= k:
			return -1
		case e.Index > k:
			return 1
		}
		return 0
	})
	if i >= len(m.ext) || m.ext[i].Index > k {
		return imgio.NullAddr
	}
	e := m.ext[i]
	switch e.State {
	case "new":
		return imgio.NewAddr
	case "compress":
		return imgio.CompressAddr
	case "addr":
		return e.Addr + uint32(k-e.Index)
	}
	return imgio.NullAddr
}

// boundaries are the indexes where either map may change value.
func boundaries(a, b []core.Extent) []uint64 {
	var out []uint64
	for _, l := range [][]core.Extent{a, b} {
		for _, e := range l {
			out = append(out, e.Index, e.Index+e.Count)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func fromImgio(x []imgio.Extent) []core.Extent {
	out := make([]core.Extent, len(x))
	for i, e := range x {
		out[i] = core.Extent{Index: e.Index, Count: e.Count, State: e.State, Addr: e.Addr}
	}
	return out
}

// file compares one file the operations touched.
func (c *checker) file(fs *FileState) error {
	ino := fs.Ino
	af, err := c.after.File(ino)
	if err != nil {
		c.differ(Difference{What: "file", File: fs.Path, Ino: ino, Model: "inode " + fmt.Sprint(ino), Image: err.Error()})
		return nil
	}
	in := af.Inode()
	if uint64(in.Size) != uint64(fs.Size) {
		c.differ(Difference{What: "i_size", File: fs.Path, Ino: ino, Model: fmt.Sprint(fs.Size), Image: fmt.Sprint(in.Size)})
	}
	if in.Blocks != fs.Blocks {
		c.differ(Difference{What: "i_blocks", File: fs.Path, Ino: ino, Model: fmt.Sprint(fs.Blocks), Image: fmt.Sprint(in.Blocks)})
	}
	const inlineBits = core.InlineData | core.InlineDentry
	if in.Inline&inlineBits != fs.Inline&inlineBits {
		c.differ(Difference{What: "i_inline", File: fs.Path, Ino: ino, Model: fmt.Sprintf("%#x", fs.Inline), Image: fmt.Sprintf("%#x", in.Inline)})
	}
	ie, err := af.Extents()
	if err != nil {
		c.differ(Difference{What: "file", File: fs.Path, Ino: ino, Model: "a readable slot map", Image: err.Error()})
		return nil
	}
	// The partial pages fill_zero dirtied, by every operation on this file: the kernel writes
	// them back at the latest at unmount.
	fills := map[uint64]core.FillZero{}
	for _, f := range fs.Fills {
		fills[f.Index] = f
	}
	model, image := slotMap{fs.Extents}, slotMap{fromImgio(ie)}
	bs := boundaries(model.ext, image.ext)
	for i := 0; i+1 < len(bs); i++ {
		// Between two boundaries each side is one extent: equal at the first index, equal
		// throughout (both constant, or both addr, addr+1, … from the same start).
		if model.at(bs[i]) == image.at(bs[i]) {
			continue
		}
		if err := c.ctx.Err(); err != nil {
			return err
		}
		for k := bs[i]; k < bs[i+1]; k++ {
			mv, iv := model.at(k), image.at(k)
			if f, ok := fills[k]; ok && c.writeback(fs.Path, k, f, mv, iv) {
				continue
			}
			if c.gcMoved(mv, iv) {
				c.gcExplain(fs.Path, k, mv, iv)
				continue
			}
			d := Difference{What: "slot", File: fs.Path, Ino: ino, Index: u64(k), Model: imgdiff.AddrWord(mv), Image: imgdiff.AddrWord(iv)}
			if len(c.rep.Differences) < MaxDifferences {
				d.Field = c.field(af, k) // a node read: only for the differences listed
			}
			c.differ(d)
		}
	}
	idx := make([]uint64, 0, len(fills))
	for k := range fills {
		idx = append(idx, k)
	}
	slices.Sort(idx)
	for _, k := range idx {
		if mv := model.at(k); mv == image.at(k) && isAddr(mv) && fills[k].Before == core.StateAddr {
			c.explain(Explanation{Kind: "writeback-in-place", Func: "f2fs_inplace_write_data", File: fs.Path, Index: u64(k), To: u32(mv),
				Text: fmt.Sprintf("partial page %d, zeroed in the page cache, was written back in place at %d (ipu_policy FORCE: the block keeps its address)", k, mv)})
		}
	}
	return nil
}

// field names the slot that holds file block k as the block inspector does.
func (c *checker) field(f *imgio.File, k uint64) string {
	d, err := f.Dnode(k)
	if err != nil {
		return "?"
	}
	if d.Kind == "inode" {
		return fmt.Sprintf("i_addr[%d]", int(f.Inode().ExtraISize)/4+int(k-d.Start))
	}
	return fmt.Sprintf("%s addr[%d]", d.Path, k-d.Start)
}

func isAddr(a uint32) bool {
	return a != imgio.NullAddr && a != imgio.NewAddr && a != imgio.CompressAddr
}

// writeback explains a partial page's slot that differs from the model's: written back out of place
// (the model kept it in place), or a reserved page written to a fresh block.
func (c *checker) writeback(path string, k uint64, f core.FillZero, mv, iv uint32) bool {
	switch {
	case isAddr(mv) && isAddr(iv):
		c.explain(Explanation{Kind: "writeback-out-of-place", Func: "f2fs_outplace_write_data", File: path, Index: u64(k), From: u32(mv), To: u32(iv),
			Text: fmt.Sprintf("partial page %d was written back out of place: its slot moved %d → %d, the old block freed in the allocator", k, mv, iv)})
		c.setBit(mv, false)
		c.setBit(iv, true)
		return true
	case mv == imgio.NewAddr && isAddr(iv):
		c.explain(Explanation{Kind: "writeback-new", Func: "f2fs_outplace_write_data → f2fs_allocate_data_block", File: path, Index: u64(k), To: u32(iv),
			Text: fmt.Sprintf("partial page %d, reserved NEW by fill_zero, was written back to a newly allocated block %d", k, iv)})
		c.setBit(iv, true)
		return true
	}
	return false
}

// setBit changes the expected SIT bit of block addr.
func (c *checker) setBit(addr uint32, on bool) {
	if addr < c.main {
		return
	}
	segno, bit := f2fs.SegNo(addr, c.main), f2fs.SegOff(addr, c.main)
	m, ok := c.sit[segno]
	if !ok {
		return
	}
	if on {
		m[bit/8] |= 0x80 >> (bit % 8)
	} else {
		m[bit/8] &^= 0x80 >> (bit % 8)
	}
	c.sit[segno] = m
}

// nodes explains the NAT entries that moved: the node blocks of a zeroed file written elsewhere
// (copy-on-write), or allocated for the operation. Any other NAT change is a difference.
func (c *checker) nodes(st *State) error {
	touched := map[uint32]string{}
	allocs := st.NodesAlloc
	for _, f := range st.Files {
		touched[f.Ino] = f.Path
	}
	for ino, p := range st.Unlinked {
		touched[ino] = p
	}
	for ino, p := range st.Dirs {
		touched[ino] = p
	}
	// freed: what truncate_node freed, each to explain one NAT entry once.
	freed := map[FreedNode]int{}
	for _, n := range st.NodesFreed {
		freed[n]++
	}
	n := min(c.before.NATBlockCount(), c.after.NATBlockCount())
	for b := range n {
		if b%256 == 0 {
			if err := c.ctx.Err(); err != nil {
				return err
			}
		}
		na, err := c.before.NATBlock(b)
		if err != nil {
			return err
		}
		nb, err := c.after.NATBlock(b)
		if err != nil {
			return err
		}
		if len(na.Journal) == 0 && len(nb.Journal) == 0 && string(na.Raw) == string(nb.Raw) {
			continue
		}
		for k := range imgio.NATEntriesPerBlock {
			ea, eb := na.Entry(k), nb.Entry(k)
			if ea.BlockAddr == eb.BlockAddr && ea.Ino == eb.Ino {
				continue
			}
			path, ok := touched[eb.Ino]
			// Where the model has the node: the image before's NAT, or where it placed the inode
			// (a sync's f2fs_sync_node_pages) since.
			from := ea.BlockAddr
			if at, placed := st.InodeAt[eb.Nid]; placed && eb.Nid == eb.Ino && ea.Ino == eb.Ino {
				from = at
			}
			switch {
			case ok && ea.Ino == eb.Ino && from == eb.BlockAddr && from != ea.BlockAddr:
				// The model placed the inode where the kernel left it: its SIT already says so.
			case ok && ea.Ino == eb.Ino && isAddr(ea.BlockAddr) && isAddr(eb.BlockAddr):
				c.explain(Explanation{Kind: "node-cow", Func: "f2fs_write_node_page → f2fs_do_write_node_page", File: path, Nid: u32(eb.Nid),
					From: u32(from), To: u32(eb.BlockAddr),
					Text: fmt.Sprintf("node %d of %s was rewritten elsewhere (copy-on-write): NAT %d → %d, the old block's SIT bit cleared, the new one's set", eb.Nid, path, from, eb.BlockAddr)})
				c.setBit(from, false)
				c.setBit(eb.BlockAddr, true)
			case ok && ea.BlockAddr == imgio.NullAddr && isAddr(eb.BlockAddr) && allocs > 0:
				allocs--
				c.explain(Explanation{Kind: "node-alloc", Func: "f2fs_new_node_page, then f2fs_do_write_node_page", File: path, Nid: u32(eb.Nid), To: u32(eb.BlockAddr),
					Text: fmt.Sprintf("node %d of %s, allocated by the call, was written at %d", eb.Nid, path, eb.BlockAddr)})
				c.setBit(eb.BlockAddr, true)
			case ok && ea.Ino == eb.Ino && isAddr(ea.BlockAddr) && eb.BlockAddr == imgio.NullAddr && freed[FreedNode{eb.Ino, ea.BlockAddr}] > 0:
				freed[FreedNode{eb.Ino, ea.BlockAddr}]--
				c.explain(Explanation{Kind: "node-free", Func: "truncate_node", File: path, Nid: u32(eb.Nid), From: u32(ea.BlockAddr),
					Text: fmt.Sprintf("node %d of %s was freed by truncate: NAT %d → NULL, its block invalidated", eb.Nid, path, ea.BlockAddr)})
			case ok && ea.BlockAddr == imgio.NullAddr && eb.BlockAddr == imgio.NullAddr && (ea.Ino == 0 || ea.Ino == eb.Ino) && freed[FreedNode{eb.Ino, core.NewAddr}] > 0:
				freed[FreedNode{eb.Ino, core.NewAddr}]--
				c.explain(Explanation{Kind: "node-free", Func: "f2fs_new_node_page, then truncate_node", File: path, Nid: u32(eb.Nid),
					Text: fmt.Sprintf("node %d of %s was allocated by an operation and freed by truncate before it was written: its NAT entry names the file, no block", eb.Nid, path)})
			case !ok && ea.Ino == eb.Ino && isAddr(ea.BlockAddr) && isAddr(eb.BlockAddr) && c.gcNode(eb.Ino, eb.Nid, ea.BlockAddr, eb.BlockAddr):
				// A node of a file no operation touched, rewritten because garbage collection
				// moved its blocks (or the node itself): explained by gcNode.
			default:
				file := touched[ea.Ino]
				if file == "" {
					file = fmt.Sprintf("ino %d, which no operation touched", max(ea.Ino, eb.Ino))
				}
				c.differ(Difference{What: "nat", Nid: u32(eb.Nid), File: file,
					Model: fmt.Sprintf("ino %d block %s", ea.Ino, imgdiff.AddrWord(ea.BlockAddr)),
					Image: fmt.Sprintf("ino %d block %s", eb.Ino, imgdiff.AddrWord(eb.BlockAddr))})
			}
		}
	}
	return nil
}

// gcMoved reports whether block from of the before-image was moved to block to of the after-image
// by garbage collection: both addresses, the same bytes (move_data_block copies the block).
func (c *checker) gcMoved(from, to uint32) bool {
	// Only an event the model shows happened explains a difference: without a collection in the
	// operations, a block found elsewhere is a difference, whatever its bytes.
	if !c.gc || !isAddr(from) || !isAddr(to) || from == to {
		return false
	}
	a, err := c.before.ReadBlock(from)
	if err != nil {
		return false
	}
	b, err := c.after.ReadBlock(to)
	return err == nil && string(a) == string(b)
}

func (c *checker) gcExplain(path string, k uint64, from, to uint32) {
	c.explain(Explanation{Kind: "gc-move", Func: "f2fs_gc → gc_data_segment → move_data_block", File: path, Index: u64(k), From: u32(from), To: u32(to),
		Text: fmt.Sprintf("block %d of %s (file block %d) was moved to %d by garbage collection, its bytes unchanged: the old block's SIT bit cleared, the new one's set", from, path, k, to)})
	c.setBit(from, false)
	c.setBit(to, true)
}

// gcNode explains the move of node nid of inode ino, a file no operation touched, from block
// from to block to: every data slot that differs moved with its bytes unchanged (garbage collection
// moved the data, the node was rewritten with the new addresses), or none differs (the node block
// itself was moved by gc_node_segment). Anything else leaves the move unexplained (false).
func (c *checker) gcNode(ino, nid, from, to uint32) bool {
	a, err := c.before.ReadBlock(from)
	if err != nil {
		return false
	}
	b, err := c.after.ReadBlock(to)
	if err != nil {
		return false
	}
	// The words that can hold data addresses: an inode's i_addr (from byte 360 up to i_nid at
	// 4052), a direct node's 1018 addr (an indirect node's nids never change when data moves).
	lo, hi := 0, 4*f2fs.DefAddrsPerBlock
	if nid == ino {
		lo, hi = f2fs.InodeAddrOffset, f2fs.InodeNidOffset
	}
	type move struct {
		k        int
		from, to uint32
	}
	var moves []move
	for off := lo; off < hi; off += 4 {
		x, y := binary.LittleEndian.Uint32(a[off:]), binary.LittleEndian.Uint32(b[off:])
		if x == y {
			continue
		}
		if !c.gcMoved(x, y) {
			return false
		}
		moves = append(moves, move{(off - lo) / 4, x, y})
	}
	path := fmt.Sprintf("ino %d", ino)
	for _, m := range moves {
		c.explain(Explanation{Kind: "gc-move", Func: "f2fs_gc → gc_data_segment → move_data_block", File: path, Nid: u32(nid), From: u32(m.from), To: u32(m.to),
			Text: fmt.Sprintf("block %d of %s (node %d slot %d) was moved to %d by garbage collection, its bytes unchanged", m.from, path, nid, m.k, m.to)})
		c.setBit(m.from, false)
		c.setBit(m.to, true)
	}
	fn, text := "f2fs_gc → gc_node_segment → f2fs_move_node_page", fmt.Sprintf("node %d of %s was moved by garbage collection: NAT %d → %d", nid, path, from, to)
	if len(moves) > 0 {
		fn, text = "f2fs_do_write_node_page", fmt.Sprintf("node %d of %s was rewritten elsewhere with the %d addresses garbage collection moved: NAT %d → %d", nid, path, len(moves), from, to)
	}
	c.explain(Explanation{Kind: "node-cow", Func: fn, File: path, Nid: u32(nid), From: u32(from), To: u32(to), Text: text})
	c.setBit(from, false)
	c.setBit(to, true)
	return true
}

// segments compares the expected SIT with the image's, bit by bit.
func (c *checker) segments() error {
	segs, err := c.after.Segments()
	if err != nil {
		return err
	}
	for _, s := range segs {
		want, ok := c.sit[s.Segno]
		if !ok || want == s.Map {
			continue
		}
		for w := 0; w < 64; w++ {
			x := want[w] ^ s.Map[w]
			for x != 0 {
				i := bits.LeadingZeros8(x)
				x &^= 0x80 >> i
				bit := w*8 + i
				model, image := "clear", "set"
				if want[w]&(0x80>>i) != 0 {
					model, image = "set", "clear"
				}
				c.differ(Difference{What: "sit-bit", Segno: u32(s.Segno), Bit: &bit, Addr: u32(f2fs.SegBlock(c.main, s.Segno) + uint32(bit)), Model: model, Image: image})
			}
		}
	}
	return nil
}

// ModelSeq reads operations in the ops language (zero, write, fsync, sync, tune, checkpoint, gc,
// now; see request.ParseOps), runs them in order on one mount in one mode with the volume's
// segment manager (source.NewSeq: garbage collection, the ops' and f2fs_balance_fs's, moves blocks
// and their slots), then a clean unmount (core.Seq:
// every dirty page written back, a checkpoint), and returns the model's after-state: what an image
// taken after the unmount should show. What the modelled writeback did is in State.Explained, each
// page with its kernel function. Hold it against an after-image with [CheckState].
//
// ctx bounds the work: it is checked before and after every operation (source.RunOps) and by the
// block look-ups garbage collection makes, so a caller that gave up costs at most one operation.
func ModelSeq(ctx context.Context, img *imgio.Image, text string, mode core.Mode) (*State, error) {
	return ModelSeqFrom(ctx, img, text, mode, 0)
}

// ModelSeqFrom is [ModelSeq] whose report lists the explanations from the from-th (0-based) on:
// the next page of a report whose ExplainedTotal passes what it lists.
func ModelSeqFrom(ctx context.Context, img *imgio.Image, text string, mode core.Mode, from int) (*State, error) {
	ops, err := request.ParseOps(strings.NewReader(text))
	if err != nil {
		return nil, err
	}
	q, err := source.NewSeq(ctx, img, mode)
	if err != nil {
		return nil, err
	}
	st := &State{SIT: map[uint32][64]byte{}, explained: newExplainer(from, img.Volume().MainBlkaddr)}
	pages := func(ps []core.PageWrite) {
		for _, p := range ps {
			st.explained.add(pageExplanation(p))
		}
	}
	err = source.RunOps(ctx, q, img, ops, func(s *source.Step) error {
		if s.Victim() != nil {
			st.GC = true
		}
		if s.Op.Kind == request.OpUnlink && s.Walk != nil && s.Walk.Errno == "" {
			if st.Unlinked == nil {
				st.Unlinked, st.Dirs = map[uint32]string{}, map[uint32]string{}
			}
			st.Unlinked[s.File.Inode.Ino] = s.Op.Path
			dir := path.Dir(s.Op.Path)
			d, err := img.LookupContext(ctx, dir)
			if err != nil {
				return err
			}
			st.Dirs[d.Inode().Ino] = dir
		}
		if s.Walk != nil {
			pages(s.Pages)
			st.NodesAlloc += s.Walk.Stats.NodesAlloc
			for c := range s.Walk.Calls.All() {
				if c.Reason == core.ActNodeFree {
					st.NodesFreed = append(st.NodesFreed, FreedNode{Ino: s.File.Inode.Ino, Addr: c.Start})
				}
			}
		}
		if s.Other != nil {
			pages(s.Other.Pages)
			st.NodesAlloc += s.Other.NodesAlloc
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("afterck: %w", err)
	}
	w, err := q.Unmount()
	if err != nil {
		return nil, fmt.Errorf("afterck: unmount: %w", err)
	}
	if w != nil {
		pages(w.Pages)
		st.NodesAlloc += w.NodesAlloc
	}
	st.InodeAt = q.InodeBlocks()
	vol, files, ok := q.State()
	if !ok {
		return st, nil
	}
	for _, f := range files {
		ext, err := core.SlotMap(f)
		if err != nil {
			return nil, fmt.Errorf("afterck: %s: %w", f.Path, err)
		}
		st.Files = append(st.Files, FileState{Path: f.Path, Ino: f.Inode.Ino, Size: f.Inode.Size, Blocks: f.Inode.Blocks,
			Inline: f.Inode.Inline, Extents: ext})
	}
	for _, segno := range q.Touched() {
		n, m, err := vol.SIT.SegmentValidMap(segno)
		if err != nil {
			return nil, fmt.Errorf("afterck: segment %d: %w", segno, err)
		}
		st.SIT[segno] = m
		// Emptied by the operations: prefree until the unmount's checkpoint made it free.
		if was, _, err := img.SegmentValidMap(segno); err == nil && n == 0 && was > 0 {
			st.Prefree = append(st.Prefree, segno)
		}
	}
	slices.Sort(st.Prefree)
	st.ValidBlocks, st.ValidNodes, st.HasCounts = vol.Volume.ValidBlockCount, vol.Volume.ValidNodeCount, true
	return st, nil
}

// pageExplanation says what the model's writeback did to one page, with the kernel function.
func pageExplanation(p core.PageWrite) Explanation {
	x := Explanation{File: p.Path, Index: u64(p.Index), To: u32(p.New)}
	switch {
	case p.Old == p.New || p.New == 0:
		x.Kind, x.Func = "writeback-in-place", "f2fs_inplace_write_data"
		x.To = u32(p.Old)
		x.Text = fmt.Sprintf("page %d of %s written back in place at %d (%s)", p.Index, p.Path, p.Old, p.How)
	case p.Old == imgio.NewAddr || p.Old == imgio.NullAddr:
		x.Kind, x.Func = "writeback-new", "f2fs_outplace_write_data → f2fs_allocate_data_block"
		x.Text = fmt.Sprintf("page %d of %s, reserved NEW, written back to a newly allocated block %d (%s)", p.Index, p.Path, p.New, p.How)
	default:
		x.Kind, x.Func = "writeback-out-of-place", "f2fs_outplace_write_data"
		x.From = u32(p.Old)
		x.Text = fmt.Sprintf("page %d of %s written back out of place: %d → %d (%s)", p.Index, p.Path, p.Old, p.New, p.How)
	}
	return x
}
