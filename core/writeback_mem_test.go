package core

import (
	"runtime"
	"testing"
)

// TestWritebackHeapPerPage holds writeback to O(1) bytes a page (issue 37): a file whose every
// slot is its own extent (no two slots compress into one run), every page dirty, written back out
// of place (mode=lfs). Writeback used to store a compressed copy of the page's whole dnode for
// every page it wrote, and the overlay kept every earlier copy until the operation ended: ~12 KB
// allocated and held a page here (1,018 one-slot runs of 12 bytes a copy). Now a dnode's record is
// stored once per writeback and replaces the one before.
func TestWritebackHeapPerPage(t *testing.T) {
	const pages = 4 * 1018 // four dnodes' worth past the inode's slots
	slots := make([]uint32, pages)
	for i := range slots {
		slots[i] = 9216 + 2*uint32(i) // segments 10–25: every slot its own extent
	}
	st := newState(slots, pages)
	st.vol.LFS = true // every page out of place
	st.vol.UserBlockCount = 60000
	in := st.input()
	in.Inode.Dirty = make([]uint64, pages)
	for i := range in.Inode.Dirty {
		in.Inode.Dirty[i] = uint64(i)
	}
	var keep Input
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	next, out, err := writeback(in, 0, pages, wbMode{sync: true})
	if err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	keep = next
	out = nil
	allocated := float64(after.TotalAlloc-before.TotalAlloc) / pages
	runtime.GC()
	runtime.ReadMemStats(&after)
	held := float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / pages
	runtime.KeepAlive(keep)
	runtime.KeepAlive(out)
	t.Logf("writeback of %d one-slot-extent pages: %.0f B allocated, %.0f B held a page", pages, allocated, held)
	// The page's PageWrite record (80 B, in a slice that doubles) and the dnode's record: 1 KiB a
	// page is the reservation's figure (web/reservations.go wbPerPage).
	if allocated > 512 {
		t.Errorf("writeback allocated %.0f B a page, want O(1): at most 512", allocated)
	}
	if held > 64 {
		t.Errorf("the state writeback left holds %.0f B a page, want at most 64 (the dnode's record, 12 B a slot)", held)
	}
	// The pages went where they should: each slot now a block of a segment the log opened.
	for i := uint64(0); i < pages; i += 997 {
		_, buf, _, err := next.Slots.DnodeSlots(i)
		if err != nil {
			t.Fatal(err)
		}
		p := locate(i, next.Inode.geom())
		if a := buf[p.ofs]; a == slots[i] || !isBlock(a) {
			t.Errorf("page %d: slot %d after writeback, was %d: not written out of place", i, a, slots[i])
		}
	}
}
