package web

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/zrviz/zrviz/afterck"
	"github.com/zrviz/zrviz/core"
	"github.com/zrviz/zrviz/imgdiff"
	"github.com/zrviz/zrviz/request"
	"github.com/zrviz/zrviz/source"
	"github.com/zrviz/zrviz/templates"
)

// diffPer is how many changes of each listing the diff page shows at a time (and how many slots of
// each file, and bits of each segment).
const diffPer = 50

// checkListed is how many of the after-image check's differences the page lists (all are marked
// on the maps; `zrviz run --after --json` lists up to afterck.MaxDifferences).
const checkListed = 12

// diffMapCells is the most cells a file's block map on the diff page has.
const diffMapCells = 512

// handleDiffPage serves GET /diff?a=ID&b=ID&page=P: the semantic diff of two stored images (the
// picker alone without both).
func (s *Server) handleDiffPage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	p := templates.DiffPage{Layout: s.layout("Compare two images", "", templates.Crumb{Href: "/", Label: "images"}, templates.Crumb{Label: "diff"})}
	for _, o := range request.Ops() {
		p.OpsKinds = append(p.OpsKinds, o.Kind)
	}
	for _, si := range s.images() {
		p.Images = append(p.Images, templates.ImageItem{ID: si.ID, Name: si.Name, Size: si.Size, Format: string(si.Format)})
	}
	aID, bID := q.Get("a"), q.Get("b")
	if aID == "" || bID == "" {
		if len(p.Images) > 1 {
			p.B.ID = p.Images[1].ID // preselect two different images
		}
		s.render(w, r, http.StatusOK, templates.Diff(p))
		return
	}
	if v := q.Get("page"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > 1<<20 {
			s.pageError(w, r, badParam("page", "a page number from 0"))
			return
		}
		p.Page = n
	}
	sa, relA, err := s.acquire(aID)
	if err != nil {
		s.pageError(w, r, err)
		return
	}
	defer relA()
	sb, relB, err := s.acquire(bID)
	if err != nil {
		s.pageError(w, r, err)
		return
	}
	defer relB()
	p.A = templates.DiffSide{ID: sa.ID, Name: sa.Name, Format: string(sa.Format)}
	p.B = templates.DiffSide{ID: sb.ID, Name: sb.Name, Format: string(sb.Format)}
	// Two unrelated filesystems are refused before anything is reserved: a refused request costs
	// nothing, and says why (422), whether or not it asks for a check.
	if err := imgdiff.Related(sa.Image, sb.Image); err != nil {
		p.Error = "These images cannot be compared: " + err.Error() + ". Pick two images of one filesystem (a copy taken before and after)."
		s.render(w, r, http.StatusUnprocessableEntity, templates.Diff(p))
		return
	}
	// The diff, the page made of it and the check's model are held until the page is written
	// (web/reservations.go); comparing walks both images: heavy work.
	ops, _ := request.ParseOps(strings.NewReader(q.Get("ops"))) // a bad list is diffCheck's to report
	release, err := s.budget.reserve(diffBytes(source.Volume(sa.Image.Volume()), source.Volume(sb.Image.Volume()), ops))
	if err != nil {
		s.pageError(w, r, err)
		return
	}
	defer release()
	slot, err := s.heavyWork(r.Context())
	if err != nil {
		s.pageError(w, r, err)
		return
	}
	heavyDone := sync.OnceFunc(slot)
	defer heavyDone()
	d, err := imgdiff.Compare(r.Context(), sa.Image, sb.Image)
	if errors.Is(err, imgdiff.ErrUnrelated) {
		p.Error = "These images cannot be compared: " + err.Error() + ". Pick two images of one filesystem (a copy taken before and after)."
		s.render(w, r, http.StatusUnprocessableEntity, templates.Diff(p))
		return
	}
	if err != nil {
		s.pageError(w, r, err)
		return
	}
	diffView(&p, d, sa.Image.Volume().MainSegmentCount)
	if p.Ops = q.Get("ops"); p.Ops != "" {
		p.Mode = q.Get("mode")
		var diffs []afterck.Difference
		p.Check, diffs = diffCheck(r, sa, sb, p.Ops, p.Mode)
		if err := r.Context().Err(); err != nil {
			// Cut at the deadline or left: a status (503/504), not a page that blames the ops.
			s.pageError(w, r, err)
			return
		}
		markCheck(&p, diffs)
	}
	heavyDone() // a slow reader of the page holds its memory, not a slot of heavy work
	s.render(w, r, http.StatusOK, templates.Diff(p))
}

// diffCheck holds image b against the model of the operations ops run on a in mode (stock
// per-block unless "batched").
func diffCheck(r *http.Request, a, b *StoredImage, ops, mode string) (*templates.DiffCheck, []afterck.Difference) {
	m := core.PerBlock
	if mode == "batched" {
		m = core.Batched
	}
	if len(ops) > 64<<10 {
		return &templates.DiffCheck{Error: "the operations are too long"}, nil
	}
	// The whole ops language (zero, write, fsync, sync, tune) and the unmount after it, as
	// `zrviz run --ops --after` models them.
	st, err := afterck.ModelSeq(r.Context(), a.Image, ops, m)
	if err != nil {
		return &templates.DiffCheck{Error: err.Error()}, nil
	}
	rep, err := afterck.CheckState(r.Context(), a.Image, b.Image, st)
	if err != nil {
		return &templates.DiffCheck{Error: err.Error()}, nil
	}
	c := &templates.DiffCheck{Agree: rep.Agree, Total: rep.Total}
	for _, x := range rep.Explained {
		c.Explained = append(c.Explained, templates.DiffExplained{Func: x.Func, Text: x.Text})
	}
	for i, d := range rep.Differences {
		if i == checkListed {
			break
		}
		c.Differences = append(c.Differences, templates.DiffDifference{Text: d.String(), Addr: d.Addr, File: d.File, Slot: d.Index})
	}
	return c, rep.Differences
}

// markCheck marks the after-image check's differences on the segment map and the files' block
// maps; a file with differing slots but no changed node gets a block map of its own.
func markCheck(p *templates.DiffPage, diffs []afterck.Difference) {
	byFile := map[uint32][]uint64{}
	for _, d := range diffs {
		switch {
		case d.What == "sit-bit" && d.Segno != nil && int(*d.Segno) < len(p.SegCells):
			c := &p.SegCells[*d.Segno]
			c.Differs = true
			c.Title += " · differs from the model"
		case d.What == "slot" && d.Index != nil:
			byFile[d.Ino] = append(byFile[d.Ino], *d.Index)
		}
	}
	for ino, idx := range byFile {
		i := slices.IndexFunc(p.Files, func(f templates.DiffFile) bool { return f.Ino == ino })
		if i < 0 {
			f := templates.DiffFile{Ino: ino}
			for _, d := range diffs {
				if d.Ino == ino {
					f.Path = d.File
					break
				}
			}
			f.Slots = slices.Max(idx) + 1
			f.Cells = slotCells(f.Slots)
			p.Files = append(p.Files, f)
			i = len(p.Files) - 1
		}
		f := &p.Files[i]
		for _, k := range idx {
			if k < f.Slots {
				f.Cells[k/cellSpan(f.Slots)].Differs = true
			}
		}
	}
}

// cellSpan is how many slots one cell of a block map of n slots covers.
func cellSpan(n uint64) uint64 { return max((n+diffMapCells-1)/diffMapCells, 1) }

// slotCells is the empty block map of n slots.
func slotCells(n uint64) []templates.DiffSlotCell {
	per := cellSpan(n)
	cells := make([]templates.DiffSlotCell, (n+per-1)/per)
	for k := range cells {
		cells[k] = templates.DiffSlotCell{From: uint64(k) * per, To: min(uint64(k+1)*per, n)}
	}
	return cells
}

// diffView fills the page from the diff: page p.Page of every listing.
func diffView(p *templates.DiffPage, d *imgdiff.Diff, mainSegs uint32) {
	p.A.Checkpoint = fmt.Sprintf("version %d, pack %d", d.A.CheckpointVersion, d.A.Pack)
	p.B.Checkpoint = fmt.Sprintf("version %d, pack %d", d.B.CheckpointVersion, d.B.Pack)
	p.Empty = d.Empty()
	p.Problems = d.Problems
	c := d.Counts()
	for _, kv := range []struct {
		k string
		n int
	}{{"checkpoint fields", c.Checkpoint}, {"SIT entries", c.Segments}, {"NAT entries", c.NAT}, {"node blocks", c.Nodes},
		{"data slots", c.Slots}, {"inodes with changed fields", c.Inodes}, {"directory entries", c.Dirents}, {"data blocks with a new owner", c.Owners}} {
		p.Counts = append(p.Counts, templates.KV{Key: kv.k, Value: templates.Int(kv.n)})
	}
	more := func(m bool) {
		if m {
			p.More = true
		}
	}
	p.MainSegments = mainSegs
	changed := map[uint32]imgdiff.SegmentChange{}
	for _, s := range d.Segments {
		changed[s.Segno] = s
	}
	p.SegCells = make([]templates.DiffSegCell, mainSegs)
	for i := range p.SegCells {
		segno := uint32(i)
		cell := templates.DiffSegCell{Segno: segno, Title: fmt.Sprintf("segment %d: unchanged", segno)}
		if s, ok := changed[segno]; ok {
			cell.Changed = true
			cell.Title = fmt.Sprintf("segment %d: valid %d → %d, %s → %s, +%d −%d bits", segno, s.ValidA, s.ValidB, s.StateA, s.StateB, len(s.Set), len(s.Cleared))
		}
		p.SegCells[i] = cell
	}
	cps, m := imgdiff.Page(d.Checkpoint, p.Page, diffPer)
	more(m)
	for _, f := range cps {
		p.Checkpoint = append(p.Checkpoint, templates.DiffField{Name: f.Name, A: f.A, B: f.B, Op: string(f.Op)})
	}
	segs, m := imgdiff.Page(d.Segments, p.Page, diffPer)
	more(m)
	for _, s := range segs {
		ds := templates.DiffSegment{Segno: s.Segno, Valid: fmt.Sprintf("%d → %d", s.ValidA, s.ValidB),
			State: s.StateA + " → " + s.StateB, Type: fmt.Sprintf("%d → %d", s.TypeA, s.TypeB), Op: string(s.Op),
			FirstBlock: s.FirstBlock, LastBlock: s.FirstBlock + 511}
		if s.TypeA == s.TypeB {
			ds.Type = strconv.Itoa(s.TypeA)
		}
		for i, b := range s.Set {
			ds.Bits = append(ds.Bits, templates.DiffBit{Addr: s.FirstBlock + uint32(b), Set: true, Op: string(s.SetOps[i])})
		}
		for i, b := range s.Cleared {
			ds.Bits = append(ds.Bits, templates.DiffBit{Addr: s.FirstBlock + uint32(b), Op: string(s.ClearedOps[i])})
		}
		if len(ds.Bits) > diffPer {
			ds.MoreBits = len(ds.Bits) - diffPer
			ds.Bits = ds.Bits[:diffPer]
		}
		p.Segments = append(p.Segments, ds)
	}
	nats, m := imgdiff.Page(d.NAT, p.Page, diffPer)
	more(m)
	for _, n := range nats {
		p.NAT = append(p.NAT, templates.DiffNAT{Nid: n.Nid, Ino: max(n.InoA, n.InoB), AddrA: n.AddrA, AddrB: n.AddrB,
			WordA: imgdiff.AddrWord(n.AddrA), WordB: imgdiff.AddrWord(n.AddrB), Op: string(n.Op)})
	}
	dents, m := imgdiff.Page(d.Dirents, p.Page, diffPer)
	more(m)
	for _, e := range dents {
		dir := e.Dir
		if dir == "/" {
			dir = ""
		}
		p.Dirents = append(p.Dirents, templates.DiffDirent{Dir: dir, Name: e.Name, Ino: e.Ino, Added: e.Added})
	}
	p.Files = diffFiles(d, p.Page, more)
}

// diffFiles groups the changed nodes by file: each file's block map with its changed slots, its
// nodes, page p of its changed slots and its inode fields.
func diffFiles(d *imgdiff.Diff, page int, more func(bool)) []templates.DiffFile {
	var files []templates.DiffFile
	at := map[uint32]int{}
	slots := map[uint32][]imgdiff.SlotChange{}
	for _, n := range d.Nodes {
		i, ok := at[n.Ino]
		if !ok {
			i = len(files)
			at[n.Ino] = i
			files = append(files, templates.DiffFile{Ino: n.Ino, Path: n.File})
		}
		f := &files[i]
		dn := templates.DiffNode{Nid: n.Nid, Kind: n.Kind, Path: n.Path, AddrA: n.AddrA, AddrB: n.AddrB,
			WordA: imgdiff.AddrWord(n.AddrA), WordB: imgdiff.AddrWord(n.AddrB), Op: string(n.Op)}
		if n.Path == n.Kind {
			dn.Path = ""
		}
		for _, x := range n.Nids {
			dn.Nids = append(dn.Nids, templates.DiffField{Name: x.Field, A: strconv.FormatUint(uint64(x.A), 10), B: strconv.FormatUint(uint64(x.B), 10)})
		}
		f.Nodes = append(f.Nodes, dn)
		slots[n.Ino] = append(slots[n.Ino], n.Slots...)
	}
	for _, in := range d.Inodes {
		if i, ok := at[in.Ino]; ok {
			for _, fc := range in.Fields {
				files[i].Fields = append(files[i].Fields, templates.DiffField{Name: fc.Name, A: fc.A, B: fc.B})
			}
		}
	}
	for i := range files {
		f := &files[i]
		ss := slots[f.Ino]
		f.SlotsTotal = len(ss)
		if len(ss) == 0 {
			continue
		}
		var last uint64
		for _, s := range ss {
			last = max(last, s.Index)
		}
		f.Slots = last + 1
		per := cellSpan(f.Slots)
		cells := slotCells(f.Slots)
		for _, s := range ss {
			c := &cells[s.Index/per]
			c.Count++
			if c.Op == "" {
				c.Op = string(s.Op)
			}
		}
		f.Cells = cells
		pg, m := imgdiff.Page(ss, page, diffPer)
		more(m)
		f.MoreSlots = m
		for _, s := range pg {
			f.Changed = append(f.Changed, templates.DiffSlot{Index: s.Index, Field: s.Field, A: s.A, B: s.B,
				WordA: imgdiff.AddrWord(s.A), WordB: imgdiff.AddrWord(s.B), Op: string(s.Op)})
		}
	}
	return files
}
