package source_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/zrviz/zrviz/core"
	"github.com/zrviz/zrviz/gc"
	"github.com/zrviz/zrviz/imgio"
	"github.com/zrviz/zrviz/internal/f2fs"
	"github.com/zrviz/zrviz/internal/testutil"
	"github.com/zrviz/zrviz/request"
	"github.com/zrviz/zrviz/source"
)

// TestSyncInodePlacement holds the node writes the model places (a sync of inodes that writes
// touched, core's syncInodePages) to a fresh evaluation of the kernel's rule, on kernel-seq n1's base
// (600 one-page files, their inodes in the warm node segments 1 and 5): random sequences of in-place
// writes, syncs and foreground gc calls. At every sync the model either placed the writes — and then
// every segment's valid count and map is what a fresh copy of the state before the sync shows after
// f2fs_sync_node_pages' rule applied by hand (each written inode, in inode-number order, from its NAT
// block to the warm node log's next block, then the checkpoint) — or recorded them as unplaced
// (gc.State.NodeSlack), after which every answer is the model's range logic's (refused or not,
// TestNodePlacementAnswered's property). Both happen.
func TestSyncInodePlacement(t *testing.T) {
	img, err := imgio.OpenFileContext(context.Background(), testutil.RawImage(t, filepath.Join(seqDir, "n1-node-victim", "before.img.zst")), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { img.Close() })
	main := img.Volume().MainBlkaddr
	seeds := 24
	if testing.Short() {
		seeds = 8
	}
	placed, unplaced, refused := 0, 0, 0
	for seed := range seeds {
		r := rand.New(rand.NewPCG(uint64(seed), 36))
		var ops []request.Op
		for range 1 + r.IntN(4) {
			for range 1 + r.IntN(12) {
				ops = append(ops, mustOps(t, fmt.Sprintf("write /f%03d 0 4096\n", 1+r.IntN(600)))...)
			}
			ops = append(ops, mustOps(t, "sync\n")...)
			if r.IntN(2) == 0 {
				ops = append(ops, mustOps(t, "gc 1\n")...)
			}
		}
		q, err := source.NewSeq(context.Background(), img, core.PerBlock)
		if err != nil {
			t.Fatal(err)
		}
		before := q.GCState()
		written := map[uint32]bool{} // inodes written since the last sync
		err = source.RunOps(context.Background(), q, img, ops, func(st *source.Step) error {
			after := q.GCState()
			defer func() { before = after }()
			switch st.Op.Kind {
			case request.OpWrite:
				written[st.File.Inode.Ino] = true
				return nil
			case request.OpSync:
			default:
				return nil
			}
			inos := make([]uint32, 0, len(written))
			for ino := range written {
				inos = append(inos, ino)
			}
			clear(written)
			if after.NodeSlack() > before.NodeSlack() {
				unplaced++
				return nil
			}
			if before.NodeSlack() > 0 {
				return nil // placed nothing: an earlier sync's writes were unplaced
			}
			placed++
			// The kernel's rule by hand, on a fresh copy of the state before the sync.
			slices.Sort(inos)
			want := before.Clone()
			for _, ino := range inos {
				e, err := img.NAT(ino)
				if err != nil {
					return err
				}
				old := gc.Block{Segno: f2fs.SegNo(e.BlockAddr, main), Blkoff: f2fs.SegOff(e.BlockAddr, main)}
				c := want.Current()[gc.WarmNode]
				if c.Blkoff >= gc.BlocksPerSeg-1 {
					return fmt.Errorf("seed %d: the warm node log fills; the test keeps it from doing so", seed)
				}
				// The new block valid in the log's segment, the old one invalid (update_sit_entry +1, −1).
				se, _, err := want.SITEntry(c.Segno)
				if err != nil {
					return err
				}
				se.SetValid(c.Blkoff)
				if err := want.Adopt(c.Segno, se, false); err != nil {
					return err
				}
				if err := want.Invalidate(old.Segno, old.Blkoff); err != nil {
					return err
				}
				if err := want.SetCurrent(gc.WarmNode, gc.CurSeg{Segno: c.Segno, Blkoff: c.Blkoff + 1}); err != nil {
					return err
				}
			}
			want.Checkpoint()
			for segno := range want.Segments() {
				w, g := want.Segment(segno), after.Segment(segno)
				if w.Valid != g.Valid || w.Map != g.Map {
					return fmt.Errorf("seed %d op %d (sync of %d inodes): segment %d: %d valid, the rule gives %d", seed, st.Index+1, len(inos), segno, g.Valid, w.Valid)
				}
			}
			if want.Current()[gc.WarmNode] != after.Current()[gc.WarmNode] {
				return fmt.Errorf("seed %d op %d: warm node log at %+v, the rule gives %+v", seed, st.Index+1, after.Current()[gc.WarmNode], want.Current()[gc.WarmNode])
			}
			return nil
		})
		switch {
		case err != nil && strings.Contains(err.Error(), "the rule gives"), err != nil && strings.Contains(err.Error(), "fills"):
			t.Fatal(err)
		case err != nil:
			if !strings.Contains(err.Error(), "f2fs_") {
				t.Fatalf("seed %d: %v", seed, err)
			}
			refused++
		}
	}
	t.Logf("%d syncs placed and agreed with the rule, %d recorded unplaced; %d sequences refused later", placed, unplaced, refused)
	if placed == 0 || unplaced == 0 {
		t.Errorf("placed %d, unplaced %d: the sequences do not cover both", placed, unplaced)
	}
}
