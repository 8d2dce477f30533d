package core

import (
	"slices"
	"testing"
)

const (
	A = 7200
	B = 9000
	S = 7680
	X = 100
	N = NewAddr
	Z = NullAddr
)

func callsOf(r *Result) [][2]uint32 {
	var out [][2]uint32
	for c := range r.Calls.All() {
		out = append(out, [2]uint32{c.Start, c.Len})
	}
	return out
}

func ones(addrs ...uint32) [][2]uint32 {
	var out [][2]uint32
	for _, a := range addrs {
		out = append(out, [2]uint32{a, 1})
	}
	return out
}

func seq(a uint32, n int) []uint32 {
	out := make([]uint32, n)
	for i := range out {
		out[i] = a + uint32(i)
	}
	return out
}

func rep(a uint32, n int) []uint32 { return slices.Repeat([]uint32{a}, n) }

// slotsAfter expands the result's extents over [0, n).
func slotsAfter(t *testing.T, r *Result, n int) []uint32 {
	t.Helper()
	out := make([]uint32, n)
	for _, e := range r.After.Extents {
		for k := uint64(0); k < e.Count && e.Index+k < uint64(n); k++ {
			switch e.State {
			case "addr":
				out[e.Index+k] = e.Addr + uint32(k)
			case "new":
				out[e.Index+k] = NewAddr
			case "compress":
				out[e.Index+k] = CompressAddr
			}
		}
	}
	return out
}

// TestSpecExamples runs every worked example of docs/kernel-semantics.md §11 on a
// single chunk (the inode's slots) of the reference geometry.
func TestSpecExamples(t *testing.T) {
	tests := []struct {
		name     string
		slots    []uint32
		cleared  []uint32 // SIT bits cleared before the run
		space    int64    // free blocks for reservation; -1 = plenty
		perBlock [][2]uint32
		batched  [][2]uint32
		errno    string
		after    []uint32
		msg      string
	}{
		{"1 contiguous", seq(A, 3), nil, -1, ones(A, A+1, A+2), [][2]uint32{{A, 3}}, "", rep(N, 3), ""},
		{"2 NEW inside run", []uint32{A, A + 1, N, A + 2}, nil, -1, ones(A, A+1, A+2), [][2]uint32{{A, 3}}, "", rep(N, 4), ""},
		{"3 gap", []uint32{A, A + 2}, nil, -1, ones(A, A+2), ones(A, A+2), "", rep(N, 2), ""},
		{"4 descending", []uint32{A + 1, A}, nil, -1, ones(A+1, A), ones(A+1, A), "", rep(N, 2), ""},
		{"5 two runs", []uint32{A, N, N, A + 1, B, B + 1}, nil, -1, ones(A, A+1, B, B+1), [][2]uint32{{A, 2}, {B, 2}}, "", rep(N, 6), ""},
		{"6 duplicate", []uint32{A, A + 1, A}, nil, -1, ones(A, A+1), [][2]uint32{{A, 2}}, "EFSCORRUPTED", []uint32{N, N, A},
			"Inconsistent error blkaddr:7200, sit bitmap:0"},
		{"7 repeat last", []uint32{A, A + 1, A + 1}, nil, -1, ones(A, A+1), [][2]uint32{{A, 2}}, "EFSCORRUPTED", []uint32{N, N, A + 1},
			"Inconsistent error blkaddr:7201, sit bitmap:0"},
		{"8 contiguous duplicate", []uint32{A + 1, A, A + 1}, nil, -1, ones(A+1, A), ones(A+1, A), "EFSCORRUPTED", []uint32{N, N, A + 1},
			"Inconsistent error blkaddr:7201, sit bitmap:0"},
		{"9 segment boundary", seq(S-2, 4), nil, -1, ones(S-2, S-1, S, S+1), [][2]uint32{{S - 2, 4}}, "", rep(N, 4), ""},
		{"10 three segments", seq(S-12, 600), nil, -1, ones(seq(S-12, 600)...), [][2]uint32{{S - 12, 600}}, "", rep(N, 600), ""},
		{"11 cleared bit", seq(A, 4), []uint32{A + 2}, -1, ones(A, A+1), [][2]uint32{{A, 2}}, "EFSCORRUPTED", []uint32{N, N, A + 2, A + 3},
			"Inconsistent error blkaddr:7202, sit bitmap:0"},
		{"12 below main", []uint32{A, A + 1, X, A + 2}, nil, -1, ones(A, A+1), [][2]uint32{{A, 2}}, "EFSCORRUPTED", []uint32{N, N, X, A + 2},
			"access invalid blkaddr:100"},
		{"13 partial reservation", []uint32{A, Z, Z, B}, nil, 1, ones(A), ones(A), "ENOSPC", []uint32{N, N, Z, B}, ""},
		{"14 no space", []uint32{A, Z}, nil, 0, nil, nil, "ENOSPC", []uint32{A, Z}, ""},
		{"15 holes", []uint32{Z, Z, N}, nil, -1, nil, nil, "", rep(N, 3), ""},
		{"16 all NEW", []uint32{N, N}, nil, -1, nil, nil, "", rep(N, 2), ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, mode := range Modes {
				st := newState(tc.slots, int64(len(tc.slots)))
				for _, a := range tc.cleared {
					st.sit.clear(&st.vol, a)
				}
				if tc.space >= 0 {
					st.vol.ValidBlockCount = st.vol.UserBlockCount - uint64(tc.space)
				}
				res, err := Simulate(st.input(), Request{Offset: 0, Length: int64(len(tc.slots)) * 4096}, mode)
				if err != nil {
					t.Fatal(err)
				}
				want := tc.perBlock
				if mode == Batched {
					want = tc.batched
				}
				if got := callsOf(res); !slices.Equal(got, want) {
					t.Errorf("%s calls = %v, want %v", mode, got, want)
				}
				if res.Errno != tc.errno {
					t.Errorf("%s errno = %q, want %q", mode, res.Errno, tc.errno)
				}
				if res.Message != tc.msg {
					t.Errorf("%s message = %q, want %q", mode, res.Message, tc.msg)
				}
				if got := slotsAfter(t, res, len(tc.slots)); !slices.Equal(got, tc.after) {
					t.Errorf("%s slots after = %v, want %v", mode, got, tc.after)
				}
			}
		})
	}
}

// TestThreeSegmentSplit checks example 10's per-segment pieces.
func TestThreeSegmentSplit(t *testing.T) {
	st := newState(seq(S-12, 600), 600)
	var pieces [][3]uint64
	_, err := Walk(st.input(), Request{Length: 600 * 4096}, Batched, func(ev *Event) bool {
		if ev.Kind == EvSITUpdate {
			pieces = append(pieces, [3]uint64{uint64(ev.Segno), uint64(ev.Len), ev.After})
		}
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	want := [][3]uint64{{6, 12, 0}, {7, 512, 0}, {8, 76, 0}}
	if !slices.Equal(pieces, want) {
		t.Errorf("pieces = %v, want %v", pieces, want)
	}
}

// TestSizeExamples covers docs/kernel-semantics.md §4's i_size table on a 10000-byte file.
func TestSizeExamples(t *testing.T) {
	tests := []struct {
		off, length int64
		keep        bool
		size        int64
		advise      uint8
		fills       []uint64
	}{
		{5000, 100, false, 10000, 0, []uint64{1}},
		{4096, 8192, false, 12288, 0, nil},
		{0, 4096, false, 10000, 0, nil},
		{1000, 20000, false, 21000, 0, []uint64{0, 5}},
		{1000, 20000, true, 10000, AdviseKeepSize, []uint64{0, 5}},
	}
	for _, tc := range tests {
		for _, mode := range Modes {
			st := newState(seq(A, 3), 3)
			st.ino.Size = 10000
			res, err := Simulate(st.input(), Request{Offset: tc.off, Length: tc.length, KeepSize: tc.keep}, mode)
			if err != nil {
				t.Fatal(err)
			}
			if res.SizeAfter != tc.size || res.Advise != tc.advise || res.Errno != "" {
				t.Errorf("%s zero(%d,%d,keep=%v): size %d advise %#x errno %q, want %d %#x",
					mode, tc.off, tc.length, tc.keep, res.SizeAfter, res.Advise, res.Errno, tc.size, tc.advise)
			}
			var fills []uint64
			for _, f := range res.FillZero {
				fills = append(fills, f.Index)
			}
			if !slices.Equal(fills, tc.fills) {
				t.Errorf("%s zero(%d,%d): fill_zero pages %v, want %v", mode, tc.off, tc.length, fills, tc.fills)
			}
		}
	}
}
