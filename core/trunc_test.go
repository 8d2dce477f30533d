package core

import (
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
)

// nodeSeg is where the hand-built files' node blocks live (segment 110 of refVolume).
const nodeBase = 4096 + 110*512

// NodeAddr makes a memFile a NodeAddrSource: every node it has is at a block of segment 110, in
// the order its nodes were made.
func (f *memFile) NodeAddr(index uint64, level int) (uint32, bool, error) {
	p := locate(index, f.geom())
	k := p.path[level]
	if !f.nodes[k] {
		return 0, false, nil
	}
	return nodeBase + f.nodeNo(k), true, nil
}

// nodeNo numbers the file's nodes in a fixed order (the sorted keys).
func (f *memFile) nodeNo(k nodeKey) uint32 {
	keys := make([]nodeKey, 0, len(f.nodes))
	for n := range f.nodes {
		keys = append(keys, n)
	}
	slices.SortFunc(keys, cmpKey)
	i, _ := slices.BinarySearchFunc(keys, k, cmpKey)
	return uint32(i)
}

func cmpKey(a, b nodeKey) int {
	for _, d := range [][2]int32{{a.top, b.top}, {a.a, b.a}, {a.b, b.b}} {
		if d[0] != d[1] {
			return int(d[0] - d[1])
		}
	}
	return 0
}

// truncState builds a small-geometry file (4 slots in the inode, 4 in a direct node) of up to n
// slots, its nodes' blocks valid in the SIT.
func truncTestState(r *rand.Rand, n int) *state {
	slots := make([]uint32, n)
	next := uint32(4096 + r.IntN(4000))
	for i := range slots {
		switch p := r.IntN(100); {
		case p < 15:
			slots[i] = NullAddr
		case p < 25:
			slots[i] = NewAddr
		case p < 28 && i > 0:
			slots[i] = slots[i-1-r.IntN(min(i, 3))] // mapped twice, often in the pending run
		case p < 29:
			slots[i] = uint32(r.IntN(4096)) // below the main area
		default:
			if r.IntN(8) == 0 {
				next = uint32(4096 + r.IntN(50000))
			}
			slots[i] = next
			next++
		}
	}
	st := newState(slots, int64(n))
	st.file.api, st.file.apb = 4, 4
	st.file.nodes = map[nodeKey]bool{}
	for i, a := range slots {
		if a != NullAddr {
			st.file.set(uint64(i), a)
		}
	}
	st.ino.AddrsPerInode, st.ino.AddrsPerBlock = 4, 4
	for k := range st.file.nodes {
		st.sit.set(&st.vol, nodeBase+st.file.nodeNo(k))
	}
	st.ino.Size = int64(n)*4096 - int64(r.IntN(4096))
	return st
}

// randomTruncRequest is a punch or a truncate over the file, aligned or not.
func randomTruncRequest(r *rand.Rand, st *state) Request {
	size := st.ino.Size
	if r.IntN(2) == 0 {
		off := int64(r.IntN(int(size) + 8192))
		return Request{Op: OpPunch, Offset: off, Length: int64(1 + r.IntN(int(size)+8192))}
	}
	return Request{Op: OpTruncate, Offset: int64(r.IntN(int(size) + 8192))}
}

// refTrunc is a fresh computation of f2fs_truncate_data_blocks_range over slots (one dnode's
// range, in order), straight from the kernel's loop in each mode: the calls, the slots freed,
// and which addresses failed validation. valid says whether a block's SIT bit is set now; call
// applies a call to it.
func refTrunc(mode Mode, slots []uint32, valid func(uint32) bool, call func(start, n uint32)) (nrFree uint64) {
	var blkstart, blklen uint32
	if len(slots) > 0 {
		blkstart = slots[0]
	}
	for i, a := range slots {
		next := func() {
			if blklen > 0 {
				call(blkstart, blklen)
			}
			if i+1 < len(slots) {
				blkstart = slots[i+1]
			}
			blklen = 0
		}
		if a == NullAddr {
			if mode == Batched {
				next()
			}
			continue
		}
		if isBlock(a) && !valid(a) {
			if mode == Batched {
				next()
			}
			continue
		}
		nrFree++
		if mode == PerBlock {
			call(a, 1)
			continue
		}
		if blkstart+blklen == a {
			blklen++
		} else {
			call(blkstart, blklen)
			blkstart, blklen = a, 1
		}
	}
	if mode == Batched && blklen > 0 {
		call(blkstart, blklen)
	}
	return nrFree
}

// TestTruncAgainstReference: random punches and truncates of random small files (holes,
// NEW_ADDR, blocks mapped twice, addresses below the main area, nodes three levels deep), in both
// modes, give the calls, slot map, valid counts and i_size a fresh computation from the kernel's
// loops gives: per dnode in file order, the data calls, then for truncate the node's own call,
// an indirect node after its children.
func TestTruncAgainstReference(t *testing.T) {
	r := rand.New(rand.NewPCG(28, 1))
	seen := map[string]int{}
	for i := range sweep(400) {
		st := truncTestState(r, 1+r.IntN(60))
		req := randomTruncRequest(r, st)
		for _, mode := range Modes {
			in := st.input()
			got, err := Simulate(in, req, mode)
			if err != nil {
				t.Fatalf("case %d %+v %s: %v", i, req, mode, err)
			}
			want, wantSlots, vbc, vnc := refTruncOp(st, req, mode)
			var gotCalls [][2]uint32
			for c := range got.Calls.All() {
				gotCalls = append(gotCalls, [2]uint32{c.Start, c.Len})
			}
			if !slices.Equal(gotCalls, want) {
				t.Fatalf("case %d %+v %s:\n calls %v\n want  %v\n slots %v", i, req, mode, gotCalls, want, st.file.slots)
			}
			var gotSlots []uint32
			for _, e := range got.After.Extents {
				for k := uint64(0); k < e.Count; k++ {
					gotSlots = append(gotSlots, slotValue0(e, k))
				}
			}
			if !slices.Equal(trimNull(gotSlots), trimNull(wantSlots)) {
				t.Fatalf("case %d %+v %s: slots\n %v\nwant %v", i, req, mode, gotSlots, wantSlots)
			}
			if got.ValidBlocks != vbc || got.ValidNodes != vnc {
				t.Fatalf("case %d %+v %s: valid blocks %d nodes %d, want %d %d", i, req, mode, got.ValidBlocks, got.ValidNodes, vbc, vnc)
			}
			seen[req.Op.String()+"/"+mode.String()]++
			if got.Stats.WronglyCleared > 0 {
				seen["wrongly cleared "+mode.String()]++
			}
			if got.Stats.NodesFreed > 0 {
				seen["nodes freed"]++
			}
			if got.Stats.SlotsSkipped > 0 {
				seen["skipped"]++
			}
		}
	}
	for _, k := range []string{"punch/per-block", "truncate/batched", "wrongly cleared batched", "nodes freed", "skipped"} {
		if seen[k] == 0 {
			t.Errorf("the generator never reached %q (%v)", k, seen)
		}
	}
	if seen["wrongly cleared per-block"] != 0 {
		t.Errorf("per-block cleared a bit twice: %v", seen)
	}
}

func slotValue0(e Extent, k uint64) uint32 {
	switch e.State {
	case "null":
		return NullAddr
	case "new":
		return NewAddr
	case "compress":
		return CompressAddr
	}
	return e.Addr + uint32(k)
}

func trimNull(s []uint32) []uint32 {
	for len(s) > 0 && s[len(s)-1] == NullAddr {
		s = s[:len(s)-1]
	}
	return s
}

// refTruncOp is the reference for one punch or truncate on st (no error cases: the generator
// makes none but "offset past EOF").
func refTruncOp(st *state, req Request, mode Mode) (calls [][2]uint32, slots []uint32, vbc uint64, vnc uint32) {
	n := st.file.n
	slots = make([]uint32, max(n, 1))
	for i := range slots {
		slots[i] = st.file.slots[uint64(i)]
	}
	bits := map[uint32]bool{}
	for a := range uint32(65536) {
		if m := st.sit.maps[segnoOf(&st.vol, a)]; m != nil && a >= st.vol.MainBlkaddr && testBit(m, (a-st.vol.Segment0Blkaddr)%512) {
			bits[a] = true
		}
	}
	vbc, vnc = st.vol.ValidBlockCount, st.vol.ValidNodeCount
	call := func(start, l uint32) {
		calls = append(calls, [2]uint32{start, l})
		if isBlock(start) {
			for k := range l {
				delete(bits, start+k)
			}
		}
	}
	valid := func(a uint32) bool { return bits[a] }
	g := st.file.geom()
	// dnodes in file order: [start, end) of each, its key
	type dn struct {
		lo, hi uint64
		key    nodeKey
	}
	var dnodes []dn
	for s := uint64(0); s < uint64(len(slots)); {
		p := locate(s, g)
		var k nodeKey
		if p.depth > 0 {
			k = p.path[p.depth-1]
		} else {
			k = nodeKey{-1, -1, -1}
		}
		dnodes = append(dnodes, dn{p.start, p.start + uint64(p.cap), k})
		s = p.start + uint64(p.cap)
	}
	allocated := map[nodeKey]bool{}
	exists := func(k nodeKey) bool { return k.top < 0 || st.file.nodes[k] || allocated[k] }
	rangeCalls := func(lo, hi uint64) {
		lo, hi = min(lo, uint64(len(slots))), min(hi, uint64(len(slots)))
		if lo >= hi {
			return
		}
		vbc -= refTrunc(mode, slots[lo:hi], valid, call)
		for i := lo; i < hi; i++ {
			slots[i] = NullAddr
		}
	}
	if req.Op == OpPunch {
		if req.Offset >= st.ino.Size {
			return calls, slots, vbc, vnc
		}
		end := req.Offset + req.Length
		lo, hi := uint64(req.Offset+4095)>>12, uint64(end)>>12
		// fill_zero: a partial page whose slot is NULL is reserved (the generator's volume has room).
		for _, p := range partialPages(req) {
			// f2fs_get_new_data_page allocates the nodes its path lacks (ALLOC_NODE).
			pos := locate(p, g)
			for d := 0; d < pos.depth; d++ {
				if k := pos.path[d]; !exists(k) {
					allocated[k] = true
					vbc++
					vnc++
				}
			}
			if p < uint64(len(slots)) && slots[p] == NullAddr || p >= uint64(len(slots)) {
				for uint64(len(slots)) <= p {
					slots = append(slots, NullAddr)
				}
				slots[p] = NewAddr
				vbc++
			}
		}
		for s := uint64(len(dnodes)) * 0; s < uint64(len(slots)); {
			// the partial pages may have lengthened the file: list its dnodes again
			p := locate(s, g)
			k := nodeKey{-1, -1, -1}
			if p.depth > 0 {
				k = p.path[p.depth-1]
			}
			if len(dnodes) == 0 || dnodes[len(dnodes)-1].lo < p.start {
				dnodes = append(dnodes, dn{p.start, p.start + uint64(p.cap), k})
			}
			s = p.start + uint64(p.cap)
		}
		for _, d := range dnodes {
			if exists(d.key) && d.hi > lo && d.lo < hi {
				rangeCalls(max(d.lo, lo), min(d.hi, hi))
			}
		}
		return calls, slots, vbc, vnc
	}
	from := uint64(req.Offset+4095) >> 12
	if req.Offset > st.ino.Size {
		return calls, slots, vbc, vnc
	}
	freeNode := func(k nodeKey) {
		a, _, _ := st.file.NodeAddr(st.file.firstIndexOf(k), k.level())
		call(a, 1)
		vbc--
		vnc--
	}
	// Post-order over the tree: a dnode whose range lies wholly at or past from goes whole (its
	// data, then the node); the one from cuts keeps its head; an indirect node goes after its
	// children when its whole subtree lies past from.
	var lastParent nodeKey = nodeKey{-2, -2, -2}
	for _, d := range dnodes {
		if !exists(d.key) || d.hi <= from {
			continue
		}
		if par, ok := d.key.parent(); ok && par != lastParent {
			if lastParent.top >= 0 && st.file.firstIndexOf(lastParent) >= from && exists(lastParent) {
				freeNode(lastParent)
			}
			lastParent = par
		} else if !ok && lastParent.top >= 0 {
			if st.file.firstIndexOf(lastParent) >= from && exists(lastParent) {
				freeNode(lastParent)
			}
			lastParent = nodeKey{-2, -2, -2}
		}
		rangeCalls(max(d.lo, from), d.hi)
		if d.key.top >= 0 && d.lo >= from {
			freeNode(d.key)
		}
	}
	if lastParent.top >= 0 && st.file.firstIndexOf(lastParent) >= from && exists(lastParent) {
		freeNode(lastParent)
	}
	if off := req.Offset & 4095; off != 0 {
		if p := uint64(req.Offset) >> 12; p < uint64(len(slots)) {
			_ = p // truncate_partial_data_page dirties the page: no slot changes
		}
	}
	return calls, slots, vbc, vnc
}

func partialPages(req Request) []uint64 {
	off, end := uint64(req.Offset), uint64(req.Offset+req.Length)
	ps, pe := off>>12, end>>12
	if ps == pe {
		return []uint64{ps}
	}
	var out []uint64
	if off&4095 != 0 {
		out = append(out, ps)
	}
	if end&4095 != 0 {
		out = append(out, pe)
	}
	return out
}

// firstIndexOf is the first file block index under node k.
func (f *memFile) firstIndexOf(k nodeKey) uint64 {
	w := planWalker{e: &engine{slots: &slotOverlay{geom: f.geom()}}}
	return w.firstIndex(k)
}

// TestTruncSeekReplays: for punch and truncate runs, seeking anywhere and stepping on gives the
// events and the final snapshot of a run stepped from 0, and Simulate, Walk and Run agree.
func TestTruncSeekReplays(t *testing.T) {
	r := rand.New(rand.NewPCG(28, 2))
	for i := range sweep(120) {
		st := truncTestState(r, 1+r.IntN(80))
		req := randomTruncRequest(r, st)
		for _, mode := range Modes {
			run, err := NewRun(st.input(), req, mode)
			if err != nil {
				t.Fatal(err)
			}
			var all []Event
			var last uint64
			for {
				want := run.NextSlot()
				ev, ok := run.Next()
				if !ok {
					break
				}
				if ev.Slot != want || ev.Slot < last {
					t.Fatalf("case %d %+v %s: event %+v at slot %d, NextSlot said %d, previous %d", i, req, mode, ev, ev.Slot, want, last)
				}
				last = ev.Slot
				all = append(all, ev)
			}
			if run.Err() != nil {
				t.Fatal(run.Err())
			}
			final := run.Snapshot()
			for k := range 5 {
				n := int64(r.IntN(len(all) + 1))
				if k == 0 {
					n = 0
				}
				if err := run.SeekTo(n); err != nil {
					t.Fatal(err)
				}
				for j := n; j < int64(len(all)); j++ {
					ev, ok := run.Next()
					if !ok || ev != all[j] {
						t.Fatalf("case %d %+v %s: SeekTo(%d) then event %d = %+v, want %+v", i, req, mode, n, j, ev, all[j])
					}
				}
				if got := run.Snapshot(); !reflect.DeepEqual(got, final) {
					t.Fatalf("case %d %s: final snapshot differs after SeekTo(%d)", i, mode, n)
				}
			}
			var walked []Event
			b, err := Walk(st.input(), req, mode, func(ev *Event) bool { walked = append(walked, *ev); return true })
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(walked, all) {
				t.Fatalf("case %d %s: Walk's events differ from Run's", i, mode)
			}
			a, err := Simulate(st.input(), req, mode)
			if err != nil {
				t.Fatal(err)
			}
			a.nextFn, b.nextFn = nil, nil
			if !reflect.DeepEqual(a, b) {
				t.Fatalf("case %d %s: Simulate and Walk differ:\n%+v\n%+v", i, mode, a.Stats, b.Stats)
			}
		}
	}
}
