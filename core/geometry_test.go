package core

import "testing"

func TestDnodeOf(t *testing.T) {
	for _, tc := range []struct {
		index, start uint64
		slots        int
	}{
		{0, 0, 873}, {872, 0, 873}, {873, 873, 1018}, {1890, 873, 1018}, {1891, 1891, 1018},
		{873 + 2*1018, 873 + 2*1018, 1018},                         // the first dnode under i_nid[2]
		{873 + 2*1018 + 1018*1018, 873 + 2*1018 + 1018*1018, 1018}, // the first under i_nid[3]
	} {
		if s, n := DnodeOf(tc.index, 873); s != tc.start || n != tc.slots {
			t.Errorf("DnodeOf(%d, 873) = %d, %d; want %d, %d", tc.index, s, n, tc.start, tc.slots)
		}
	}
}

// TestNodeBlocks counts the nodes afresh: walking the dnodes in file order, a node is new when the
// dnode's path differs from the previous dnode's at its level (the walk is in order, so a node
// never comes back). Every dnode boundary of the largest file, for three inode sizes, and the ends
// inside a dnode.
func TestNodeBlocks(t *testing.T) {
	for _, api := range []int{873, DefAddrsPerInode, 1} {
		n := uint64(1) // the inode
		var prev [3]nodeKey
		prevDepth := 0
		g := dnodeGeom{api: uint64(api), apb: AddrsPerBlock}
		checked := 0
		for start := uint64(0); start < MaxFileBlocks; {
			p := locate(start, g)
			for l := 0; l < p.depth; l++ {
				if l >= prevDepth || p.path[l] != prev[l] {
					n++
				}
			}
			prev, prevDepth = p.path, p.depth
			end := start + uint64(p.cap)
			for _, e := range []uint64{start + 1, start + uint64(p.cap)/2, end} {
				if got := NodeBlocks(e, api); got != n {
					t.Fatalf("NodeBlocks(%d, %d) = %d, want %d", e, api, got, n)
				}
				checked++
			}
			start = end
		}
		if NodeBlocks(0, api) != 1 {
			t.Errorf("NodeBlocks(0, %d) = %d, want the inode alone", api, NodeBlocks(0, api))
		}
		// The whole tree: the inode, 2 direct, 2 indirect with theirs, a double-indirect with its
		// NIDS_PER_BLOCK indirect nodes and theirs.
		if want := uint64(1 + 2 + 2*(1+NidsPerBlock) + 1 + NidsPerBlock*(1+NidsPerBlock)); n != want {
			t.Errorf("addrs_per_inode %d: the largest file has %d nodes, want %d", api, n, want)
		}
		t.Logf("addrs_per_inode %d: %d ends checked, %d nodes in all", api, checked, n)
	}
}
