package core

import "testing"

// TestWithFileCarriesTheVolume chains requests over two files of one volume: the second file sees
// the SIT bits and counters the first request changed, and going back to the first file continues
// from its own slots.
func TestWithFileCarriesTheVolume(t *testing.T) {
	const a0, b0 = 7200, 9000 // segment 6 and segment 9
	vol := refVolume()
	sit := newMemSIT()
	fileA := newMemFile(873, a0, a0+1, a0+2, NullAddr, a0+3)
	// B points at a0+1 as well (a cross-linked block, as a corrupt image may have).
	fileB := newMemFile(873, b0, a0+1, NullAddr)
	sit.set(&vol, a0, a0+1, a0+2, a0+3, b0)
	inA := Input{Path: "/a", Volume: vol, Inode: Inode{Ino: 10, Type: "file", Size: 5 * 4096, Blocks: 5,
		AddrsPerInode: 873, SlotsEnd: fileA.n}, Slots: fileA, SIT: sit}
	inB := Input{Path: "/b", Volume: vol, Inode: Inode{Ino: 11, Type: "file", Size: 3 * 4096, Blocks: 3,
		AddrsPerInode: 873, SlotsEnd: fileB.n}, Slots: fileB, SIT: sit}
	whole := func(in Input) Request { return Request{Offset: 0, Length: in.Inode.Size} }

	for _, mode := range Modes {
		resA, err := Simulate(inA, whole(inA), mode)
		if err != nil || resA.Errno != "" || resA.Stats.BlocksInvalidated != 4 || resA.Stats.Reserved != 1 {
			t.Fatalf("%s: zero A: %v, %+v", mode, err, resA)
		}
		afterA := resA.NextInput()

		// B alone: both blocks valid, one NULL reserved.
		alone, err := Simulate(inB, whole(inB), mode)
		if err != nil || alone.Errno != "" || alone.Stats.BlocksInvalidated != 2 {
			t.Fatalf("%s: B alone: %v, %+v", mode, err, alone)
		}
		// B after A on the same mount: a0+1's SIT bit is clear now, so B's slot 1 fails validation,
		// and the counters continue from A's.
		inB2 := afterA.WithFile(inB)
		if inB2.Path != "/b" || inB2.Inode.Ino != 11 || inB2.Volume.ValidBlockCount != resA.ValidBlocks {
			t.Fatalf("%s: WithFile: path %s ino %d vbc %d, want /b 11 %d", mode, inB2.Path, inB2.Inode.Ino,
				inB2.Volume.ValidBlockCount, resA.ValidBlocks)
		}
		resB, err := Simulate(inB2, whole(inB2), mode)
		if err != nil {
			t.Fatal(err)
		}
		if resB.Errno != "EFSCORRUPTED" || resB.Message == "" || resB.Stats.BlocksInvalidated != 1 {
			t.Errorf("%s: B after A: errno %q (%s), %d invalidated; want EFSCORRUPTED at a0+1 after 1", mode,
				resB.Errno, resB.Message, resB.Stats.BlocksInvalidated)
		}
		// The reservation of B's NULL slot counts on top of A's.
		if resB.ValidBlocks != resA.ValidBlocks+1 {
			t.Errorf("%s: valid_block_count after B %d, want A's %d + 1", mode, resB.ValidBlocks, resA.ValidBlocks)
		}

		// Back to A: its slots are NEW (nothing to invalidate); the volume is B's.
		inA2 := resB.NextInput().WithFile(afterA)
		again, err := Simulate(inA2, whole(inA2), mode)
		if err != nil || again.Errno != "" || again.Stats.Calls != 0 || again.Stats.SlotsNew != 5 ||
			again.ValidBlocks != resB.ValidBlocks {
			t.Errorf("%s: A again: %v, errno %q, %d calls, %d NEW, vbc %d (want %d)", mode, err, again.Errno,
				again.Stats.Calls, again.Stats.SlotsNew, again.ValidBlocks, resB.ValidBlocks)
		}
		// The untouched base sources are unchanged: B alone still succeeds.
		if res, _ := Simulate(inB, whole(inB), mode); res.Errno != "" {
			t.Errorf("%s: the base state changed: B alone now %q", mode, res.Errno)
		}
	}
}
