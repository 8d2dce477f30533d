package gc

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// nodeVolume is a random volume whose node segments are mostly well filled (so some searches
// are decided despite unplaced node writes and some are not), data segments anything.
func nodeVolume(r *rand.Rand) Volume {
	v := randomVolume(r)
	lowNodes := r.IntN(3) == 0
	for i := range v.Segments {
		s := &v.Segments[i]
		if !isNodeType(s.Type) || s.Valid == 0 || s.Valid == BlocksPerSeg {
			continue
		}
		keep := 380 + r.IntN(BlocksPerSeg-380)
		if lowNodes {
			keep = 1 + r.IntN(BlocksPerSeg-1)
		}
		s.Map, s.Valid = [64]byte{}, 0
		for k := range uint32(keep) {
			setMap(&s.Map, k)
			s.Valid++
		}
	}
	return v
}

// kernelNodeWrites is one way the kernel could have made the node writes the model recorded as
// NodesWritten(n): m node pages (Min ≤ m ≤ Max), each a rewrite of some valid node block (its old
// block invalidated) or a new node, to any of the three node logs, through
// f2fs_allocate_data_block (the SIT, both mtimes, a new segment for a full log).
func kernelNodeWrites(t *testing.T, r *rand.Rand, s *State, n Range) {
	t.Helper()
	m := n.Min + uint64(r.IntN(int(n.Max-n.Min)+1))
	var nodes []Block
	for segno := range s.mainSegs {
		if !isNodeType(s.segs[segno].Type()) {
			continue
		}
		for k := range uint32(BlocksPerSeg) {
			if s.segs[segno].Test(k) {
				nodes = append(nodes, Block{segno, k})
			}
		}
	}
	r.Shuffle(len(nodes), func(i, j int) { nodes[i], nodes[j] = nodes[j], nodes[i] })
	for i := range m {
		log := HotNode + r.IntN(3)
		c := &s.cur[log]
		if c.Blkoff >= BlocksPerSeg {
			t.Fatalf("node log %d full: the model should have refused", log)
		}
		to := Block{c.Segno, c.Blkoff}
		full := s.advance(log)
		var old *Block
		if int(i) < len(nodes) && r.IntN(4) > 0 {
			old = &nodes[i]
		}
		s.updateSIT(to, old)
		if full {
			_ = s.newCurseg(log)
		}
		if old != nil {
			s.locateDirtySegment(old.Segno)
		}
		s.locateDirtySegment(to.Segno)
	}
}

// TestNodePlacementAnswered holds the segment manager's answers after node page writes it does not
// place (f2fs_sync_node_pages, f2fs_fsync_node_pages) to the kernel's rule: on random volumes,
// after a random number of node pages written (the model told only the range), a foreground or
// background collection the model answers — victim, policy, cost, errno, blocks moved, and the
// free sections after within the model's range — is what the collection gives on every one of several random placements of
// those writes by the kernel's rule (kernelNodeWrites, on copies of the state); where some
// placement would change it, the model refuses, naming f2fs_do_write_node_page. Both happen.
func TestNodePlacementAnswered(t *testing.T) {
	r := rand.New(rand.NewPCG(36, 1))
	answered, refused := 0, 0
	for iter := range 300 {
		v := nodeVolume(r)
		s := after(t, r, v, uint64(r.IntN(3000)))
		hi := uint64(1 + r.IntN(60))
		n := Range{Min: uint64(r.IntN(2)) * min(hi, uint64(1+r.IntN(3))), Max: hi}
		truths := make([]*State, 6)
		for i := range truths {
			truths[i] = s.Clone()
		}
		// The writes happen inside a checkpoint, whose end frees the prefree segments (those the
		// writes emptied too); the model's and each placement's.
		s.NodesWritten(n, "f2fs_sync_node_pages")
		s.Checkpoint()
		if s.Unmodelled() != "" {
			refused++
			continue
		}
		kind := Kind(r.IntN(2))
		p := s.GC(kind)
		if why := s.Unmodelled(); why != "" {
			if !strings.Contains(why, "f2fs_do_write_node_page") && !strings.Contains(why, "need_new_seg") && !strings.Contains(why, "has_not_enough_free_secs") && !strings.Contains(why, "f2fs_gc") {
				t.Fatalf("volume %d: refused without naming the kernel function: %s", iter, why)
			}
			refused++
			continue
		}
		answered++
		for i, k := range truths {
			kernelNodeWrites(t, r, k, n)
			k.Checkpoint()
			kp := k.GC(kind)
			switch {
			case (p.Victim == nil) != (kp.Victim == nil) || p.Victim != nil && *p.Victim != *kp.Victim:
				t.Fatalf("volume %d placement %d (%s, %d–%d nodes): victim %v, the kernel's rule %v", iter, i, kind, n.Min, n.Max, p.Victim, kp.Victim)
			case p.Cost != kp.Cost || p.Policy != kp.Policy || p.Moved != kp.Moved:
				t.Fatalf("volume %d placement %d (%s): cost %d policy %s moved %d; the kernel's rule %d %s %d", iter, i, kind, p.Cost, p.Policy, p.Moved, kp.Cost, kp.Policy, kp.Moved)
			case (p.Errno == nil) != (kp.Errno == nil) || p.Errno != nil && *p.Errno != *kp.Errno:
				t.Fatalf("volume %d placement %d (%s): errno %v, the kernel's rule %v", iter, i, kind, p.Errno, kp.Errno)
			case k.FreeSections() < s.FreeSections() || k.FreeSections() > s.freeSectionsHi():
				t.Fatalf("volume %d placement %d (%s): %d free sections after, the model's range %d–%d", iter, i, kind, k.FreeSections(), s.FreeSections(), s.freeSectionsHi())
			}
		}
	}
	t.Logf("%d answered, %d refused", answered, refused)
	if answered < 30 || refused < 30 {
		t.Errorf("%d answered, %d refused: the random states do not cover both", answered, refused)
	}
}

// TestWriteNodes: node pages the caller knows go to the node log's next blocks in the order given,
// each old block invalidated (a node segment emptied ends prefree), both segments' mtimes moved, and
// a node log that fills opens a new segment; nothing is left unplaced (NodeSlack 0).
func TestWriteNodes(t *testing.T) {
	valid := make([]uint32, 24)
	valid[3] = 2 // a node segment of two inodes
	v := vol(t, 1, valid, nil)
	v.Segments[3].Type = WarmNode
	v.Current[WarmNode].Blkoff = BlocksPerSeg - 1 // one block left in the warm node log
	w := v.Current[WarmNode].Segno
	for k := range uint32(BlocksPerSeg - 1) {
		setMap(&v.Segments[w].Map, k)
	}
	v.Segments[w].Valid = BlocksPerSeg - 1
	s := mount(t, v)
	s.Now = 50
	got, err := s.WriteNodes(WarmNode, []Block{{3, 0}, {3, 1}})
	if err != nil {
		t.Fatal(err)
	}
	nw := s.Current()[WarmNode]
	if got[0] != (Block{w, BlocksPerSeg - 1}) || got[1] != (Block{nw.Segno, 0}) || nw.Segno == w || nw.Blkoff != 1 {
		t.Fatalf("written to %+v, log now %+v; want the last block of %d, then block 0 of a new segment", got, nw, w)
	}
	if s.Segment(3).Valid != 0 || s.Class(3) != "prefree" || s.Segment(w).Valid != BlocksPerSeg || s.Segment(nw.Segno).Valid != 1 {
		t.Errorf("segment 3: %d valid (%s), %d: %d, %d: %d", s.Segment(3).Valid, s.Class(3), w, s.Segment(w).Valid, nw.Segno, s.Segment(nw.Segno).Valid)
	}
	if s.Segment(nw.Segno).Mtime != 150 || s.NodeSlack() != 0 || s.Unmodelled() != "" {
		t.Errorf("new segment's mtime %d (want elapsed 100 + 50), slack %d, %q", s.Segment(nw.Segno).Mtime, s.NodeSlack(), s.Unmodelled())
	}
	if _, err := s.WriteNodes(WarmData, []Block{{3, 0}}); err == nil {
		t.Error("WriteNodes to a data log")
	}
}
