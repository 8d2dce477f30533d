package f2fs

import (
	"math/rand/v2"
	"testing"
)

// TestKernelValues holds the derived constants to the numbers the kernel's headers give for 4 KiB
// blocks, so a slip in a derivation (a size, a shift) shows here rather than in an image decoded wrong.
func TestKernelValues(t *testing.T) {
	for _, c := range []struct {
		name      string
		got, want uint64
	}{
		{"BlocksPerSeg", BlocksPerSeg, 512},
		{"SmallVolumeSegments", SmallVolumeSegments, 8192},
		{"NATEntryPerBlock", NATEntryPerBlock, 455},
		{"SITEntryPerBlock", SITEntryPerBlock, 55},
		{"SITVBlocksMask", SITVBlocksMask, 0x3FF},
		{"InodeNidOffset", InodeNidOffset, 4052},
		{"NullSegno", uint64(NullSegno), 0xFFFFFFFF},
		{"NrCursegType", NrCursegType, 6},
	} {
		if c.got != c.want {
			t.Errorf("%s = %d, want %d", c.name, c.got, c.want)
		}
	}
	// The entries fill their block: a SIT block has 4096−55·74 = 26 bytes left, a NAT block 1.
	if r := BlockSize - SITEntryPerBlock*SITEntrySize; r < 0 || r >= SITEntrySize {
		t.Errorf("SIT block remainder %d", r)
	}
	if r := BlockSize - NATEntryPerBlock*NATEntrySize; r < 0 || r >= NATEntrySize {
		t.Errorf("NAT block remainder %d", r)
	}
}

// TestSITVBlocks: any count up to a segment's blocks and any of the six log types pack into vblocks
// as seg_info_to_raw_sit does ((type << SIT_VBLOCKS_SHIFT) | valid) and come back out.
func TestSITVBlocks(t *testing.T) {
	for typ := range NrCursegType {
		for valid := range uint32(BlocksPerSeg + 1) {
			vb := uint16(typ)<<SITVBlocksShift | uint16(valid)
			if SITValid(vb) != valid || SITType(vb) != typ {
				t.Fatalf("vblocks %#x: valid %d type %d, want %d %d", vb, SITValid(vb), SITType(vb), valid, typ)
			}
		}
	}
}

// TestSegmentFormulas: for random main areas and addresses, the segment, the offset and the segment's
// first block agree (SegBlock(SegNo)+SegOff is the address), and SegNo's uint64 form agrees with its
// uint32 form.
func TestSegmentFormulas(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 1))
	for range 100000 {
		main := rng.Uint32N(1<<20) * BlocksPerSeg
		a := main + rng.Uint32N(^uint32(0)-main)
		segno, off := SegNo(a, main), SegOff(a, main)
		if off >= BlocksPerSeg || SegBlock(main, segno)+off != a {
			t.Fatalf("main %d addr %d: segno %d off %d, SegBlock %d", main, a, segno, off, SegBlock(main, segno))
		}
		if s64 := SegNo(uint64(a), uint64(main)); s64 != uint64(segno) {
			t.Fatalf("main %d addr %d: SegNo uint64 %d, uint32 %d", main, a, s64, segno)
		}
	}
}

// TestNATBlockAddr holds NATBlockAddr to current_nat_addr as the kernel writes it (node.c): seg_off =
// block_off >> log_blocks_per_seg; nat_blkaddr + (seg_off << log_blocks_per_seg << 1) +
// (block_off & (BLKS_PER_SEG − 1)).
func TestNATBlockAddr(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 2))
	for range 100000 {
		nat, b := rng.Uint32N(1<<24), rng.Uint32N(1<<22)
		segOff := b >> LogBlocksPerSeg
		want := nat + (segOff << LogBlocksPerSeg << 1) + (b & (BlocksPerSeg - 1))
		if got := NATBlockAddr(nat, b); got != want {
			t.Fatalf("NATBlockAddr(%d, %d) = %d, want %d", nat, b, got, want)
		}
	}
	for range 100000 {
		nat, b := rng.Uint32N(1<<24), rng.Uint32N(1<<22)
		if got, second := NATBlockOf(NATBlockAddr(nat, b), nat); got != b || second {
			t.Fatalf("NATBlockOf(NATBlockAddr(%d, %d)) = %d, %v", nat, b, got, second)
		}
		if got, second := NATBlockOf(NATBlockAddr(nat, b)+BlocksPerSeg, nat); got != b || !second {
			t.Fatalf("NATBlockOf(second copy of %d) = %d, %v", b, got, second)
		}
	}
	if got := NATBlockAddr(1536, 512); got != 1536+1024 {
		t.Errorf("NAT block 512 (first of the second pair) at %d, want %d", got, 1536+1024)
	}
}

func TestLogName(t *testing.T) {
	want := []string{"hot-data", "warm-data", "cold-data", "hot-node", "warm-node", "cold-node"}
	for i, w := range want {
		if got := LogName(i); got != w {
			t.Errorf("LogName(%d) = %q, want %q", i, got, w)
		}
	}
	for _, i := range []int{-1, NrCursegType, 7, 63} {
		if got := LogName(i); got != "" {
			t.Errorf("LogName(%d) = %q, want \"\"", i, got)
		}
	}
}
