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
