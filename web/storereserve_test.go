package web

import (
	"testing"
)

// TestStoreReserveWrite: uploads in flight reserve what they write against maxStore before writing
// it, so together (with the uploads in use, which are never evicted) they stay under it; past it an
// upload is refused (507), and one larger than the store by itself is too large (413).
func TestStoreReserveWrite(t *testing.T) {
	st := newStore(100)
	// A step that does not fit is cut to the write at hand.
	n, err := st.reserveWrite(30, 30, 80)
	if err != nil || n != 80 {
		t.Fatalf("first reservation: %d %v, want the 80-byte step", n, err)
	}
	n, err = st.reserveWrite(20, 20, 80)
	if err != nil || n != 20 {
		t.Fatalf("second upload: %d %v, want its 20-byte write", n, err)
	}
	if _, err := st.reserveWrite(10, 10, 80); ErrorCode(err) != ESTOREFULL {
		t.Fatalf("a third upload past the store: %v, want ESTOREFULL (507)", err)
	}
	st.releaseWrite(80)
	// An upload in use counts; an unused one does not (commit evicts it).
	st.insertLocked(&StoredImage{ID: "u", Upload: true, onDisk: 50, refs: 1})
	st.insertLocked(&StoredImage{ID: "v", Upload: true, onDisk: 50})
	if n, err := st.reserveWrite(30, 30, 30); err != nil || n != 30 {
		t.Fatalf("30 bytes beside 50 in use and 20 in flight: %d %v", n, err)
	}
	if _, err := st.reserveWrite(1, 1, 1); err == nil {
		t.Fatal("reserved past the store")
	}
	if _, err := st.reserveWrite(101, 1, 1); ErrorCode(err) != ETOOLARGE {
		t.Fatalf("an upload larger than the store: %v, want ETOOLARGE (413)", err)
	}
	st.releaseWrite(50)
	if st.writing != 0 {
		t.Fatalf("%d bytes still reserved", st.writing)
	}
}
