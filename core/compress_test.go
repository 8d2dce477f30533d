package core

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// compressedFile is a random compressed file held in the inode's slots (no direct node): each
// cluster compressed (COMPRESS_ADDR, k blocks, NEW_ADDR for the rest), raw (cs blocks), a hole,
// or — the last one — raw with a NULL tail. comprK[c] is cluster c's k, 0 when it is not
// compressed.
type compressedFile struct {
	cs     uint64
	slots  []uint32
	comprK []uint64
	saved  uint64 // i_compr_blocks: Σ cs − k over the compressed clusters
}

func randomCompressedFile(r *rand.Rand, raw bool) compressedFile {
	cs := uint64(4) << r.IntN(3)
	api := 873 - 873%cs
	nc := 1 + r.IntN(int(min(20, api/cs)))
	f := compressedFile{cs: cs, comprK: make([]uint64, nc)}
	next := uint32(4096 + 10*512 + r.IntN(2000))
	for c := range nc {
		kind := r.IntN(10)
		if raw && kind < 6 {
			kind = 6
		}
		switch {
		case kind < 6:
			k := 1 + uint64(r.IntN(int(cs-1)))
			f.slots = append(f.slots, CompressAddr)
			for range k {
				f.slots = append(f.slots, next)
				next++
			}
			for range cs - 1 - k {
				f.slots = append(f.slots, NewAddr)
			}
			f.comprK[c] = k
			f.saved += cs - k
		case kind < 9 || c < nc-1:
			for range cs {
				f.slots = append(f.slots, next)
				next++
			}
		default:
			keep := 1 + uint64(r.IntN(int(cs)))
			for i := range cs {
				a := NullAddr
				if i < keep {
					a, next = next, next+1
				}
				f.slots = append(f.slots, a)
			}
		}
		if r.IntN(4) == 0 {
			next += uint32(r.IntN(20)) // a gap: runs break
		}
	}
	return f
}

func (f compressedFile) state() *state {
	st := newState(f.slots, int64(len(f.slots)))
	st.vol.ColdDataSegno, st.vol.ColdDataBlkoff = 0, 0
	api := int(873 - 873%f.cs)
	st.file = newMemFile(api, f.slots...)
	st.ino.AddrsPerInode, st.ino.SlotsEnd = api, st.file.n
	st.ino.Flags = FlagCompressed
	st.ino.ClusterSize = int(f.cs)
	st.ino.ComprBlocks = f.saved
	st.ino.Blocks = 1
	for _, a := range f.slots {
		if a != NullAddr {
			st.ino.Blocks++
		}
	}
	return st
}

// TestTruncCompressedAgainstReference holds truncate(2) of a compressed file, at random sizes, in
// both modes, against a fresh evaluation of f2fs_truncate_blocks (file.c): f2fs_do_truncate_blocks
// from the size rounded up to a cluster (every non-NULL slot one f2fs_invalidate_blocks call,
// COMPRESS_ADDR and NEW_ADDR included; i_compr_blocks loses cs − k per compressed cluster), then
// f2fs_truncate_partial_cluster for a size inside a cluster: a raw cluster is truncated again from
// the size (and its partial page dirtied, written out of place to the cold log at the sync, as
// every page of a compressed file is), a compressed one only dirtied whole — no call, slots
// unchanged. The sync after writes that cluster raw (f2fs_write_raw_pages): every page out of place
// to the cold log, past EOF included, i_compr_blocks losing cs − k once more; a cluster whose pages
// all lie inside i_size would be compressed again and is refused naming f2fs_compress_pages. A file
// of raw clusters (i_compr_blocks 0) is not a released one: it truncates; a released one
// (F2FS_COMPRESS_RELEASED) is refused.
func TestTruncCompressedAgainstReference(t *testing.T) {
	r := rand.New(rand.NewPCG(36, 1))
	seen := map[string]int{}
	for iter := range sweep(300) {
		f := randomCompressedFile(r, iter%4 == 0)
		n := uint64(len(f.slots))
		cs := f.cs
		var size int64
		switch r.IntN(4) {
		case 0: // inside the first page of a cluster
			size = int64(uint64(r.IntN(int(n/cs)+1))*cs*4096) + 1 + int64(r.IntN(4095))
		case 1: // in the last page of a cluster
			size = int64((uint64(r.IntN(int(n/cs)))*cs+cs-1)*4096) + int64(r.IntN(4096))
		default:
			size = int64(r.IntN(int(n*4096) + 1))
		}
		size = min(size, int64(n*4096))
		name := fmt.Sprintf("iter %d cs %d n %d size %d", iter, cs, n, size)

		// The reference.
		pages := (uint64(size) + 4095) / 4096
		ff := (pages + cs - 1) / cs * cs
		var calls []uint32
		saved := f.saved
		for i := ff; i < n; i++ {
			if f.slots[i] != NullAddr {
				calls = append(calls, f.slots[i])
			}
			if i%cs == 0 && f.comprK[i/cs] > 0 {
				saved -= cs - f.comprK[i/cs]
			}
		}
		var dirty []uint64
		var c uint64
		cutCompressed := false
		if uint64(size) != ff*4096 { // not cluster aligned: f2fs_truncate_partial_cluster
			c = uint64(size) / 4096 / cs
			if f.comprK[c] > 0 {
				cutCompressed = true
				for p := c * cs; p < c*cs+cs; p++ {
					dirty = append(dirty, p)
				}
			} else {
				for i := pages; i < min(c*cs+cs, n); i++ {
					if f.slots[i] != NullAddr {
						calls = append(calls, f.slots[i])
					}
				}
				if p := uint64(size) / 4096; size%4096 != 0 && f.slots[p] != NullAddr {
					dirty = append(dirty, p)
				}
			}
		}
		blocks := f.state().ino.Blocks - uint64(len(calls))

		for _, mode := range Modes {
			st := f.state()
			in := st.input()
			q := NewSeq(mode)
			res, _, err := q.Truncate(in, size)
			if err != nil || res.Errno != "" {
				t.Fatalf("%s %s: truncate: %v %v", name, mode, err, res)
			}
			var got []uint32
			for call := range res.Calls.All() {
				for k := range call.Len {
					a := call.Start
					if isBlock(a) {
						a += k
					}
					got = append(got, a)
				}
			}
			if !slices.Equal(got, calls) {
				t.Fatalf("%s %s: calls %v\nwant %v", name, mode, got, calls)
			}
			fin := q.File(in)
			if fin.Inode.ComprBlocks != saved || fin.Inode.Blocks != blocks || !slices.Equal(fin.Inode.Dirty, dirty) {
				t.Fatalf("%s %s: i_compr_blocks %d i_blocks %d dirty %v; want %d %d %v", name, mode,
					fin.Inode.ComprBlocks, fin.Inode.Blocks, fin.Inode.Dirty, saved, blocks, dirty)
			}
			ext, err := SlotMap(fin)
			if err != nil {
				t.Fatal(err)
			}
			keep := min(n, ff)
			if !cutCompressed && uint64(size) != ff*4096 {
				keep = pages
			}
			for i := range n {
				want := NullAddr
				if i < keep {
					want = f.slots[i]
				}
				if g := slotAt(ext, i); g != want {
					t.Fatalf("%s %s: slot %d = %#x after the truncate, want %#x", name, mode, i, g, want)
				}
			}

			// The sync.
			s, err := q.Sync()
			switch {
			case cutCompressed && c*cs+cs <= pages:
				seen["compressed cluster inside i_size"]++
			case cutCompressed:
				seen["compressed cluster rewritten raw"]++
			case uint64(size) != ff*4096:
				seen["raw cluster cut"]++
			default:
				seen["cluster aligned"]++
			}
			if cutCompressed && c*cs+cs <= pages {
				if !errors.Is(err, ErrUnmodelled) || !strings.Contains(err.Error(), "f2fs_compress_pages") {
					t.Fatalf("%s %s: sync of a cluster inside i_size: %v, want refused naming f2fs_compress_pages", name, mode, err)
				}
				continue
			}
			if err != nil {
				t.Fatalf("%s %s: sync: %v", name, mode, err)
			}
			fin = q.File(in)
			cold := in.Volume.MainBlkaddr // the cold log: segment 0, offset 0
			if !cutCompressed {
				// A raw cluster's partial page: out of place too (f2fs_should_update_outplace
				// takes every page of a compressed file), to the cold log.
				if len(s.Pages) != len(dirty) {
					t.Fatalf("%s %s: sync wrote %+v, want pages %v", name, mode, s.Pages, dirty)
				}
				for _, pw := range s.Pages {
					if pw.How != WroteOutPlace || pw.New != cold || pw.Old != f.slots[pw.Index] || pw.Log != "cold-data" {
						t.Fatalf("%s %s: raw page %d: %+v, want out of place to %d", name, mode, pw.Index, pw, cold)
					}
				}
				continue
			}
			if len(s.Pages) != int(cs) {
				t.Fatalf("%s %s: sync wrote %+v, want the %d pages of cluster %d", name, mode, s.Pages, cs, c)
			}
			for k, pw := range s.Pages {
				p := c*cs + uint64(k)
				if pw.Index != p || pw.How != WroteOutPlace || pw.Old != f.slots[p] || pw.New != cold+uint32(k) || pw.Log != "cold-data" {
					t.Fatalf("%s %s: page %d: %+v, want %d → %d out of place to the cold log", name, mode, p, pw, f.slots[p], cold+uint32(k))
				}
			}
			if want := saved - (cs - f.comprK[c]); fin.Inode.ComprBlocks != want || fin.Inode.Blocks != blocks {
				t.Fatalf("%s %s: after sync i_compr_blocks %d i_blocks %d, want %d %d", name, mode, fin.Inode.ComprBlocks, fin.Inode.Blocks, want, blocks)
			}
			// The cluster's compressed blocks left the SIT; the new ones are valid.
			for k := uint64(1); k <= f.comprK[c]; k++ {
				a := f.slots[c*cs+k]
				if _, m, _ := fin.SIT.SegmentValidMap(segnoOf(&in.Volume, a)); testBit(&m, (a-in.Volume.MainBlkaddr)%512) {
					t.Fatalf("%s %s: block %d still valid after the cluster's rewrite", name, mode, a)
				}
			}
			if _, m, _ := fin.SIT.SegmentValidMap(0); !testBit(&m, uint32(cs-1)) {
				t.Fatalf("%s %s: the cold log's block %d is not valid", name, mode, cold+uint32(cs-1))
			}
		}
	}
	for _, k := range []string{"compressed cluster inside i_size", "compressed cluster rewritten raw", "raw cluster cut", "cluster aligned"} {
		if seen[k] < 4 {
			t.Errorf("%q seen %d times: %v", k, seen[k], seen)
		}
	}
}

// TestTruncCompressedReleased: a compressed file whose saved blocks were released
// (F2FS_COMPRESS_RELEASED in i_inline) is refused naming FI_COMPRESS_RELEASED; the same file
// without the flag, i_compr_blocks 0 (nothing compressed), truncates.
func TestTruncCompressedReleased(t *testing.T) {
	f := randomCompressedFile(rand.New(rand.NewPCG(36, 2)), true)
	st := f.state()
	st.ino.ComprBlocks = 0
	for _, mode := range Modes {
		if _, _, err := NewSeq(mode).Truncate(st.input(), 4096); err != nil {
			t.Fatalf("%s: raw clusters: %v", mode, err)
		}
		st.ino.Inline |= InlineComprReleased
		_, _, err := NewSeq(mode).Truncate(st.input(), 4096)
		if !errors.Is(err, ErrUnmodelled) || !strings.Contains(err.Error(), "FI_COMPRESS_RELEASED") {
			t.Fatalf("%s: released: %v, want refused naming FI_COMPRESS_RELEASED", mode, err)
		}
		st.ino.Inline &^= InlineComprReleased
	}
}

// slotAt is the slot value at index i of a slot map.
func slotAt(ext []Extent, i uint64) uint32 {
	for _, e := range ext {
		if i >= e.Index && i < e.Index+e.Count {
			return slotValue0(e, i-e.Index)
		}
	}
	return NullAddr
}

// TestTruncGrowDropsPostEOF: a growing truncate first drops the cached pages wholly inside
// [i_size, size) (f2fs_setattr → f2fs_zero_post_eof_page), dirty ones unwritten, and keeps the page
// that holds the old i_size. A compressed cluster f2fs_truncate_partial_cluster dirtied loses its
// pages past the old size that way, and the sync of the rest is refused (f2fs_write_cache_pages
// reads the cluster again: f2fs_prepare_compress_overwrite).
func TestTruncGrowDropsPostEOF(t *testing.T) {
	const a0 = 7200
	for _, mode := range Modes {
		st := newState([]uint32{a0, a0 + 1, a0 + 2, a0 + 3}, 4)
		in := st.input()
		in.Volume = seqVolume()
		q := NewSeq(mode)
		// A keep_size zero past EOF leaves pages 4 and 5 dirty (fill_zero).
		if _, _, _, err := q.Zero(in, Request{Offset: 4*4096 + 100, Length: 5000, KeepSize: true}); err != nil {
			t.Fatal(err)
		}
		if d := q.File(in).Inode.Dirty; !slices.Equal(d, []uint64{4, 5}) {
			t.Fatalf("%s: dirty after the zero %v, want [4 5]", mode, d)
		}
		// Growing to 10 pages drops both (wholly inside [i_size, size)); before, only
		// truncate_setsize's drop from the new size applied, which keeps them.
		if _, _, err := q.Truncate(in, 10*4096); err != nil {
			t.Fatal(err)
		}
		if d := q.File(in).Inode.Dirty; len(d) != 0 {
			t.Fatalf("%s: dirty after growing to 10 pages: %v, want none", mode, d)
		}
	}

	// A compressed cluster (COMPRESS, block, NEW, NEW), cut in its first page, then grown past it.
	f := compressedFile{cs: 4, slots: []uint32{CompressAddr, 9000, NewAddr, NewAddr}, comprK: []uint64{1}, saved: 3}
	for _, mode := range Modes {
		in := f.state().input()
		q := NewSeq(mode)
		if _, _, err := q.Truncate(in, 100); err != nil {
			t.Fatal(err)
		}
		if d := q.File(in).Inode.Dirty; !slices.Equal(d, []uint64{0, 1, 2, 3}) {
			t.Fatalf("%s: dirty after the cut %v, want the cluster", mode, d)
		}
		if _, _, err := q.Truncate(in, 8*4096); err != nil {
			t.Fatal(err)
		}
		if d := q.File(in).Inode.Dirty; !slices.Equal(d, []uint64{0}) {
			t.Fatalf("%s: dirty after growing %v, want [0]", mode, d)
		}
		if _, err := q.Sync(); !errors.Is(err, ErrUnmodelled) || !strings.Contains(err.Error(), "f2fs_prepare_compress_overwrite") {
			t.Fatalf("%s: sync: %v, want refused naming f2fs_prepare_compress_overwrite", mode, err)
		}
	}
}

// refCompressed is a fresh evaluation of what Linux 6.12.117 does to a compressed file (held in
// its inode's slots) over truncates and syncs, for TestCompressedSequences.
type refCompressed struct {
	cs      uint64
	slots   []uint32
	size    int64
	dirty   map[uint64]bool
	saved   uint64 // i_compr_blocks
	blocks  uint64 // i_blocks
	nextOut uint32 // the cold log's next block
}

// walk is f2fs_do_truncate_blocks's data part from page from on (every dnode is the inode here):
// each non-NULL slot a call, a compressed cluster (COMPRESS_ADDR at a cluster start counted from
// the walk's first slot) giving i_compr_blocks back cs − its blocks.
func (r *refCompressed) walk(from uint64) (calls []uint32) {
	compressed, blocks := false, uint64(0)
	leave := func() {
		if compressed && r.saved > 0 {
			r.saved -= min(r.saved, r.cs-blocks)
		}
	}
	for i := from; i < uint64(len(r.slots)); i++ {
		a := r.slots[i]
		if (i-from)%r.cs == 0 {
			leave()
			compressed, blocks = a == CompressAddr, 0
		}
		if a == NullAddr {
			continue
		}
		if isBlock(a) && compressed {
			blocks++
		}
		calls = append(calls, a)
		r.slots[i] = NullAddr
		r.blocks--
	}
	leave()
	return calls
}

func (r *refCompressed) drop(lo, hi uint64) {
	for p := range r.dirty {
		if p >= lo && p < hi {
			delete(r.dirty, p)
		}
	}
}

func (r *refCompressed) truncate(s int64) []uint32 {
	old := r.size
	if s > old {
		r.drop(uint64(old+4095)/4096, uint64(s)/4096) // f2fs_zero_post_eof_page
	}
	r.drop(uint64(s+4095)/4096, ^uint64(0)) // truncate_setsize
	r.size = s
	if s > old {
		return nil
	}
	pages := uint64(s+4095) / 4096
	ff := (pages + r.cs - 1) / r.cs * r.cs
	calls := r.walk(ff)
	if uint64(s) == ff*4096 {
		return calls
	}
	c := uint64(s) / 4096 / r.cs * r.cs
	if r.slots[c] == CompressAddr {
		for p := c; p < c+r.cs; p++ {
			r.dirty[p] = true
		}
		return calls
	}
	calls = append(calls, r.walk(pages)...)
	if p := uint64(s) / 4096; s%4096 != 0 && r.slots[p] != NullAddr {
		r.dirty[p] = true
	}
	return calls
}

// sync is f2fs_write_cache_pages over the dirty pages; refused names the function where the model
// must refuse: a compressed cluster dirty only in part (a growing truncate dropped its pages past
// the old size: f2fs_prepare_compress_overwrite reads them again), or wholly inside i_size
// (f2fs_compress_pages).
func (r *refCompressed) sync() (writes []PageWrite, refused string) {
	var pages []uint64
	for p := range r.dirty {
		pages = append(pages, p)
	}
	slices.Sort(pages)
	nr := uint64(r.size+4095) / 4096
	rewrite := map[uint64]uint64{} // cluster start → its blocks
	for _, p := range pages {
		c := p / r.cs * r.cs
		if _, ok := rewrite[c]; ok || r.slots[c] != CompressAddr {
			continue
		}
		for i := c; i < c+r.cs; i++ {
			if !r.dirty[i] {
				return nil, "f2fs_prepare_compress_overwrite"
			}
		}
		if c+r.cs <= nr {
			return nil, "f2fs_compress_pages"
		}
		n := uint64(0)
		for i := c; i < c+r.cs; i++ {
			if isBlock(r.slots[i]) {
				n++
			}
		}
		rewrite[c] = n
	}
	for _, p := range pages {
		c := p / r.cs * r.cs
		n, rw := rewrite[c]
		old := r.slots[p]
		pw := PageWrite{Path: "/f", Index: p, Old: old}
		switch {
		case !rw && (p > uint64(r.size)>>12 || (p == uint64(r.size)>>12 && r.size%4096 == 0)):
			pw.How = DroppedEOF
		case old == NullAddr:
			pw.How = DroppedHole
		default:
			if rw && old == CompressAddr && r.saved > 0 {
				r.saved -= min(r.saved, r.cs-n)
			}
			pw.How, pw.New, pw.Log, pw.Segno = WroteOutPlace, r.nextOut, "cold-data", 0
			r.slots[p] = r.nextOut
			r.nextOut++
		}
		writes = append(writes, pw)
	}
	clear(r.dirty)
	return writes, ""
}

// TestCompressedSequences holds random sequences of truncates (shrinking and growing) and syncs
// on random compressed files, in both modes, against refCompressed: each op's calls, then the
// slots, dirty pages, i_size, i_blocks and i_compr_blocks after it, and each sync's page writes;
// the model refuses exactly where the reference says the kernel reads or compresses a cluster
// again.
func TestCompressedSequences(t *testing.T) {
	rnd := rand.New(rand.NewPCG(36, 3))
	seen := map[string]int{}
	for iter := range sweep(200) {
		f := randomCompressedFile(rnd, iter%5 == 0)
		n := uint64(len(f.slots))
		type op struct {
			sync bool
			size int64
		}
		var ops []op
		for range 2 + rnd.IntN(5) {
			if rnd.IntN(3) == 0 {
				ops = append(ops, op{sync: true})
				continue
			}
			ops = append(ops, op{size: int64(rnd.IntN(int(n*4096) + 1))})
		}
		for _, mode := range Modes {
			st := f.state()
			in := st.input()
			q := NewSeq(mode)
			ref := &refCompressed{cs: f.cs, slots: slices.Clone(f.slots), size: int64(n * 4096), dirty: map[uint64]bool{},
				saved: f.saved, blocks: st.ino.Blocks, nextOut: in.Volume.MainBlkaddr}
			for k, o := range ops {
				name := fmt.Sprintf("iter %d %s cs %d n %d op %d of %+v", iter, mode, f.cs, n, k+1, ops)
				if o.sync {
					want, refused := ref.sync()
					s, err := q.Sync()
					if refused != "" {
						if !errors.Is(err, ErrUnmodelled) || !strings.Contains(err.Error(), refused) {
							t.Fatalf("%s: sync: %v, want refused naming %s", name, err, refused)
						}
						seen["refused "+refused]++
						break
					}
					if err != nil {
						t.Fatalf("%s: sync: %v", name, err)
					}
					if !slices.Equal(s.Pages, want) {
						t.Fatalf("%s: sync wrote %+v\nwant %+v", name, s.Pages, want)
					}
					seen["sync"]++
					if slices.ContainsFunc(want, func(pw PageWrite) bool { return pw.Old == CompressAddr }) {
						seen["cluster rewritten raw"]++
					}
				} else {
					want := ref.truncate(o.size)
					res, _, err := q.Truncate(in, o.size)
					if err != nil || res.Errno != "" {
						t.Fatalf("%s: truncate: %v %v", name, err, res.Errno)
					}
					var got []uint32
					for call := range res.Calls.All() {
						for j := range call.Len {
							a := call.Start
							if isBlock(a) {
								a += j
							}
							got = append(got, a)
						}
					}
					if !slices.Equal(got, want) {
						t.Fatalf("%s: calls %v\nwant %v", name, got, want)
					}
					seen["truncate"]++
				}
				fin := q.File(in)
				var dirty []uint64
				for p := range ref.dirty {
					dirty = append(dirty, p)
				}
				slices.Sort(dirty)
				if fin.Inode.Size != ref.size || fin.Inode.Blocks != ref.blocks || fin.Inode.ComprBlocks != ref.saved || !slices.Equal(fin.Inode.Dirty, dirty) {
					t.Fatalf("%s: size %d i_blocks %d i_compr_blocks %d dirty %v; want %d %d %d %v", name,
						fin.Inode.Size, fin.Inode.Blocks, fin.Inode.ComprBlocks, fin.Inode.Dirty, ref.size, ref.blocks, ref.saved, dirty)
				}
				ext, err := SlotMap(fin)
				if err != nil {
					t.Fatal(err)
				}
				for i := range n {
					if g := slotAt(ext, i); g != ref.slots[i] {
						t.Fatalf("%s: slot %d = %#x, want %#x", name, i, g, ref.slots[i])
					}
				}
			}
		}
	}
	t.Logf("ops checked: %v", seen)
	if seen["refused f2fs_compress_pages"] < 2 || seen["refused f2fs_prepare_compress_overwrite"] < 2 || seen["cluster rewritten raw"] < 4 || seen["sync"] < 20 || seen["truncate"] < 50 {
		t.Errorf("too few of a kind: %v", seen)
	}
}
